"""Static check that code only uses names of TF 2.3's public API.

Pure Python (``ast``, no TensorFlow): the rewritten code must run on the TF 2.3
the seeds were written for, while the runner itself runs a newer TF that
accepts names 2.3 lacks (``tf.keras.ops``, ``tf.experimental.numpy``).

The names come from ``migrate/data/tf23_api.txt`` (scripts/extract_tf23_api.py).
A dotted use is followed from its alias through modules; the first name that
is not a member of its module is reported; once it reaches a symbol (a class,
function, constant), the rest are that object's attributes and are not checked.
Aliases understood: ``import tensorflow [as tf]``, ``import tensorflow.x.y as
z``, ``from tensorflow[.x] import y [as z]``. ``tf.compat.v2`` is read as ``tf``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, FrozenSet, Iterator, List, Optional, Tuple

DATA = Path(__file__).resolve().parent.parent / "data"
SUPPORTED = {"2.3": "tf23_api.txt"}


@dataclass(frozen=True)
class MissingSymbol:
    path: str
    line: int
    column: int
    symbol: str  # e.g. "tf.keras.ops"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.symbol}"


@dataclass(frozen=True)
class Api:
    names: FrozenSet[str]
    modules: FrozenSet[str]  # names that other names extend

    def missing_prefix(self, dotted: str) -> Optional[str]:
        """The first part of ``dotted`` that the API lacks, or None when it exists."""
        parts = dotted.split(".")
        name = parts[0]
        for part in parts[1:]:
            if name not in self.modules:
                return None  # an attribute of a symbol: not the API's business
            name = f"{name}.{part}"
            if name not in self.names:
                return name
        return None


@lru_cache(maxsize=None)
def load_api(version: str) -> Api:
    if version not in SUPPORTED:
        raise ValueError(f"no symbol list for TF {version} (known: {', '.join(SUPPORTED)})")
    lines = (DATA / SUPPORTED[version]).read_text().splitlines()
    names = frozenset(line for line in lines if line and not line.startswith("#"))
    modules = frozenset(name.rsplit(".", 1)[0] for name in names if "." in name)
    return Api(names, modules)


def _canonical(module: str) -> str:
    """``tensorflow.compat.v2.nn`` -> ``tf.nn``."""
    dotted = "tf" + module[len("tensorflow"):]
    if dotted == "tf.compat.v2" or dotted.startswith("tf.compat.v2."):
        dotted = "tf" + dotted[len("tf.compat.v2"):]
    return dotted


def _is_tf(module: Optional[str]) -> bool:
    return module is not None and (module == "tensorflow" or module.startswith("tensorflow."))


def _aliases(tree: ast.AST) -> Tuple[Dict[str, str], List[Tuple[str, ast.AST]]]:
    """local name -> dotted API name, and the imported names to check themselves."""
    aliases: Dict[str, str] = {}
    imported: List[Tuple[str, ast.AST]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not _is_tf(alias.name):
                    continue
                imported.append((_canonical(alias.name), node))
                if alias.asname:
                    aliases[alias.asname] = _canonical(alias.name)
                else:
                    aliases["tensorflow"] = "tf"  # `import tensorflow.keras` binds `tensorflow`
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _is_tf(node.module):
            base = _canonical(node.module)
            for alias in node.names:
                if alias.name == "*":
                    continue
                dotted = f"{base}.{alias.name}"
                imported.append((dotted, node))
                aliases[alias.asname or alias.name] = dotted
    return aliases, imported


def _dotted(node: ast.AST) -> Optional[Tuple[str, List[str]]]:
    """``a.b.c`` -> ("a", ["b", "c"]); None when the chain does not start at a name."""
    attrs: List[str] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return node.id, list(reversed(attrs))
    return None


def _uses(tree: ast.AST, aliases: Dict[str, str]) -> Iterator[Tuple[str, ast.AST]]:
    """Every maximal attribute chain rooted at a TF alias, as a dotted API name."""
    inner = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            inner.add(id(node.value))
    for node in ast.walk(tree):
        if id(node) in inner or not isinstance(node, (ast.Attribute, ast.Name)):
            continue
        chain = _dotted(node)
        if chain and chain[0] in aliases and isinstance(getattr(node, "ctx", None), ast.Load):
            yield ".".join([aliases[chain[0]]] + chain[1]), node


def check_source(source: str, path: str, version: str = "2.3") -> List[MissingSymbol]:
    """Every use of a name TF ``version`` lacks, in source order; a file that
    does not parse raises SyntaxError (the caller reports it)."""
    api = load_api(version)
    tree = ast.parse(source, filename=path)
    aliases, imported = _aliases(tree)
    found = {}
    for dotted, node in imported + list(_uses(tree, aliases)):
        missing = api.missing_prefix(dotted)
        if missing:
            key = (node.lineno, node.col_offset + 1, missing)
            found[key] = MissingSymbol(path, node.lineno, node.col_offset + 1, missing)
    return [found[k] for k in sorted(found)]


def check_file(path: Path, version: str = "2.3") -> List[MissingSymbol]:
    return check_source(path.read_text(encoding="utf-8"), str(path), version)
