"""suffix-mixup: an attribution that multiplies one input's difference from
its baseline by the gradients taken along another input's path.

What it does: in a product ``(x_b - baseline_b) * g`` (or
``tf.multiply(...)``, the difference possibly bound to a name first), when
``g`` is a gradient (``tape.gradient``/``jacobian``/``tf.gradients``, averaged,
stacked, accumulated, returned by a function of the module) taken with
respect to values that do not derive from ``x_b``, and a gradient with respect
to ``x_b``'s path is bound in the same scope, ``g`` is replaced by that one.
The decision comes from the gradient data flow of the semantic model
(recipes/_model/gradients.py), never from the names: ``_1``/``_2``, ``1``/``2``,
``_a``/``_b``, ``_img``/``_txt``, words or no suffix at all.

Why this is a bug: attribution code written per input is copied and renamed
by hand; one gradient name left behind silently multiplies input B's
difference by input A's gradients. Shapes broadcast, nothing raises, and the
attributions are wrong (completeness fails for input B). In seed 003 the
sequence attributions used the static input's average gradients.

Example::

    avg_gradients_1 = path_gradients(model, inputs, baseline, 0)
    avg_gradients_2 = path_gradients(model, inputs, baseline, 1)
    integrated_gradients_2 = (inputs_2 - baseline_2) * avg_gradients_1
    # becomes
    integrated_gradients_2 = (inputs_2 - baseline_2) * avg_gradients_2

Unsafe: it changes which data is used, and the data flow that proves the
crossing may miss what a dynamic program does (a gradient fetched from a
dict, a source picked at run time); a reviewer confirms.

CAVEATS:
- Only products whose other factor is provably a gradient count: statistics
  (``emb_2 / norm_1``), cross terms, gating, cross-attention and hand-written
  backprop are never findings, whatever their names.
- A gradient whose sources cannot be traced (a parameter of a function
  called from elsewhere, ``*args``) is no evidence: nothing is reported.
- The gradient factor must be a name (or a subscripted name) to be seen:
  ``(x_b - base_b) * tf.reduce_mean(grads_a, axis=0)`` is not reported.
- Inputs that derive from one value (``x_1 = data[:, :4]``,
  ``x_2 = data[:, 4:]``) share their origin: a crossing between them is not
  seen.
- When several gradients with respect to ``x_b`` are in scope, the fix takes
  the one computed by a statement of the same shape as the crossed one
  (names aside), else the one no other derives from; when neither picks
  exactly one, the finding has no fix.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from fissix.pgen2 import token

from migrate.recipe import Recipe, SourceFacts, propose
from recipes import _fissix as s
from recipes._model import MANY, model_of
from recipes._pyast import code_text

# `a * b` (any number of factors) and `tf.multiply(a, b)` / `tf.math.multiply(a, b)`
PRODUCT = "term< any+ >"
MULTIPLY = "power< any+ trailer< '.' 'multiply' > trailer< '(' arglist ')' > >"
_MULTIPLY_CALLS = {"tensorflow.multiply", "tensorflow.math.multiply"}


def _factors(node) -> Optional[List]:
    if node.type == s.syms.term:
        if any(op.value != "*" for op in node.children[1::2]):
            return None
        return node.children[::2]
    if model_of(node).callee(node) in _MULTIPLY_CALLS:
        positional, keywords = s.split_arguments(node.children[-1])
        return positional if len(positional) == 2 and not keywords else None
    return None


def _gradient_name(factor):
    """The NAME leaf to rename in a factor: a name, or a subscripted name."""
    factor = s.unparen(factor)
    if s.is_name(factor):
        return factor
    if factor.type == s.syms.power and s.is_name(factor.children[0]) and all(
            t.type == s.syms.trailer and t.children[0].value == "[" for t in factor.children[1:]):
        return factor.children[0]
    return None


def _gradients_of(node, inputs, crossed) -> Dict[str, List]:
    """Names bound before ``node`` in its scope whose value is a gradient
    with respect to ``inputs`` and not one of the mixed lists that also
    hold the ``crossed`` gradient's sources, with their reaching bindings."""
    model = model_of(node)
    flows = model.gradient_flow
    found = {}
    for name in model.scope_of(node).by_name:
        if "." in name:
            continue
        bindings = [b for b in model.reaching(name, node) if b is not MANY]
        if not bindings:
            continue
        flow = flows.of_bindings(bindings)
        if flow.is_gradient and flow.wrt & inputs and not flow.wrt >= crossed:
            found[name] = bindings
    return found


def _counterpart(crossed: str, node, found: Dict[str, List]) -> List[str]:
    """The gradients of ``found`` that stand where ``crossed`` stands: those
    computed by statements of the same shape (names aside), else those no
    other one derives from (the averaged result, not its steps)."""
    shape = _shape(model_of(node).reaching(crossed, node))
    alike = sorted(name for name, bindings in found.items() if _shape(bindings) == shape)
    if len(alike) == 1:
        return alike
    inputs = {other for name, bindings in found.items() for b in bindings for other in found
              if other != name and b.statement is not None and _reads(b.statement, other)}
    return sorted(set(found) - inputs)


def _shape(bindings) -> List[Tuple]:
    """The bound values' tokens, every name blanked."""
    return sorted(tuple((leaf.type, "" if leaf.type == token.NAME else leaf.value)
                        for leaf in (b.value.leaves() if b.value is not None else ()))
                  for b in bindings if b is not MANY)


def _reads(statement, name: str) -> bool:
    return any(s.is_name(leaf, name) for leaf in s.name_leaves(statement))


def _modify(node, capture, filename):
    factors = _factors(node)
    if not factors or len(factors) < 2:
        return
    flows = model_of(node).gradient_flow
    differences = [(f, flows.difference_input(f)) for f in factors]
    differences = [(f, d) for f, d in differences if d is not None and d.origins]
    if len(differences) != 1:
        return
    difference, inputs = differences[0]
    for factor in factors:
        leaf = _gradient_name(factor) if factor is not difference else None
        flow = flows.of(factor) if leaf is not None else None
        if flow is None or not flow.is_gradient or flow.wrt & inputs.origins:
            continue
        found = _gradients_of(node, inputs.origins, flow.wrt)
        found.pop(leaf.value, None)
        replacements = _counterpart(leaf.value, node, found) if found else []
        if not replacements:
            continue
        subject = s.shown(s.unparen(difference))
        message = (f"`{leaf.value}` is a gradient taken along another input's path, but it multiplies "
                   f"`{subject}`, whose own gradients are in scope")
        if len(replacements) > 1:
            propose(node, f"{message} ({', '.join(f'`{r}`' for r in replacements)}): "
                          "use the gradient with respect to this input", fixable=False)
            return
        if propose(node, f"{message}: `{replacements[0]}`; this uses the other input's gradients",
                   safety="unsafe"):
            leaf.value = replacements[0]
            leaf.changed()
        return


def _may_cross_gradients(facts: SourceFacts) -> bool:
    """Precheck: the code takes a gradient and multiplies a subtraction (or a
    name, which may be bound to one) by a name or a subscripted name."""
    text = code_text(facts)
    if not any(word in text for word in (".gradient(", "gradients(", "jacobian(")):
        return False
    differences = {node.targets[0].id for node in facts.nodes(ast.Assign)
                   if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and _difference(node.value)}
    for node in facts.nodes(ast.BinOp, ast.Call):
        if isinstance(node, ast.BinOp):
            if not isinstance(node.op, ast.Mult):
                continue
            pair = (node.left, node.right)
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "multiply" and len(node.args) == 2:
            pair = tuple(node.args)
        else:
            continue
        for one, other in (pair, pair[::-1]):
            if (_difference(one) or isinstance(one, ast.Name) and one.id in differences) \
                    and isinstance(other, (ast.Name, ast.Subscript, ast.BinOp)):
                return True
    return False


def _difference(node) -> bool:
    """``a - b``, or a call of something named ``subtract`` (any spelling)."""
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, ast.Sub)
    func = node.func if isinstance(node, ast.Call) else None
    return isinstance(func, ast.Attribute) and func.attr == "subtract" or isinstance(func, ast.Name) \
        and func.id == "subtract"


RECIPE = Recipe(
    id="suffix-mixup",
    summary="x_2 = (inputs_2 - baseline_2) * avg_gradients_1 -> use avg_gradients_2",
    safety="unsafe",
    query=lambda q: q.select(PRODUCT).modify(_modify).select(MULTIPLY).modify(_modify),
    tokens=(".gradient(", "gradients(", "jacobian("),
    precheck=_may_cross_gradients,
    before_fails="completeness",
)
