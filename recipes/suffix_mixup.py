"""suffix-mixup: the one operand whose numbered suffix disagrees with the rest.

What it does: in ``target_N = expression`` where the target and the other
operands share the number ``N``, the single operand name with another number
(``avg_gradients_1``) whose sibling ``avg_gradients_N`` is bound before this
line is replaced by that sibling.

The twin statement is the evidence: the assignment to the target's name with
the odd operand's number (``integrated_gradients_1 = ...``).
- The twin is this statement for the other number, all its operands
  numbered alike: the odd operand is a mix-up (unsafe fix).
- The twin is this statement with the numbers swapped (each twin reads the
  other's name: cross-gating, cross-attention): intentional, no finding.
- A twin that is neither (layer ``k`` reads layer ``k - 1`` in each):
  intentional, no finding.
- No twin: the operands alone decide for ``name_N`` suffixes; bare digit
  suffixes (``x1``/``avg1``) are reported only with twin evidence.

Why this is a bug: code written per input (``inputs_1``/``inputs_2``) is
copied and renamed by hand; one name left behind silently computes with the
other input's data. In seed 003 the sequence attributions used the static
input's average gradients: shapes broadcast, nothing raises, and the
attributions are wrong (completeness fails).

Example::

    integrated_gradients_1 = (inputs_1 - baseline_1) * avg_gradients_1
    integrated_gradients_2 = (inputs_2 - baseline_2) * avg_gradients_1
    # becomes
    integrated_gradients_2 = (inputs_2 - baseline_2) * avg_gradients_2

Unsafe: it changes which data is used.

What is an operand: names combined by ``+ - * / // % @`` or unary
``-``/``+``, at any depth of parentheses, the name of a subscripted operand
(``x_2[0]``), and the positional arguments of ``tf.multiply``, ``tf.add``,
``tf.subtract``, ``tf.divide``, ``tf.matmul`` (also ``add_n``, ``maximum``,
``minimum``, ``pow``) and any ``tf.math.*`` function, in any import spelling
(recipes/_model). Names inside other calls, subscripts, list/tuple displays
or keyword arguments are not operands: ``f(inputs_1, inputs_2)`` or
``model(inputs=[a_1, a_2])`` feeds numbered inputs to their places on
purpose, and ``c_1 = from_row_length(a_1, nrows=b_0.rows())`` uses the
suffix as an index.

CAVEATS:
- Left alone when several names carry another number (``blend_2 = w_2 * g_2
  + w_1 * g_1`` mixes on purpose), when the target has no number, or when
  the odd name shares the target's stem (``h_2 = h_1 * decay_2`` is a
  recurrence).
- A sibling bound only later in the text (in a loop, by a later iteration)
  is not evidence: layer code binds ``a_1`` from ``z_1`` after it.
- A mix-up inside another call (``out_2 = f(x_2, avg_1)``) or under ``**``
  is not reported.
- Twins are compared token by token: a twin written differently (other
  spacing is fine, another expression is not) gives no evidence.
"""

from __future__ import annotations

import ast
import re
from typing import Callable, List, Optional, Tuple

from fissix.pgen2 import token
from fissix.pytree import Leaf

from migrate.recipe import Recipe, SourceFacts, propose, walk
from recipes import _fissix as s
from recipes._model import model_of
from migrate.prefilter import GAP
from recipes._pyast import code_text, spelled_as_in_ast, statements

_SUFFIX = re.compile(r"^(?P<stem>[A-Za-z_]\w*?)_(?P<n>\d+)$")
_BARE = re.compile(r"^(?P<stem>[A-Za-z](?:\w*[A-Za-z])?)(?P<n>\d+)$")
_ARITHMETIC = {s.syms.arith_expr, s.syms.term}
# TensorFlow calls whose positional arguments are operands like those of an operator
_TF_OPERATORS = {"tensorflow." + name for name in (
    "multiply", "add", "subtract", "divide", "truediv", "matmul", "add_n", "maximum", "minimum",
    "pow", "linalg.matmul")}
_TF_OPERATOR_MODULE = "tensorflow.math."


class _Name:
    """A numbered name: ``stem`` + ``sep`` + ``n`` (``avg_grads_1``, ``avg1``)."""

    def __init__(self, stem: str, sep: str, n: str):
        self.stem, self.sep, self.n = stem, sep, n

    def with_number(self, n: str) -> str:
        return f"{self.stem}{self.sep}{n}"


def _split(name: str) -> Optional[_Name]:
    match = _SUFFIX.match(name)
    if match:
        return _Name(match.group("stem"), "_", match.group("n"))
    match = _BARE.match(name)
    return _Name(match.group("stem"), "", match.group("n")) if match else None


def arithmetic_operands(node, model=None) -> List[Leaf]:
    """NAME leaves that are operands of the arithmetic expression ``node``
    (a bare name, or the name of a subscripted name), also the positional
    arguments of ``tf.multiply``/``add``/``subtract``/``divide``/``matmul``
    and ``tf.math.*`` when a ``model`` resolves callees; nothing from inside
    another call, a subscript, a display or any other kind of expression."""
    node = s.unparen(node)
    if s.is_name(node):
        return [node]
    if node.type in _ARITHMETIC:
        return [leaf for child in node.children[::2] for leaf in arithmetic_operands(child, model)]
    if node.type == s.syms.factor and node.children[0].value in "-+":
        return arithmetic_operands(node.children[1], model)
    if node.type == s.syms.power and s.is_name(node.children[0]) and all(
            trailer.type == s.syms.trailer and trailer.children[0].value == "[" for trailer in node.children[1:]):
        return [node.children[0]]
    if model is not None and node.type == s.syms.power and s.is_call(node) and _is_operator(model.callee(node)):
        positional = s.split_arguments(node.children[-1])[0]
        return [leaf for arg in positional if arg.type != s.syms.argument
                for leaf in arithmetic_operands(arg, model)]
    return []


def _is_operator(callee: Optional[str]) -> bool:
    return bool(callee) and (callee in _TF_OPERATORS or callee.startswith(_TF_OPERATOR_MODULE))


def _twins(stmt, name: str) -> List:
    """Assignments ``name = ...`` alone on their line in ``stmt``'s scope."""
    scope = s.scope_of(stmt)
    found = []
    for node in scope.pre_order():
        if node.type == s.syms.simple_stmt and node is not stmt and s.scope_of(node) is scope:
            pair = s.simple_assignment(node)
            if pair and s.is_name(pair[0], name):
                found.append(node)
    return found


def _spelled(stmt, rename: Callable[[str], str]) -> List[str]:
    """The statement's tokens, each name passed through ``rename``."""
    return [rename(leaf.value) if leaf.type == token.NAME else leaf.value
            for leaf in stmt.leaves() if leaf.type not in (token.NEWLINE, token.ENDMARKER)]


def _swap(a: str, b: str) -> Callable[[str], str]:
    """Rename every numbered name with number ``a`` to ``b`` and back."""
    def rename(name: str) -> str:
        parts = _split(name)
        if parts is None or parts.n not in (a, b):
            return name
        return parts.with_number(b if parts.n == a else a)
    return rename


def _twin_verdict(stmt, target: _Name, odd: str, sibling: str, other: str) -> Optional[str]:
    """What the twin statements (``stem`` with the other number) say:
    "mix-up" when one of them is this statement for the other number with
    the odd operand in its place, "crossing" when one is this statement
    with the numbers swapped (each twin reads the other's name on purpose),
    "differs" when twins exist and neither; None without a twin."""
    twins = _twins(stmt, target.with_number(other))
    if not twins:
        return None
    swap = _swap(target.n, other)
    fixed = _spelled(stmt, lambda name: swap(sibling if name == odd else name))
    crossed = _spelled(stmt, swap)
    spelled = [_spelled(twin, lambda name: name) for twin in twins]
    if crossed in spelled:
        return "crossing"
    return "mix-up" if fixed in spelled else "differs"


# `name_N = expression`, alone on its line
PATTERN = "simple_stmt< expr_stmt< target=NAME '=' value=any > any >"


def _numbered_target(node, capture, filename) -> bool:
    return _split(capture["target"].value) is not None


def _modify(node, capture, filename):
    target_leaf, value = capture["target"], capture["value"]
    target = _split(target_leaf.value)
    model = model_of(node)
    operands = arithmetic_operands(value, model)
    numbered = {leaf.value: _split(leaf.value) for leaf in operands if _split(leaf.value)}
    same = [n for n, parts in numbered.items() if parts.n == target.n]
    odd = [n for n, parts in numbered.items() if parts.n != target.n]
    if len(odd) != 1 or not same:
        return
    odd_parts = numbered[odd[0]]
    sibling = odd_parts.with_number(target.n)
    line = node.get_lineno()
    if odd_parts.stem == target.stem or not any(b.line < line for b in model.reaching(sibling, node)):
        return
    verdict = _twin_verdict(node, target, odd[0], sibling, odd_parts.n)
    if verdict == "mix-up":
        evidence = (f"`{target.with_number(odd_parts.n)}` is computed the same way from names "
                    f"numbered {odd_parts.n}, so this one should read `{sibling}`")
    elif verdict is None and target.sep == "_":
        evidence = f"every other operand has the suffix _{target.n} and `{sibling}` exists"
    else:
        return  # a symmetric crossing or a twin that differs: on purpose; bare digits need a twin
    if propose(node.children[0], f"`{odd[0]}` in the assignment to `{target_leaf.value}`: {evidence}; "
                                 "this uses the other input's data", safety="unsafe"):
        for leaf in operands:
            if leaf.value == odd[0]:
                leaf.value = sibling
                leaf.changed()


# a name ending in a digit (not an attribute), searched for in the reversed text: there
# it starts with its digit, and a pattern starting with a digit skips ahead to digits
# (one starting with an identifier character tries every word: 3.7x slower)
_NUMBERED_WORD_REVERSED = re.compile(r"\d(?<!\w\d)\w*[A-Za-z_](?![\w.])")
_ASSIGNED = re.compile(rf"{GAP}*=(?!=)")


def numbered_words(text: str) -> List[Tuple[str, bool]]:
    r"""Each name ending in a digit, in order, and whether ``=`` (not
    ``==``) follows it: ``(?<![\w.])([A-Za-z_]\w*)(?<=\d)(?!\w)`` with an
    optional ``GAP*=(?!=)``, found faster."""
    end = len(text)
    found = [(text[end - match.end():end - match.start()], _ASSIGNED.match(text, end - match.start()) is not None)
             for match in _NUMBERED_WORD_REVERSED.finditer(text[::-1])]
    found.reverse()
    return found


def _may_mix_suffixes(facts: SourceFacts) -> List[ast.AST]:
    """Precheck: the assignments ``name_N = <arithmetic or a call>`` (or
    ``nameN = ...``) reading a name with the same number and one with
    another number and stem whose sibling (that stem numbered N) the code
    spells somewhere (_modify: a reaching binding of it). The code's text
    first: a numbered name followed by ``=`` (an assignment's target), numbered names of two
    numbers, and, for some target, a name of another number and stem whose
    sibling the code spells."""
    spelled, targets = {}, {}  # numbered words; number -> stems of the targets numbered so
    for word, assigned in numbered_words(code_text(facts)):
        name = _split(word)
        if name is not None:
            spelled[word] = name
            if assigned:
                targets.setdefault(name.n, set()).add(name.stem)
    if not targets or len({name.n for name in spelled.values()}) < 2:
        return []
    words = facts.derived("code words", lambda f: set(_WORD.findall(code_text(f))))
    same_names = spelled_as_in_ast(facts)  # else a number's digits may differ in fissix's names
    if same_names and not any(name.n != n and name.with_number(n) in words and stems != {name.stem}
                              for name in spelled.values() for n, stems in targets.items()):
        return []  # no target has a name of another number and stem with a sibling
    found = []
    for node in (found.node for found in statements(facts, ast.Assign)):
        if not (len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            continue
        target = _split(node.targets[0].id)
        if target is None:
            continue
        inside = walk(node.value)
        if not any(isinstance(n, (ast.BinOp, ast.UnaryOp, ast.Call)) for n in inside):
            continue
        numbered = [name for name in (_split(n.id) for n in inside if isinstance(n, ast.Name)) if name]
        if not same_names and any(name.n != target.n for name in numbered) \
                or any(name.n == target.n for name in numbered) and any(
                    name.n != target.n and name.stem != target.stem and name.with_number(target.n) in words
                    for name in numbered):
            found.append(node)
    return found


_WORD = re.compile(r"\w+")


RECIPE = Recipe(
    id="suffix-mixup",
    summary="x_2 = (inputs_2 - baseline_2) * avg_gradients_1 -> use avg_gradients_2",
    safety="unsafe",
    query=lambda q: q.select(PATTERN).filter(_numbered_target).modify(_modify),
    tokens=tuple(f"{digit}{eq}" for digit in range(10) for eq in (" =", "=")),
    precheck=_may_mix_suffixes,
    before_fails="completeness",
)
