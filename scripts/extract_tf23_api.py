"""Regenerate migrate/data/tf23_api.txt: TF 2.3's public Python API, one dotted
name per line, read from the real ``tensorflow-cpu==2.3.0`` wheel.

Why from the wheel: TF 2.3 cannot be installed on these machines (wheels exist
for Python 3.5-3.8 only), and the checker must know what really existed, not
what a newer TF still accepts.

The generated API lives in three places of the wheel:
- ``tensorflow/__init__.py``: the ``tf`` root (symbols and ``._api.v2`` modules);
- ``tensorflow/_api/v2/<mod>/__init__.py``: ``tf.<mod>`` (``compat/v1`` too);
- ``tensorflow/python/keras/api/_v2/keras/...``: ``tf.keras`` (and ``_v1`` for
  ``tf.compat.v1.keras``), which TF 2.3 attaches lazily.

Modules are listed as names of their own, so the checker tells a module (whose
members it checks) from a symbol (whose attributes it cannot know).
``tf.compat.v2`` mirrors ``tf`` and is left out (the checker maps it to ``tf``);
``tf.estimator`` comes from another package and is listed as an opaque name.

Usage: python scripts/extract_tf23_api.py [--wheel PATH] [--out PATH]
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Dict, Iterable, Set

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="an already downloaded wheel")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or download_wheel(Path(tmp))
        symbols = extract(wheel)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    header = f"# TF 2.3 public API from {WHEEL_SPEC}; regenerate: python scripts/extract_tf23_api.py\n"
    args.out.write_text(header + "".join(f"{s}\n" for s in sorted(symbols)))
    print(f"{len(symbols)} names -> {args.out}")


if __name__ == "__main__":
    main()
