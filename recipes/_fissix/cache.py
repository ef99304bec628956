"""Facts about a whole module, computed once per tree and shared by every
match of every recipe in a pass (the import table, the model classes): a
pattern's filter runs once per candidate node, and recomputing a module-wide
fact there would make a pass quadratic in the file's size.

The engine calls `forget` once a pass has mutated the tree."""

from __future__ import annotations

from typing import Callable, TypeVar

from fissix.fixer_util import find_root

T = TypeVar("T")
_ATTRIBUTE = "_tf_migrate_facts"


def per_tree(node, name: str, build: Callable[[object], T]) -> T:
    """``build(root)`` for the tree of ``node``, computed once per tree."""
    root = find_root(node)
    facts = root.__dict__.setdefault(_ATTRIBUTE, {})
    if name not in facts:
        facts[name] = build(root)
    return facts[name]


def forget(root) -> None:
    root.__dict__.pop(_ATTRIBUTE, None)


def nodes_of_type(node, kind: int) -> list:
    """Every node of type ``kind`` in the tree of ``node``, in source order,
    from one walk of the tree shared by every recipe in the pass."""
    return per_tree(node, "nodes by type", _index).get(kind, [])


def _index(root) -> dict:
    index: dict = {}
    stack = [root]
    while stack:
        node = stack.pop()
        index.setdefault(node.type, []).append(node)
        stack.extend(reversed(node.children))
    return index
