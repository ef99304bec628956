"""typed-convert: convert to the wanted dtype once, instead of convert then cast.

What it does: ``x = tf.convert_to_tensor(a)`` followed by ``x = tf.cast(x, D)``
(the same name, nothing touching ``x`` in between) and
``tf.cast(tf.convert_to_tensor(a), D)`` (or ``dtype=D``) become
``tf.convert_to_tensor(a, dtype=D)``.

Why it matters: ``convert_to_tensor`` without a dtype makes a tensor of the
inferred dtype first (float64 from NumPy/pandas floats, int32/int64 from
integers). A float-to-float ``tf.cast`` is differentiable, so the cast itself
does not cut the gradient; the traps are the intermediate integer or float64
tensor (the tape will not watch an integer tensor, a float32 model rejects
float64) and the extra copy. Converting straight to ``D`` states the dtype
where the data enters TensorFlow.

Example::

    x = tf.convert_to_tensor(frame.values)      # float64
    x = tf.cast(x, tf.float32)
    # becomes
    x = tf.convert_to_tensor(frame.values, dtype=tf.float32)

Safety, from the semantic model's kind of ``a`` (recipes/_model):
``tf.convert_to_tensor(t, dtype=D)`` raises ``ValueError`` when ``t`` is
already a tensor of another dtype, where ``tf.cast`` worked. So:
- ``a`` provably NumPy, pandas or Python data (``np.*`` results and their
  method chains ``np.array(x).reshape(...)``, ``.flatten()``, ``.astype()``;
  ``.to_numpy()``, ``.values``; numbers; list/tuple displays of those; names
  whose every reaching binding is one of those) and ``D`` a float dtype
  (``tf.float32``, ``np.float32``, ``"float32"``, by position or ``dtype=``)
  -> safe fix;
- ``a`` a tensor (``tf.*`` results such as ``tf.shape(x)[0]``, model and
  layer outputs, ``tf.data`` loop variables, parameters annotated
  ``tf.Tensor``; also when every call of its function in this module passes
  one) -> reported only, suggesting ``tf.cast``;
- otherwise an unsafe fix whose message says what could not be proven.

CAVEATS:
- ``.values``, ``.to_numpy()`` and ``.astype(...)`` on a receiver of unknown
  kind are trusted to be pandas/NumPy; ``tf.SparseTensor.values`` is a tensor.
- The conversion rounds subnormal float64 values to float32 subnormals where
  ``tf.cast`` flushes them to zero; complex NumPy input keeps its real part
  with a NumPy warning instead of TensorFlow's silent one.
- A parameter is typed from the calls in this module only to report (calls
  from other modules are not seen); a fix is safe only on proof.
- The two-statement form needs ``x = tf.convert_to_tensor(a)`` spelled
  through the module (``tf.``, any alias or ``compat.v2``); the cast may come
  any number of lines later when nothing reads or rebinds ``x`` in between.
"""

from __future__ import annotations

import ast
import re
from typing import List, Optional

from fissix.pgen2 import token

from migrate.recipe import Recipe, SourceFacts, propose, walk
from migrate.prefilter import GAP
from recipes._pyast import (
    Statement, assigned_names, code_text, dotted, line_of, names, spelled_as_in_ast, standalone, statements,
    statements_at,
)
from recipes._model import Kind, Value, model_of
from recipes import _fissix as s

_FLOAT_DTYPES = {"float16", "float32", "float64", "bfloat16", "half", "double"}
_CASTS = {"tensorflow.cast", "tensorflow.dtypes.cast"}
_CONVERT = "tensorflow.convert_to_tensor"
_HOST_METHODS = {"to_numpy", "astype"}
_MAX_DEPTH = 8


def _is_float_dtype(node, model) -> bool:
    """``tf.float32``, ``np.float64``, ``"float32"`` (any spelling of the modules)."""
    if node.type == token.STRING:
        return node.value.strip("'\"") in _FLOAT_DTYPES
    name = model.qualified(node)
    return bool(name) and name.split(".")[0] in ("tensorflow", "numpy") \
        and name.rsplit(".", 1)[1] in _FLOAT_DTYPES


def _host_data(value: Value) -> bool:
    """NumPy, pandas or plain Python data all the way down (a list of tensors
    is converted by packing them, and raises on another dtype like a tensor)."""
    if value.kind in (Kind.NDARRAY, Kind.NUMBER, Kind.DATAFRAME):
        return True
    if value.kind not in (Kind.PYLIST, Kind.PYTUPLE):
        return False
    if value.items is not None:
        return all(_host_data(item) for item in value.items)
    return value.element is not None and _host_data(value.element)


def _provably_data(node, model, depth: int = 0) -> bool:
    """The model proves ``node`` is host data, or it is ``....values``,
    ``....to_numpy()``, ``....astype(...)`` on a receiver of unknown kind
    (pandas/NumPy spellings a tensor does not have; trusted, see CAVEATS),
    directly, item by item in a display, or through every binding of a name."""
    if _host_data(model.kind_of(node)):
        return True
    if depth > _MAX_DEPTH:
        return False
    node = s.unparen(node)
    if node.type == token.NAME:
        bindings = model.reaching(node.value, node)
        values = [_bound_expression(b, model) for b in bindings]
        return bool(values) and all(v is not None and _provably_data(v, model, depth + 1) for v in values)
    elements = s.literal_elements(node)
    if elements is not None:
        return all(_provably_data(e, model, depth + 1) for e in elements)
    trailers = node.children[1:] if node.type == s.syms.power else []
    if not trailers or any(t.type != s.syms.trailer for t in trailers):
        return False
    last = trailers[-1]
    if last.children[0].value == "." and last.children[1].value == "values":
        return True
    return len(trailers) >= 2 and last.children[0].value == "(" and trailers[-2].children[0].value == "." \
        and trailers[-2].children[1].value in _HOST_METHODS


def _bound_expression(binding, model):
    """The expression an assignment binds to this name, also one item of an
    unpacked list/tuple display (or of a name assigned once to one); None
    otherwise."""
    if binding.how != "assign":
        return None
    if binding.value is not None:
        return binding.value
    node = binding.source
    for index in binding.path:
        if node is not None and s.unparen(node).type == token.NAME:
            assigned = model.last_assignment(s.unparen(node).value, node)
            node = assigned.value if assigned is not None and assigned.how == "assign" else None
        elements = s.literal_elements(s.unparen(node)) if node is not None else None
        if elements is None or not 0 <= index < len(elements):
            return None
        node = elements[index]
    return node


def _unproven(value_node, model) -> str:
    """Why the argument is not provably data (for the unsafe message)."""
    value = model.kind_of(value_node)
    if value.is_known:
        return f"it is a {value.describe()}, which may hold tensors"
    if value_node.type == token.NAME:
        bindings = model.reaching(value_node.value, value_node)
        if any(b.how == "param" for b in bindings):
            return "it is a parameter: callers may pass a tensor"
        if len(bindings) > 1:
            return "it is bound to different kinds of values on different paths"
    return "what it evaluates to is not known"


def _convert_call(node, model) -> Optional[object]:
    """The argument ``a`` of ``tf.convert_to_tensor(a)`` without dtype/name."""
    if node.type != s.syms.power or not s.is_call(node) or model.callee(node) != _CONVERT:
        return None
    args = s.call_args(node.children[-1])
    if len(args) != 1 or s.keyword_arg(args[0]) or args[0].type == s.syms.argument:
        return None
    return args[0]


def _cast_call(node, model) -> Optional[tuple]:
    """(x, D) of ``tf.cast(x, D)`` / ``tf.cast(x, dtype=D)`` / ``tf.dtypes.cast``."""
    if node.type != s.syms.power or not s.is_call(node) or model.callee(node) not in _CASTS:
        return None
    args = s.call_args(node.children[-1])
    if len(args) != 2 or s.keyword_arg(args[0]):
        return None
    kw = s.keyword_arg(args[1])
    if kw and kw[0] != "dtype":
        return None
    return args[0], kw[1] if kw else args[1]


def _decide(node, value, dtype, model) -> bool:
    """Report the finding with the right safety; True when it must be fixed now."""
    what, dtype_text = s.shown(value), str(dtype).strip()
    fold = f"tf.convert_to_tensor({what}, dtype={dtype_text})"
    kind = model.likely_kind_of(value)
    if kind.is_tensor:
        where = "" if model.kind_of(value).is_tensor else " (as every call in this module passes it)"
        return propose(node, f"`{what}` is already a tensor{where}: tf.convert_to_tensor(t, dtype=D) "
                             "raises ValueError when t has another dtype, so this is not folded; "
                             f"write tf.cast({what}, {dtype_text}) directly", fixable=False)
    proven = _provably_data(value, model)
    if proven and _is_float_dtype(dtype, model):
        return propose(node, f"convert then cast: the data enters TensorFlow in its inferred dtype first; "
                             f"{fold} converts it once to the dtype the model needs")
    if proven:
        return propose(node, f"convert then cast: {fold} converts once, but the target dtype "
                             f"`{dtype_text}` is not provably a float type, so the result can differ "
                             "from tf.cast", safety="unsafe")
    return propose(node, f"convert then cast: {fold} converts once, but `{what}` is not provably "
                         f"NumPy/pandas/Python data ({_unproven(value, model)}); if it is a tensor of "
                         "another dtype, convert_to_tensor raises ValueError", safety="unsafe")


def _typed(value, dtype, tf_name: str):
    """``tf.convert_to_tensor(value, dtype=dtype)`` built around the original nodes."""
    new = s.parse_expression(f"{tf_name}.convert_to_tensor(__value__, dtype=__dtype__)")
    for leaf in list(new.leaves()):
        if leaf.value in ("__value__", "__dtype__"):
            original = value if leaf.value == "__value__" else dtype
            original.remove()
            original.prefix = ""
            leaf.replace(original)
    return new


# `tf.cast(tf.convert_to_tensor(a), D)`: any call whose last attribute is `cast`
NESTED = "power< any+ trailer< '.' 'cast' > trailer< '(' any* ')' > >"
# `x = tf.convert_to_tensor(a)` alone on its line, folded with a later `x = tf.cast(x, D)`
PAIR = "simple_stmt< expr_stmt< NAME '=' power< any+ trailer< '.' 'convert_to_tensor' > trailer< '(' any* ')' > > > any >"


def _fold_nested(node, capture, filename) -> None:
    model = model_of(node)
    cast = _cast_call(node, model)
    if not cast:
        return
    inner, dtype = cast
    value = _convert_call(s.unparen(inner), model)
    if value is None:
        return
    if _decide(node, value, dtype, model):
        s.replace_with(node, _typed(value, dtype, s.dotted_name(s.unparen(inner).children[0]) or "tf"))


def _cast_of(stmt, name: str, model):
    """D when ``stmt`` is ``name = tf.cast(name, D)``."""
    pair = s.simple_assignment(stmt)
    if not pair or not s.is_name(pair[0], name):
        return None
    cast = _cast_call(pair[1], model)
    if not cast or not s.is_name(s.unparen(cast[0]), name):
        return None
    return cast[1]


def _fold_pair(stmt, capture, filename) -> None:
    model = model_of(stmt)
    name = s.assigned_name(stmt)
    convert = s.simple_assignment(stmt)[1]
    value = _convert_call(convert, model)
    if value is None:
        return
    body = s.statements(stmt.parent)
    dtype = None
    for later in body[s.index_of(body, stmt) + 1:]:
        dtype = _cast_of(later, name, model)
        if dtype is not None:
            break
        if s.reads(later, name) or name in s.bound_names(later):
            return
    if dtype is None or not _decide(stmt.children[0], value, dtype, model):
        return
    tf_name = s.dotted_name(convert.children[0]) or "tf"
    s.replace_with(convert, _typed(value, dtype, tf_name))
    s.move_leading_comments(later, stmt)
    s.move_trailing_comment(later, stmt)
    s.remove_statement(later)


_CAST = re.compile(rf"\.{GAP}*cast{GAP}*\(")
_CONVERSION = re.compile(rf"{standalone('convert_to_tensor', after_dot=True)}{GAP}*\(")


def _converted_before(cast: Statement, name: str, is_conversion, same_names: bool) -> bool:
    """May the statements before ``cast`` in its block end with ``name =
    <conversion>`` followed by statements that never mention ``name``
    (_fold_pair: ``reads``, ``bound_names``)? Without ``same_names`` a
    mention in the ``ast`` may be another name in fissix's: any earlier
    conversion of ``name`` in the block counts."""
    for earlier in reversed(cast.block[:cast.index]):
        if isinstance(earlier, ast.Assign) and is_conversion(earlier.value) and any(
                isinstance(target, ast.Name) and target.id == name for target in earlier.targets):
            return True
        if same_names and any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(earlier)):
            return False
    return False


def _may_cast_a_conversion(facts: SourceFacts) -> List[ast.AST]:
    """Precheck: the casts _cast_call takes (a callee that may be
    ``tf.cast``, any spelling, of ``x`` and a dtype) of a one-argument
    ``convert_to_tensor`` call (_convert_call: a callee that may be
    ``tf.convert_to_tensor``), or the statements ``x = tf.cast(x, D)``
    where some assignment binds ``x`` to one (_fold_pair). Only the
    statements where the code's text shows ``.cast(`` are walked."""
    text = code_text(facts)
    if not (_CAST.search(text) and _CONVERSION.search(text)):
        return []  # no `.cast(` call or no `convert_to_tensor(` call in the code
    qualified = names(facts).qualified

    def is_conversion(node) -> bool:
        return isinstance(node, ast.Call) and len(node.args) + len(node.keywords) == 1 \
            and _CONVERT in qualified(dotted(node.func))

    def cast_of(node) -> Optional[ast.AST]:
        """The ``x`` of a cast call, or None."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "cast"
                and node.args and len(node.args) + len(node.keywords) == 2
                and all(k.arg in ("dtype", None) for k in node.keywords)
                and not _CASTS.isdisjoint(qualified(dotted(node.func)))):
            return None
        return node.args[0]

    assignments = statements(facts, ast.Assign)
    converted = {name for found in assignments if is_conversion(found.node.value)
                 for name in assigned_names(found.node)}
    lines = {line_of(facts, match.start()) for match in _CAST.finditer(text)}
    held = {id(node): node for line in lines for node in statements_at(facts, line)}
    found = {id(node): node for statement in held.values() for node in walk(statement)
             if is_conversion(cast_of(node))}
    for assignment in assignments:  # `x = tf.cast(x, D)` after `x = tf.convert_to_tensor(a)`
        node = assignment.node
        name = node.targets[0].id if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) else None
        argument = cast_of(node.value) if name in converted else None
        if isinstance(argument, ast.Name) and argument.id == name \
                and _converted_before(assignment, name, is_conversion, spelled_as_in_ast(facts)):
            found[id(node.value)] = node.value
    return sorted(found.values(), key=lambda node: (node.lineno, node.col_offset))


RECIPE = Recipe(
    id="typed-convert",
    summary="tf.convert_to_tensor(a) then tf.cast(.., D) -> tf.convert_to_tensor(a, dtype=D)",
    safety="safe",
    query=lambda q: q.select(PAIR).modify(_fold_pair).select(NESTED).modify(_fold_nested),
    tokens=("convert_to_tensor",),
    precheck=_may_cast_a_conversion,
    before_fails=None,
)
