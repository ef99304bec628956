"""Do the prefilter and the prechecks change any answer on real code?

For every .py file under the given directories (default: the installed
tf_keras, keras and tensorflow/python sources, as scripts/corpus_sweep.py),
the engine runs every recipe with unsafe fixes on, in `check` mode
(isolated) and in `fix` mode (chained), once as shipped and once with every
recipe's tokens and precheck removed. Any file whose status, output or
findings differ is printed: a precheck that stopped a file the recipe would
have reported on. One difference is expected and listed apart: a file
fissix cannot parse is "skipped" when parsed, but "unchanged" when no recipe
can match it and so it is never parsed. Slow (the unfiltered run parses
every file for every recipe): a few minutes on 2 cores.
tests/test_prefilter.py holds the fast checks CI runs.

``--finding-copy DIR`` also writes to DIR, and compares, a copy of the
installed tf_keras sources with FINDING_TAIL appended to every file: code
that is a finding for several recipes only through other top-level
statements (a tape in one function calling a NumPy writer in another, an
output width known through a call site, a Keras auto-name spelled in a
later function), so a precheck that misses what a finding depends on shows up
in every file, whatever the file around it holds.

Usage: python scripts/precheck_soundness.py [DIR ...] [--finding-copy DIR] [--jobs N]
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import sys
from pathlib import Path
from typing import List, Optional, Tuple

from migrate.engine import Options, transform, wants
from migrate.registry import all_recipes
from migrate.result import Status

SHIPPED = tuple(all_recipes().values())
FINDING_TAIL = """

import numpy as np  # tf-migrate soundness: findings that depend on other top-level statements
import tensorflow as tf


class _TfMigrateGate(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.score = tf.keras.layers.Dense(1)

    def call(self, inputs):
        steps = inputs.shape[1]
        gates = np.zeros(steps)
        for t in range(steps):
            gates[t] = tf.reduce_mean(self.score(inputs[:, t, :]))
        return tf.cast(gates, tf.float32)


def _tf_migrate_fill(x):
    buf = np.zeros(3)
    for i in range(3):
        buf[i] = tf.reduce_sum(x * i)
    return buf


def _tf_migrate_outer(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = _tf_migrate_fill(x)
    return tape.gradient(y, x)


def _tf_migrate_counts(months):
    counts = np.array([[3, 0, 7], [1, 2, 2 ** 20]][:months])
    return tf.cast(tf.convert_to_tensor(counts), dtype=tf.float32)


def _tf_migrate_probe(units):
    probe = tf.keras.layers.Dense(units)
    return units


def _tf_migrate_lookup(model):
    return model.get_layer("dense_1")


def _tf_migrate_classifier():
    return tf.keras.Sequential([tf.keras.layers.Dense(3, activation="softmax")])


def _tf_migrate_explain(model, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        probs = model(x)
    return tape.gradient(probs, x)


def _tf_migrate_case(x):
    return _tf_migrate_explain(_tf_migrate_classifier(), x)
"""
UNFILTERED = tuple(dataclasses.replace(r, tokens=(), precheck=None) for r in SHIPPED)


def _answer(source: str, recipes, isolated: bool) -> tuple:
    result = transform(source, "file.py", Options(recipes, unsafe_fixes=True, isolated=isolated))
    return (result.status, result.output,
            [(d.recipe, d.line, d.column, d.end_line, d.end_column, d.message, d.applied, d.fix,
              d.after) for d in result.diagnostics])


def compare(path: str) -> Tuple[str, List[str], bool]:
    """(path, how the answers differ per mode, whether it has findings)."""
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return path, [], False
    differ, found = [], False
    for mode, isolated in (("check", True), ("fix", False)):
        shipped, unfiltered = _answer(source, SHIPPED, isolated), _answer(source, UNFILTERED, isolated)
        found = found or bool(shipped[2])
        if shipped[1:] != unfiltered[1:]:
            differ.append(f"{mode}: findings or output")
        elif shipped[0] != unfiltered[0]:
            expected = (shipped[0], unfiltered[0]) == (Status.UNCHANGED, Status.SKIPPED) \
                and not any(wants(recipe, source) for recipe in SHIPPED)
            differ.append(f"{mode}: never parsed" if expected else f"{mode}: status")
    return path, differ, found


def finding_copy(source: Path, target: Path) -> Path:
    """``target`` with every .py file of ``source``, FINDING_TAIL appended."""
    for path in source.rglob("*.py"):
        out = target / path.relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8")
        out.write_text(text + ("" if text.endswith("\n") else "\n") + FINDING_TAIL, encoding="utf-8")
    return target


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path)
    parser.add_argument("--finding-copy", type=Path, metavar="DIR",
                        help="also compare a copy of tf_keras with FINDING_TAIL appended, written to DIR")
    parser.add_argument("--jobs", type=int, default=multiprocessing.cpu_count())
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).parent))
    from corpus_sweep import corpus_roots
    installed = dict(corpus_roots())
    roots = list(args.dirs) if args.dirs or args.finding_copy else list(installed.values())
    if args.finding_copy:
        roots.append(finding_copy(installed["tf_keras"], args.finding_copy))
    paths = [str(p) for root in roots for p in sorted(root.rglob("*.py"))]
    changed = with_findings = 0
    with multiprocessing.Pool(args.jobs) as pool:
        for path, differ, found in pool.imap_unordered(compare, paths, chunksize=4):
            with_findings += found
            if differ:
                changed += any(not d.endswith("never parsed") for d in differ)
                print(f"{path}: {'; '.join(differ)}", flush=True)
    print(f"{len(paths)} files, {with_findings} with findings, {changed} answer(s) changed "
          "by the prefilter")
    return 1 if changed else 0

if __name__ == "__main__":
    sys.exit(main())
