"""The TensorFlow runner behind `tf-migrate verify`: proves by running code
that a program trains, and says where gradients come back None.

The parent (this package) never imports TensorFlow. Programs run in child
workers (``child/tfm_worker.py``) that import TF once and then run programs
one after another, CPU only (``CUDA_VISIBLE_DEVICES=-1``), TF logs silenced,
seeds fixed (Python, NumPy, TF, Keras) and the Keras session cleared between
programs. Each runtime (runtimes.py) is an interpreter and a Keras: the
current TF with Keras 2 semantics by default (``TF_USE_LEGACY_KERAS=1``:
tf-keras, which is TF 2.3's ``tf.keras``), the same TF with Keras 3, any
interpreter given by path, or the real TF 2.3 in a cached Python 3.8
environment (environments.py); ``VerifyOptions(runtimes=...)`` runs every
program under each, in a pool of ``jobs`` workers per runtime. The child code
is Python 3.8 / TF 2.3 compatible and self-contained (stdlib, NumPy, TF). A
program that hangs or crashes is killed at the timeout (default 120 s, TF
import not counted) and reported; the next program gets a fresh worker.

Fixture protocol (CONTRIBUTING.md). A program that defines at module level
any of these functions is imported as a module (its ``__main__`` block does
not run) and checked; Python 3.8 / TF 2.3 compatible code:

- ``training_case()`` -> ``(model, x, y)`` or ``(model, x, y, loss_fn)``: a
  Keras model (or a callable with ``trainable_variables``), a synthetic batch,
  a loss (default: mean squared error; a loss's output is averaged).
  Checks, each on a fresh case with the seeds reset:
    * ``gradients``: in one eager ``GradientTape`` step every trainable
      variable gets a non-None, finite gradient (the None ones are named);
    * ``training``: 10 eager Adam steps (lr 0.01); passes when the loss
      (measured with ``training=False``) after is below the loss before;
    * ``graph``: the same 10 steps inside ``tf.function`` (same criterion) and,
      for a ``tf.keras.Model``, ``compile`` + ``fit`` for one epoch run; an
      error is reported with its message line and the program's file:line.
- ``attribution_case()`` -> a list of ``{"name", "attributions", "input",
  "f_input", "f_baseline"}`` (a single dict is accepted). Check
  ``attribution``: every entry is finite, ``attributions.shape ==
  input.shape``, and completeness holds:
  ``|sum(attributions) - (f_input - f_baseline)| <= 0.05 * |f_input -
  f_baseline| + 1e-4``.
- ``outputs()`` -> dict name -> tensor/array. Check ``equivalence`` (on the
  `after`): for a recipe whose ``before_fails`` is None, the before's and the
  after's outputs have the same names, dtypes, shapes and values (rtol 1e-5,
  atol 1e-6).

Every program, protocol or not, gets:
- ``run``: a protocol program imports, a plain script runs to the end as
  ``__main__`` (via runpy; ``sys.exit(0)`` is fine);
- ``dynamic``: ``tf.GradientTape.gradient`` is wrapped inside the child
  (the script is not modified); every call from the program's code that
  returned None, entirely or for some sources, is reported with file:line
  (code converted by ``tf.function``/autograph is mapped back to its line).
  The runner's own gradient steps are not counted.
- ``api`` (with ``api="2.3"``; always when verifying a rewrite): every tf.*
  name used exists in TF 2.3's public API (see api_check.py).

Judging. ``fixtures/<recipe>/<case>.before.py`` with an `after` must fail the
check its recipe's ``before_fails`` names: ``none-gradient`` -> gradients or
dynamic, ``graph-error`` -> graph, ``completeness`` -> attribution ("expected
failure observed"; passing everything is "unexpectedly passed"; failing only
other checks is "failed for another reason"). ``before_fails=None``: before
and after both pass and agree in equivalence. Afters, rewritten files and
other programs must pass every check. Negative fixtures (a before without an
after) and the originals of a rewrite are run and shown, not judged.
"""

import importlib

# imported on first use: `tf-migrate check` loads this package for the
# `verify` command's signature only (migrate/runner/command.py). No submodule
# may share a public name: importing it would bind the package's name to it.
_PUBLIC = {"Check": "report", "Pair": "report", "ProgramReport": "report", "Report": "report",
           "VerifyOptions": "verification", "verify": "verification",
           "verify_fixed": "verification", "verify_rewrite": "verification"}


def __getattr__(name: str):
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)


__all__ = ["Check", "Pair", "ProgramReport", "Report", "VerifyOptions", "verify",
           "verify_fixed", "verify_rewrite"]
