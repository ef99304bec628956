"""What a pasted snippet's names of unknown origin are presumed to be.

Code pasted into an issue reads ``model``, ``tape``, ``generator`` bound
nowhere in the file. Unknown is not evidence, so a name is presumed only
from how the snippet itself uses it, and only when nothing can bind it
(bound in no scope of the module, no ``from m import *``):

- a receiver of tape methods only (``tape.gradient(...)``, ``.watch``,
  ``.jacobian``) is a GradientTape;
- a receiver of Keras model attributes (``.trainable_variables``,
  ``.predict(...)``, ``.fit(...)``), or a name called with ``training=``,
  and never used as a tape, is a Keras model.

The conventional module aliases (``tf``, ``np``) are the import table's
(``imports.py``: ``presumed``), not this module's.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Set

from ._tree import syms, token
from .values import Kind, Value, of

TAPE_METHODS = frozenset({"gradient", "jacobian", "batch_jacobian", "watch", "stop_recording"})
MODEL_ATTRIBUTES = frozenset({"trainable_variables", "trainable_weights", "non_trainable_variables",
                              "predict", "predict_on_batch", "fit", "compile", "evaluate",
                              "train_on_batch", "get_layer", "layers", "summary", "save_weights",
                              "load_weights"})


def presumed_values(unbound: Set[str], leaves: Dict[str, List], root) -> Dict[str, Value]:
    """name -> its presumed Value, for the names read and bound nowhere
    (``leaves``: every NAME leaf by its text)."""
    found: Dict[str, Value] = {}
    for name in unbound:
        value = _presumed(leaves.get(name, ()))
        if value is not None:
            found[name] = value
    if found and _star_import(root):
        return {}
    return found


def _presumed(reads: Iterable) -> Optional[Value]:
    tape = model = False
    for leaf in reads:
        use = _use(leaf)
        tape = tape or use in TAPE_METHODS
        model = model or use in MODEL_ATTRIBUTES or use == "call(training=)"
    if tape and not model:
        return of(Kind.OTHER, what="tape")
    if model and not tape:
        return of(Kind.MODEL)
    return None


def _use(leaf) -> Optional[str]:
    """``attr`` for ``name.attr``, ``call(training=)`` for ``name(..., training=...)``."""
    trailer = leaf.next_sibling
    if trailer is None or trailer.type != syms.trailer or leaf.prev_sibling is not None:
        return None
    first = trailer.children[0]
    if first.type == token.DOT:
        return trailer.children[1].value
    arguments = trailer.children[1] if len(trailer.children) == 3 else None
    if first.type == token.LPAR and arguments is not None and any(
            node.type == syms.argument and node.children[0].type == token.NAME
            and node.children[0].value == "training"
            for node in (arguments.children if arguments.type == syms.arglist else [arguments])):
        return "call(training=)"
    return None


def _star_import(root) -> bool:
    return any(node.type == syms.import_from and any(child.type == token.STAR for child in node.children)
               for node in root.pre_order())
