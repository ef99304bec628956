"""numpy-on-loss-path: a tensor turned into NumPy or a Python number on the loss path.

What it does: in a gradient context (a ``GradientTape`` block, a Keras
``call``/``train_step``, a loss or metric handed to ``compile``, a
``tf.function``, a ``tf.custom_gradient`` function, and the helpers these
call), ``t.numpy()`` and ``float(t)`` of a tensor whose result goes on to
the loss become tensor code: ``t.numpy()`` becomes ``t``, ``float(t)``
becomes ``tf.cast(t, tf.float32)``, and what the code then does with the
NumPy copy gets its TensorFlow form from the one NumPy table
(recipes/_numpy_calls.py): ``np.log(v)`` -> ``tf.math.log(v)``, ``v.max()`` ->
``tf.reduce_max(v)``, ``(v > 0.5).astype("float32")`` ->
``tf.cast(v > 0.5, tf.float32)``, ``np.array(v)`` / ``tf.constant(v)`` /
``tf.convert_to_tensor(v)`` -> ``v`` (``tf.cast(v, D)`` with ``dtype=D``); a list the values are appended to and then reduced by NumPy
(``np.std(losses)``) becomes ``tf.math.reduce_std(tf.stack(losses))``. Keras 3
code written against ``keras.ops`` gets ``ops.*`` and never a new
``import tensorflow``.

Why this is a bug: ``.numpy()`` (and ``float``, ``np.array``, NumPy math,
which call ``__array__``) copies the value out of TensorFlow. The tape does
not see what is computed from the copy, so gradients through it are ``None``
("No gradients provided for any variable"); in graph mode (``tf.function``,
``model.fit``, which traces compiled losses) ``.numpy()`` raises instead.

Example::

    def masked_loss(y_true, y_pred):
        mask = (y_pred.numpy() > 0.5).astype("float32")
        return tf.reduce_mean(tf.square(y_true - y_pred) * mask)

becomes::

    def masked_loss(y_true, y_pred):
        mask = tf.cast(y_pred > 0.5, tf.float32)
        return tf.reduce_mean(tf.square(y_true - y_pred) * mask)

Left alone: a conversion whose every use leaves TensorFlow on purpose
(``print``, logging, ``str``/``format``), one after the tape closed (a loss
logged after ``tape.gradient``), one whose result is never read, and code
outside every gradient context. NumPy calls made directly on a tensor
(``np.mean(t)``, ``np.array(t)``, ``np.stack(tensors)``) are numpy-accumulator's
findings, from the same table: one finding per call.

CAVEATS:
- safe only when every use of the converted value the model can see also
  works on a tensor (operators, indexing, ``tf.*``/``keras.ops`` calls, a
  model or layer call, NumPy calls and methods of the table, ``return``);
  any other use (a Python ``if``, an unknown method, a name read where the
  model cannot follow it) makes the fix unsafe, and the message names it.
- a value handed to a function that is not TensorFlow's (``external_score(
  y_pred.numpy())``) is reported without a fix: that code needs NumPy, and
  ``tf.numpy_function`` has no gradient either; write it with tf ops, or give
  it a ``tf.custom_gradient``.
- ``float(t)`` is a finding only when ``t`` computes with a Keras model,
  layer or loss output (a count or a shape divides a loss without a
  gradient); it becomes a float32 tensor of ``t``'s shape, not a scalar.
  ``int(t)`` is left to the non-differentiable-op reports (in real code it
  is a shape or an index).
- a tensor returned where the caller expected NumPy is not followed into
  the caller.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import List, Optional

from migrate.recipe import Recipe, propose
from recipes._fissix import (
    enclosing, is_name, name_reads, parse_expression, source, split_arguments, syms,
)
from recipes._fissix.nodes import token
from recipes._model import model_of
from recipes._model.imports import Imports
from recipes._numpy_accumulator.buffers import _dtype_name
from recipes._numpy_calls import LIST_TO_TENSOR, NUMPY_TO_TF, REDUCING_METHODS, cast, equivalent
from recipes._pyast import code_text, gradient_calls

# `t.numpy()` anywhere in a power node, and `float(t)`
PATTERN = """
    power< any+ trailer< '.' 'numpy' > trailer< '(' ')' > any* >
  | power< 'float' trailer< '(' any ')' > >
"""

# where a value leaves TensorFlow on purpose: no finding
_LEAVING = {"print", "str", "repr", "format", "len", "isinstance", "type"}
_LEAVING_PREFIXES = ("logging.", "tensorflow.print", "tensorflow.summary.", "absl.logging.")
# operators that work the same on a tensor
_OPERATORS = {syms.arith_expr, syms.term, syms.factor, syms.shift_expr, syms.and_expr, syms.xor_expr,
              syms.expr, syms.comparison}
_NOT_ON_TENSORS = {"in", "is", "not"}


@dataclass(eq=False, repr=False)
class _Plan:
    """What the fix of one conversion must rewrite, and why it cannot be safe."""

    edits: List = field(default_factory=list)  # (node, how): applied deepest first
    problems: List[str] = field(default_factory=list)  # uses a tensor may not serve
    external: Optional[str] = None  # a function that needs NumPy
    stays: bool = False  # some use goes on in TensorFlow (the loss path)


def _gradient_context(node, model) -> bool:
    """In a context of the model, or in a ``tf.custom_gradient`` function
    (traced in graph mode like any op), and not after a tape closed."""
    if model.after_tape(node) is not None:
        return False
    if model.in_gradient_context(node):
        return True
    function = enclosing(node, syms.funcdef)
    while function is not None:
        if function.parent.type == syms.decorated and any(
                model.qualified(d.children[1]) == "tensorflow.custom_gradient"
                for d in _decorators(function.parent.children[0])):
            return True
        function = enclosing(function, syms.funcdef)
    return False


def _decorators(node) -> List:
    return list(node.children) if node.type == syms.decorators else [node]


def _conversion(node):
    """(what is converted: ``t``'s node for ``float(t)``, the children before
    ``.numpy()``; the node holding the NumPy value; the trailers after
    ``.numpy()`` in it), or None."""
    if node.children[0].type == token.NAME and node.children[0].value == "float" \
            and len(node.children) == 2:
        return node.children[1].children[1], node, []
    for k, child in enumerate(node.children):
        if k and child.type == syms.trailer and child.children[1:2] and is_name(child.children[1], "numpy"):
            return node.children[:k], node, node.children[k + 2:]
    return None


def _applies(node, capture, filename) -> bool:
    """A conversion of a tensor in a gradient context. ``.numpy()`` is the
    tensor method: its receiver is one unless the model knows it to be
    something else; ``float(t)`` needs a tensor the model knows."""
    model = model_of(node)
    parts = _conversion(node)
    if parts is None or not _gradient_context(node, model):
        return False
    receiver = parts[0]
    if not isinstance(receiver, list):
        return model.kind_of(receiver).is_tensor and _from_the_model(receiver, model, 3)
    if len(receiver) == 1:
        kind = model.kind_of(receiver[0])
        return kind.is_tensor or not kind.is_known
    return True


def _from_the_model(expr, model, depth: int) -> bool:
    """Does ``expr`` compute with what a Keras model, layer or loss returns
    (through up to ``depth`` assignments)? ``float(t)`` of a count or a shape
    (a loss's divisor) has no gradient to lose."""
    for node in expr.pre_order():
        if node.type == syms.power and node.children[-1].type == syms.trailer \
                and node.children[-1].children[0].value == "(":
            head = model.kind_of(node.children[0])
            if head.kind.name in ("MODEL", "LAYER") or head.origin is not None \
                    and (model.callee(head.origin) or "").startswith("keras.losses."):
                return True
        if node.type == token.NAME and depth:
            value = model.assigned_value(node.value, node)
            if value is not None and _from_the_model(value, model, depth - 1):
                return True
    return False


class _Planner:
    """Follows the NumPy value from the conversion through every use the
    model can see, recording the rewrites that keep it a tensor."""

    def __init__(self, model, imports: Imports):
        self.model, self.ops = model, imports.keras_ops
        tensorflow = imports.aliases("tensorflow")
        self.tf = "tf" if "tf" in tensorflow else min(tensorflow, default="tf")
        self.plan = _Plan()
        self.seen = set()

    def trailers(self, power, trailers) -> None:
        """Trailers after the NumPy value inside its power node."""
        for k, trailer in enumerate(trailers):
            if trailer.type != syms.trailer:
                break  # `v.max() ** 2`: the power operator works on a tensor
            if trailer.children[0].value == "[":
                continue
            if trailer.children[0].value == "." and k + 1 < len(trailers) \
                    and trailers[k + 1].type == syms.trailer and trailers[k + 1].children[0].value == "(":
                method = trailer.children[1].value
                if _has_a_tf_form(method, trailers[k + 1]):
                    self.plan.edits.append((power, ("method", trailer, None)))
                    return self.trailers(power, trailers[k + 2:])
                self.plan.problems.append(f"`.{method}()` of the NumPy value")
                return self.climb(power)  # where it goes decides whether it is on the loss path
            if trailer.children[0].value == "." and trailer.children[1].value in ("shape", "ndim", "dtype"):
                return None  # a static property: not a value on the loss path
            self.plan.problems.append(f"`{source(trailer).strip()}` of the NumPy value")
            return self.climb(power)
        self.climb(power)

    def climb(self, node) -> None:
        """``node`` holds a value that becomes a tensor: may its parent take one?"""
        parent = node.parent
        if parent.type == syms.atom or parent.type in _OPERATORS and not (
                parent.type == syms.comparison and any(
                    c.type == syms.comp_op or c.type == token.NAME and c.value in _NOT_ON_TENSORS
                    for c in parent.children)):
            return self.climb(parent)
        if parent.type == syms.power and parent.children[1:2] and parent.children[1].type == token.DOUBLESTAR:
            return self.climb(parent)
        if parent.type == syms.power and parent.children[0] is node:
            return self.trailers(parent, parent.children[1:])
        if parent.type in (syms.arglist, syms.argument) or parent.type == syms.trailer:
            return self.argument(node)
        if parent.type == syms.expr_stmt and parent.children[-1] is node and len(parent.children) == 3 \
                and parent.children[1].type == token.EQUAL and is_name(parent.children[0]):
            return self.name(parent.children[0].value, parent)
        if parent.type == syms.expr_stmt and parent.children[-1] is node and _numpy_slot(parent.children[0], self.model):
            return None  # `buf[i] = t.numpy()`: recorded into a NumPy buffer on purpose (a log, a metric)
        if parent.type == syms.return_stmt or parent.type in (syms.testlist, syms.testlist_star_expr, syms.exprlist) \
                and parent.parent.type == syms.return_stmt:
            self.plan.stays = True
            return None
        self.plan.stays = True
        self.plan.problems.append(f"`{source(parent).strip().splitlines()[0]}` uses the value where a tensor may not do")

    def argument(self, node) -> None:
        """``node`` is an argument of a call: what does the callee make of a tensor?"""
        trailer = node.parent
        while trailer.type != syms.trailer:
            trailer = trailer.parent
        call = trailer.parent
        k = call.children.index(trailer)
        if trailer.children[0].value != "(":
            self.plan.stays = True
            self.plan.problems.append(f"`{source(call).strip()}` indexes with the value")
            return None
        callee = self.model.qualified_children(call.children[:k]) or source(call.children[0]).strip()
        spelled = "".join(source(c).strip() for c in call.children[:k])
        if callee in _LEAVING or callee.startswith(_LEAVING_PREFIXES):
            return None  # printed or logged: leaves TensorFlow on purpose
        self.plan.stays = True
        positional, keywords = split_arguments(trailer)
        if callee.startswith("numpy.") and node in positional[:1]:
            function = callee[len("numpy."):]
            if function in NUMPY_TO_TF and equivalent(function, "t", positional[1:], keywords, "tf", None):
                self.plan.edits.append((call, ("numpy", trailer, function)))
                return self.trailers(call, call.children[k + 1:])
            if function in ("array", "asarray") and _unwrappable(node, positional, keywords):
                self.plan.edits.append((call, ("unwrap", trailer, keywords.get("dtype"))))
                return self.trailers(call, call.children[k + 1:])
            self.plan.problems.append(f"`{spelled}` has no TensorFlow equivalent this recipe knows")
            return None
        if callee in _CONVERTERS:
            if _unwrappable(node, positional, keywords):
                self.plan.edits.append((call, ("unwrap", trailer, keywords.get("dtype"))))
                return self.trailers(call, call.children[k + 1:])
            if callee == "tensorflow.constant":  # of a symbolic tensor: raises in graph mode
                self.plan.problems.append(f"`{spelled}` of a tensor with these arguments")
                return None
        if callee.startswith(("tensorflow.", "keras.")) or self._takes_tensors(call.children[0]):
            return None  # TensorFlow takes the tensor
        if k == 2 and call.children[1].children[1].value == "append" and is_name(call.children[0]) \
                and self.model.kind_of(call.children[0]).kind.name in ("PYLIST", "UNKNOWN"):
            return self.list_of(call.children[0].value, call)
        self.plan.external = spelled

    def _takes_tensors(self, head) -> bool:
        """A model, a layer, a tape (``tape.gradient(loss, ...)``), or a Keras
        object's method (``self.add_loss``): TensorFlow code."""
        value = self.model.kind_of(head)
        if value.kind.name in ("MODEL", "LAYER") or value.what == "tape":
            return True
        function = enclosing(head, syms.funcdef)
        cls = self.model.method_class(function) if function is not None else None
        return is_name(head, "self") and cls is not None and self.model.keras_role(cls) is not None

    def name(self, name: str, statement) -> None:
        """Every read of ``name`` that this binding reaches."""
        if (name, id(statement)) in self.seen:
            return
        self.seen.add((name, id(statement)))
        for leaf in self._reads(name, statement, reached=True):
            self.climb(leaf)

    def list_of(self, name: str, append) -> None:
        """A list the value is appended to: NumPy reductions of it become tf ones."""
        if (name, id(append)) in self.seen:
            return
        self.seen.add((name, id(append)))
        for leaf in self._reads(name, append, reached=False):
            after = leaf.next_sibling
            if leaf.parent.type == syms.power and after is not None and after.type == syms.trailer \
                    and after.children[0].value == ".":
                if after.children[1].value != "append":
                    self.plan.problems.append(f"`{name}.{after.children[1].value}` of the list")
                continue
            parent = leaf.parent
            call = parent.parent if parent.type == syms.trailer else None
            callee = self.model.callee(call) if call is not None and call.type == syms.power else None
            if callee and callee.startswith("numpy.") and call.children[-1] is parent:
                function = callee[len("numpy."):]
                if function in NUMPY_TO_TF or function in LIST_TO_TENSOR and function != "concatenate":
                    self.plan.edits.append((call, ("list", parent, function)))
                    self.plan.stays = True
                    self.trailers(call, [])
                    continue
            if callee and callee.startswith(("tensorflow.", "keras.")):
                self.plan.stays = True
                continue
            self.plan.problems.append(f"`{source(leaf.parent).strip()}` reads the list of NumPy values")

    def _reads(self, name: str, at, reached: bool) -> List:
        """Reads of ``name`` in the scope of ``at``: those the binding ``at``
        reaches (``reached``), else every one (a list filled in a loop)."""
        scope = self.model.scope_of(at).node
        return [leaf for leaf in name_reads(scope, name) if not _is_target(leaf) and (
            not reached or any(b.statement in (at, at.parent) for b in self.model.reaching(name, leaf)))]


# calls that make a tensor of data: of a tensor, the tensor itself (cast to the dtype named)
_CONVERTERS = ("tensorflow.constant", "tensorflow.convert_to_tensor")


def _unwrappable(node, positional, keywords) -> bool:
    """``f(v)`` or ``f(v, dtype=D)`` with a dtype this recipe can name."""
    return len(positional) == 1 and positional[0] is node and set(keywords) <= {"dtype"} \
        and ("dtype" not in keywords or _dtype_name(keywords["dtype"]) != "?")


def _has_a_tf_form(method: str, arguments) -> bool:
    """``v.max(axis)`` / ``v.astype(D)`` with arguments TensorFlow's form takes."""
    positional, keywords = split_arguments(arguments)
    if method == "astype":
        return len(positional) == 1 and not keywords and _dtype_name(positional[0]) != "?"
    return method in REDUCING_METHODS and equivalent(method, "t", positional, keywords, "tf", None) is not None


def _numpy_slot(target, model) -> bool:
    """``buf[i]`` of a NumPy array ``buf``."""
    return target.type == syms.power and len(target.children) == 2 and target.children[1].type == syms.trailer \
        and target.children[1].children[0].value == "[" and model.kind_of(target.children[0]).kind.name == "NDARRAY"


def _is_target(leaf) -> bool:
    parent = leaf.parent
    return parent.type == syms.expr_stmt and parent.children[0] is leaf and parent.children[1].type == token.EQUAL


def _plan_of(node, model, imports) -> _Planner:
    planner = _Planner(model, imports)
    _, value, trailers = _conversion(node)
    if trailers:
        planner.trailers(value, trailers)
    else:
        planner.climb(value)
    return planner


def _shown(node) -> str:
    """The conversion as written: ``t.numpy()`` or ``float(t)``."""
    receiver, value, _ = _conversion(node)
    if isinstance(receiver, list):
        return "".join(str(c) for c in value.children[:len(receiver) + 2]).strip()
    return source(node).strip()


def _message(node, plan: _Plan) -> str:
    into = "a Python number" if node.children[0].type == token.NAME and node.children[0].value == "float" \
        else "NumPy"
    text = (f"`{_shown(node)}` turns a tensor into {into} on the loss path: the tape does not see "
            f"what is computed from it, so its gradients are None (model.fit and tf.function raise)")
    if plan.external:
        return (f"{text}; `{plan.external}` needs NumPy, and tf.numpy_function has no gradient either: "
                f"write it with tf ops, or give it a tf.custom_gradient")
    if plan.problems:
        return f"{text}; keep the tensor (unsafe: {'; '.join(plan.problems)})"
    return f"{text}; keep the tensor"


def _modify(node, capture, filename) -> None:
    model = model_of(node)
    planner = _plan_of(node, model, model.imports)
    plan = planner.plan
    if not plan.stays:
        return  # printed, logged or never read: it leaves TensorFlow on purpose
    if not propose(node, _message(node, plan), safety="unsafe" if plan.problems else None,
                   fixable=plan.external is None):
        return
    _rewrite(node, plan.edits, planner)


def _rewrite(node, edits, planner: _Planner) -> None:
    """The conversion, then each use (deepest first), rewritten in place."""
    tf, ops = planner.tf, planner.ops
    receiver, value, _ = _conversion(node)
    if isinstance(receiver, list):
        k, prefix = len(receiver), value.prefix
        for trailer in value.children[k:k + 2]:
            trailer.remove()
        _replace_if_alone(value, prefix)
    else:
        _replace(node, cast(source(receiver).strip(), "float32", tf, ops))
    seen, unique = set(), []
    for target, how in edits:  # a use reached twice (a name rebound from itself) is rewritten once
        if (id(target), id(how[1])) not in seen:
            seen.add((id(target), id(how[1])))
            unique.append((target, how))
    for target, how in sorted(unique, key=lambda e: -_depth(e[0])):  # stable: a call before its methods
        _apply(target, how, tf, ops)


def _apply(target, how, tf: str, ops: Optional[str]) -> None:
    """One use rewritten: ``target`` is the power node, ``trailer`` the call's
    argument trailer (a method's name trailer), ``detail`` what it needs."""
    kind, trailer, detail = how
    k = target.children.index(trailer)
    if kind == "method":
        head = "".join(str(c) for c in target.children[:k]).strip()
        if k == 1 and target.children[0].type == syms.atom and head.startswith("("):
            head = head[1:-1].strip()  # `(v > 0.5).astype(...)`: the cast's argument needs no parentheses
        positional, keywords = split_arguments(target.children[k + 1])
        if trailer.children[1].value == "astype":
            text = cast(head, _dtype_name(positional[0]), tf, ops)
        else:
            text = equivalent(trailer.children[1].value, head, positional, keywords, tf, ops)
        return _splice(target, k + 2, text)
    positional, keywords = split_arguments(trailer)
    inner = source(positional[0]).strip()
    if kind == "numpy":
        text = equivalent(detail, inner, positional[1:], keywords, tf, ops)
    elif kind == "list":
        stacked = f"{ops or tf}.stack({inner})"
        text = stacked if detail in LIST_TO_TENSOR else equivalent(detail, stacked, [], {}, tf, ops)
    else:  # unwrap: np.array(v) / tf.constant(v), maybe with a dtype
        text = cast(inner, _dtype_name(detail), tf, ops) if detail is not None else inner
    return _splice(target, k + 1, text)


def _splice(power, end: int, text: str) -> None:
    """Replace the first ``end`` children of ``power`` by the expression ``text``."""
    new = parse_expression(text)
    new.prefix = prefix = power.prefix
    for child in power.children[:end]:
        child.remove()
    if not power.children:
        power.replace(new)
        return
    power.insert_child(0, new)
    _replace_if_alone(power, prefix)


def _replace(node, text: str) -> None:
    new = parse_expression(text)
    new.prefix = node.prefix
    node.replace(new)


def _replace_if_alone(power, prefix: Optional[str] = None) -> None:
    """``power`` left with one child becomes that child (keeping ``prefix``)."""
    if len(power.children) == 1:
        child = power.children[0]
        child.remove()
        child.prefix = power.prefix if prefix is None else prefix
        power.replace(child)


def _depth(node) -> int:
    depth = 0
    while node.parent is not None:
        node, depth = node.parent, depth + 1
    return depth


def _may_convert_in_a_context(facts) -> List:
    """Precheck: the ``t.numpy()`` and ``float(t)`` calls that may run in a
    gradient context (``_pyast.gradient_calls``)."""
    text = code_text(facts)
    if ".numpy(" not in text and "float(" not in text:
        return []
    return [call for call in gradient_calls(facts) if _converts(call)]


def _converts(call) -> bool:
    """``x.numpy()`` (no arguments) or ``float(...)`` with arguments."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr == "numpy" and not call.args and not call.keywords
    return isinstance(func, ast.Name) and func.id == "float" and bool(call.args or call.keywords)


RECIPE = Recipe(
    id="numpy-on-loss-path",
    summary="a tensor turned into NumPy or a Python number on the loss path: keep the tensor",
    safety="safe",
    query=lambda q: q.select(PATTERN).filter(_applies).modify(_modify),
    tokens=(".numpy(", "float("),
    precheck=_may_convert_in_a_context,
    before_fails="none-gradient",
)
