"""suffix-mixup: the one operand whose numbered suffix disagrees with the rest.

What it does: in ``target_N = expression`` where the target and the other
operands share the numbered suffix ``_N``, the single operand name with
another suffix (``avg_gradients_1``) whose sibling ``avg_gradients_N`` is
bound earlier in the same scope is replaced by that sibling.

Why this is a bug: code written per input (``inputs_1``/``inputs_2``) is
copied and renamed by hand; one name left behind silently computes with the
other input's data. In seed 003 the sequence attributions used the static
input's average gradients: shapes broadcast, nothing raises, and the
attributions are wrong (completeness fails).

Example::

    integrated_gradients_2 = (inputs_2 - baseline_2) * avg_gradients_1
    # becomes
    integrated_gradients_2 = (inputs_2 - baseline_2) * avg_gradients_2

Unsafe: it changes which data is used.

Only arithmetic operands count: names combined by ``+ - * / // % @`` or
unary ``-``/``+``, at any depth of parentheses, and the name of a subscripted
operand (``x_2[0]``). Names inside call arguments, subscripts, list/tuple
displays or keyword arguments are not operands: ``f(inputs_1, inputs_2)``
or ``model(inputs=[a_1, a_2])`` feeds numbered inputs to their places on
purpose, and ``c_1 = from_row_length(a_1, nrows=b_0.rows())`` uses the
suffix as an index.

CAVEATS:
- Left alone when several names carry another suffix (``blend_2 = w_2 * g_2
  + w_1 * g_1`` mixes on purpose), when the target has no suffix, or when
  the odd name shares the target's stem (``h_2 = h_1 * decay_2`` is a
  recurrence).
- A mix-up inside a call (``out_2 = f(x_2, avg_1)``) or under ``**`` is
  not reported: a call's arguments are its own business, and the seed's bug
  is in plain arithmetic.
"""

from __future__ import annotations

import ast
import re
from typing import List, Optional, Tuple

from fissix.pytree import Leaf

from migrate.recipe import Recipe, SourceFacts, propose
from recipes import _fissix as s

_SUFFIX = re.compile(r"^(?P<stem>[A-Za-z_]\w*?)_(?P<n>\d+)$")
_ARITHMETIC = {s.syms.arith_expr, s.syms.term}


def _split(name: str) -> Optional[Tuple[str, str]]:
    match = _SUFFIX.match(name)
    return (match.group("stem"), match.group("n")) if match else None


def arithmetic_operands(node) -> List[Leaf]:
    """NAME leaves that are operands of the arithmetic expression ``node``
    (a bare name, or the name of a subscripted name); nothing from inside a
    call, a subscript, a display or any other kind of expression."""
    node = s.unparen(node)
    if s.is_name(node):
        return [node]
    if node.type in _ARITHMETIC:
        return [leaf for child in node.children[::2] for leaf in arithmetic_operands(child)]
    if node.type == s.syms.factor and node.children[0].value in "-+":
        return arithmetic_operands(node.children[1])
    if node.type == s.syms.power and s.is_name(node.children[0]) and all(
            trailer.type == s.syms.trailer and trailer.children[0].value == "[" for trailer in node.children[1:]):
        return [node.children[0]]
    return []


def _bound_before(name: str, stmt) -> bool:
    """Is ``name`` bound by a statement that comes before ``stmt`` in its scope?"""
    scope = s.scope_of(stmt)
    for other in scope.pre_order():
        if other is stmt:
            return False
        if other.parent is not None and s.is_block(other.parent) and s.scope_of(other) is scope \
                and not s.contains(other, stmt) and name in s.bound_names(other):
            return True
    return False


# `name_N = expression`, alone on its line
PATTERN = "simple_stmt< expr_stmt< target=NAME '=' value=any > any >"


def _numbered_target(node, capture, filename) -> bool:
    return _split(capture["target"].value) is not None


def _modify(node, capture, filename):
    target, value = capture["target"], capture["value"]
    stem, suffix = _split(target.value)
    operands = arithmetic_operands(value)
    numbered = {leaf.value: _split(leaf.value) for leaf in operands if _split(leaf.value)}
    same = [n for n, (_, k) in numbered.items() if k == suffix]
    odd = [n for n, (_, k) in numbered.items() if k != suffix]
    if len(odd) != 1 or not same:
        return
    odd_stem = numbered[odd[0]][0]
    sibling = f"{odd_stem}_{suffix}"
    if odd_stem == stem or not _bound_before(sibling, node):
        return
    if propose(node.children[0], f"`{odd[0]}` in the assignment to `{target.value}`: every other "
                                 f"operand has the suffix _{suffix} and `{sibling}` exists; this uses "
                                 f"the other input's data", safety="unsafe"):
        for leaf in operands:
            if leaf.value == odd[0]:
                leaf.value = sibling
                leaf.changed()


def _may_mix_suffixes(facts: SourceFacts) -> bool:
    """Precheck: ``name_N = <arithmetic>`` reading a name with another suffix."""
    for node in ast.walk(facts.tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            continue
        target = _split(node.targets[0].id)
        inside = list(ast.walk(node.value))
        if target and any(isinstance(n, (ast.BinOp, ast.UnaryOp)) for n in inside) and any(
                isinstance(n, ast.Name) and (_split(n.id) or target)[1] != target[1] for n in inside):
            return True
    return False


RECIPE = Recipe(
    id="suffix-mixup",
    summary="x_2 = (inputs_2 - baseline_2) * avg_gradients_1 -> use avg_gradients_2",
    safety="unsafe",
    query=lambda q: q.select(PATTERN).filter(_numbered_target).modify(_modify),
    tokens=tuple(f"_{digit}{eq}" for digit in range(10) for eq in (" =", "=")),
    precheck=_may_mix_suffixes,
    before_fails="completeness",
)
