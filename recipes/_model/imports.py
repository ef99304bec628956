"""Import spellings -> canonical dotted names.

Every spelling of the same API gets one name, so recipes compare strings:
``tf.compat.v2.shape`` and ``tensorflow.shape`` are ``tensorflow.shape``;
``tf.keras.layers.Dense``, ``tf_keras.layers.Dense`` and Keras 3's
``keras.layers.Dense`` are ``keras.layers.Dense``.
"""

from __future__ import annotations

from typing import Dict, Iterator, NamedTuple, Optional, Sequence, Set, Tuple

from migrate.conventions import CONVENTIONAL

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


def canonical(path: str) -> str:
    """The one spelling of a dotted module path (see the module docstring)."""
    for prefix, replacement in _PREFIXES:
        if path == prefix or path.startswith(prefix + "."):
            return replacement + path[len(prefix):]
    return path


def _text(node) -> str:
    return "".join(leaf.value for leaf in node.leaves())


class ImportRecord(NamedTuple):
    """One name an import statement binds, as both the fissix walk
    (``import_bindings``) and the stdlib ``ast`` walk of the prechecks
    (``recipes._pyast.import_table``) give it: one table is built from either."""

    local: str  # the name bound
    module: str  # as spelled, dots joined: ``a.b`` of ``import a.b [as c]``, ``..m`` of a relative import
    name: Optional[str]  # ``x`` of ``from module import x``; None for ``import module``
    aliased: bool  # ``as ...``

    @property
    def target(self) -> Optional[str]:
        """The canonical path bound; None for a relative import (we cannot
        name it). ``import a.b`` binds ``a``."""
        if self.module.startswith("."):
            return None
        if self.name is not None:
            return canonical(f"{self.module}.{self.name}")
        return canonical(self.module if self.aliased else self.local)


def import_bindings(node) -> Iterator[Tuple[ImportRecord, object]]:
    """(record, its local NAME leaf) for each name an ``import``/``from ...
    import`` statement binds (a star import binds nothing we can name)."""
    if node.type == syms.import_name:
        target = node.children[1]
        items = target.children if target.type == syms.dotted_as_names else [target]
        for item in items:
            if item.type == token.COMMA:
                continue
            if item.type == syms.dotted_as_name:
                yield ImportRecord(item.children[2].value, _text(item.children[0]), None, True), item.children[2]
            else:
                root = next(item.leaves()) if item.type != token.NAME else item
                yield ImportRecord(root.value, _text(item), None, False), root
        return
    parts = node.children
    where = next(i for i, p in enumerate(parts) if p.type == token.NAME and p.value == "import")
    module = "".join(_text(p) for p in parts[1:where])
    for child in parts[where + 1:]:
        items = child.children if child.type == syms.import_as_names else [child]
        for item in items:
            if item.type == syms.import_as_name:
                yield ImportRecord(item.children[2].value, module, item.children[0].value, True), item.children[2]
            elif item.type == token.NAME:
                yield ImportRecord(item.value, module, item.value, False), item
            # else '(', ')', ',', '*'


class Imports:
    """The module's one import table: what its imports bind (anywhere:
    functions and ``try`` blocks included), and which conventional aliases
    it uses unbound (``presumed``). Canonical answers (``module_of``,
    ``aliases``, ``uses``, ``qualified``) and, for text gates, the modules
    as spelled (``module_aliases``, ``imported_names``)."""

    def __init__(self, records: Sequence[ImportRecord], presumed: Set[str]):
        self.records = tuple(records)
        self.presumed = presumed
        self._bound: Dict[str, Set[Optional[str]]] = {}
        for record in self.records:
            self._bound.setdefault(record.local, set()).add(record.target)

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

    def qualified(self, name: Optional[str]) -> Set[str]:
        """Every canonical path the dotted ``name`` may resolve to: through
        any import of its first name, or its presumed module."""
        head, _, rest = (name or "").partition(".")
        targets = {t for t in self._bound.get(head, ()) if t}
        if head in self.presumed:
            targets.add(CONVENTIONAL[head])
        return {canonical(f"{target}.{rest}" if rest else target) for target in targets}

    def module_aliases(self, module: str) -> Set[str]:
        """Local names bound by ``import module [as x]``, ``module`` as spelled,
        and the presumed conventional aliases of ``module`` (a pasted snippet)."""
        return {r.local for r in self.records if r.name is None and r.module == module} | \
            {n for n in self.presumed if CONVENTIONAL[n] == module}

    def imported_names(self, module: str) -> Dict[str, str]:
        """local name -> original name for ``from module import a [as b]``, as spelled."""
        return {r.local: r.name for r in self.records if r.name is not None and r.module == module}


def build_imports(records: Sequence[ImportRecord], unbound_reads: Set[str]) -> Imports:
    """From every name an import binds and the names read but bound nowhere
    in the module (a conventional one among them is presumed)."""
    return Imports(records, {name for name in CONVENTIONAL if name in unbound_reads})
