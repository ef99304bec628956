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

Safety: ``tf.convert_to_tensor(t, dtype=D)`` raises ``ValueError`` when ``t``
is already a tensor of another dtype, where ``tf.cast`` worked. So the fix is
safe only when ``a`` is provably not a tensor (``np.*(...)``, ``.values``,
``.to_numpy()``, ``.astype(...)``, a number, a list/tuple display of those, a
subscript of those, or a name bound to one of those in the same scope, also by
unpacking a list display) and ``D`` is a floating dtype. When ``a`` is
provably a tensor it is only reported; otherwise the fix is unsafe.

CAVEATS:
- ``.values`` is trusted to be pandas; ``tf.SparseTensor.values`` is a tensor.
- The conversion rounds subnormal float64 values to float32 subnormals where
  ``tf.cast`` flushes them to zero; complex NumPy input keeps its real part
  with a NumPy warning instead of TensorFlow's silent one.
- A name whose binding depends on a branch, a loop or a parameter is not
  provable; the fix is then unsafe.
- Only calls spelled through the module (``tf.cast``, ``tensorflow.cast``)
  are recognised, not ``from tensorflow import cast``.
"""

from __future__ import annotations

import ast
from typing import Optional

from fissix.pgen2 import token

from migrate.recipe import Recipe, SourceFacts, propose
from recipes._pyast import assigned_names, declarations, dotted, may_import
from recipes import _fissix as s

_FLOAT_DTYPES = {"float16", "float32", "float64", "bfloat16", "half", "double"}
_NUMPY_METHODS = {"to_numpy", "astype"}
_MAX_DEPTH = 8
_ARITHMETIC = {s.syms.arith_expr, s.syms.term}


class _Context:
    """What a file's analysis needs: the module aliases it can trust."""

    def __init__(self, tree):
        imports = s.import_table(tree)
        self.tf = imports.module_aliases("tensorflow")
        self.np = imports.module_aliases("numpy")


def _is_float_dtype(node, ctx: _Context) -> bool:
    if node.type == token.STRING:
        return node.value.strip("'\"") in _FLOAT_DTYPES
    name = s.dotted_name(node)
    if not name or "." not in name:
        return False
    return name.split(".")[0] in ctx.tf | ctx.np and name.rsplit(".", 1)[1] in _FLOAT_DTYPES


def _provably_array(node, at, ctx: _Context, depth: int = 0) -> bool:
    """Is ``node`` certainly NumPy/pandas data or a Python literal (never a tensor)?"""
    if depth > _MAX_DEPTH:
        return False
    node = s.unparen(node)
    if node.type == token.NUMBER:
        return True
    if node.type == s.syms.factor:
        return _provably_array(node.children[-1], at, ctx, depth + 1)
    if node.type in _ARITHMETIC:
        return all(_provably_array(c, at, ctx, depth + 1) for c in node.children[::2])
    elements = s.literal_elements(node)
    if elements is not None:
        return all(_provably_array(e, at, ctx, depth + 1) for e in elements)
    if s.is_name(node):
        value = s.reaching_value(node.value, at)
        return value is not None and _provably_array(value, s.enclosing_statement(value), ctx, depth + 1)
    if node.type != s.syms.power or not all(t.type == s.syms.trailer for t in node.children[1:]):
        return False
    trailers = node.children[1:]
    last = trailers[-1]
    if last.children[0].value == "." and last.children[1].value == "values":
        return True
    if len(trailers) >= 2 and last.children[0].value == "(" and trailers[-2].children[0].value == "." \
            and trailers[-2].children[1].value in _NUMPY_METHODS:
        return True
    if last.children[0].value == "[":
        return _provably_array(_without_last_trailer(node), at, ctx, depth + 1)
    call = s.split_call(node)
    return call is not None and call[0].split(".")[0] in ctx.np


def _without_last_trailer(node):
    """``a.b[i]`` -> a detached ``a.b`` (names still resolve through ``at``)."""
    if len(node.children) == 2:
        return node.children[0]
    return s.Node(s.syms.power, [c.clone() for c in node.children[:-1]])


def _provably_tensor(node, at, ctx: _Context, depth: int = 0) -> bool:
    """Is ``node`` certainly a tensor (a ``tf.*`` call, or a name bound to one)?"""
    if depth > _MAX_DEPTH:
        return False
    node = s.unparen(node)
    if s.is_name(node):
        value = s.reaching_value(node.value, at)
        return value is not None and _provably_tensor(value, s.enclosing_statement(value), ctx, depth + 1)
    if node.type in _ARITHMETIC:  # a tensor in arithmetic makes a tensor
        return any(_provably_tensor(c, at, ctx, depth + 1) for c in node.children[::2])
    call = s.split_call(node) if node.type == s.syms.power else None
    if call is None:
        return False
    parts = call[0].split(".")
    return parts[0] in ctx.tf and "keras" not in parts


def _convert_call(node, ctx: _Context) -> Optional[object]:
    """The argument ``a`` of ``tf.convert_to_tensor(a)`` without dtype/name."""
    call = s.split_call(node) if node.type == s.syms.power else None
    if not call or call[0] not in {f"{tf}.convert_to_tensor" for tf in ctx.tf}:
        return None
    args = call[1]
    if len(args) != 1 or s.keyword_arg(args[0]) or args[0].type == s.syms.argument:
        return None
    return args[0]


def _cast_call(node, ctx: _Context) -> Optional[tuple]:
    """(x, D) of ``tf.cast(x, D)`` / ``tf.cast(x, dtype=D)``."""
    call = s.split_call(node) if node.type == s.syms.power else None
    if not call or call[0] not in {f"{tf}.cast" for tf in ctx.tf} | {f"{tf}.dtypes.cast" for tf in ctx.tf}:
        return None
    args = call[1]
    if len(args) != 2 or s.keyword_arg(args[0]):
        return None
    kw = s.keyword_arg(args[1])
    if kw and kw[0] != "dtype":
        return None
    return args[0], kw[1] if kw else args[1]


def _decide(node, value, dtype, at, ctx: _Context) -> bool:
    """Report the finding with the right safety; True when it must be fixed now."""
    what = str(value).strip()
    fold = f"tf.convert_to_tensor({what}, dtype={str(dtype).strip()})"
    if _provably_tensor(value, at, ctx):
        return propose(node, f"`{what}` is already a tensor: tf.convert_to_tensor(t, dtype=D) raises "
                             f"ValueError when t has another dtype, so this is not folded; "
                             f"write tf.cast({what}, {str(dtype).strip()}) directly", fixable=False)
    if not _is_float_dtype(dtype, ctx):
        return propose(node, f"convert then cast: {fold} converts once, but the target dtype is not "
                             "provably a float type, so the result can differ from tf.cast",
                       safety="unsafe")
    if not _provably_array(value, at, ctx):
        return propose(node, f"convert then cast: {fold} converts once, but `{what}` is not provably "
                             "NumPy/pandas data; if it is a tensor of another dtype, "
                             "convert_to_tensor raises ValueError", safety="unsafe")
    return propose(node, f"convert then cast: the data enters TensorFlow in its inferred dtype first; "
                         f"{fold} converts it once to the dtype the model needs")


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


def _context(node) -> _Context:
    return s.per_tree(node, "typed-convert", _Context)


def _imports_tensorflow(node, capture, filename) -> bool:
    return bool(_context(node).tf)


# `tf.cast(tf.convert_to_tensor(a), D)`: any call whose last attribute is `cast`
NESTED = "power< any+ trailer< '.' 'cast' > trailer< '(' any* ')' > >"
# `x = tf.convert_to_tensor(a)` alone on its line, folded with a later `x = tf.cast(x, D)`
PAIR = "simple_stmt< expr_stmt< NAME '=' power< any+ trailer< '.' 'convert_to_tensor' > trailer< '(' any* ')' > > > any >"


def _fold_nested(node, capture, filename) -> None:
    ctx = _context(node)
    cast = _cast_call(node, ctx)
    if not cast:
        return
    inner, dtype = cast
    value = _convert_call(inner, ctx)
    if value is None:
        return
    at = s.enclosing_statement(node)
    if _decide(node, value, dtype, at, ctx):
        s.replace_with(node, _typed(value, dtype, s.dotted_name(inner.children[0]) or "tf"))


def _cast_of(stmt, name: str, ctx: _Context):
    """D when ``stmt`` is ``name = tf.cast(name, D)``."""
    pair = s.simple_assignment(stmt)
    if not pair or not s.is_name(pair[0], name):
        return None
    cast = _cast_call(pair[1], ctx)
    if not cast or not s.is_name(s.unparen(cast[0]), name):
        return None
    return cast[1]


def _fold_pair(stmt, capture, filename) -> None:
    ctx = _context(stmt)
    name = s.assigned_name(stmt)
    value = _convert_call(s.simple_assignment(stmt)[1], ctx)
    if value is None:
        return
    body = s.statements(stmt.parent)
    dtype = None
    for later in body[body.index(stmt) + 1:]:
        dtype = _cast_of(later, name, ctx)
        if dtype is not None:
            break
        if s.reads(later, name) or name in s.bound_names(later):
            return
    if dtype is None or not _decide(stmt.children[0], value, dtype, stmt, ctx):
        return
    convert = s.simple_assignment(stmt)[1]
    tf_name = s.dotted_name(convert.children[0]) or "tf"
    s.replace_with(convert, _typed(value, dtype, tf_name))
    s.move_leading_comments(later, stmt)
    s.move_trailing_comment(later, stmt)
    s.remove_statement(later)


def _may_cast_a_conversion(facts: SourceFacts) -> bool:
    """Precheck: with ``import tensorflow [as tf]`` (_Context), a ``tf.cast``'s
    argument is a one-argument ``tf.convert_to_tensor`` call, or a name some
    assignment binds to one."""
    if not may_import(facts, ("tensorflow",)):
        return False
    tf = declarations(facts).module_aliases("tensorflow")
    if not tf:
        return False
    casts = {f"{alias}.cast" for alias in tf} | {f"{alias}.dtypes.cast" for alias in tf}
    converts = {f"{alias}.convert_to_tensor" for alias in tf}

    def is_conversion(node) -> bool:
        return (isinstance(node, ast.Call) and dotted(node.func) in converts
                and len(node.args) + len(node.keywords) == 1)

    converted, cast_args = set(), []
    for node in ast.walk(facts.tree):
        if isinstance(node, ast.Assign) and is_conversion(node.value):
            converted.update(assigned_names(node))
        elif isinstance(node, ast.Call) and dotted(node.func) in casts:
            cast_args.extend(node.args)
            cast_args.extend(k.value for k in node.keywords)
    return any(is_conversion(arg) or (isinstance(arg, ast.Name) and arg.id in converted)
               for arg in cast_args)


RECIPE = Recipe(
    id="typed-convert",
    summary="tf.convert_to_tensor(a) then tf.cast(.., D) -> tf.convert_to_tensor(a, dtype=D)",
    safety="safe",
    query=lambda q: (q.select(PAIR).filter(_imports_tensorflow).modify(_fold_pair)
                     .select(NESTED).filter(_imports_tensorflow).modify(_fold_nested)),
    tokens=("convert_to_tensor",),
    precheck=_may_cast_a_conversion,
    before_fails=None,
)
