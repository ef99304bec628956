"""Facts about a ``tape.gradient(target, sources)`` call and its tape that
the recipes about gradient sources share: its arguments, the tape's
constructor options, and which names a tape body computes from a source
through tensors (a ``.numpy()``, ``float()`` or ``np.*`` copy cuts the path:
what is computed from it is not recorded, whatever is watched).

    gradient_arguments(call)      -> (target, sources, [source elements]) | None
    gradient_of_tape(model, call, name_leaf) -> (Tape, arguments) | None
    tape_option(tape, "persistent") -> the keyword's expression | None
    same_tensor(model, name)      -> the name an alias chain ``a = b = x`` ends at
    tape_module(tape)             -> "tf" of ``tf.GradientTape()``: how the module spells tensorflow
    computed_from(model, body, names) -> names bound in ``body`` from ``names``
    reads_through_tensors(model, expr, names) -> does ``expr`` read one of ``names`` as a tensor
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Set, Tuple

from ._tree import literal_elements, split_arguments, syms, token, unparen
from .contexts import Tape

if TYPE_CHECKING:
    from . import Model

_HOST_COPIES = {"builtin:float", "builtin:int", "builtin:bool", "builtin:list"}  # a tensor into Python data


def gradient_arguments(call) -> Optional[Tuple[object, object, List]]:
    """(target, sources, source elements) of ``x.gradient(target, sources)``
    (positional or keyword); a display of sources gives its elements."""
    trailer = call.children[-1] if call.children[-1].children[0].type == token.LPAR else None
    for index, child in enumerate(call.children):
        if child.type == syms.trailer and child.children[0].type == token.DOT \
                and child.children[1].value == "gradient" and index + 1 < len(call.children):
            trailer = call.children[index + 1]
            break
    if trailer is None or trailer.type != syms.trailer or trailer.children[0].type != token.LPAR:
        return None
    positional, keywords = split_arguments(trailer)
    target = positional[0] if positional else keywords.get("target")
    sources = positional[1] if len(positional) > 1 else keywords.get("sources")
    if target is None or sources is None:
        return None
    elements = literal_elements(sources)
    return target, sources, elements if elements is not None else [sources]


def gradient_of_tape(model: "Model", call, name_leaf) -> Optional[Tuple[Tape, Tuple[object, object, List]]]:
    """``name.gradient(...)`` where ``name`` is a tape (``with ... as name``):
    the tape and ``gradient_arguments``; None otherwise."""
    tape = model.tape_named(name_leaf.value, name_leaf)
    parts = gradient_arguments(call)
    return (tape, parts) if tape is not None and tape.name is not None and parts is not None else None


def same_tensor(model: "Model", expr) -> str:
    """The name an alias chain ``a = b = x`` ends at (one tensor object, so
    watching ``a`` watches ``x``); the code of anything else."""
    for _ in range(8):
        if expr.type != token.NAME:
            break
        value = model.assigned_value(expr.value, expr)
        if value is None or unparen(value).type != token.NAME:
            return expr.value
        expr = unparen(value)
    return "".join(str(leaf) for leaf in expr.leaves()).strip() if expr.type != token.NAME else expr.value


def tape_module(tape: Tape) -> Optional[str]:
    """How the module spells tensorflow, read off ``tf.GradientTape()``
    (``tf``, ``tensorflow``); None for a bare ``GradientTape()``."""
    item = tape.statement.children[1]
    expr = item.children[0] if item.type == syms.with_item else item
    head = expr.children[:-2] if expr.type == syms.power and len(expr.children) > 2 else []
    spelled = "".join(str(part) for part in head).strip()
    return spelled or None


def tape_option(tape: Tape, keyword: str):
    """The expression given for ``keyword`` to the tape's constructor; None when not given."""
    for item in tape.statement.children[1:-2]:
        expr = item.children[0] if item.type == syms.with_item else item
        if expr.type == syms.power and expr.children[-1].type == syms.trailer \
                and expr.children[-1].children[0].type == token.LPAR:
            found = split_arguments(expr.children[-1])[1].get(keyword)
            if found is not None:
                return found
    return None


def _host_copy(leaf, model: "Model") -> bool:
    """``leaf`` is read inside ``x.numpy()``, ``float(x)``, ``np.*(x)``."""
    node = leaf
    while node.parent is not None and node.parent.type not in (syms.simple_stmt, syms.suite):
        parent = node.parent
        if parent.type == syms.power:
            kids = parent.children
            head = kids[0]
            if node is not head and ((model.callee(parent) or "").startswith("numpy.")
                                     or model.kind_of(head).what in _HOST_COPIES):
                return True
            if node is head and any(k.type == syms.trailer and k.children[0].type == token.DOT
                                    and k.children[1].value == "numpy" for k in kids[1:]):
                return True
        node = parent
    return False


def reads_through_tensors(model: "Model", expr, names: Set[str]) -> bool:
    """Does ``expr`` read one of ``names`` other than through a host copy?"""
    for leaf in expr.leaves():
        if leaf.type == token.NAME and leaf.value in names \
                and not (leaf.prev_sibling is not None and leaf.prev_sibling.type == token.DOT) \
                and not _host_copy(leaf, model):
            return True
    return False


def computed_from(model: "Model", body, names: Set[str]) -> Set[str]:
    """Names that assignments in ``body`` (in order, loops once more) bind
    from ``names`` or from names so bound, read as tensors."""
    found = set(names)
    for _ in range(2):  # a second round for values carried around a loop
        for node in body.pre_order():
            if node.type != syms.expr_stmt or len(node.children) < 3:
                continue
            value = node.children[-1]
            if reads_through_tensors(model, value, found) or node.children[1].type != token.EQUAL \
                    and reads_through_tensors(model, node.children[0], found):
                for target in node.children[:-1:2]:
                    found |= {leaf.value for leaf in target.leaves() if leaf.type == token.NAME}
    return found
