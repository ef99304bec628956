"""typed-convert: convert to the wanted dtype once, instead of convert then cast.

What it does: ``x = tf.convert_to_tensor(a)`` followed by ``y = tf.cast(x, D)``
and ``tf.cast(tf.convert_to_tensor(a), D)`` become
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

Every spelling: ``tf.cast`` / ``tf.dtypes.cast`` / ``cast`` imported from
tensorflow (any alias, ``compat.v2``), arguments by position or keyword
(``x=``, ``dtype=``, ``value=``); the two calls nested, or apart as
``x = tf.convert_to_tensor(a)`` ... ``y = tf.cast(x, D)`` when nothing in
between touches ``x`` or ``y`` and, for ``y != x``, nothing else reads ``x``.

Safety, from the pair (what ``a`` is, source dtype -> ``D``) and a MEASURED
table (scripts/typed_convert_matrix.py runs every value kind x target dtype
on real TF 2.3 and current TF: docs/typed-convert-matrix.md, read from
recipes/_typed_convert_matrix.py). Which table rows ``a`` may be is found by
recipes/_host_dtypes.py: Python literals (int/float/bool lists, nested,
scalars), NumPy arrays whose dtype the code fixes (``dtype=``,
``.astype``, ``np.zeros``/``np.random.rand``... float64, ``np.array`` of a
literal), every array dtype otherwise, pandas ``.values``/``.to_numpy()``,
names whose every reaching binding is one of those:
- ``a`` a tensor (``tf.*`` results, model outputs, parameters every call in
  this module passes a tensor) -> reported only: the fold raises ValueError
  for another dtype; write ``tf.cast`` directly;
- every row's cell ``equal`` on both runtimes where convert-then-cast runs
  -> safe fix;
- the fold raises for every row on both runtimes (a float list into an
  integer dtype, an int list into bool) -> reported only;
- otherwise (a cell ``differs``: float64 -> float16 double rounding, a
  Python float list -> float64 keeps the float32 intermediate's rounding in
  the cast; an unmeasured or unknown dtype; a ``dtype_hint``; ``a`` not
  provably host data) -> an unsafe fix whose message says why.

CAVEATS:
- ``.values``, ``.to_numpy()`` and ``.astype(...)`` on a receiver of unknown
  kind are trusted to be pandas/NumPy; ``tf.SparseTensor.values`` is a tensor.
- The table is measured on the values the script probes (fractions,
  subnormals, overflow, double rounding); a cell ``equal`` there is taken to
  hold for every value of that kind.
- A parameter is typed from the calls in this module only to report (calls
  from other modules are not seen); a fix is safe only on proof.
- ``convert_to_tensor`` imported under another name (``as ctt``) is not seen.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from itertools import islice
from typing import Iterator, List, Optional

from migrate.recipe import Recipe, SourceFacts, propose
from migrate.prefilter import GAP
from recipes._pyast import Statement, code_text, dotted, import_table, spelled_as_in_ast, standalone, statements
from recipes._host_dtypes import dtype_name, rows_of
from recipes._model import model_of
from recipes._typed_convert_matrix import CELLS
from recipes import _fissix as s

_CASTS = {"tensorflow.cast", "tensorflow.dtypes.cast"}
_CONVERT = "tensorflow.convert_to_tensor"
_HINTS = ("dtype_hint", "preferred_dtype")
_RUNS_WITHOUT_FOLD = {"equal", "differs", "fold-raises"}  # convert-then-cast works there
_FOLD_RAISES = {"fold-raises", "both-raise"}


@dataclass(eq=False, repr=False)
class _Fold:
    """The filter's decision, read by the modifier (which only rewrites)."""

    where: object  # the node the finding is reported on
    convert: object  # the convert_to_tensor call
    value: object  # its value argument, as written (``a`` or ``value=a``)
    dtype: object  # the cast's dtype
    cast: object  # the nested cast call, or the statement ``y = tf.cast(x, D)``
    target: Optional[str]  # the pair: the name the cast binds
    message: str
    safety: Optional[str]
    fixable: bool


def _convert_parts(call, model):
    """(value argument as written, value expression, hint) of
    ``tf.convert_to_tensor(a)`` / ``(value=a)`` / ``(a, dtype_hint=H)``: no
    ``dtype`` (already typed), no name or other arguments; else None."""
    if not s.is_call(call) or model.callee(call) != _CONVERT:
        return None
    args = s.call_args(call.children[-1])
    keywords = [s.keyword_arg(a) for a in args]
    if any(a.type == s.syms.argument and not k for a, k in zip(args, keywords)):
        return None  # *args, **kwargs
    positional = [a for a, k in zip(args, keywords) if not k]
    named = {k[0]: k[1] for k in keywords if k}
    hints = [named.pop(h) for h in _HINTS if h in named]
    value = named.pop("value", None)
    if named or len(positional) + (value is not None) != 1 or len(hints) > 1:
        return None
    argument = positional[0] if positional else value.parent
    return argument, positional[0] if positional else value, hints[0] if hints else None


def _cast_parts(call, model):
    """(x, D) of ``tf.cast(x, D)`` in any spelling of the arguments (``x=``,
    ``dtype=``) and of the function (``tf.dtypes.cast``, ``from tensorflow
    import cast``); None with any other argument."""
    if not s.is_call(call) or model.callee(call) not in _CASTS:
        return None
    positional, named = s.split_arguments(call.children[-1])
    if any(p.type == s.syms.argument for p in positional):
        return None
    slots = dict(zip(("x", "dtype"), positional))
    if len(positional) > 2 or set(named) - {"x", "dtype"} or set(slots) & set(named):
        return None
    slots.update(named)
    return (slots["x"], slots["dtype"]) if len(slots) == 2 else None


def _decide(value, dtype, hint, model):
    """(message, safety, fixable) from the value's kind and the measured table."""
    what, dtype_text = s.shown(value), s.shown(dtype)
    fold = f"tf.convert_to_tensor({what}, dtype={dtype_text})"
    if model.likely_kind_of(value).is_tensor:
        passes = "" if model.kind_of(value).is_tensor else " (as every call in this module passes it)"
        return (f"`{what}` is already a tensor{passes}: tf.convert_to_tensor(t, dtype=D) raises ValueError "
                f"when t has another dtype, so this is not folded; write tf.cast({what}, {dtype_text}) "
                "directly"), None, False
    rows, target = rows_of(value, model), dtype_name(dtype, model)
    unsafe = f"convert then cast: {fold} converts once, but "
    if rows is None:
        return unsafe + (f"`{what}` is not provably NumPy/pandas/Python data ({_unproven(value, model)}); "
                         "if it is a tensor of another dtype, convert_to_tensor raises ValueError"), "unsafe", True
    if target is None or any(target not in run.get(row, ()) for run in CELLS.values() for row in rows):
        return unsafe + (f"the target dtype `{dtype_text}` is not one whose fold was measured "
                         "(docs/typed-convert-matrix.md)"), "unsafe", True
    if hint is not None:
        return unsafe + (f"the intermediate tensor has the hinted dtype `{s.shown(hint)}`, which the "
                         "measured table (docs/typed-convert-matrix.md) does not cover"), "unsafe", True
    cells = {(runtime, row): run[row][target] for runtime, run in CELLS.items() for row in rows}
    outcomes = set(cells.values())
    if outcomes & _RUNS_WITHOUT_FOLD and outcomes & _RUNS_WITHOUT_FOLD <= {"equal"}:
        return (f"convert then cast: the data enters TensorFlow in its inferred dtype first; {fold} "
                "converts it once, with the same result (measured: docs/typed-convert-matrix.md)"), None, True
    if outcomes <= _FOLD_RAISES:
        return (f"convert then cast: {fold} raises for `{what}` ({_rows_text(rows)}, measured on TF 2.3 and "
                "current TF) where the cast converts: keep the cast"), None, False
    (runtime, row), outcome = next(item for item in sorted(cells.items()) if item[1] != "equal")
    return unsafe + (f"for `{what}` ({_rows_text(rows)}) the fold was measured `{outcome}` against the cast "
                     f"({row} -> {target} on {runtime}: docs/typed-convert-matrix.md)"), "unsafe", True


def _rows_text(rows) -> str:
    return ", ".join(sorted(rows)) if len(rows) <= 3 else f"one of {len(rows)} kinds"


def _unproven(value_node, model) -> str:
    """Why the argument is not provably data (for the unsafe message)."""
    value = model.kind_of(value_node)
    if value.is_known:
        return f"it is a {value.describe()}, which may hold tensors"
    if value_node.type == s.token.NAME:
        bindings = model.reaching(value_node.value, value_node)
        if any(b.how == "param" for b in bindings):
            return "it is a parameter: callers may pass a tensor"
        if len(bindings) > 1:
            return "it is bound to different kinds of values on different paths"
    return "what it evaluates to is not known"


def _nested(convert, parts, model) -> Optional[_Fold]:
    """``tf.cast(tf.convert_to_tensor(a), D)``: the conversion is the cast's ``x``."""
    node = convert
    while node.parent is not None and node.parent.type == s.syms.atom and s.unparen(node.parent) is node:
        node = node.parent
    holder = node.parent if node.parent is not None and node.parent.type == s.syms.argument else node
    trailer = holder.parent.parent if holder.parent is not None and holder.parent.type == s.syms.arglist \
        else holder.parent
    call = trailer.parent if trailer is not None and trailer.type == s.syms.trailer else None
    cast = _cast_parts(call, model) if call is not None and call.children[-1] is trailer else None
    if cast is None or s.unparen(cast[0]) is not convert:
        return None
    message, safety, fixable = _decide(parts[1], cast[1], parts[2], model)
    return _Fold(call, convert, parts[0], cast[1], call, None, message, safety, fixable)


def _paired(convert, parts, model) -> Optional[_Fold]:
    """``x = tf.convert_to_tensor(a)``, then, later in the block and with
    nothing touching either name in between, ``y = tf.cast(x, D)``; when
    ``y`` is not ``x``, nothing else in the module reads ``x``."""
    stmt = convert.parent.parent if convert.parent is not None else None
    pair = s.simple_assignment(stmt) if stmt is not None else None
    if not pair or pair[1] is not convert or not s.is_name(pair[0]):
        return None
    name = pair[0].value
    between = []  # the statements after ``stmt`` and before ``later``
    for later in _statements_after(stmt):
        cast_pair = s.simple_assignment(later)
        cast = _cast_parts(cast_pair[1], model) if cast_pair and s.is_name(cast_pair[0]) else None
        if cast is not None and s.is_name(s.unparen(cast[0]), name):
            target = cast_pair[0].value
            break
        if s.reads(later, name) or name in model.names_bound_in(later):
            return None
        between.append(later)
    else:
        return None
    touched = any(s.reads(b, target) or target in model.names_bound_in(b) for b in between)
    if target != name and (touched or _read_elsewhere(name, stmt, cast[0])):
        return None
    message, safety, fixable = _decide(parts[1], cast[1], parts[2], model)
    return _Fold(stmt.children[0], convert, parts[0], cast[1], later, target, message, safety, fixable)


def _statements_after(stmt) -> Iterator:
    """The statements after ``stmt`` in its block, as far as they are asked
    for (listing the block per conversion made a module of many quadratic)."""
    block = stmt.parent
    children = block.children if s.is_block(block) else [block]
    for later in islice(children, s.index_of(children, stmt) + 1, None):
        if not (isinstance(later, s.Leaf) and later.type in s.LAYOUT):
            yield later


def _read_elsewhere(name: str, stmt, cast_argument) -> bool:
    """Does any code in the module but the cast spell ``name`` (read again,
    rebound, or global)?"""
    root = stmt
    while root.parent is not None:
        root = root.parent
    target = s.simple_assignment(stmt)[0]
    return any(leaf is not target and not s.contains(cast_argument, leaf) for leaf in s.name_reads(root, name))


def _a_fold(node, capture, filename) -> bool:
    """Filter: a conversion whose result only a cast reads, nested or in a
    later statement; the decision is kept for the modifier."""
    model = model_of(node)
    parts = _convert_parts(node, model)
    fold = parts and (_nested(node, parts, model) or _paired(node, parts, model))
    capture["fold"] = fold
    return bool(fold)


def _typed(fold: _Fold):
    """``<the conversion's callee>(a, dtype=D)`` built around the original nodes."""
    callee = "".join(str(c) for c in fold.convert.children[:-1]).strip()
    value = fold.value.clone()
    value.prefix = ""
    dtype = fold.dtype.clone()
    dtype.prefix = ""
    return s.fill(f"{callee}(__value__, dtype=__dtype__)", value=value, dtype=dtype).children[0]


def _rewrite(node, capture, filename) -> None:
    fold = capture["fold"]
    if not propose(fold.where, fold.message, safety=fold.safety, fixable=fold.fixable):
        return
    typed = _typed(fold)
    if fold.target is None:
        s.replace_with(fold.cast, typed)
        return
    stmt = fold.convert.parent.parent
    s.replace_with(fold.convert, typed)
    stmt.children[0].children[0].value = fold.target
    s.move_leading_comments(fold.cast, stmt)
    s.move_trailing_comment(fold.cast, stmt)
    s.remove_statement(fold.cast)


# `tf.convert_to_tensor(...)` (any module spelling) and `convert_to_tensor(...)` imported from tensorflow
CONVERT = "power< any+ trailer< '.' 'convert_to_tensor' > trailer< '(' any* ')' > >"
BARE_CONVERT = "power< 'convert_to_tensor' trailer< '(' any* ')' > >"

# pattern texts, compiled by `re` at their first search (only a file with `convert_to_tensor`)
_CAST_WORD = standalone("cast", after_dot=True) + r"(?!\w)"
_CONVERSION = rf"{standalone('convert_to_tensor', after_dot=True)}{GAP}*\("


def _converted_before(cast: Statement, name: str, is_conversion, same_names: bool) -> bool:
    """May the statements before ``cast`` in its block end with ``name =
    <conversion>`` followed by statements that never mention ``name``
    (_paired: ``reads``, ``model.names_bound_in``)? Without ``same_names`` a mention
    in the ``ast`` may be another name in fissix's: any earlier conversion
    of ``name`` in the block counts."""
    for earlier in reversed(cast.block[:cast.index]):
        if isinstance(earlier, ast.Assign) and is_conversion(earlier.value) and any(
                isinstance(target, ast.Name) and target.id == name for target in earlier.targets):
            return True
        if same_names and any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(earlier)):
            return False
    return False


def _may_cast_a_conversion(facts: SourceFacts) -> List[ast.AST]:
    """Precheck: the casts _cast_parts takes (a callee that may be
    ``tf.cast``, any spelling) of a ``convert_to_tensor`` call (a callee that
    may be ``tf.convert_to_tensor``), and the statements ``y = tf.cast(x, D)``
    after ``x = tf.convert_to_tensor(a)`` in the same block (_paired)."""
    text = code_text(facts)
    if not (re.search(_CAST_WORD, text) and re.search(_CONVERSION, text)):
        return []
    qualified = import_table(facts).qualified

    def is_conversion(node) -> bool:
        return isinstance(node, ast.Call) and _CONVERT in qualified(dotted(node.func))

    def cast_argument(node) -> Optional[ast.AST]:
        if not (isinstance(node, ast.Call) and not _CASTS.isdisjoint(qualified(dotted(node.func)))):
            return None
        named = [k.value for k in node.keywords if k.arg == "x"]
        return node.args[0] if node.args else named[0] if named else None

    found = {id(node): node for node in facts.nodes(ast.Call) if is_conversion(cast_argument(node))}
    same_names = spelled_as_in_ast(facts)
    for assignment in statements(facts, ast.Assign):
        node = assignment.node
        argument = cast_argument(node.value) if len(node.targets) == 1 else None
        if isinstance(argument, ast.Name) and _converted_before(assignment, argument.id, is_conversion, same_names):
            found[id(node.value)] = node.value
    return sorted(found.values(), key=lambda node: (node.lineno, node.col_offset))


RECIPE = Recipe(
    id="typed-convert",
    summary="tf.convert_to_tensor(a) then tf.cast(.., D) -> tf.convert_to_tensor(a, dtype=D)",
    safety="safe",
    query=lambda q: q.select(CONVERT).filter(_a_fold).modify(_rewrite)
                     .select(BARE_CONVERT).filter(_a_fold).modify(_rewrite),
    tokens=("convert_to_tensor",),
    precheck=_may_cast_a_conversion,
    before_fails=None,
)
