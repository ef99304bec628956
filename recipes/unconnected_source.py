"""unconnected-source: ``tape.gradient(target, sources)`` where a source
provably takes no part in computing the target; a weight nothing reads.

What it reports (and the unsafe fixes it offers):
- a source name whose value the target does not read: the semantic model's
  differentiation walk (``recipes/_model/differentiation.py``) follows the
  target back to everything it reads, and the source's binding is not among
  them. A tensor source (an input, an activation) can only reach the target
  through data flow, so models and layers on the way do not matter; a
  variable source could be read inside a model, so it is reported only when
  the target calls no model, layer or unknown function. A walk that cannot
  be followed to the end gives no finding.
- ``self.w = self.add_weight(...)`` in a Keras layer that defines ``call``,
  when nothing in the module reads ``w`` (no ``.w`` anywhere else, no
  ``getattr``), in a module that trains: the weight's gradient is always
  None (Keras warns "Gradients do not exist for variables").

Why this is a bug: TensorFlow returns None for a source the target does not
depend on. Where the source comes from a second call of a model
(Grad-CAM's ``conv_out, _ = grad_model(img)`` beside ``preds = model(img)``),
that is the real bug: a tensor from one call never reaches another call's
output; build one model that outputs both and take both from one call.

Way out: use the source in the computation (or drop it from the sources);
when zeros are the wanted answer (attribution of an input that does not
matter), ``tape.gradient(..., unconnected_gradients=tf.UnconnectedGradients.ZERO)``.
That keyword is offered as an UNSAFE fix, for tensor sources (inputs,
activations: attribution code) and for variables (the weight still never
trains: zeros only replace None); never for the second-call case (zeros
would hide the bug). The unused weight's statement is removed (UNSAFE)
when it is a plain ``self.w = self.add_weight(...)`` alone on its line.

CAVEATS:
- the fix changes None into zeros: code that tests ``g is None`` behaves
  differently; the fix is unsafe for that reason.
- a variable that gets zeros still never trains, and an optimizer with
  weight decay or momentum now updates it where None made it skip it.
- a weight read only by code outside the module (a subclass, a callback)
  looks unused here; removing it also changes the layer's weights list
  (``get_weights``/``set_weights`` order, checkpoints): unsafe.
"""

from __future__ import annotations

import ast

from migrate.recipe import Recipe, propose
from recipes._fissix import enclosing, literal_elements, parse_expression, per_tree, remove_statement, shown, \
    split_arguments, syms, token, unparen
from recipes._model import Kind, model_of
from recipes._model.differentiation import DIFFERENTIATING
from recipes._pyast import calls_one_of, code_text, statements, tape_calls

GRADIENT = "power< NAME trailer< '.' ('gradient'|'jacobian') > trailer< '(' any* ')' > >"
WEIGHT = "expr_stmt< power< 'self' trailer< '.' NAME > > '=' power< 'self' trailer< '.' 'add_weight' > " \
         "trailer< '(' any* ')' > > >"
_ZERO = "unconnected_gradients={}.UnconnectedGradients.ZERO"


def _unconnected(node):
    """(unconnected source names, the model call a source came from when a
    second call made it) for a gradient call; ([], None) when connected or unknown."""
    model = model_of(node)
    tape = model.tape_named(node.children[0].value, node)
    positional, keywords = split_arguments(node.children[2])
    target = positional[0] if positional else keywords.get("target")
    sources = positional[1] if len(positional) > 1 else keywords.get("sources")
    if tape is None or target is None or sources is None or "unconnected_gradients" in keywords:
        return [], None
    walked = model.differentiation.walk(target, params_live=False)
    if walked.opaque or not walked.live:  # a target nothing differentiable reaches is another cause
        return [], None
    watched = model.differentiation.watched()
    elements = literal_elements(unparen(sources))
    found, second = [], None
    for source in elements if elements is not None else [sources]:
        source = unparen(source)
        if source.type != token.NAME:
            continue
        bindings = model.reaching(source.value, source)
        if not bindings or any(b.how not in ("assign", "annassign", "param") for b in bindings) \
                or any(id(b) in walked.reads or id(b.source) in walked.values for b in bindings):
            continue
        kind = model.likely_kind_of(source).kind  # a parameter: typed from what every call passes
        recorded = (id(model.scope_of(source)), source.value) in watched \
            or all(model.tape_of(b.node) is tape for b in bindings)
        if kind == Kind.VARIABLE and not walked.calls or kind == Kind.TENSOR and recorded:
            found.append(source.value)
            second = second or _second_call(model, bindings, walked.calls)
    return found, second


def _second_call(model, bindings, calls):
    """The model call a source came from, when the target came from another
    call (of any model) on the same input."""
    for b in bindings:
        made = b.value if b.value is not None and not b.path else b.source
        made = unparen(made) if made is not None else None
        if made is None or made.type != syms.power or model.kind_of(made.children[0]).kind != Kind.MODEL:
            continue
        fed = str(made.children[-1]).strip()
        if any(c is not made and model.kind_of(c.children[0]).kind == Kind.MODEL
               and str(c.children[-1]).strip() == fed for c in calls):
            return made
    return None


def _gradient_of_unconnected(node, capture, filename) -> bool:
    """Decides the finding: the unconnected names, the second model call a
    source came from (no fix), whether a variable is among them."""
    model = model_of(node)
    capture["names"], capture["second"] = _unconnected(node)
    capture["variable"] = any(model.kind_of(leaf).kind == Kind.VARIABLE
                              for leaf in _source_leaves(node, capture["names"]))
    capture["alias"] = (sorted(model.imports.module_aliases("tensorflow")) or ["tf"])[0]
    return bool(capture["names"])


def _report_gradient(node, capture, filename) -> None:
    names, second, zero = capture["names"], capture["second"], _ZERO.format(capture["alias"])
    listed = ", ".join(f"`{n}`" for n in names)
    head = f"{listed} takes no part in computing the target: its gradient is None"
    if second is not None:
        propose(node, f"{head}. It comes from a separate call `{shown(second)}`: a tensor from one call never "
                      "reaches another call's output. Build one model that outputs both and take both from "
                      "one call", fixable=False)
        return
    if capture["variable"]:
        message = (f"{head}. Use it in the computation or drop it from the sources; if zeros are wanted, pass "
                   f"`{zero}` (unsafe: the weight still never trains, zeros only replace None, and an optimizer "
                   "with weight decay or momentum would now update it)")
    else:
        message = f"{head}. If zeros are the wanted answer (an input that does not matter), pass `{zero}`"
    if propose(node, message, safety="unsafe"):
        trailer = node.children[2]
        inner = "".join(str(c) for c in trailer.children[1:-1]).rstrip()
        new = parse_expression(f"f({inner}, {zero})").children[-1]
        new.prefix = trailer.prefix
        trailer.replace(new)


def _source_leaves(node, names):
    return [leaf for leaf in node.children[2].leaves() if leaf.type == token.NAME and leaf.value in names]


def _unused_weight(node, capture, filename) -> bool:
    model = model_of(node)
    attribute = node.children[0].children[1].children[1]
    function = enclosing(node, syms.funcdef)
    cls = model.method_class(function) if function is not None else None
    if cls is None or function.children[1].value not in ("build", "__init__") \
            or model.keras_role(cls) is None or "call" not in model.methods(cls):
        return False
    _, keywords = split_arguments(node.children[2].children[-1])
    if "trainable" in keywords or "regularizer" in keywords or not model.differentiation.trains():
        return False
    if model.may_be_read_dynamically(f"self.{attribute.value}", node) or _subclassed(model, cls):
        return False
    if any(leaf is not attribute and leaf.value == attribute.value for leaf in _attribute_leaves(node)):
        return False
    stmt = node.parent  # removable: the statement is this one assignment alone on its line
    capture["removable"] = stmt.type == syms.simple_stmt and len(stmt.children) == 2
    return True


def _attribute_leaves(node):
    """Every ``.name`` leaf of the module, once per tree."""
    def build(root):
        return [leaf for leaf in root.leaves() if leaf.type == token.NAME and leaf.prev_sibling is not None
                and leaf.prev_sibling.type == token.DOT]
    return per_tree(node, "unconnected-source attributes", build)


def _subclassed(model, cls) -> bool:
    return any(base is cls for scope in model.index.scopes.values() if scope.node.type == syms.classdef
               for base in model.bases(scope.node))


def _report_weight(node, capture, filename) -> None:
    name = node.children[0].children[1].children[1].value
    message = (f"`self.{name}` is a trainable weight that nothing in this module reads: `call` never uses it, "
               "so its gradient is always None (Keras warns \"Gradients do not exist\"). Use it in `call`, "
               "remove it, or create it with `trainable=False`")
    if not capture["removable"]:
        propose(node, message, fixable=False)
    elif propose(node, f"{message}; removing it is unsafe: the layer's weights list and its checkpoints change, "
                       f"and a subclass or code outside this module may read `.{name}`", safety="unsafe"):
        remove_statement(node.parent)


def _may_be_unconnected(facts):
    """Precheck: anywhere in a file with a named tape's ``gradient`` or
    ``jacobian`` call; else, in a module calling a training method (``trains``), the
    ``self.w = self.add_weight(...)`` without ``trainable=`` of a ``build``
    or ``__init__`` whose ``.w`` the file spells nowhere else (every ``.w``
    of the ``ast`` is a ``.w`` leaf of the filter's count)."""
    if tape_calls(facts, ("gradient", "jacobian")):
        return True
    code = code_text(facts)
    if "add_weight" not in code or not any(word in code for word in DIFFERENTIATING):
        return []
    weights = [found.node for found in statements(facts, ast.Assign)
               if found.function is not None and found.function.name in ("build", "__init__")
               and len(found.node.targets) == 1 and isinstance(found.node.targets[0], ast.Attribute)
               and isinstance(found.node.value, ast.Call)
               and getattr(found.node.value.func, "attr", None) == "add_weight"
               and not any(k.arg == "trainable" for k in found.node.value.keywords)]
    if not weights or not calls_one_of(facts, DIFFERENTIATING):  # the filter wants a module that trains
        return []
    spelled: dict = {}
    for node in facts.nodes(ast.Attribute):
        spelled[node.attr] = spelled.get(node.attr, 0) + 1
    return [node for node in weights if spelled.get(node.targets[0].attr) == 1]


RECIPE = Recipe(
    id="unconnected-source",
    summary="tape.gradient w.r.t. a source the target never reads (unsafe ZERO); a weight call never uses "
            "(unsafe removal)",
    safety="unsafe",
    query=lambda q: q.select(GRADIENT).filter(_gradient_of_unconnected).modify(_report_gradient)
                     .select(WEIGHT).filter(_unused_weight).modify(_report_weight),
    tokens=(".gradient(", ".jacobian(", "add_weight("),
    precheck=_may_be_unconnected,
    before_fails="none-gradient",
)
