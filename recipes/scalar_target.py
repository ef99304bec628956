"""scalar-target: differentiate one model output, not all of them at once.

What it does: in ``tape.gradient(target, x)`` where ``x`` is watched (an
attribution or saliency computation, not a training step) and ``target`` is a
model call ``model(...)`` on the watched input (directly, or through a name
bound to it in the tape), the target output is selected: ``model(...)[:, t]``
with ``t`` from ``--target-index`` (default 0).

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
    # becomes (--target-index 0)
        pred = model(x)[:, 0]

Unsafe: which output is the target is the user's choice.

CAVEATS:
- The model output is assumed to be ``(batch, outputs)``; a model with
  several outputs (a list) or a rank-1 output needs another selection.
- A callee whose name contains ``loss`` is taken to return a scalar and is
  left alone; other callees that already reduce their output are not known.
"""

from __future__ import annotations

from typing import List, Optional

from migrate.recipe import Recipe, option, propose
from recipes import _scope as s


def _model_call(node, watched: List[str], modules) -> bool:
    """Is ``node`` exactly ``callee(args)`` with a watched expression in the
    args and a callee that is not a library function or a loss?"""
    node = s.unparen(node)
    call = s.split_call(node) if node.type == s.syms.power else None
    if not call:
        return False
    callee = call[0]
    if callee.split(".")[0] in modules or "loss" in callee.lower():
        return False
    return any(s.code(sub) in watched for arg in call[1] for sub in arg.pre_order())


def _target_value(target, gradient_call, watched, modules) -> Optional[object]:
    """The node to subscript: the call itself, or the value of the name it is bound to."""
    if _model_call(target, watched, modules):
        return s.unparen(target)
    if s.is_name(target):
        value = s.reaching_value(target.value, s.enclosing_statement(gradient_call))
        if value is not None and _model_call(value, watched, modules):
            return s.unparen(value)
    return None


def _modify(node, capture, filename):
    modules = s.module_aliases(node, "tensorflow") | s.module_aliases(node, "numpy")
    index = int(option("target_index", 0))
    tapes = {id(tape.stmt): tape for tape in s.tapes(node)}
    for call_node in list(node.pre_order()):
        call = s.split_call(call_node) if call_node.type == s.syms.power else None
        if not call or len(call[1]) < 2 or not call[0].endswith(".gradient") or call[0].count(".") != 1:
            continue
        tape = tapes.get(id(s.binder(call[0].split(".")[0], call_node)))
        if tape is None:
            continue
        watched = [s.code(e) for e in tape.watch_arguments()]
        sources = s.literal_elements(call[1][1]) or [call[1][1]]
        if not any(s.code(src) in watched for src in sources):
            continue
        value = _target_value(call[1][0], call_node, watched, modules)
        if value is None:
            continue
        if propose(value, f"tape.gradient of the whole output of `{s.shown(value)}` differentiates the "
                          "sum of all its outputs (every class mixed), not one target; select the "
                          f"target output [:, {index}] (--target-index)", safety="unsafe"):
            value.append_child(s.parse_expression(f"x[:, {index}]").children[-1].clone())


RECIPE = Recipe(
    id="scalar-target",
    summary="tape.gradient(model(x), x) on a non-scalar output -> select the target output",
    safety="unsafe",
    query=lambda q: q.select("file_input< any* >").modify(_modify),
    tokens=(".gradient(",),
    before_fails="completeness",
)
