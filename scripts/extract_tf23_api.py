"""Regenerate migrate/data/tf23_api.txt: TF 2.3's public Python API, one dotted
name per line, read from the real ``tensorflow-cpu==2.3.0`` wheel and from
TF 2.3 itself, imported in the tool's Python 3.8 environment (the one
`verify --tf 2.3` builds).

Why both: the checker must know what really existed, not what a newer TF
still accepts. The wheel's generated ``__init__.py`` files list the API, but
some names exist only once TF is imported: ``tf.__version__`` and other
dunders, ``tf.summary.scalar`` and friends (TensorBoard attaches them at
import), lazily loaded modules (``tf.estimator``). The live walk follows every
generated API module (TF's ``_api``, Keras', TensorBoard's and Estimator's)
and lists every public or dunder attribute; other modules reachable from the
API (``tf.python``, ``absl.flags`` behind ``tf.compat.v1.flags``) are listed as
names whose members are not checked.

The generated API lives in three places of the wheel:
- ``tensorflow/__init__.py``: the ``tf`` root (symbols and ``._api.v2`` modules);
- ``tensorflow/_api/v2/<mod>/__init__.py``: ``tf.<mod>`` (``compat/v1`` too);
- ``tensorflow/python/keras/api/_v2/keras/...``: ``tf.keras`` (and ``_v1`` for
  ``tf.compat.v1.keras``), which TF 2.3 attaches lazily.

Modules are listed as names of their own, so the checker tells a module (whose
members it checks) from a symbol (whose attributes it cannot know).
``tf.compat.v2`` mirrors ``tf`` and is left out (the checker maps it to ``tf``);
``tf.estimator`` comes from another package and is listed as an opaque name.

Usage: python scripts/extract_tf23_api.py [--wheel PATH] [--python PY38] [--out PATH]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "migrate" / "data" / "tf23_api.txt"
WHEEL_SPEC = "tensorflow-cpu==2.3.0"

# wheel directory of generated __init__.py files -> the dotted name it defines
API_TREES = {
    "tensorflow/_api/v2": "tf",
    "tensorflow/python/keras/api/_v2/keras": "tf.keras",
    "tensorflow/python/keras/api/_v1/keras": "tf.compat.v1.keras",
}
SKIPPED_TREES = ("tf.compat.v2", "tf.compat.v1.compat")
OPAQUE = ("tf.estimator", "tf.compat.v1.estimator")
# module names (``__name__``) of the generated API modules the live walk enters
LIVE_API_MODULES = ("tensorflow._api.", "tensorflow.keras", "tensorflow.python.keras.api.",
                    "tensorboard.summary", "tensorflow_estimator.python.estimator.api.")


def download_wheel(directory: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
         "--python-version", "3.8", "--platform", "manylinux2010_x86_64",
         WHEEL_SPEC, "-d", str(directory)],
        check=True,
    )
    return next(directory.glob("tensorflow_cpu-2.3.0-*.whl"))


def imported_names(source: str) -> Iterable[str]:
    """Public names a generated __init__.py binds with ``from ... import``."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for alias in node.names:
                name = alias.asname or alias.name
                if not name.startswith("_"):
                    yield name


def module_files(wheel: zipfile.ZipFile) -> Dict[str, str]:
    """dotted module name -> path of its __init__.py inside the wheel."""
    modules = {"tf": "tensorflow/__init__.py"}
    for member in wheel.namelist():
        if not member.endswith("/__init__.py"):
            continue
        directory = member[: -len("/__init__.py")]
        for tree, dotted in API_TREES.items():
            if directory == tree or directory.startswith(tree + "/"):
                rest = directory[len(tree):].strip("/").replace("/", ".")
                name = f"{dotted}.{rest}" if rest else dotted
                if name != "tf":  # the root is tensorflow/__init__.py, not _api/v2's empty one
                    modules[name] = member
    return {
        name: path for name, path in modules.items()
        if not any(name == s or name.startswith(s + ".") for s in SKIPPED_TREES)
    }


def extract(wheel_path: Path) -> Set[str]:
    with zipfile.ZipFile(wheel_path) as wheel:
        modules = module_files(wheel)
        symbols: Set[str] = set(modules) | set(OPAQUE)
        for name, member in modules.items():
            source = wheel.read(member).decode("utf-8")
            symbols.update(f"{name}.{attr}" for attr in imported_names(source))
    return {
        s for s in symbols
        if not any(s.startswith(skip + ".") for skip in SKIPPED_TREES)
    } | {"tf.compat.v2"}


def _skipped(dotted: str) -> bool:
    return any(dotted == s or dotted.startswith(s + ".") for s in SKIPPED_TREES)


def walk_live() -> List[str]:
    """Run under TF 2.3: every public or dunder attribute of every API module
    reachable from ``tf`` (breadth first, each dotted module once)."""
    import types

    import tensorflow as tf

    names: Set[str] = set()
    queue: List[Tuple[str, object]] = [("tf", tf)]
    seen: Set[str] = set()
    while queue:
        dotted, module = queue.pop(0)
        if dotted in seen:
            continue
        seen.add(dotted)
        for attr in dir(module):
            if attr.startswith("_") and not (attr.startswith("__") and attr.endswith("__")):
                continue
            name = f"{dotted}.{attr}"
            if _skipped(name):
                continue
            names.add(name)
            try:
                value = getattr(module, attr)
            except Exception:  # a lazy attribute that fails to load still exists by name
                continue
            if isinstance(value, types.ModuleType) and \
                    getattr(value, "__name__", "").startswith(LIVE_API_MODULES):
                queue.append((name, value))
    return sorted(names)


def live_names(python: str) -> Set[str]:
    """``walk_live`` run by ``python`` (an interpreter with TF 2.3)."""
    done = subprocess.run([python, str(Path(__file__).resolve()), "--walk-live"],
                          capture_output=True, text=True, check=True,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="-1"))
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def tf23_python(explicit: Optional[str]) -> str:
    """The interpreter of the tool's cached TF 2.3 environment (built if needed)."""
    sys.path.insert(0, str(ROOT))
    from rich.console import Console

    from migrate.cache import default_dir
    from migrate.runner.environments import ensure, find_base_python

    return str(ensure(find_base_python(explicit), default_dir(), False, Console(stderr=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="an already downloaded wheel")
    parser.add_argument("--python", help="a Python 3.8/3.7 to build the TF 2.3 environment from")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--walk-live", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.walk_live:  # the child half, under TF 2.3
        print(json.dumps(walk_live()))
        return
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or download_wheel(Path(tmp))
        from_wheel = extract(wheel)
    from_import = live_names(tf23_python(args.python))
    symbols = from_wheel | from_import
    print(f"wheel: {len(from_wheel)} names, import: {len(from_import)}, "
          f"only at import: {len(symbols - from_wheel)}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    header = (f"# TF 2.3 public API from the {WHEEL_SPEC} wheel and from importing it; "
              f"regenerate: python scripts/extract_tf23_api.py\n")
    args.out.write_text(header + "".join(f"{s}\n" for s in sorted(symbols)))
    print(f"{len(symbols)} names -> {args.out}")


if __name__ == "__main__":
    main()
