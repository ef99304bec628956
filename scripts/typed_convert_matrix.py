"""Measure typed-convert's fold on real runtimes and write the table the recipe reads.

For every value kind (Python lists and scalars, NumPy arrays of each dtype,
pandas frames and ``.values``, tensors and variables) and every target dtype
D, a probe run in a subprocess asks: does ``tf.convert_to_tensor(v, dtype=D)``
succeed, and does it give what ``tf.cast(tf.convert_to_tensor(v), D)`` gives
(dtype and every value)? Each cell is one of:

- ``equal``: both succeed with the same dtype and values (the fold is right);
- ``differs``: both succeed, with other values (double rounding, overflow);
- ``fold-raises``: the fold raises where convert-then-cast works;
- ``cast-raises``: the fold works where convert-then-cast raises;
- ``both-raise``: the program raises either way.

The probe runs on real TF 2.3 (the cached Python 3.8 environment) and on the
current TF of this interpreter. It writes docs/typed-convert-matrix.md (both
tables) and recipes/_typed_convert_matrix.py, the copy the recipe reads
(recipes never import TensorFlow).

    python scripts/typed_convert_matrix.py            # both runtimes, rewrite both files
    python scripts/typed_convert_matrix.py --check    # exit 1 when the files differ from a new run
"""

from __future__ import annotations

import argparse
import json
import os
import pprint
import subprocess
import sys
from pathlib import Path
from typing import Dict

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "typed-convert-matrix.md"
TABLE = ROOT / "recipes" / "_typed_convert_matrix.py"
TF23 = Path.home() / ".cache" / "tf-migrate" / "envs" / "tf2.3-py3.8" / "bin" / "python"

# Values chosen to expose every difference between the two paths: fractions
# (float -> int truncation), a value just above a float16 halfway point that a
# float32 intermediate rounds onto it (double rounding), a float32 subnormal,
# a float16 overflow, negative zero, an int64 beyond int32, negatives into uint8.
PROBE = r'''
import json, sys, warnings
warnings.simplefilter("ignore")
import os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np, pandas as pd, tensorflow as tf

FLOATS = [0.1, -2.7, 1.0 / 3.0, 1.0 + 2.0 ** -11 + 2.0 ** -40, 1e-40, 131008.0, -0.0]
INTS = [1, -2, 3, 127, 300]
BOOLS = [True, False, True]

def values():
    yield "py-list-int", lambda: list(INTS)
    yield "py-list-float", lambda: list(FLOATS)
    yield "py-list-bool", lambda: list(BOOLS)
    yield "py-list-mixed", lambda: [1, 2.5, -3]
    yield "py-nested-int", lambda: [[1, -2], [3, 300]]
    yield "py-nested-float", lambda: [[0.1, -2.7], [1.0 / 3.0, 131008.0]]
    yield "py-tuple-float", lambda: tuple(FLOATS)
    yield "py-scalar-int", lambda: 300
    yield "py-scalar-float", lambda: -2.7
    yield "py-scalar-bool", lambda: True
    for dt in ("int32", "int64", "float16", "float32", "float64", "bool"):
        data = BOOLS if dt == "bool" else INTS + ([2 ** 40 + 5] if dt == "int64" else []) \
            if dt.startswith("int") else FLOATS
        yield "ndarray-" + dt, (lambda data=data, dt=dt: np.array(data, dtype=dt))
    yield "ndarray-object", lambda: np.array([0.1, -2.7, 3], dtype=object)
    yield "pandas-frame-float64", lambda: pd.DataFrame({"a": FLOATS[:4], "b": FLOATS[3:]})
    yield "pandas-frame-int64", lambda: pd.DataFrame({"a": [1, -2], "b": [3, 300]})
    yield "pandas-values-float64", lambda: pd.DataFrame({"a": FLOATS[:4], "b": FLOATS[3:]}).values
    yield "pandas-values-int64", lambda: pd.DataFrame({"a": [1, -2], "b": [3, 300]}).values
    yield "pandas-values-mixed", lambda: pd.DataFrame({"a": [1, -2], "b": ["x", "y"]}).values
    for dt in ("int32", "int64", "float16", "float32", "float64", "bool"):
        data = BOOLS if dt == "bool" else INTS if dt.startswith("int") else FLOATS
        yield "tensor-" + dt, (lambda data=data, dt=dt: tf.constant(np.array(data, dtype=dt)))
    for dt in ("int32", "float32", "float64"):
        data = INTS if dt.startswith("int") else FLOATS
        yield "variable-" + dt, (lambda data=data, dt=dt: tf.Variable(np.array(data, dtype=dt)))

TARGETS = ("float16", "bfloat16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool")

def comparable(t):
    return t.dtype.name, tf.cast(t, tf.float64).numpy()

def cell(make, target):
    dtype = tf.as_dtype(target)
    try:
        folded = comparable(tf.convert_to_tensor(make(), dtype=dtype))
    except Exception:
        folded = None
    try:
        cast = comparable(tf.cast(tf.convert_to_tensor(make()), dtype))
    except Exception:
        cast = None
    if folded is None:
        return "both-raise" if cast is None else "fold-raises"
    if cast is None:
        return "cast-raises"
    same = folded[0] == cast[0] and folded[1].shape == cast[1].shape and bool(np.all(
        (folded[1] == cast[1]) | (np.isnan(folded[1]) & np.isnan(cast[1]))))
    return "equal" if same else "differs"

table = {name: {t: cell(make, t) for t in TARGETS} for name, make in values()}
print(json.dumps({"tensorflow": tf.__version__, "numpy": np.__version__, "pandas": pd.__version__,
                  "targets": list(TARGETS), "cells": table}))
'''


def measure(python: str) -> dict:
    """The probe's table on the interpreter ``python``."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    env.pop("PYTHONPATH", None)
    done = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, env=env, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"probe failed on {python}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def markdown(runs: Dict[str, dict]) -> str:
    lines = ["# typed-convert: when `convert_to_tensor(v, dtype=D)` equals convert-then-cast", "",
             "Generated by `python scripts/typed_convert_matrix.py` (do not edit by hand). Each cell",
             "compares `tf.convert_to_tensor(v, dtype=D)` with `tf.cast(tf.convert_to_tensor(v), D)`",
             "(dtype and every value): `equal`, `differs` (both run, other values), `fold-raises`,",
             "`cast-raises`, `both-raise`. The values probed are in the script (fractions, a float16",
             "double-rounding case, a float32 subnormal, a float16 overflow, an int64 beyond int32,",
             "negatives into uint8). typed-convert folds safely only where the value is provably host",
             "data of a kind whose cell is `equal` on both runtimes; `fold-raises`/`both-raise`",
             "everywhere is reported only; anything else is an unsafe fix.", ""]
    for label, run in runs.items():
        targets = run["targets"]
        lines += [f"## {label}: TensorFlow {run['tensorflow']}, NumPy {run['numpy']}, pandas {run['pandas']}",
                  "", "| value | " + " | ".join(targets) + " |", "|---" * (len(targets) + 1) + "|"]
        for kind, cells in run["cells"].items():
            lines.append(f"| {kind} | " + " | ".join(cells[t] for t in targets) + " |")
        lines.append("")
    return "\n".join(lines)


def table_module(runs: Dict[str, dict]) -> str:
    cells = {label: run["cells"] for label, run in runs.items()}
    versions = {label: run["tensorflow"] for label, run in runs.items()}
    return ('"""typed-convert\'s measured fold table (generated by scripts/typed_convert_matrix.py;\n'
            'docs/typed-convert-matrix.md shows it): runtime -> value kind -> target dtype -> outcome."""\n\n'
            f"VERSIONS = {versions!r}\n\nCELLS = {pprint.pformat(cells, width=110, sort_dicts=False)}\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the files instead of writing them")
    args = parser.parse_args(argv)
    runs = {"tf2.3": measure(str(TF23)), "current": measure(sys.executable)}
    outputs = {DOC: markdown(runs), TABLE: table_module(runs)}
    if args.check:
        stale = [str(path) for path, text in outputs.items() if path.read_text(encoding="utf-8") != text]
        print("stale: " + ", ".join(stale) if stale else "up to date")
        return 1 if stale else 0
    for path, text in outputs.items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
