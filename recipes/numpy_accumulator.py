"""numpy-accumulator: NumPy buffers that collect tensors become tf.TensorArray (or a tensor written by scatters).

What it does: inside a function, a buffer made by ``np.zeros``, ``np.empty``,
``np.ones``, ``np.full``, their ``_like`` forms, ``np.array(data)`` or
``np.copy(data)`` (any NumPy alias, or ``from numpy import zeros``) that a
loop fills with TensorFlow values (a layer call ``self.x(...)``, a ``tf.*``
call, a helper of the module that returns one, or a name bound to one: the
semantic model's ``may_hold_a_tensor``) becomes a ``tf.TensorArray``:
``buf[i] = v`` / ``buf[i, :] = v`` becomes ``buf = buf.write(i, v)``, reads of
one slot inside the loop become ``buf.read(i)``, and the buffer is stacked
once after the loop so later reads see a tensor of the NumPy shape. A loop
index on another axis (``buf[:, t, :] = v``) is written along ``t``, then
stacked and transposed back. Two nested loops writing ``buf[i, j] = v`` over the first two axes fill one
TensorArray at ``i * m + j``, reshaped to the NumPy shape after the loops.
``buf[i, cols] = v`` in a 2-D buffer of known shape writes row ``i`` as the
background row (``tf.zeros``/``tf.ones``/``tf.fill``) with ``v`` scattered
into the columns (``tf.tensor_scatter_nd_update``); ``cols`` is a slice
(written there or bound to ``slice(...)``) or a list of distinct column
literals. A loop index on a later axis of a ``_like``/``copy`` buffer, whose
rank the source does not say, makes the buffer a tensor
(``tf.zeros_like(x)``, ``tf.convert_to_tensor(x)``...) rebuilt at each step
around the slot: ``tf.concat([buf[:, :t], tf.expand_dims(v, 1), buf[:, t + 1:]],
axis=1)``; slots the loop does not write keep NumPy's values.
A value built from a batch of one (a Keras layer or model, by the
semantic model's kinds, fed ``tf.reshape(x, [1, ...])``,
``tf.expand_dims(x, 0)`` or ``x[None]``), which NumPy silently broadcasts
into its ``(d,)`` slot, is written as ``tf.reshape(v, slot_shape)`` (or
``tf.squeeze(v, axis=0)`` when the slot's shape is unknown) so the stacked
shape equals the NumPy one.
``size`` comes from the NumPy shape (``x.shape[0]``, None while ``fit``
traces, becomes ``tf.shape(x)[0]``; ``dynamic_size=True`` when the shape
cannot be known); the dtype from ``dtype=`` (values are cast to it), else
``tf.float32``. A loop whose bound is a tensor (``tf.shape(x)[0]``, the batch
size) becomes a function of the index and the buffers run by
``tf.while_loop``: a Python ``for`` over a tensor needs autograph, which
Keras 3 does not apply to a subclassed ``call``. Loops over a static bound
stay Python loops (unrolled in graph mode). The result runs eagerly, under
``tf.function`` and ``fit``, on TF 2.3, tf-keras and Keras 3. A buffer
rebound after the loop, ``buf = tf.convert_to_tensor(buf, dtype=D)`` (or
``tf.constant`` / ``tf.cast``), is part of the rewrite: ``D`` becomes the
TensorArray's dtype and the line goes (a cast when the buffer named another
dtype).

In a gradient context (see below), tensors collected in a Python list
(appended, a display or a comprehension) and turned into NumPy by ``np.array(lst)`` / ``np.asarray(lst)`` /
``np.stack(lst, axis=k)`` / ``np.concatenate(lst, axis=k)`` are the same bug:
the call becomes ``tf.stack(lst[, axis=k])`` / ``tf.concat(lst, axis=k)``.

So is NumPy computing on a tensor in a gradient context (a ``GradientTape``
block, a Keras ``call``/``train_step``, a ``tf.function``):
``np.mean(np.asarray(h), axis=1)`` becomes ``tf.reduce_mean(h, axis=1)``
(likewise sum, max, min, prod, std, var, exp, log, sqrt, square, abs, tanh),
``np.array(t)`` becomes ``t`` (``tf.cast`` with a dtype); another NumPy call
on a tensor is reported, naming the call.

Why this is a bug: ``arr[i] = tensor`` calls ``tensor.__array__()`` and stores
a NumPy copy. Nothing computed from the buffer afterwards is on the
GradientTape, so every gradient upstream of it is ``None`` (Keras reports "No
gradients provided for any variable"); under ``tf.function`` or ``model.fit``
the same line raises, because a symbolic tensor cannot be converted to NumPy.

Example (seed 000)::

    temp = np.zeros((seq_len, self.local_out_dim))
    for i in range(seq_len):
        inp = tf.reshape(inputs[i], [1, 7, 7, 1])
        temp[i, :] = self.local(inp)

becomes::

    temp = tf.TensorArray(tf.float32, size=seq_len)
    for i in range(seq_len):
        inp = tf.reshape(inputs[i], [1, 7, 7, 1])
        temp = temp.write(i, tf.reshape(self.local(inp), [self.local_out_dim]))
    temp = temp.stack()

Every other buffer that receives a tensor, whatever fills it (several or
augmented writes ``+=``/``-=``/``*=``/``/=``, ``buf[i][j]``, items, columns, a
one-row slice ``buf[i:i + 1]``, ``while`` / ``enumerate`` / ``zip`` / unrolled
writes, a buffer made by ``np.asarray`` or by a helper function or method of
the module that returns a NumPy array), becomes a tensor written by
scatters (recipes/_numpy_accumulator/scatter.py): the creation becomes
``tf.zeros(shape, dtype)`` (``tf.ones``, ``tf.fill``, ``tf.zeros_like``, or
``tf.cast(<the NumPy value>, dtype)``) and each write ``buf =
tf.tensor_scatter_nd_update(buf, [[i, j]], [v])`` (``_add`` for ``+=``/``-=``;
a column moves its axis first with ``tf.transpose``); the value is cast to
the buffer's dtype and reshaped to the slot (NumPy drops leading 1s; a
number is broadcast). It does not depend on the loop, runs eagerly, under
``tf.function`` (a loop-carried tensor of fixed shape) and ``fit``, on
TF 2.3 and current TF. The dtype is ``dtype=`` when the code names one, else
the float32 of the values written (not NumPy's float64).

Keras 3 code written against ``keras.ops`` (the file imports ``keras`` and
nothing from ``tensorflow`` or ``tf_keras``; it may run on JAX or PyTorch)
gets the same forms in ``keras.ops``: ``ops.zeros``/``ops.full``,
``ops.scatter_update`` (an augmented write adds the slot's value),
``ops.stack``/``ops.concatenate``, ``ops.mean``...; never a new
``import tensorflow``.

Left alone: buffers filled only with constants, NumPy values or ``.numpy()``
results (a mask, preprocessing), integer or bool buffers (token ids of a
sampling loop, counts: no gradient flows through them), values drawn by
``tf.random.*`` (sampling code), writes after a ``GradientTape`` block of
the function closed (losses or gradient norms logged after the step),
writes outside every gradient context of a module that has one (a
``call``/``train_step``, a tape, a ``tf.function``, a loss or metric handed
to ``compile``, and what they call: the rest is preprocessing or
evaluation), and buffers outside any function. Imports, the kinds of values
(annotated parameters, layer and model outputs, what the module's helpers
return) and gradient contexts come from the semantic model
(``recipes._model``): every import spelling, and ``np``/``tf`` read unbound
in a pasted snippet. The finding sits on the first write line; put
``# tf-migrate: ignore[numpy-accumulator]`` there to keep a buffer.

CAVEATS:
- The TensorArray form needs one write statement per buffer, directly in a
  ``for ... in range(...)`` loop that starts at 0 or above and sits next to
  the buffer's creation (or the pair and column forms above); every other
  buffer takes the scatter form, which costs one scatter per write (a copy
  of the buffer per step, in graph mode too).
- The scatter form needs the buffer's start (a shape in the source, a
  ``_like``/``array``/``copy`` argument, a helper call) and indices that are
  never negative: loop counters from 0 (``range``, ``enumerate``,
  ``zip(range(...), ...)``, a ``while`` counter set to a literal and raised
  by ``+=``), non-negative literals and their sums and products. A negative
  or computed index (NumPy counts it from the end, a scatter rejects it),
  fancy indexing (``buf[i, [0, 2]]``), ``buf[:] = v``, a slice with a step,
  a bare read of the buffer while later writes follow (a NumPy alias would
  see them, a tensor does not), and NumPy-only use after (``buf.mean()``,
  ``buf.astype(...)``) are reported without a fix, with the reason. In
  ``keras.ops`` code a column of a buffer whose rank the source does not
  say is reported too.
- A module without any gradient context is read as a library whose
  functions may be called on a tape elsewhere: its buffers are reported.
- Slots the loop never writes hold zeros (ones, the fill value, the copied
  data) in NumPy, but make ``stack()`` fail for a TensorArray: the loop must
  cover the whole axis.
- The shape of a ``_like``/``array``/``copy`` buffer is not known from the
  source: a loop index on axis 0 gets ``dynamic_size=True``; on another axis
  the per-step ``tf.concat`` rebuild costs a copy of the buffer per step.
- A TensorArray holds one dtype: values are not cast unless ``dtype=`` says
  so, and integer or float64 layer outputs need an explicit ``dtype=``.
- After the rewrite the buffer is a tensor: the buffer passed to code that
  mutates it in place is not detected.
- Broadcasting other than dropping leading 1s or a number filling a slot is
  not reproduced (the reshape raises where NumPy would broadcast).
- A batch of one that goes through a call the model cannot type (a
  ``self.x`` of a method pasted without its class, a helper, an operation
  that broadcasts) may keep its leading 1 or not: into a slot of known
  shape the reshape holds either way; into one of unknown shape the
  squeeze is a guess, offered as an unsafe fix that names the call.
- A loop over a tensor bound is lifted into a ``tf.while_loop`` only when
  its body does not ``return``/``break`` and binds no name used outside the
  loop (a state carried across iterations, a value read afterwards);
  otherwise the scatter form keeps the Python loop, which needs autograph
  (tf.keras ``call``, ``tf.function``), not Keras 3's untraced ``call``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Set

from migrate.recipe import Recipe, propose
from recipes._fissix import (
    add_import, contains, enclosing, find_root, is_call, name_reads, per_tree, source, start, syms,
)
from recipes._model import model_of
from recipes._numpy_accumulator import scatter
from recipes._numpy_accumulator.buffers import Analysis, Buffer, _INTEGERS
from recipes._numpy_accumulator.calls import CallFix, list_conversion_fixes, numpy_on_tensor_fixes, rewrite_calls
from recipes._numpy_accumulator.precheck import _may_fill_a_numpy_buffer
from recipes._numpy_accumulator.tensor_array import (
    _for_a_tensor_array, _lift_tensor_bound_loops, _merge_conversion, _read_slots, _rewrite, _stack_after_loop,
)

# `buf[...] = value` (`buf[i][j] = `, `+=`): the write where the tensor is copied into NumPy
PATTERN = "expr_stmt< power< NAME trailer< '[' any ']' > trailer< '[' any ']' >* > any* >"


# `def ...`: a function where NumPy may compute on tensors or on a list of
# them (in a gradient context); no write selects those forms
FUNCTION = "funcdef< 'def' NAME parameters any* >"


# ------------------------------------------------------------ decisions (the filters)

def _examine(buffer: Buffer, analysis: Analysis) -> bool:
    """Fill in the write, loop and reads of ``buffer``; False when it receives
    no tensor (left alone). ``buffer.problem`` says why a fix is impossible."""
    writes = analysis.writes(buffer)
    tensor_writes = [w for w in writes if analysis.is_tensor(w.children[-1])]
    if not tensor_writes or buffer.dtype in _INTEGERS \
            or not _may_run_on_a_tape(tensor_writes[0], analysis.model) \
            or _after_the_tape(tensor_writes[0], analysis.model) \
            or _sampled(tensor_writes[0].children[-1], analysis.model):
        return False  # preprocessing, token ids, counts, draws, values logged after the tape
    buffer.write = tensor_writes[0]
    if analysis.imports.keras_ops or not _for_a_tensor_array(buffer, analysis, writes):
        reads = name_reads(analysis.function, buffer.name)
        buffer.problem = scatter.why_not(buffer, scatter.writes_of(buffer, reads), reads, analysis)
        buffer.bound = None
    return True


def _may_run_on_a_tape(node, model) -> bool:
    """Is ``node`` in a gradient context of the module, or in a module with
    none (its functions are called from elsewhere, maybe on a tape)? Code
    beside the module's contexts and outside them is preprocessing."""
    return model.in_gradient_context(node) or not (model.contexts.functions or model.tapes)


def _after_the_tape(write, model) -> bool:
    """Does ``write`` come after a ``GradientTape`` of its function closed (a
    loss or a gradient norm logged after the step), outside a ``tf.function``
    or ``train_step`` that would raise on it anyway?"""
    context = model.gradient_context(write)
    return model.after_tape(write) is not None \
        and (context is None or context.how not in ("tf_function", "train_step"))


# what draws samples: no gradient flows through a draw
_SAMPLERS = ("tensorflow.random.", "tensorflow.multinomial", "tensorflow.random_")


def _sampled(value, model) -> bool:
    """Is ``value`` computed from a random draw (``tf.random.categorical``):
    sampling code, whose buffers are not differentiated?"""
    return any(is_call(node) and (model.callee(node) or "").startswith(_SAMPLERS)
               for node in value.pre_order())


@dataclass(eq=False, repr=False)
class _Plan:
    """What the filter decided for one function: its buffers that receive
    tensors (each with its fix, or the reason there is none), in line order,
    then its NumPy joins of tensors and its NumPy calls on tensors. What the
    plan rewrites counts as a tensor for the rest of it: a join under a call
    (``np.mean(np.stack(lst))``), a call's result written into a buffer
    (``buf[i] = np.mean(t, axis=0)``, then the calls again). A join of
    fixed calls' results (``np.stack([np.mean(t), ...])``) is decided in
    the engine's next pass."""

    function: object
    analysis: Analysis
    buffers: List[Buffer]
    list_conversions: List[CallFix]
    numpy_on_tensors: List[CallFix]

    @classmethod
    def of(cls, function, model) -> "_Plan":
        analysis = Analysis(function, model)
        found = [b for b in analysis.buffers if _examine(b, analysis)]
        joins: List[CallFix] = []
        calls: List[CallFix] = []
        while analysis.numpy_calls():  # none: spare the calls' analyses
            joins = list_conversion_fixes(analysis)
            analysis.becoming_tensors(join.call for join in joins if join.render is not None)
            calls = numpy_on_tensor_fixes(analysis)
            analysis.becoming_tensors(call.call for call in calls if call.render is not None)
            # a buffer written with a fixed call's result receives a tensor: then the calls again
            more = [b for b in analysis.buffers if all(b is not f for f in found) and _examine(b, analysis)]
            if not more:
                break
            found += more
            analysis.settle_tensor_names()
        return cls(function, analysis, sorted(found, key=lambda b: start(b.write)), joins, calls)


@dataclass(eq=False, repr=False)
class _Module:
    """What the recipe knows about the whole file during one pass."""

    tf: Optional[str]  # how the file spells TensorFlow; None: not imported (yet)
    done: Set[int] = field(default_factory=set)  # ids of the functions already planned

    @classmethod
    def of(cls, root) -> "_Module":
        aliases = model_of(root).imports.aliases("tensorflow")
        return cls("tf" if "tf" in aliases else min(aliases, default=None))


def _functions_around(node) -> List:
    """``node`` when it is a function, and the functions around it, outermost first."""
    functions = [node] if node.type == syms.funcdef else []
    scope = enclosing(node, syms.funcdef)
    while scope is not None:
        functions.insert(0, scope)
        scope = enclosing(scope, syms.funcdef)
    return functions


def _decide(node, capture, filename) -> bool:
    """Plan every function around this write or this function not planned
    yet in this pass (a buffer belongs to the function that creates it); the
    plans go to the modifier in ``capture``."""
    module = per_tree(node, "numpy-accumulator", _Module.of)
    model = model_of(node)
    plans = []
    for function in _functions_around(node):
        if id(function) not in module.done:
            module.done.add(id(function))
            plans.append(_Plan.of(function, model))
    capture["plans"] = plans
    return bool(plans)


def _may_be_a_gradient_function(node, capture, filename) -> bool:
    """The file imports NumPy and ``node`` is a gradient context (the
    model's: a Keras ``call``/``train_step``, a ``tf.function``, a function
    a context calls) or opens one (a ``GradientTape`` block)."""
    model = model_of(node)
    if not model.imports.uses("numpy"):
        return False
    return model.in_gradient_context(node.children[-1]) \
        or any(contains(node, tape.statement) for tape in model.tapes)


def _message(buffer: Buffer, keras_ops: Optional[str]) -> str:
    target = source(buffer.write.children[0])
    scatter_call = f"{keras_ops}.scatter_update" if keras_ops else "tf.tensor_scatter_nd_update"
    fix = (f"make the buffer a tensor and write its slots with {scatter_call}"
           if buffer.scatter is not None else "use tf.TensorArray")
    text = (f"`{target} = <tensor>` copies the tensor into a NumPy array: the tape stops "
            f"there and gradients come back None (model.fit raises); {fix}")
    if buffer.problem:
        return f"{text} ({buffer.problem})"
    return f"{text} (unsafe: {buffer.doubt})" if buffer.doubt else text


# ------------------------------------------------------------ rewrites (the modifier)

def _modify(node, capture, filename) -> None:
    """Report and rewrite what the filter planned, outermost function first."""
    module = per_tree(node, "numpy-accumulator", _Module.of)
    for plan in capture["plans"]:
        _rewrite_function(plan, module)


def _rewrite_function(plan: _Plan, module: _Module) -> None:
    """Apply the plan: the edits inside statements first (slot reads, then
    NumPy calls, each written from the text it then has), then the
    statements that hold them, rebuilt from their text (writes, creations,
    the stack after the loop, conversions, loops lifted into tf.while_loop)."""
    tf = module.tf or "tf"
    keras_ops = plan.analysis.imports.keras_ops
    fixes = [b for b in plan.buffers if propose(b.write, _message(b, keras_ops), fixable=b.problem is None,
                                                safety="unsafe" if b.doubt else None)]
    arrays = [b for b in fixes if b.scatter is None]
    for buffer in arrays:
        _read_slots(buffer)
    converted = rewrite_calls(plan.list_conversions)
    converted = rewrite_calls(plan.numpy_on_tensors) or converted
    for buffer in fixes:
        if buffer.scatter is None:
            _rewrite(buffer, plan.analysis, tf)
        else:
            scatter.rewrite(buffer, plan.analysis)
    for buffer in reversed(arrays):  # each insert goes right after its loop
        _stack_after_loop(buffer, tf)
    for buffer in fixes:
        if buffer.conversion is not None:
            _merge_conversion(buffer, tf)
    _lift_tensor_bound_loops(arrays, tf)
    if (fixes or converted) and module.tf is None and keras_ops is None:
        add_import(find_root(plan.function), "import tensorflow as tf")
        module.tf = "tf"


RECIPE = Recipe(
    id="numpy-accumulator",
    summary="NumPy buffers filled with tensors cut the tape; use tf.TensorArray",
    safety="safe",
    query=lambda q: (q.select(PATTERN).filter(_decide).modify(_modify)
                     .select(FUNCTION).filter(_may_be_a_gradient_function).filter(_decide).modify(_modify)),
    tokens=("numpy", "np."),  # NumPy imported or a presumed `np`; the precheck does the rest
    precheck=_may_fill_a_numpy_buffer,
    before_fails="none-gradient",
)
