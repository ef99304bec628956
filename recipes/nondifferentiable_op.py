"""nondifferentiable-op: a value is differentiated, but every path from the
variables to it runs through an op that has no gradient.

What it reports: ``tf.argmax``/``argmin``/``argsort``, ``tf.round``/
``floor``/``ceil``/``sign``, ``K.round``, the ``tf.math.*`` spellings,
comparisons (``tf.equal``; ``a > b`` is reported at the ``tf.cast`` that makes
a number of it) and casts to an integer or bool dtype
(``tf.cast(x, tf.int32)``), when their input is differentiable (a model or
layer output, a variable, a watched tensor, ``y_pred``) and their output
reaches a differentiated target that nothing differentiable reaches
otherwise: the first argument of ``tape.gradient``, a loss handed to
``compile``, the function of a ``Lambda`` layer applied to a layer's output,
a Keras ``call``, ``minimize``'s loss (the semantic model's
``differentiation`` walk, ``recipes/_model/differentiation.py``).

Why this is a bug: these ops are piecewise constant (or integer-valued):
TensorFlow registers no gradient for them, so the tape returns None for
every variable behind them and Keras raises "No gradients provided for any
variable" (a ``Lambda(argmax)`` inside a model leaves every layer before it
without gradients).

Way out (the message names the one that fits the op):
- rounding: a straight-through estimator ``x + tf.stop_gradient(tf.round(x) - x)``
  (the forward value is rounded, the gradient is the identity's);
- argmax / argsort: a soft surrogate (``tf.nn.softmax`` probabilities, a
  soft ranking) instead of the hard index;
- comparisons and integer casts: a soft threshold (``tf.sigmoid(k * (a - b))``),
  or keep the value float;
- any of them: ``tf.custom_gradient`` to define the gradient you want.

Left alone: such ops whose output does not reach the target (accuracy
computed beside the loss, a metric handed to ``compile``: Keras never
differentiates metrics), ops on data only (``tf.argmax(y_true)``), indices
used to pick from a differentiable tensor (``tf.gather(x, tf.argmax(...))``,
``x[tf.argmax(...)]``, a ``tf.where`` condition, a mask multiplied with a
differentiable value), straight-through forms (another path is live), and
targets the walk cannot follow to the end (an unknown function on the way).

Fix (UNSAFE, rounding only): ``tf.round(x)`` becomes the straight-through
``(x + tf.stop_gradient(tf.round(x) - x))``; the forward value is unchanged,
the gradient becomes the identity's. ``x`` appears twice there, so when it
reads a call (``tf.round(model(x))``) it is first bound to a fresh name in a
statement just above (``unrounded = model(x)``), which runs it once, as
before; that is done only when the rounding sits in an assignment's value,
an expression statement or a return, reached through calls, arithmetic and
parentheses (not a lambda, comprehension, conditional expression or
``and``/``or``, where it may run zero or many times); otherwise report only.
Every other op is report only.

CAVEATS:
- the straight-through fix changes what the model learns (a biased gradient
  estimate where there was none): unsafe. Whether a surrogate keeps the
  model's meaning is the author's call.
- binding the operand above its statement runs it before the statement's
  other calls that textually precede it (``f(a) + tf.round(g(b))`` now calls
  ``g`` before ``f``): the same calls, once each, in another order.
- in a Keras ``call`` only the layer's own weights and sublayers count as
  differentiable, not its inputs (they may be token ids: ``tf.not_equal(ids,
  0)`` is a padding mask); a weightless layer that ends in an argmax of its
  input is not reported.
- a Keras ``call`` or a ``Lambda`` layer is reported only in a module that
  trains something (a tape's gradient, ``compile``, ``fit``): a layer that
  ends in an argmax for inference is fine as long as nobody trains through it.
- a target with one live path and another cut (a loss term that only some
  variables reach through a rounding) is not reported: only a target that
  nothing differentiable reaches is provably without gradients.
"""

from __future__ import annotations

import ast
import re

from migrate.recipe import Recipe, propose
from recipes._fissix import (Leaf, fresh_name, insert_before, is_block, parse_expression, parse_statement,
                             per_tree, scope_names, shown, split_arguments, syms, token)
from recipes._model import model_of
from recipes._model.differentiation import _INTEGER_DTYPES, _LIBRARIES, CUT_OPS, DIFFERENTIATING, ROUNDING, library_op
from recipes._pyast import (calls_one_of, code_text, defines, dotted, import_table, keras_classes, names_read,
                            standalone, statements, tapes)

_OPS = "'argmax'|'argmin'|'argsort'|'round'|'rint'|'floor'|'ceil'|'sign'|'cast'|'equal'|'not_equal'|" \
       "'greater'|'greater_equal'|'less'|'less_equal'|'logical_and'|'logical_or'|'logical_not'|'in_top_k'"
CALL = f"power< any* trailer< '.' ({_OPS}) > trailer< '(' any* ')' > any* > | power< ({_OPS}) trailer< '(' any* ')' > any* >"
_WAY_OUT = {
    "rounding": "a straight-through estimator `x + tf.stop_gradient(tf.round(x) - x)` keeps the rounded value "
                "and the identity's gradient",
    "index": "use a soft surrogate (`tf.nn.softmax` probabilities, a soft ranking) instead of the hard index",
    "threshold": "use a soft threshold (`tf.sigmoid(k * (a - b))`) or keep the value float",
}
_HOW = {"tape": "the tape's target", "loss": "the compiled loss", "lambda": "this Lambda layer's output",
        "call": "this layer's output", "minimize": "the minimized loss"}


def _cut_ops(root) -> dict:
    """id of each cut op -> the target it cuts off, over every fully cut target."""
    differentiation = model_of(root).differentiation
    found = {}
    for target in differentiation.targets():
        if target.how in ("lambda", "call") and not differentiation.trains():
            continue
        # a layer's inputs may be token ids or a mask: only its weights and sublayers count as differentiable
        walked = differentiation.walk(target.node, params_live=target.how not in ("tape", "call"))
        if walked.live or walked.opaque:
            continue
        for cut in walked.cuts:
            found.setdefault(id(_reported_at(differentiation.model, cut)), target)
    return found


def _reported_at(model, cut):
    """Where a cut is reported: the call itself, or for a comparison the
    ``tf.cast(a > b, ...)`` that turns it into a number (a comparison alone
    gives a bool, which no loss can use; selecting the cast keeps the query
    bottom-matchable: an operator is no name to climb from)."""
    if cut.type != syms.comparison:
        return cut
    node = cut.parent
    if node is not None and node.type == syms.arglist:
        node = node.parent
    if node is not None and node.type == syms.trailer:
        node = node.parent
    return node if node is not None and library_op(model, node) == "cast" else cut


def _cuts_a_target(node, capture, filename) -> bool:
    return id(node) in per_tree(node, "nondifferentiable-op", _cut_ops)


def _report(node, capture, filename) -> None:
    target = per_tree(node, "nondifferentiable-op", _cut_ops)[id(node)]
    op = library_op(model_of(node), node)
    way = "rounding" if op in ROUNDING else "index" if op in ("argmax", "argmin", "argsort", "in_top_k") \
        else "threshold"
    message = f"`{shown(node)}` has no gradient, and {_HOW[target.how]} depends on the trainable values " \
              f"only through ops like it: every gradient is None. Way out: {_WAY_OUT[way]}, or define one " \
              "with `tf.custom_gradient`"
    operand, alias = _straight_through_parts(node) if way == "rounding" else (None, None)
    if operand is None:
        propose(node, message, fixable=False)
        return
    if propose(node, message + " (fix: the straight-through form, which changes what the model learns)",
               safety="unsafe"):
        if _reads_a_call(operand):
            operand = _bound_before(node, operand)
        x, rounded = str(operand).strip(), str(node).strip()
        text = f"({x} + {alias}.stop_gradient({rounded} - {x}))"
        new = parse_expression(text)
        new.prefix = node.prefix
        node.replace(new)

def _straight_through_parts(node):
    """(operand, tensorflow alias) for ``tf.round(x)`` with one argument that
    is evaluated once in the straight-through form: it reads no call, or the
    rounding sits in a simple statement where the operand can be bound to a
    fresh name just before; (None, None) otherwise."""
    model = model_of(node)
    if len(node.children) < 2 or node.children[-1].type != syms.trailer:
        return None, None
    positional, keywords = split_arguments(node.children[-1])
    aliases = sorted(model.imports.module_aliases("tensorflow")) or sorted(model.imports.aliases("tensorflow"))
    if len(positional) != 1 or keywords or not aliases or model.callee(node) is None:
        return None, None
    operand = positional[0]
    if operand.type == syms.argument or (_reads_a_call(operand) and _hoisting_statement(node) is None):
        return None, None
    return operand, aliases[0]


def _may_differentiate(facts) -> bool:
    """Precheck: the module has a target the walk starts from
    (``Differentiation.targets``): a named tape's ``gradient``/``jacobian``;
    a ``minimize`` given a function; a function of the file named in a
    ``compile`` call (a compiled loss); or, in a module calling one of the
    training methods, a ``Lambda`` layer or a Keras class's ``call``."""
    code = code_text(facts)
    if not any(re.search(pattern, code) for pattern in _DIFFERENTIATING_WORDS) or "GradientTape" not in facts.text \
            and not any(word in code for word in ("minimize", "compile", "Lambda")) and not defines(facts, "call"):
        return False
    if not _may_cut(facts):
        return False
    tape_names = {name for _, name in tapes(facts)}
    defined = {found.node.name for found in statements(facts, ast.FunctionDef, ast.AsyncFunctionDef)}
    for call in facts.nodes(ast.Call):
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name in _GRADIENT_METHODS and isinstance(getattr(func, "value", None), ast.Name) \
                and func.value.id in tape_names \
                or name == "minimize" and call.args \
                or name == "compile" and any(n in defined for arg in call.args + [k.value for k in call.keywords]
                                             for n in names_read(arg)):
            return True
    return calls_one_of(facts, DIFFERENTIATING) and (calls_one_of(facts, ("Lambda",)) or any(
        found.node.name == "call" and found.cls is not None and found.cls.name in keras_classes(facts)
        for found in statements(facts, ast.FunctionDef, ast.AsyncFunctionDef)))


def _may_cut(facts) -> bool:
    """Is there a call the filter may report (``_reported_at`` a cut,
    ``is_cut``): a TensorFlow/Keras op of CUT_OPS, or a ``cast`` to an
    integer dtype or of a comparison?"""
    qualified = import_table(facts).qualified
    for call in facts.nodes(ast.Call):
        path = dotted(call.func)
        op = (path or "").rpartition(".")[2]
        if op not in CUT_OPS and op != "cast" or not any(q.startswith(_LIBRARIES) for q in qualified(path)):
            continue
        dtype = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "dtype"), None)
        if op in CUT_OPS or any(isinstance(arg, ast.Compare) for arg in call.args) or dtype is not None and (
                isinstance(dtype, ast.Constant) and dtype.value in _INTEGER_DTYPES
                or any(q.rpartition(".")[2] in _INTEGER_DTYPES for q in qualified(dotted(dtype)))):
            return True
    return False


# one pattern a word, each starting with its literal (an alternation is tried at every character);
# texts, compiled by `re` at their first search (only a file the recipe's tokens let through)
_DIFFERENTIATING_WORDS = [standalone(word, after_dot=True) + r"(?!\w)" for word in sorted(DIFFERENTIATING)]
_GRADIENT_METHODS = ("gradient", "jacobian", "batch_jacobian")


def _reads_a_call(node) -> bool:
    return any(n.type == syms.trailer and n.children[0].value == "(" for n in node.pre_order())


# what may lie between the rounding and its statement for the operand to be
# evaluated exactly once, before the statement, in every run of it: calls,
# arithmetic and parentheses (no lambda, comprehension, conditional
# expression, `and`/`or`, whose parts may run zero or many times)
_EAGER = {syms.power, syms.trailer, syms.arglist, syms.argument, syms.arith_expr, syms.term, syms.factor,
          syms.shift_expr, syms.and_expr, syms.xor_expr, syms.expr}


def _hoisting_statement(node):
    """The simple statement (an assignment's value, an expression, a return)
    before which the rounding's operand can be evaluated, or None."""
    while node.parent is not None:
        parent = node.parent
        if parent.type == syms.atom and parent.children[0].value == "(" and len(parent.children) == 3:
            node = parent
            continue
        if parent.type in _EAGER and not any(c.type == syms.comp_for
                                              for c in parent.children):
            node = parent
            continue
        if parent.type == syms.expr_stmt and len(parent.children) == 3 and parent.children[-1] is node:
            node = parent
            parent = node.parent
        elif parent.type == syms.return_stmt:
            node = parent
            parent = node.parent
        if parent is not None and parent.type == syms.simple_stmt and len(parent.children) == 2 \
                and parent.parent is not None and is_block(parent.parent):
            return parent
        return None
    return None


def _bound_before(node, operand):
    """Bind ``operand`` to a fresh name in a statement just above the
    rounding's statement, and put the name in its place."""
    statement = _hoisting_statement(node)
    name = fresh_name("unrounded", scope_names(model_of(node).scope_of(node).node))
    insert_before(statement, parse_statement(f"{name} = {str(operand).strip()}\n"))
    leaf = Leaf(token.NAME, name, prefix=operand.prefix)
    operand.replace(leaf)
    return leaf


RECIPE = Recipe(
    id="nondifferentiable-op",
    summary="argmax/round/integer cast/comparison cuts every path to a differentiated loss (report; "
            "straight-through for rounding)",
    safety="unsafe",
    query=lambda q: q.select(CALL).filter(_cuts_a_target).modify(_report),
    tokens=("argmax", "argmin", "argsort", "round", "rint", "floor", "ceil", "sign", "cast", "equal", "greater",
            "less", "logical_", "in_top_k"),
    precheck=_may_differentiate,
    before_fails="none-gradient",
)
