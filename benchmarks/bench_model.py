"""Time building the semantic model (recipes/_model) and answering questions.

Measured in this process (no timing assertions anywhere in the tests):
- a generated module of --lines lines (default 48,000) in the styles users
  write (functions with tapes and NumPy buffers, Keras subclasses, a
  module-level training script), in two shapes: mostly functions, and one
  long notebook-like module-level script;
  for each: parse time, model build time, and the time to answer, for every
  buffer write (--findings of them, default 2,000), the questions a recipe
  asks (kind of the buffer and of the value, gradient context, after-tape,
  last assignment, can the value be hoisted above its loop);
- every file of the installed tf_keras package: parse and build times
  (total, and the slowest file).
Timings are wall and CPU seconds of this process (CPU is the steadier figure
on a busy machine; tf_keras: CPU only); build time is also given as a
fraction of fissix's parse time of the same source. Garbage left by earlier
measurements is collected before each one, outside the timed region.

Usage: python benchmarks/bench_model.py [--lines N] [--skip-tf-keras] [--json OUT]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fissix import pygram  # noqa: E402
from fissix.pgen2 import token  # noqa: E402

from migrate.engine import parse  # noqa: E402
from recipes._model import model_of  # noqa: E402

syms = pygram.python_symbols

HEADER = """import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

"""

FUNCTION_BLOCK = '''
class Block{i}(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.dense = layers.Dense({width})

    def call(self, inputs):
        out = np.zeros((4, {width}))
        for j in range(4):
            out[j] = self.dense(inputs[j:j + 1])
        return tf.convert_to_tensor(out)


def step_{i}(model, x, y, history):
    with tf.GradientTape() as tape:
        pred = model(x)
        loss = tf.reduce_mean(tf.square(pred - y))
    grads = tape.gradient(loss, model.trainable_variables)
    history[{i} % 10] = loss.numpy()
    return grads
'''

SCRIPT_BLOCK = '''
x_{i} = np.random.rand(8, 4).astype("float32")
buf_{i} = np.zeros((8, 1))
for k in range(8):
    with tf.GradientTape() as tape:
        row = tf.convert_to_tensor(x_{i}[k:k + 1])
        tape.watch(row)
        pred = model(row)
    buf_{i}[k] = tape.gradient(pred, row).numpy().sum()
    if k % 2:
        x_{i} = x_{i} * 0.5
'''


def generate(block: str, lines: int) -> str:
    parts, i, total = [HEADER], 0, HEADER.count("\n")
    while total < lines:
        text = block.format(i=i, width=1 + i % 3)
        parts.append(text)
        total += text.count("\n")
        i += 1
    if block is SCRIPT_BLOCK:
        parts.insert(1, "model = keras.Sequential([layers.Dense(4), layers.Dense(1)])\n")
    return "".join(parts)


def buffer_writes(tree, limit: int):
    """Statements ``name[...] = value`` (what numpy-accumulator asks about)."""
    found = []
    for node in tree.pre_order():
        if len(found) >= limit:
            break
        if node.type == syms.expr_stmt and len(node.children) == 3 \
                and node.children[1].type == token.EQUAL and node.children[0].type == syms.power \
                and node.children[0].children[-1].children[0].type == token.LSQB:
            found.append(node)
    return found


def ask(model, write) -> None:
    target, value = write.children[0], write.children[2]
    buffer = target.children[0]
    model.kind_of(buffer)
    model.kind_of(value)
    model.gradient_context(write)
    model.after_tape(write)
    model.last_assignment(buffer.value, write)
    loop = write.parent
    while loop is not None and loop.type != syms.for_stmt:
        loop = loop.parent
    if loop is not None:
        model.same_value_at(value, loop, write)


def measure_module(name: str, source: str, findings: int) -> dict:
    gc.collect()  # the previous trees' cycles are not billed to this one
    clock = Clock()
    tree = parse(source)
    parsed = clock.lap()
    model = model_of(tree)
    built = clock.lap()
    writes = buffer_writes(tree, findings)
    clock.lap()
    for write in writes:
        ask(model, write)
    answered = clock.lap()
    return {"module": name, "lines": source.count("\n"), "parse": parsed, "build": built,
            "build_vs_parse": round(built["cpu_s"] / parsed["cpu_s"], 2),
            "questions_for": len(writes), "answer": answered}


class Clock:
    """Wall and CPU seconds since the last lap: on a busy machine the CPU
    time of this process is the steadier figure."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def lap(self) -> dict:
        wall, cpu = time.perf_counter(), time.process_time()
        spent = {"wall_s": round(wall - self.wall, 3), "cpu_s": round(cpu - self.cpu, 3)}
        self.wall, self.cpu = wall, cpu
        return spent


def measure_tf_keras() -> dict:
    spec = importlib.util.find_spec("tf_keras")
    if spec is None or not spec.submodule_search_locations:
        return {"skipped": "tf_keras not installed"}
    root = Path(list(spec.submodule_search_locations)[0])
    parse_s = build_s = 0.0
    slowest, files, unparsable, lines = ("", 0.0), 0, 0, 0
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8", errors="replace")
        gc.collect()
        clock = Clock()
        try:
            tree = parse(source)
        except Exception:  # fissix cannot parse a few modern forms; counted, not timed
            unparsable += 1
            continue
        parsed = clock.lap()["cpu_s"]
        model_of(tree)
        built = clock.lap()["cpu_s"]
        parse_s += parsed
        build_s += built
        files += 1
        lines += source.count("\n")
        if built > slowest[1]:
            slowest = (str(path.relative_to(root)), built)
    return {"files": files, "lines": lines, "unparsable": unparsable,
            "parse_cpu_s": round(parse_s, 2), "build_cpu_s": round(build_s, 2),
            "build_vs_parse": round(build_s / parse_s, 2),
            "slowest_build": {"file": slowest[0], "cpu_s": round(slowest[1], 3)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=48_000)
    parser.add_argument("--findings", type=int, default=2_000)
    parser.add_argument("--skip-tf-keras", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = {"generated": [
        measure_module("functions", generate(FUNCTION_BLOCK, args.lines), args.findings),
        measure_module("script", generate(SCRIPT_BLOCK, args.lines), args.findings),
    ]}
    if not args.skip_tf_keras:
        results["tf_keras"] = measure_tf_keras()
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
