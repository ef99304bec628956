"""integer-source: gradients asked through an integer variable, weight or
watched tensor.

What it does:
- ``w = tf.Variable(5)`` (or ``dtype=tf.int32``) whose name is a source of
  ``tape.gradient``/``minimize`` becomes ``tf.Variable(5.0)`` (or
  ``dtype=tf.float32``);
- ``self.add_weight(..., dtype=tf.int32)`` (or ``"int64"``...) of a trainable
  weight becomes ``dtype=tf.float32``;
- ``tape.watch(i)`` of an integer tensor made by ``i = tf.constant(1)`` (an
  integer literal) becomes ``tf.constant(1.0)`` (or ``dtype=tf.float32``),
  together with every integer-literal constant it meets in arithmetic, a
  comparison or the variables of one ``tf.while_loop`` (UNSAFE);
- any other watched integer tensor, and an integer tensor given as a source
  of ``tape.gradient`` without a watch, are reported.

Why this is a bug: gradients are only defined for floating (and complex)
dtypes. A tape does not record operations on integer tensors, so
``tape.gradient`` returns None for an integer variable and the optimizer
says "No gradients provided for any variable"; a Python int literal
(``tf.Variable(3)``) makes an int32 variable.

Example::

    w = tf.Variable(5)
    ...
    grads = tape.gradient(loss, [w])    # [None]
    # becomes
    w = tf.Variable(5.0)

Safe when every read of the variable is one a float variable serves the
same way: a gradient source or target, arithmetic or a comparison with
Python numbers or floating tensors, a ``tf.*`` math op or ``tf.cast``,
printing. Anything else
(indexing with it, ``range(w)``, ``//``, ``%``, a function of the module or
an integer tensor operand) makes the fix unsafe, and the message names it.
For a layer's weight (``add_weight`` or ``self.w = tf.Variable(...)``) the
reads are those of ``self.<attr>`` in the class's methods. Arithmetic with
one of ``call``'s inputs (``inputs * self.w``) makes it report only: Keras
casts only floating inputs and TensorFlow's arithmetic wants one dtype, so
where the integer weight worked that input was integer, and a float weight
alone would fail there with a dtype mismatch.

CAVEATS:
- Only variables bound to a name or ``self.<attr>`` are followed; a variable
  built in a list or returned by a function is not seen.
- ``trainable=False`` integer variables (step counters) are never reported.
- A watched integer constant is made float only when every constant it
  meets is an integer literal the fix rewrites too, and no use of theirs
  (followed through names, ``tf.while_loop``'s ``cond``/``body`` and its
  results) needs an integer: an index, ``tf.range``, a shape, ``tf.gather``
  indices, an integer tensor it meets or is compared with; otherwise a
  report names that use. Unsafe: every value it meets becomes float (a
  printed or compared value reads 1.0, not 1).
- An integer tensor differentiated without a watch is only reported: making
  it float does not make the tape record it (unwatched-source's finding).
"""

from __future__ import annotations

import ast
import re
from typing import List, Optional, Union

from migrate.recipe import Recipe, SourceFacts, propose, walk
from recipes import _fissix as s
from recipes._integer_source.reads import SOURCE_METHODS, is_gradient_source, unsafe_read
from recipes._integer_source.together import Together, bindings_read
from recipes._model import Kind, model_of
from recipes._model.dtypes import dtype_named, dtype_of, is_integer
from recipes._model.sources import gradient_of_tape, same_tensor
from recipes._pyast import code_text, dotted, keras_classes, names_read, on_self, statements, tape_calls

VARIABLE = "power< any* trailer< '.' 'Variable' > trailer< '(' any* ')' > >"
BARE_VARIABLE = "power< 'Variable' trailer< '(' any* ')' > >"
ADD_WEIGHT = "power< any* trailer< '.' 'add_weight' > trailer< '(' any* ')' > >"
WATCH = "power< tape=NAME trailer< '.' method='watch' > trailer< '(' any ')' > >"
GRADIENT = "power< tape=NAME trailer< '.' method='gradient' > trailer< '(' arglist ')' > any* >"


def _tf_module(model, call) -> Optional[str]:
    """How this module spells tensorflow: the callee's module, else an alias of it."""
    callee = s.call_parts(call)
    if callee and "." in callee[0]:
        return callee[0].rsplit(".", 1)[0]
    return min(model.imports.aliases("tensorflow"), default=None)


def _trainable(keywords) -> bool:
    flag = keywords.get("trainable")
    return flag is None or s.code(flag) != "False"


def _assigned_key(call) -> Optional[str]:
    """``w`` of ``w = tf.Variable(...)``, ``self.w`` of ``self.w = ...``."""
    stmt = call.parent
    if stmt is None or stmt.type != s.syms.expr_stmt or len(stmt.children) != 3 or stmt.children[2] is not call:
        return None
    target = stmt.children[0]
    if s.is_name(target):
        return target.value
    return s.code(target) if target.type == s.syms.power and s.dotted_name(target) else None


# ---------------------------------------------------------------- tf.Variable

def _integer_variable(node, capture, filename) -> bool:
    model = model_of(node)
    if model.callee(node) != "tensorflow.Variable":
        return False
    positional, keywords = s.split_arguments(node.children[-1])
    if not _trainable(keywords) or not is_integer(dtype_of(model, node)):
        return False
    key = _assigned_key(node)
    if key is None:
        return False
    if "." in key:
        owner = _keras_owner(model, node)
        if owner is None or not key.startswith("self."):
            return False
        capture["reasons"] = _attribute_reasons(model, owner, key[len("self."):])  # Keras differentiates it
        capture["blocked"] = _meets_call_input(model, owner, key[len("self."):])
    else:
        reads = [leaf for leaf in s.name_reads(s.scope_of(node), key)
                 if any(b.node is node.parent.children[0] for b in model.reaching(key, leaf))]
        if not any(is_gradient_source(model, leaf) for leaf in reads):
            return False
        capture["reasons"] = [r for r in (unsafe_read(model, leaf) for leaf in reads) if r]
    capture["positional"], capture["keywords"] = positional, keywords
    return True


def _float_variable(node, capture, filename) -> None:
    model = model_of(node)
    positional, keywords = capture["positional"], capture["keywords"]
    reasons = capture["reasons"]
    what = s.code(node.parent.children[0])
    problem = (f"`{what}` is an integer tf.Variable ({dtype_of(model, node)}) that gradients are asked for: "
               "a tape records no gradient through integers, so its gradient is None")
    safety, why = (None, "") if not reasons else ("unsafe", f"; unsafe: {reasons[0]}")
    module = _tf_module(model, node)
    if capture.get("blocked"):
        propose(node, f"{problem}: make it float, {capture['blocked']}", fixable=False)
    elif module is None:
        propose(node, f"{problem}: make it float", fixable=False)
    elif propose(node, f"{problem}: make it float{why}", safety=safety):
        _make_float(module, node, positional, keywords)


def _make_float(module: str, call, positional, keywords, dtype_at: Optional[int] = None) -> None:
    """``dtype_at``: the position of a positional dtype (``tf.constant(1, tf.int32)``)."""
    dtype = positional[dtype_at] if dtype_at is not None and len(positional) > dtype_at else keywords.get("dtype")
    if dtype is not None:
        s.replace_with(dtype, s.parse_expression(f"{module}.float32"))
        return
    first = s.unparen(positional[0]) if positional else None
    if first is not None and first.type == s.token.NUMBER and re.fullmatch(r"\d[\d_]*", first.value):
        first.value = f"{first.value}.0"
        first.changed()
        return
    trailer = call.children[-1]
    arglist = trailer.children[1] if len(trailer.children) == 3 else None
    text = f"{str(arglist).strip()}, dtype={module}.float32" if arglist is not None else f"dtype={module}.float32"
    s.replace_with(trailer, s.parse_expression(f"f({text})").children[1])


# ---------------------------------------------------------------- add_weight

def _keras_owner(model, node):
    """The Keras layer or model class whose method ``node`` is in; else None."""
    function = model.scope_of(node).node
    owner = model.method_class(function) if function.type == s.syms.funcdef else None
    return owner if owner is not None and model.keras_role(owner) else None


def _attribute_reasons(model, cls, attr: str) -> List[str]:
    """Why a float weight would not serve each read of ``self.<attr>`` in ``cls``'s methods."""
    reasons = []
    for function in model.methods(cls).values():
        for node in function.pre_order():
            kids = node.children if node.type == s.syms.power else ()
            if len(kids) < 2 or not s.is_name(kids[0], "self") or s.code(kids[1]) != f".{attr}":
                continue
            if node.parent.type == s.syms.expr_stmt and node.parent.children[0] is node:
                continue  # the binding itself
            reason = unsafe_read(model, node) if len(kids) == 2 else \
                f"`{s.shown(node)}` (line {node.get_lineno()}) may rely on the integer dtype"
            if reason:
                reasons.append(reason)
    return reasons


def _meets_call_input(model, cls, attr: str) -> Optional[str]:
    """Why no dtype change alone is right: ``call`` does arithmetic between
    ``self.<attr>`` and one of its inputs. Keras casts only floating inputs,
    and TensorFlow's arithmetic wants one dtype, so wherever the integer
    weight worked that input was integer: a float weight would raise a dtype
    mismatch there; the input must become float too, the author's call."""
    call = model.methods(cls).get("call")
    if call is None:
        return None
    inputs = {leaf.value for leaf in s.name_leaves(call.children[2]) if leaf.value != "self"}
    for node in call.pre_order():
        kids = node.children if node.type == s.syms.power else ()
        if len(kids) != 2 or not s.is_name(kids[0], "self") or s.code(kids[1]) != f".{attr}" \
                or node.parent.type not in (s.syms.arith_expr, s.syms.term):
            continue
        met = [o for o in node.parent.children[::2] if o.type == s.token.NAME and o.value in inputs]
        if met:
            return (f"and `{met[0].value}` with it (`{s.shown(node.parent)}`, line {node.get_lineno()}): Keras "
                    "does not cast integer inputs, so the float weight would meet an integer tensor (a dtype "
                    "mismatch); no fix offered")
    return None


def _integer_weight(node, capture, filename) -> bool:
    model = model_of(node)
    if not s.is_name(node.children[0], "self") or len(node.children) != 3:
        return False
    owner = _keras_owner(model, node)
    _, keywords = s.split_arguments(node.children[-1])
    dtype = keywords.get("dtype")
    key = _assigned_key(node)
    if owner is None or dtype is None or not _trainable(keywords) or not is_integer(dtype_named(model, dtype)):
        return False
    capture["reasons"] = _attribute_reasons(model, owner, key[len("self."):]) \
        if key and key.startswith("self.") else ["the weight is not bound to an attribute of the layer"]
    capture["blocked"] = _meets_call_input(model, owner, key[len("self."):]) \
        if key and key.startswith("self.") else None
    return True


def _float_weight(node, capture, filename) -> None:
    model = model_of(node)
    dtype = s.split_arguments(node.children[-1])[1]["dtype"]
    reasons = capture["reasons"]
    why = f"; unsafe: {reasons[0]}" if reasons else ""
    if dtype.type == s.token.STRING:
        replacement = '"float32"'
    else:
        spelled = s.code(dtype)
        module = spelled.rsplit(".", 1)[0] if "." in spelled else _tf_module(model, node)
        replacement = f"{module}.float32" if module else None
    message = (f"a trainable weight of integer dtype ({dtype_named(model, dtype)}): a tape records no gradient "
               "through integers, so training gets None for it (\"No gradients provided\"): make it float")
    if capture["blocked"]:
        propose(node, f"{message}, {capture['blocked']}", fixable=False)
    elif replacement is None:
        propose(node, message, fixable=False)
    elif propose(node, message + why, safety="unsafe" if reasons else None):
        s.replace_with(dtype, s.parse_expression(replacement))


# ---------------------------------------------------------------- integer tensors watched or differentiated

def _integer_tensors(node, capture, filename) -> bool:
    """``tape.watch(i)`` of integer tensors, or ``tape.gradient(y, i)`` with
    integer tensor sources the tape does not watch. Each gets a plan: a
    watched one made from an integer literal, watched before the tape reads
    it, gets the constants to make float with it; else the reason why not."""
    model = model_of(node)
    tape = model.tape_named(capture["tape"].value, capture["tape"])
    if capture["method"].value == "watch":
        args = s.call_args(node.children[-1])
        if tape is None or len(args) != 1:
            return False
        candidates, watched = s.literal_elements(s.unparen(args[0])) or [args[0]], set()
    else:
        found = gradient_of_tape(model, node, capture["tape"])
        if found is None:
            return False
        candidates = [src for src in map(s.unparen, found[1][2]) if s.is_name(src)]
        watched = {same_tensor(model, s.unparen(a)) for a in found[0].watch_arguments()}
    capture["plans"] = [_plan(model, tape, expr) if capture["method"].value == "watch" else (expr, [], None, None)
                        for expr in candidates if same_tensor(model, expr) not in watched
                        and model.kind_of(expr).kind is Kind.TENSOR and is_integer(dtype_of(model, expr))]
    return bool(capture["plans"])


def _plan(model, tape, watched):
    """(the watched expression, the constant calls to make float, how the
    module spells tensorflow, why there is no fix)."""
    bindings = bindings_read(model, watched) if watched.type == s.token.NAME else None
    if not bindings:
        return watched, [], None, None
    late = _read_before_the_watch(model, tape, watched, bindings)
    together = Together(model, bindings) if late is None else None
    if late is not None or together.reason:
        return watched, [], None, late or together.reason
    return watched, together.constants, _tf_module(model, together.constants[0]), None


def _read_before_the_watch(model, tape, watched, bindings) -> Optional[str]:
    """A read of the watched value in the tape's block before the watch: the
    tape records nothing of it, float or not (unwatched-source moves the watch)."""
    ids = {id(b) for b in bindings}
    for read in s.name_reads(tape.body, watched.value):
        if s.start(read) < s.start(watched) and ids & {id(b) for b in bindings_read(model, read) or ()}:
            return (f"`{s.shown(s.enclosing_statement(read))}` (line {read.get_lineno()}) reads it before "
                    "`tape.watch`: watch it first, then make it float")
    return None


def _report_tensors(node, capture, filename) -> None:
    model = model_of(node)
    what = "watching it records nothing, gradients" if capture["method"].value == "watch" else "gradients"
    made = set()
    for expr, constants, module, reason in capture["plans"]:
        problem = (f"`{s.shown(expr)}` is an integer tensor ({dtype_of(model, expr)}): {what} are only defined "
                   "for floating dtypes, so the gradient with respect to it is None")
        if not constants or module is None:
            why = f"; no fix: {reason}" if reason else ""
            propose(expr, f"{problem}; make the value float (a float constant, or tf.cast before the tape) where "
                          f"the code that reads it allows, and compute from it in the tape{why}", fixable=False)
            continue
        listed = ", ".join(f"`{s.shown(c.parent)}` (line {c.get_lineno()})" for c in constants)
        if propose(expr, f"{problem}: make {listed} float; unsafe: the values it meets become float too (a "
                         "printed or compared value reads 1.0, not 1)", safety="unsafe"):
            for call in constants:
                if id(call) not in made:
                    made.add(id(call))
                    positional, keywords = s.split_arguments(call.children[-1])
                    _make_float(module, call, positional, keywords, dtype_at=1)


# an integer dtype as spelled: "int32", tf.int64, np.uint8, "int" (a string: dtype_named's integer names)
_SPELLS_INT = re.compile(r"int[\d\"']")  # what every match of _INTEGER_DTYPE holds, found fast
_INTEGER_DTYPE = re.compile(r"[\"']u?int\d*[\"']|\bu?int\d+\b")


def _may_differentiate_an_integer(facts: SourceFacts) -> Union[bool, List[ast.AST]]:
    """Precheck: a named tape's watch or gradient call; else the ``w = ...Variable(...)``
    whose ``w`` is spelled in the sources of a ``gradient``/``minimize``/
    ``jacobian`` call or a ``var_list=``, and the ``self.w = ...Variable(...)``
    and ``self.add_weight(..., dtype=...)`` (an integer dtype spelled in the
    file) in a method of a class that may be a Keras layer."""
    if tape_calls(facts, ("watch", "gradient")):
        return True
    code = code_text(facts)
    weights = "add_weight(" in code and _SPELLS_INT.search(facts.text) is not None \
        and _INTEGER_DTYPE.search(facts.text) is not None
    if "Variable(" not in code and not weights:
        return []
    keras = keras_classes(facts)
    methods = {id(found.node) for found in statements(facts, ast.FunctionDef, ast.AsyncFunctionDef)
               if found.cls is not None and found.cls.name in keras}
    variables = [stmt for stmt in statements(facts, ast.Assign) if _variable_call(stmt.node.value)]
    sources = _gradient_sources(facts) if any(isinstance(t, ast.Name) for stmt in variables
                                               for t in stmt.node.targets) else set()
    found = [stmt.node for stmt in variables if any(
        isinstance(t, ast.Name) and t.id in sources
        or id(stmt.function) in methods and (dotted(t) or "").startswith("self.")
        for t in stmt.node.targets)]
    if weights:
        found += [call for stmt in statements(facts, ast.FunctionDef, ast.AsyncFunctionDef)
                  if id(stmt.node) in methods for call in walk(stmt.node) if isinstance(call, ast.Call)
                  and on_self(call.func) and call.func.attr == "add_weight"
                  and any(k.arg == "dtype" for k in call.keywords)]
    return found


def _gradient_sources(facts: SourceFacts) -> set:
    """Names spelled where ``_is_gradient_source`` looks: the arguments after
    the first of a ``gradient``/``minimize``/``jacobian`` call, ``var_list=``."""
    sources = set()
    for call in facts.nodes(ast.Call):
        if getattr(call.func, "attr", None) in SOURCE_METHODS:
            sources.update(n for arg in call.args[1:] + [k.value for k in call.keywords] for n in names_read(arg))
    for node in facts.nodes(ast.Call, ast.ClassDef):  # `var_list=` is a keyword argument wherever it is
        sources.update(n for k in node.keywords if k.arg == "var_list" for n in names_read(k.value))
    return sources


def _variable_call(value) -> bool:
    return isinstance(value, ast.Call) and (getattr(value.func, "attr", None)
                                            or getattr(value.func, "id", None)) == "Variable"


RECIPE = Recipe(
    id="integer-source",
    summary="tf.Variable(3) / add_weight(dtype=tf.int32) differentiated -> float; a watched tf.constant(1) -> "
            "1.0 (unsafe)",
    safety="safe",
    query=lambda q: (q.select(VARIABLE).filter(_integer_variable).modify(_float_variable)
                     .select(BARE_VARIABLE).filter(_integer_variable).modify(_float_variable)
                     .select(ADD_WEIGHT).filter(_integer_weight).modify(_float_weight)
                     .select(WATCH).filter(_integer_tensors).modify(_report_tensors)
                     .select(GRADIENT).filter(_integer_tensors).modify(_report_tensors)),
    tokens=("Variable(", "add_weight(", ".watch(", ".gradient("),
    precheck=_may_differentiate_an_integer,
    before_fails="none-gradient",
)
