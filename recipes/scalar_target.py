"""scalar-target: differentiate one model output, not all of them at once.

What it does: in ``tape.gradient(target, x)`` where ``x`` is watched (an
attribution or saliency computation, not a training step) and ``target`` is a
call of a Keras model ``model(...)`` on the watched input (directly, or
through a name bound to it in the tape), the target output is selected:
``model(...)[:, t]``. The gradient call may sit in a larger expression
(``tape.gradient(out, x)[0]``) and take keyword arguments
(``target=``, ``sources=``). ``t`` is ``--target-index`` when given, else a
class index in scope where the output is computed (a parameter or local named
``target_class_idx``, ``class_index``, ``target_idx``, ``pred_class``,
``label``... that is not a list or an array), else 0, and the message says
which.

Why this is a bug: ``tape.gradient`` of a non-scalar target does not return
None (the seed says it does): it differentiates the sum of every output, so
the gradient mixes all classes (and for a softmax the classes cancel: the sum
is constant and the gradient is ~0). Attributions then explain no class at
all and completeness fails against the class that was meant.

Example::

    with tf.GradientTape() as tape:
        tape.watch(x)
        pred = model(x)
    grads = tape.gradient(pred, x)
    # becomes
        pred = model(x)[:, target_class_idx]   # or [:, 0]

Unsafe: which output is the target is the user's choice.

What counts as a model (the callee of the target call), from the semantic
model (recipes/_model) first: a name whose value is a Keras model
(``Sequential``/functional ``Model``/``load_model``/applications, a subclass
of ``Model`` in any spelling, and a parameter every call in this module
passes one); a name the model knows to be anything else is not a model.
When the model knows nothing (and for ``self.<attr>``), the spelling rules:
``model``, ``net``, ``classifier`` or ``*_model``; a name or ``self.<attr>``
bound to ``Model(...)``, ``Sequential(...)``, ``load_model(...)``,
``clone_model(...)`` or a class of the file subclassing ``Model``.

When the fix is offered: only where the output is provably multi-class.
- Its width is known and > 1 (a model built in the module, through the
  functions that build and return it and every branch that assigns it): an
  unsafe fix, and the message gives the width and the line where it is built.
- Its width is unknown but the code shows classes: a softmax in the code that
  builds the model, a class index in scope (above), an ``argmax`` of the
  gradient's target in its scope or of any call of the same model: an unsafe
  fix.
- Otherwise (a loaded model, a parameter nobody here passes): a report without
  a fix that asks whether the output is multi-class.
- Never a finding when the width is provably 1 (a final ``Dense(1)``: the sum
  is the output) or the output is provably of rank 1 (per-sample scores,
  energies, losses: the model's ``call`` returns a ``tf.squeeze``, a
  reduction over an axis or a ``[:, k]`` column; a ``Sequential`` ends in
  ``Reshape(())``): ``[:, t]`` on it raises.

The target may also be a list of model calls (``[model(a), model(b)]``) or a
comprehension of them (``[model(p) for p in path]``, the path watched): each
call gets the selection.

CAVEATS:
- Summing the outputs is exactly right for an element-wise function
  (``tape.gradient(tf.exp(x), x)``) and for a vector of per-example losses,
  so any other callee is left alone.
- A name spelled like a model whose value the model cannot see is trusted to
  be a model, but its width is then unknown: a report at most.
- Left alone when ``output_gradients`` is passed (positionally or by name, or
  possibly through ``*args``/``**kwargs``): those weights already pick what
  is differentiated. Left alone when the target is named like a loss or the
  callee's name contains ``loss``.
- The model output is assumed to be ``(batch, outputs)``; a model with
  several outputs (a list) needs another selection.
- A notebook analysed cell by cell does not see a model built in another
  cell.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Set, Tuple

from fissix.pgen2 import token

from migrate.recipe import Recipe, SourceFacts, option, propose
from recipes import _fissix as s
from recipes._model import Kind, Value, model_of
from recipes._pyast import method_calls, statements, tapes

# pattern texts, compiled by `re` at their first match (only a file with a candidate gradient call)
_MODEL_LIKE = r"^(model|net|classifier|\w+_model)$"
_MODEL_CLASSES = {"Model", "Sequential"}
_MODEL_FACTORIES = {"load_model", "clone_model"}
_ALIAS_DEPTH = 3
# a class index: target_class_idx, class_index, pred_class, label, target, cls
_TARGET_INDEX = r"^(?:(?:target|pred|predicted|true|top)_?)?(?:class|label|cls|target)" \
    r"(?:_?(?:idx|index|id))?$"


def _bases(classdef) -> List[str]:
    """Last components of the dotted base classes of a ``class`` statement."""
    kids = classdef.children
    if len(kids) < 4 or kids[2].type != token.LPAR or kids[3].type == token.RPAR:
        return []
    arguments = kids[3]
    items = [c for c in arguments.children if c.type != token.COMMA] \
        if arguments.type == s.syms.arglist else [arguments]
    names = (s.dotted_name(item) for item in items if s.keyword_arg(item) is None)
    return [name.split(".")[-1] for name in names if name]


def model_classes(tree) -> Set[str]:
    """Names of the classes of this file that subclass Model/Sequential (directly or not)."""
    bases = {node.children[1].value: set(_bases(node)) for node in s.nodes_of_type(tree, s.syms.classdef)}
    found: Set[str] = set()
    while True:
        more = {name for name, parents in bases.items() if parents & (_MODEL_CLASSES | found)} - found
        if not more:
            return found
        found |= more


def _builds_model(value, classes: Set[str]) -> bool:
    value = s.unparen(value)
    call = s.call_parts(value)
    if not call:
        return False
    last = call[0].split(".")[-1]
    return last in _MODEL_CLASSES or last in _MODEL_FACTORIES or last in classes


def _self_attribute_is_model(attr: str, at, classes: Set[str]) -> bool:
    """Is ``self.<attr>`` assigned a model anywhere in the class around ``at``?"""
    owner = s.enclosing(at, s.syms.classdef)
    if owner is None:
        return False
    for stmt in owner.pre_order():
        pair = s.simple_assignment(stmt) if stmt.type == s.syms.simple_stmt else None
        if pair and s.dotted_name(pair[0]) == f"self.{attr}" and _builds_model(pair[1], classes):
            return True
    return False


def is_model(callee: str, at, classes: Set[str], depth: int = _ALIAS_DEPTH) -> bool:
    """Is the dotted ``callee`` called at node ``at`` a Keras model (see the docstring's rule)?"""
    parts = callee.split(".")
    if len(parts) == 2 and parts[0] == "self":
        return bool(re.match(_MODEL_LIKE, parts[1])) or _self_attribute_is_model(parts[1], at, classes)
    if len(parts) != 1:
        return False
    if re.match(_MODEL_LIKE, callee):
        return True
    stmt = s.enclosing_statement(at)
    value = model_of(at).assigned_value(callee, stmt) if stmt is not None else None
    if value is None:
        return False
    if _builds_model(value, classes):
        return True
    value = s.unparen(value)
    return depth > 0 and s.is_name(value) and is_model(value.value, stmt, classes, depth - 1)


def _callee_kind(call, model) -> Optional[Value]:
    """What the model knows of a called name (None for ``self.attr`` and
    longer callees: the spelling rules decide those)."""
    head = call.children[0]
    if len(call.children) != 2 or not s.is_name(head):
        return None
    return model.likely_kind_of(head)


def _model_call(node, watched: List[str], classes: Set[str], model) -> bool:
    """Is ``node`` exactly ``model(args)`` with a watched expression in the args?"""
    node = s.unparen(node)
    call = s.call_parts(node)
    if not call or "loss" in call[0].lower():
        return False
    known = _callee_kind(node, model)
    if known is not None and known.is_known:
        if known.kind != Kind.MODEL:
            return False
    elif not is_model(call[0], node, classes):
        return False
    return any(s.code(sub) in watched for arg in call[1] for sub in arg.pre_order())


def _target_values(target, gradient_call, watched, classes, model) -> List:
    """The model calls to subscript: the target call, the call a name is bound
    to, or each model call of a list display or comprehension it is bound to."""
    node = target
    if s.is_name(target):
        if "loss" in target.value.lower():
            return []
        node = model.assigned_value(target.value, s.enclosing_statement(gradient_call))
        if node is None:
            return []
    node = s.unparen(node)
    if _model_call(node, watched, classes, model):
        return [node]
    elements = s.literal_elements(node)
    if elements:
        calls = [s.unparen(e) for e in elements]
        return calls if all(_model_call(c, watched, classes, model) for c in calls) else []
    if node.type == s.syms.atom and node.children[0].value == "[" and len(node.children) == 3 \
            and node.children[1].type == s.syms.listmaker:
        element, clause = node.children[1].children[0], node.children[1].children[1]
        if clause.type == s.syms.comp_for and any(s.code(sub) in watched for sub in clause.children[3].pre_order()):
            fed = watched + [leaf.value for leaf in clause.children[1].leaves() if leaf.type == token.NAME]
            element = s.unparen(element)
            return [element] if _model_call(element, fed, classes, model) else []
    return []


def _weights_outputs(positional, keywords) -> bool:
    """Does the gradient call pass (or possibly pass) ``output_gradients``?"""
    if len(positional) > 2 or "output_gradients" in keywords:
        return True
    return any(arg.type == s.syms.argument and arg.children[0].type in (token.STAR, token.DOUBLESTAR)
               for arg in positional)


def _target_index(value, model) -> Tuple[str, str]:
    """(index code, how it was chosen): ``--target-index`` when given, else a
    number-like parameter or local of the scope named as a class index
    (``target_class_idx``, ``class_index``, ``label``...) bound where the
    target is computed, else 0."""
    given = option("target_index", None)
    if given is not None:
        return str(int(given)), "the index given by --target-index"
    scope = model.scope_of(value)
    names = [name for name in scope.by_name if re.match(_TARGET_INDEX, name)]
    for name in names:
        bindings = model.reaching(name, value)
        kinds = {model.binding_kind(b).kind for b in bindings}
        if bindings and kinds <= {Kind.NUMBER, Kind.UNKNOWN, Kind.TENSOR} \
                and not any(b.how in ("for", "comprehension", "mutation") for b in bindings):
            return name, f"`{name}` is the target index in scope"
    return "0", "no target index in scope, so the default 0; --target-index picks another"


def _output_facts(value, model) -> str:
    """What the model knows of the output: its width and where it is built."""
    output = model.likely_kind_of(value)
    built = output.origin
    where = f", built at line {built.get_lineno()}" if built is not None and built.get_lineno() else ""
    if output.width is not None:
        return f"{output.width} outputs per example{where}"
    return f"output width not known here{where}"


_RANK_ONE_CALLS = {"squeeze", "reduce_sum", "reduce_mean", "reduce_max", "reduce_logsumexp", "norm"}


def _model_origin(value, model):
    """The node that builds the called model (its constructor call or class)."""
    head = value.children[0]
    return model.likely_kind_of(head).origin if s.is_name(head) else None


def _rank_one(expr, model) -> bool:
    """Is ``expr`` (a returned or output value) provably of rank 1: a
    ``tf.squeeze``/reduction (over an axis: rank 2 inputs), a ``[:, k]``
    column, a ``Reshape(())`` layer?"""
    expr = s.unparen(expr)
    if s.is_name(expr):
        binding = model.last_assignment(expr.value, expr)
        return binding is not None and binding.how == "assign" and binding.value is not None \
            and _rank_one(binding.value, model)
    if expr.type != s.syms.power:
        return False
    last = expr.children[-1]
    if last.type == s.syms.trailer and last.children[0].value == "[":
        index = last.children[1]
        return index.type == s.syms.subscriptlist and len([c for c in index.children if c.type != token.COMMA]) == 2 \
            and not any(c.type == s.syms.subscript for c in index.children[2:])
    callee = model.callee(expr) or ""
    return callee.rpartition(".")[2] in _RANK_ONE_CALLS or _rank_one_layer(expr, model)


def _rank_one_layer(layer, model) -> bool:
    """``Reshape(())`` / ``Reshape([])`` (or one applied: ``Reshape(())(h)``):
    a layer whose output drops the last axis."""
    callee = model.callee(layer) if layer.type == s.syms.power else None
    if not callee or not callee.endswith("Reshape"):
        return False
    first = next(t for t in layer.children[1:] if t.children[0].value == "(")
    positional, keywords = s.split_arguments(first)
    shape = positional[0] if positional else keywords.get("target_shape")
    return shape is not None and s.literal_elements(s.unparen(shape)) == []


def _output_rank_one(value, model) -> bool:
    """Is the output of the model called by ``value`` provably of rank 1?"""
    origin = _model_origin(value, model)
    if origin is None:
        return False
    if origin.type == s.syms.classdef:
        call = model.methods(origin).get("call")
        returns = model.index.scopes[id(call)].returns if call is not None else []
        return bool(returns) and all(_rank_one(r, model) for r in returns)
    positional, keywords = s.split_arguments(origin.children[-1]) if s.is_call(origin) else ([], {})
    if model.callee(origin) and model.callee(origin).endswith("Sequential"):
        layers = positional[0] if positional else keywords.get("layers")
        elements = s.literal_elements(s.unparen(layers)) if layers is not None else None
        return bool(elements) and _rank_one_layer(s.unparen(elements[-1]), model)
    outputs = positional[1] if len(positional) > 1 else keywords.get("outputs")
    return outputs is not None and _rank_one(outputs, model)


def _argmax_calls(root) -> List:
    """Every ``argmax(...)`` call of the module (any spelling of the callee)."""
    found = []
    for leaf in root.leaves():
        if leaf.value == "argmax":
            node = leaf.parent.parent if leaf.parent.type == s.syms.trailer else leaf.parent
            if node is not None and node.type == s.syms.power:
                found.append(node)
    return found


def _classes_shown(value, gradient_call, model) -> Optional[str]:
    """Evidence in the code that the output has classes: a softmax where the
    model is built, an ``argmax`` of the gradient's target in its scope, or
    an ``argmax`` of any call of the same model in the module."""
    origin = _model_origin(value, model)
    if origin is not None:
        builder = origin if origin.type == s.syms.classdef else \
            s.enclosing(origin, s.syms.funcdef) or s.enclosing_statement(origin)
        if builder is not None and any(leaf.value.strip("\"'") == "softmax" for leaf in builder.leaves()):
            return f"a softmax where the model is built (line {origin.get_lineno()})"
    scope = s.scope_of(gradient_call)
    target = {leaf.value for leaf in gradient_call.children[2].leaves() if leaf.type == token.NAME}
    for call in s.per_tree(gradient_call, "argmax calls", _argmax_calls):
        read = list(s.name_leaves(call))
        if s.scope_of(call) is scope and any(leaf.value in target for leaf in read) or origin is not None and any(
                model.likely_kind_of(leaf).origin is origin for leaf in read):
            return f"an argmax of the output at line {call.get_lineno()}"
    return None


# `tape.gradient(target, sources, ...)`, possibly inside a larger expression (`...[0]`)
PATTERN = "power< tape=NAME trailer< '.' 'gradient' > trailer< '(' arglist ')' > any* >"


def _modify(call_node, capture, filename):
    classes = s.per_tree(call_node, "scalar-target", model_classes)
    positional, keywords = s.split_arguments(call_node.children[2])
    if _weights_outputs(positional, keywords):
        return
    target = positional[0] if positional else keywords.get("target")
    sources = positional[1] if len(positional) > 1 else keywords.get("sources")
    if target is None or sources is None:
        return
    model = model_of(call_node)
    tape = model.tape_named(capture["tape"].value, capture["tape"])
    if tape is None:
        return
    watched = [s.code(e) for e in tape.watch_arguments()]
    if not any(s.code(src) in watched for src in s.literal_elements(sources) or [sources]):
        return
    values = _target_values(target, call_node, watched, classes, model)
    widths = {model.likely_kind_of(v).width for v in values}
    if not values or 1 in widths or any(_output_rank_one(v, model) for v in values):
        return
    value = values[0]
    index, chosen = _target_index(value, model)
    shown = s.shown(value) if len(values) == 1 else f"[{', '.join(s.shown(v) for v in values)}]"
    facts = _output_facts(value, model)
    proven = bool(widths - {None})
    evidence = "" if proven else _classes_shown(value, call_node, model) or (
        "a class index in scope" if not index.isdigit() else None)
    if evidence is None:
        propose(value, f"tape.gradient of the whole output of `{shown}` ({facts}): if the model has "
                       "several outputs per example (classes), this differentiates their sum, not one "
                       "target; select one ([:, t], --target-index), or confirm a single output",
                fixable=False)
        return
    if propose(value, f"tape.gradient of the whole output of `{shown}` ({facts}{'; ' + evidence if evidence else ''}) "
                      f"differentiates the sum of all its outputs (every class mixed), not one target; "
                      f"select the target output [:, {index}]: {chosen}", safety="unsafe"):
        for each in values:
            each.append_child(s.parse_expression(f"x[:, {index}]").children[-1].clone())


def _a_loss(call: ast.Call) -> bool:
    """Is the target of ``tape.gradient(...)`` a name spelling ``loss``
    (``_target_value`` takes no such name; ASCII: ``ast`` normalizes other
    identifiers, fissix does not)?"""
    target = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "target"), None)
    return isinstance(target, ast.Name) and target.id.isascii() and "loss" in target.id.lower()


def _may_differentiate_a_watched_input(facts: SourceFacts) -> List[ast.AST]:
    """Precheck: a ``with ...GradientTape() as tape:`` body calls
    ``tape.watch`` and the file calls ``tape.gradient`` with two arguments
    or more, its target not a loss (``_a_loss``): those calls, and those
    tapes outside every function. A tape in a function is read only by a
    call its name reaches (``binder``): in the same top-level statement, or
    bound by ``global`` (a restricted pass's closure keeps it). The calls are indexed
    by receiver once (a scan of the file's calls per tape made a file of
    many tapes quadratic)."""
    watching = [(stmt, tape) for stmt, tape in tapes(facts) if any(method_calls(stmt, tape, "watch"))]
    if not watching:
        return []  # the tapes first: they need only the statements
    gradient_calls: Dict[str, List[ast.Call]] = {}
    for call in facts.nodes(ast.Call):
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "gradient" \
                and isinstance(func.value, ast.Name) and len(call.args) + len(call.keywords) >= 2 \
                and not _a_loss(call):
            gradient_calls.setdefault(func.value.id, []).append(call)
    at_module_level = {id(found.node) for found in statements(facts, ast.With, ast.AsyncWith)
                       if found.outermost is None}
    found, listed = [], set()
    for stmt, tape in watching:
        if tape in gradient_calls:
            if id(stmt) in at_module_level:
                found.append(stmt)
            if tape not in listed:
                listed.add(tape)
                found.extend(gradient_calls[tape])
    return found


RECIPE = Recipe(
    id="scalar-target",
    summary="tape.gradient(model(x), x) on a non-scalar output -> select the target output",
    safety="unsafe",
    query=lambda q: q.select(PATTERN).modify(_modify),
    tokens=(".gradient(",),
    precheck=_may_differentiate_a_watched_input,
    before_fails="completeness",
)
