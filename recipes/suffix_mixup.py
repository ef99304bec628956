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

CAVEATS:
- Left alone when several names carry another suffix (``blend_2 = w_2 * g_2
  + w_1 * g_1`` mixes on purpose), when the target has no suffix, or when
  the odd name shares the target's stem (``h_2 = h_1 * decay_2`` is a
  recurrence).
- Called names (``layer_1(x_2)``) are not operands: a shared layer is common.
"""

from __future__ import annotations

import re
from typing import Optional, Tuple

from migrate.recipe import Recipe, propose
from recipes import _scope as s

_SUFFIX = re.compile(r"^(?P<stem>[A-Za-z_]\w*?)_(?P<n>\d+)$")


def _split(name: str) -> Optional[Tuple[str, str]]:
    match = _SUFFIX.match(name)
    return (match.group("stem"), match.group("n")) if match else None


def _is_callee(leaf) -> bool:
    following = leaf.next_sibling
    return following is not None and following.type == s.syms.trailer and following.children[0].value == "("


def _bound_before(name: str, stmt) -> bool:
    """Is ``name`` bound by a statement that comes before ``stmt`` in its scope?"""
    scope = s.scope_of(stmt)
    for other in scope.pre_order():
        if other is stmt:
            return False
        if other.parent is not None and s.is_block(other.parent) and s.scope_of(other) is scope \
                and not s.attached(stmt, other) and name in s.bound_names(other):
            return True
    return False


def _modify(node, capture, filename):
    for stmt in list(node.pre_order()):
        if stmt.type != s.syms.simple_stmt:
            continue
        pair = s.simple_assignment(stmt)
        if not pair or not s.is_name(pair[0]) or not _split(pair[0].value):
            continue
        stem, suffix = _split(pair[0].value)
        operands = [leaf for leaf in s.name_leaves(pair[1]) if not _is_callee(leaf)]
        numbered = {leaf.value: _split(leaf.value) for leaf in operands if _split(leaf.value)}
        same = [n for n, (_, k) in numbered.items() if k == suffix]
        odd = [n for n, (_, k) in numbered.items() if k != suffix]
        if len(odd) != 1 or not same:
            continue
        odd_stem = numbered[odd[0]][0]
        sibling = f"{odd_stem}_{suffix}"
        if odd_stem == stem or not _bound_before(sibling, stmt):
            continue
        if propose(stmt.children[0], f"`{odd[0]}` in the assignment to `{pair[0].value}`: every other "
                                     f"operand has the suffix _{suffix} and `{sibling}` exists; this uses "
                                     f"the other input's data", safety="unsafe"):
            for leaf in operands:
                if leaf.value == odd[0]:
                    leaf.value = sibling
                    leaf.changed()


RECIPE = Recipe(
    id="suffix-mixup",
    summary="x_2 = f(inputs_2, avg_gradients_1) -> use avg_gradients_2",
    safety="unsafe",
    query=lambda q: q.select("file_input< any* >").modify(_modify),
    tokens=tuple(f"_{digit}{eq}" for digit in range(10) for eq in (" =", "=")),
    before_fails="completeness",
)
