"""What an interpreter is, without importing TensorFlow: its version and which
of the runner's packages it can import. Prints one JSON line.

Runs under any interpreter the user names (Python 3.5+ syntax, stdlib only).
"""

import importlib.util
import json
import sys

MODULES = ("tensorflow", "numpy", "tf_keras", "keras")
DISTRIBUTIONS = {"tensorflow": ("tensorflow", "tensorflow-cpu", "tensorflow-gpu")}


def version_of(module):
    """The installed distribution version behind ``module``, None if unknown."""
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # Python < 3.8: the import check alone decides
        return None
    for dist in DISTRIBUTIONS.get(module, (module.replace("_", "-"),)):
        try:
            return version(dist)
        except PackageNotFoundError:
            continue
    return None


def main():
    modules = {}
    for name in MODULES:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        modules[name] = (version_of(name) or "?") if found else None
    print(json.dumps({"python": sys.executable, "version": list(sys.version_info[:3]),
                      "modules": modules}))


if __name__ == "__main__":
    main()
