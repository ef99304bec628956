"""Gradient data flow: which values are gradients, and with respect to which
inputs; which value is an input's difference from its baseline.

A value's ``origins`` are the root values it derives from: a parameter, a
loop or comprehension variable, a value made fresh by a call that does not
pass its argument's values on (``tf.zeros_like``, ``tf.random.*``,
``np.linspace``, ``range``, a constant), followed through assignments,
unpacking, arithmetic, subscripts, displays, element-wise and reducing
TensorFlow/NumPy calls, list mutations (``grads.append(g)``), augmented
assignments (``total += g``) and the returns of the module's own functions
(inlined at each call, parameters bound to the call's arguments, so
``path_gradients(model, [x_1, x_2], base, 1)`` differentiates ``x_2``'s path).

A gradient is the value of ``tape.gradient(target, sources)`` (also
``jacobian``/``batch_jacobian`` and ``tf.gradients``); ``wrt`` is the set of
origins of its sources (per element when the sources are a display, so
``g_a, g_b = tape.gradient(t, [a, b])`` keeps them apart), and it survives
averaging, stacking, accumulating and arithmetic. A model call or any other
unknown call is not a gradient, whatever its arguments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Set, Tuple

from ._tree import literal_elements, split_arguments, syms, token, unparen
from .flow import MANY, Binding
from .walks import Exhausted, Frame, PowerWalk, bound_arguments

if TYPE_CHECKING:
    from . import Model

_EMPTY: FrozenSet[int] = frozenset()
_GRADIENT_METHODS = {"gradient", "jacobian", "batch_jacobian"}
_GRADIENT_FUNCTIONS = {"tensorflow.gradients"}
# calls whose result is a new value, not derived from their arguments' values
_FRESH = {"zeros_like", "ones_like", "zeros", "ones", "fill", "linspace", "arange", "range", "shape",
          "constant", "random_normal", "normal", "uniform", "rand", "randn", "random", "full", "full_like",
          "empty", "empty_like", "truncated_normal", "size", "len", "eye", "Variable"}
# calls (last name) that pass their arguments' values on, gradients included
_PASSING = {"stack", "concat", "concatenate", "reduce_mean", "reduce_sum", "mean", "sum", "add_n",
            "multiply", "add", "subtract", "divide", "truediv", "convert_to_tensor", "cast", "reshape",
            "squeeze", "expand_dims", "abs", "square", "sqrt", "array", "asarray", "transpose",
            "identity", "average", "trapz", "trapezoid", "cumsum", "maximum", "minimum", "float32",
            "numpy", "unstack", "vstack", "hstack", "list", "tuple", "sorted", "matmul", "tensordot",
            "reduce_max", "max", "norm", "stop_gradient", "gather", "split", "tile", "broadcast_to"}
_BUDGET = 4000  # node evaluations per question: beyond it, the answer is "nothing known"
_NESTING = 100  # evaluations in progress at once (each a few Python frames): the same
_DEPTH = 4  # nested inlined calls


@dataclass(eq=False, repr=False)
class Flow:
    """``origins``: ids of the root values a value derives from; ``wrt``:
    for a gradient, the origins of its sources (None: not a gradient);
    ``elements``: per position, for a display; ``constant``: an int literal."""

    origins: FrozenSet[int] = _EMPTY
    wrt: Optional[FrozenSet[int]] = None
    elements: Optional[Tuple["Flow", ...]] = None
    constant: Optional[int] = None

    @property
    def is_gradient(self) -> bool:
        return bool(self.wrt)


NOTHING = Flow()


def merge(flows) -> Flow:
    """What any of ``flows`` may be: origins and gradient sources united."""
    flows = [f for f in flows if f is not None]
    if not flows:
        return NOTHING
    if len(flows) == 1:
        return flows[0]
    wrts = [f.wrt for f in flows if f.wrt is not None]
    return Flow(frozenset().union(*(f.origins for f in flows)),
                frozenset().union(*wrts) if wrts else None)


def _root(thing) -> Flow:
    return Flow(frozenset((id(thing),)))


class GradientFlow(PowerWalk):
    """Answers flow questions for one module; get it from ``Model.gradient_flow``."""

    def __init__(self, model: "Model"):
        self.model = model
        self._memo: Dict[int, Flow] = {}
        self._busy: Set[Tuple[int, int]] = set()
        self._budget = 0
        self._nesting = 0
        self._deepest = 0  # the deepest nesting an evaluation reached (a memoised one: its cost)
        self._known: Dict[tuple, List[tuple]] = {}  # (binding, frame) -> what _measured found
        self._measuring: List[Tuple[Set, Set]] = []  # per binding measured: bindings gone through, cut at

    def of(self, expr) -> Flow:
        """The flow of ``expr`` where it stands (NOTHING when too costly to know)."""
        key = id(expr)
        if key not in self._memo:
            self._memo[key] = self._answer(lambda: self._of(expr, None))
        return self._memo[key]

    def of_bindings(self, bindings: List[Binding]) -> Flow:
        """What a name bound by any of ``bindings`` may hold."""
        return self._answer(lambda: merge(self._binding(b, None) for b in bindings))

    def _answer(self, question) -> Flow:
        self._budget, self._nesting, self._deepest = _BUDGET, 0, 0
        self._busy.clear()
        self._measuring.clear()
        try:
            return question()
        except (Exhausted, RecursionError):
            return NOTHING

    def difference_input(self, expr) -> Optional[Flow]:
        """For ``x - baseline`` (or ``tf.subtract(x, baseline)``, or a name
        bound only to one): the flow of ``x``; else None."""
        expr = unparen(expr)
        if expr.type == token.NAME:
            bindings = self.model.reaching(expr.value, expr)
            if len(bindings) != 1 or bindings[0].how != "assign" or bindings[0].path or bindings[0].value is None:
                return None
            expr = unparen(bindings[0].value)
        if expr.type == syms.arith_expr and len(expr.children) == 3 and expr.children[1].value == "-":
            left = expr.children[0]
        elif expr.type == syms.power and self._last_name(expr) == "subtract" and self._is_call(expr):
            positional, _ = split_arguments(expr.children[-1])
            if len(positional) != 2:
                return None
            left = positional[0]
        else:
            return None
        found = self._answer(lambda: self._of(left, None))
        return found if found is not NOTHING else None

    # ------------------------------------------------------------ evaluation

    def _of(self, node, frame: Optional[Frame]) -> Flow:
        self._budget -= 1
        if self._budget < 0 or self._nesting > _NESTING:
            raise Exhausted
        self._deepest = max(self._deepest, self._nesting)
        self._nesting += 1
        try:
            return self._evaluate(node, frame)
        finally:
            self._nesting -= 1

    def _evaluate(self, node, frame: Optional[Frame]) -> Flow:
        node = unparen(node)
        kind = node.type
        if kind == token.NAME:
            return self._name(node, frame)
        if kind == token.NUMBER:
            try:
                return Flow(constant=int(node.value))
            except ValueError:
                return NOTHING
        if kind == syms.power:
            return self.power(node, frame)
        if kind == syms.atom:
            elements = literal_elements(node)
            if elements is not None:
                flows = tuple(self._of(e, frame) for e in elements)
                whole = merge(flows)
                return Flow(whole.origins, whole.wrt, flows)
            inner = node.children[1] if len(node.children) == 3 else None
            if inner is not None and inner.type == syms.listmaker:  # a comprehension
                return self._of(inner.children[0], frame)
            return NOTHING
        if kind == syms.factor and node.children[0].value == "-":
            inner = self._of(node.children[1], frame)
            return Flow(inner.origins, inner.wrt)
        if node.children:
            return merge(self._of(child, frame) for child in node.children
                         if child.type not in (token.COMMA, token.OP) and not _operator(child))
        return NOTHING

    def _name(self, leaf, frame: Optional[Frame]) -> Flow:
        if leaf.value in ("True", "False", "None"):
            return NOTHING
        return merge(self._binding(b, frame) for b in self.model.reaching(leaf.value, leaf))

    def _binding(self, binding: Binding, frame: Optional[Frame]) -> Flow:
        if binding is MANY:
            return _root(binding)
        key = (id(binding), id(frame))
        if key in self._busy:  # a loop-carried value: its other bindings answer
            if self._measuring:
                self._measuring[-1][1].add(key)
            return None
        if self.model.root.was_changed:  # a modifier changed the tree: asked of the tree as it is now
            return self._evaluated(binding, frame, key)
        # what is in progress decides where loops are cut: a known flow holds while the same
        # bindings it was cut at are in progress and none of those it went through is
        known = next((k for k in self._known.get(key, ()) if k[4] <= self._busy and k[3].isdisjoint(self._busy)),
                     None)
        if known is None:
            known = self._measured(binding, frame, key)
            self._known.setdefault(key, []).append(known)
        flow, cost, depth, through, cut_at, _ = known
        if self._measuring:
            self._measuring[-1][0].update(through)
            self._measuring[-1][1].update(cut_at)
        self._budget -= cost  # a known flow costs the question what finding it cost
        if self._budget < 0 or self._nesting + depth > _NESTING:
            raise Exhausted
        self._deepest = max(self._deepest, self._nesting + depth)
        return flow

    def _measured(self, binding: Binding, frame: Optional[Frame], key) -> tuple:
        """(flow, evaluations, nesting below the current one, the bindings it
        went through, those in progress before it where it was cut, ``frame``:
        kept alive, so its id is not reused); the question's budget and depth
        as they were."""
        before = frozenset(self._busy)
        budget, deepest = self._budget, self._deepest
        self._deepest = self._nesting - 1
        through, cut_at = {key}, set()
        self._measuring.append((through, cut_at))
        try:
            flow = self._evaluated(binding, frame, key)
        finally:
            self._measuring.pop()
        found = (flow, budget - self._budget, self._deepest - self._nesting, frozenset(through),
                 frozenset(cut_at & before), frame)
        self._budget, self._deepest = budget, deepest
        return found

    def _evaluated(self, binding: Binding, frame: Optional[Frame], key) -> Flow:
        self._busy.add(key)
        try:
            return self._binding_value(binding, frame)
        finally:
            self._busy.discard(key)

    def _binding_value(self, binding: Binding, frame: Optional[Frame]) -> Flow:
        how = binding.how
        if how in ("import", "def", "class"):  # modules, functions and classes carry no data
            return NOTHING
        if how == "param":
            if frame is not None and binding.statement is frame.function and binding.name in frame.arguments:
                argument, caller = frame.arguments[binding.name]
                return self._of(argument, caller)
            return _root(binding)
        if how in ("assign", "annassign") and binding.value is not None and not binding.path:
            return self._of(binding.value, frame)
        if how in ("assign", "annassign", "for", "comprehension") and binding.source is not None:
            whole = self._of(binding.source, frame)
            if how == "assign":
                return _select(whole, binding.path)
            if whole.is_gradient:  # an element of gradients
                return Flow(whole.origins, whole.wrt)
            return _root(binding)
        if how == "augassign":
            stmt = binding.value
            before = self._of(stmt.children[0], frame)
            return merge([before, self._of(stmt.children[2], frame)])
        if how == "mutation" and binding.value is not None and binding.value.type == syms.power:
            call = binding.value.children[-1]
            if call.type == syms.trailer and call.children[0].type == token.LPAR:
                positional, _ = split_arguments(call)
                added = merge(self._of(arg, frame) for arg in positional)
                return Flow(_EMPTY, added.wrt) if added.wrt else None
        return _root(binding)

    # ------------------------------------------------------------ calls, indices, attributes (PowerWalk)

    NOTHING = NOTHING

    def operand(self, node, frame: Optional[Frame]) -> Flow:
        return self._of(node, frame)

    @staticmethod
    def join(left: Flow, right: Flow) -> Flow:
        return merge([left, right])

    def index(self, node, at: int, frame: Optional[Frame], before: Optional[Flow]) -> Flow:
        base = before if before is not None else self._of(node.children[0], frame)
        index = self._of(node.children[at].children[1], frame)
        return _select(base, (index.constant,)) if index.constant is not None else Flow(base.origins, base.wrt)

    def attribute(self, node, at: int, frame: Optional[Frame], before: Optional[Flow]) -> Flow:
        """``.T``, ``.shape``: the attribute keeps the value."""
        base = before if before is not None else self._of(node.children[0], frame)
        return Flow(base.origins, base.wrt)

    def call(self, node, at: int, frame: Optional[Frame], before: Optional[Flow]) -> Flow:
        """The call whose argument trailer is ``node.children[at]``; ``before``:
        the flow of what precedes its callee's last name, when known."""
        children = node.children
        positional, keywords = split_arguments(children[at])
        method = children[at - 1].children[1].value if at >= 2 and children[at - 1].children[0].value == "." \
            else None
        callee = self.model.qualified_children(children[:at])
        last = callee.rpartition(".")[2] if callee else (method or children[0].value)
        if method in _GRADIENT_METHODS and at == 2 and self._is_tape(children[0]) or callee in _GRADIENT_FUNCTIONS:
            sources = positional[1] if len(positional) > 1 else keywords.get("sources", keywords.get("xs"))
            return _gradient(self._of(sources, frame)) if sources is not None else NOTHING
        if last in _FRESH:
            return _root(children[at])
        if method is not None and at >= 2 and callee is None:  # a method of a value
            receiver = before if before is not None else self._of(children[0], frame)
            if method in ("numpy", "mean", "sum", "copy", "astype", "reshape", "squeeze", "item"):
                return Flow(receiver.origins, receiver.wrt)
            return Flow(receiver.origins)
        if at == 1 and frame is None or at == 1 and frame.depth < _DEPTH:
            inlined = self._inlined(node, at, positional, keywords, frame)
            if inlined is not None:
                return inlined
        flows = [self._of(arg, frame) for arg in positional] + [self._of(v, frame) for v in keywords.values()]
        whole = merge(flows)
        if last in _PASSING:
            return whole
        return Flow(whole.origins)  # a model or an unknown function: not a gradient

    def _inlined(self, node, at, positional, keywords, frame) -> Optional[Flow]:
        functions = self.model.functions_called(node)
        if not functions:
            return None
        flows = []
        for function in functions:
            arguments = bound_arguments(self.model, function, positional, keywords, frame)
            if arguments is None:
                return None
            inner = Frame(function, arguments, (frame.depth if frame else 0) + 1)
            flows.extend(self._of(value, inner) for value in self.model.index.scopes[id(function)].returns)
        return merge(flows) if flows else NOTHING

    def _is_tape(self, receiver) -> bool:
        if receiver.type != token.NAME:
            return False
        what = self.model.kind_of(receiver)
        return what.what == "tape" or not what.is_known

    def _last_name(self, node) -> Optional[str]:
        callee = self.model.callee(node)
        return callee.rpartition(".")[2] if callee else None

    @staticmethod
    def _is_call(node) -> bool:
        last = node.children[-1]
        return last.type == syms.trailer and last.children[0].type == token.LPAR


def _operator(node) -> bool:
    return node.type != token.NAME and not node.children and node.type not in (token.NUMBER, token.STRING)


def _gradient(sources: Flow) -> Flow:
    if sources.elements is not None:
        elements = tuple(Flow(e.origins, e.origins or None) for e in sources.elements)
        whole = merge(elements)
        return Flow(whole.origins, whole.wrt, elements)
    return Flow(sources.origins, sources.origins or None)


def _select(flow: Flow, path: Tuple[int, ...]) -> Flow:
    for position in path:
        if flow.elements is None or not -len(flow.elements) <= position < len(flow.elements):
            return Flow(flow.origins, flow.wrt)
        flow = flow.elements[position]
    return flow
