"""Import spellings -> canonical dotted names.

Every spelling of the same API gets one name, so recipes compare strings:
``tf.compat.v2.shape`` and ``tensorflow.shape`` are ``tensorflow.shape``;
``tf.keras.layers.Dense``, ``tf_keras.layers.Dense`` and Keras 3's
``keras.layers.Dense`` are ``keras.layers.Dense``.
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Set, Tuple

from ._tree import syms, token

# Longest first: a prefix is rewritten once, on a component boundary.
_PREFIXES = (
    ("tensorflow.compat.v2.keras", "keras"),
    ("tensorflow.compat.v1.keras", "keras"),
    ("tensorflow.python.keras", "keras"),
    ("tensorflow.compat.v2", "tensorflow"),
    ("tensorflow.compat.v1", "tensorflow"),
    ("tensorflow.keras", "keras"),
    ("tf_keras", "keras"),
    ("keras.api._v2.keras", "keras"),
)

# The names a snippet pasted without its imports conventionally means.
CONVENTIONAL = {"tf": "tensorflow", "np": "numpy", "keras": "keras",
                "layers": "keras.layers", "pd": "pandas"}


def canonical(path: str) -> str:
    """The one spelling of a dotted module path (see the module docstring)."""
    for prefix, replacement in _PREFIXES:
        if path == prefix or path.startswith(prefix + "."):
            return replacement + path[len(prefix):]
    return path


def _text(node) -> str:
    return "".join(leaf.value for leaf in node.leaves())


def import_bindings(node) -> Iterator[Tuple[str, object, Optional[str]]]:
    """(local name, its NAME leaf, canonical target or None) for each name an
    ``import``/``from ... import`` statement binds; None for relative and star
    imports' targets (they bind nothing we can name)."""
    if node.type == syms.import_name:
        target = node.children[1]
        items = target.children if target.type == syms.dotted_as_names else [target]
        for item in items:
            if item.type == token.COMMA:
                continue
            if item.type == syms.dotted_as_name:
                yield item.children[2].value, item.children[2], canonical(_text(item.children[0]))
            else:
                root = next(item.leaves()) if item.type != token.NAME else item
                yield root.value, root, canonical(root.value)
        return
    parts = node.children
    where = next(i for i, p in enumerate(parts) if p.type == token.NAME and p.value == "import")
    module = "".join(_text(p) for p in parts[1:where])
    relative = module.startswith(".")
    for child in parts[where + 1:]:
        items = child.children if child.type == syms.import_as_names else [child]
        for item in items:
            if item.type == syms.import_as_name:
                local, original = item.children[2], item.children[0].value
            elif item.type == token.NAME:
                local, original = item, item.value
            else:
                continue  # '(', ')', ',', '*'
            yield local.value, local, None if relative else canonical(f"{module}.{original}")


class Imports:
    """What the module's imports bind (anywhere: functions and ``try`` blocks
    included), and which conventional aliases it uses unbound."""

    def __init__(self, bound: Dict[str, Set[Optional[str]]], presumed: Set[str]):
        self._bound = bound
        self.presumed = presumed

    def module_of(self, local: str) -> Optional[str]:
        """The canonical target of ``local`` when every import of it agrees."""
        if local in self.presumed:
            return CONVENTIONAL[local]
        targets = self._bound.get(local, set())
        return next(iter(targets)) if len(targets) == 1 else None

    def aliases(self, module: str) -> Set[str]:
        """Local names bound (or presumed) to the canonical ``module``."""
        found = {name for name, targets in self._bound.items() if targets == {module}}
        found.update(n for n in self.presumed if CONVENTIONAL[n] == module)
        return found

    def uses(self, module: str) -> bool:
        """Does the module import (or presume) ``module`` or anything in it?"""
        return any(t == module or t.startswith(module + ".")
                   for targets in self._bound.values() for t in targets if t) or \
            any(CONVENTIONAL[n].split(".")[0] == module for n in self.presumed)


def build_imports(import_records: List[Tuple[str, Optional[str]]],
                  unbound_reads: Set[str]) -> Imports:
    """From every (local, target) an import binds and the names read but bound
    nowhere in the module."""
    bound: Dict[str, Set[Optional[str]]] = {}
    for local, target in import_records:
        bound.setdefault(local, set()).add(target)
    presumed = {name for name in CONVENTIONAL if name in unbound_reads}
    return Imports(bound, presumed)
