"""Time `tf-migrate fix --unsafe-fixes` on one large file with many findings.

Shapes (``--shape``), each a generated file:
- ``spread`` (default): ~48,000 lines of functions written as TensorFlow
  users write them, of which ``--findings`` hold one bug each (every
  recipe's, in turn) and the rest are clean look-alikes of the same size:
  the file size stays fixed.
- ``classes``: one Keras layer class repeated, each with a numpy buffer
  filled in a loop (numpy-accumulator), 17 lines a finding: nearly every
  line repeats a thousand times, where a whole-text difflib was quadratic.
- ``function``: one long function, four lines a finding (typed-convert).
- ``statements``: module-level statements, three lines a finding (typed-convert).
In the last three the file grows with the findings: time per finding that
stays flat shows the run linear in findings.

Measured in a child process: wall time, user CPU and peak RSS of `python -m
migrate fix`; the 1-minute load average after each run says how busy the
machine was (on a shared machine, user CPU is the steadier figure).

Targets: issue 11, 2,000 findings in a 48k-line file (spread) under 30 s;
issue 25, 1,000 repeated classes under 15 s, time linear in findings for
every shape.

Usage: python benchmarks/bench_many_findings.py [--shape spread|classes|function|statements]
       [--lines 48000] [--findings 250 500 1000 2000] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import List

HEADER = "import numpy as np\nimport tensorflow as tf\n\n"

# one bug per template (the recipe that finds it in the comment), {n} numbers the copy
BUGGY = [
    # numpy-accumulator
    """
    class Encoder{n}(tf.keras.layers.Layer):
        def call(self, inputs):
            steps = inputs.shape[1]
            hidden = np.zeros((steps, 8))
            for t in range(steps):
                hidden[t, :] = self.dense(inputs[:, t])
            return hidden
    """,
    # typed-convert
    """
    def load_batch_{n}(frame):
        values = frame.to_numpy()
        x = tf.convert_to_tensor(values)
        x = tf.cast(x, tf.float32)
        return x * 2.0
    """,
    # per-step-tape
    """
    def saliency_{n}(model, images):
        with tf.GradientTape() as tape:
            tape.watch(images[0])
            scores = model(images[0])
        return tape.gradient(scores, images[0])
    """,
    # scalar-target
    """
    def attribution_{n}(model, x):
        x = tf.convert_to_tensor(x)
        with tf.GradientTape() as tape:
            tape.watch(x)
            pred = model(x)
        return tape.gradient(pred, x)
    """,
    # suffix-mixup
    """
    def blend_{n}(inputs_1, inputs_2, baseline_1, baseline_2, grads):
        grads_1, grads_2 = grads
        out_1 = (inputs_1 - baseline_1) * grads_1
        out_2 = (inputs_2 - baseline_2) * grads_1
        return out_1, out_2
    """,
    # unused-model-instance
    """
    def build_{n}(units):
        spare = tf.keras.layers.Dense(units)
        model = tf.keras.Sequential([tf.keras.layers.Dense(units)])
        return model
    """,
]

CLEAN = """
def clean_{n}(model, x, units):
    x = tf.convert_to_tensor(x, dtype=tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(model(x))
    grads = tape.gradient(loss, x)
    total = grads * 2.0 + units
    return total
"""


LAYER = """
class Encoder{n}(tf.keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.units = units
        self.dense = tf.keras.layers.Dense(units)

    def call(self, inputs):
        steps = inputs.shape[1]
        hidden = np.zeros((steps, 8))
        for t in range(steps):
            hidden[t, :] = self.dense(inputs[:, t])
        return hidden

    def get_config(self):
        return {{"units": self.units}}

"""

IN_FUNCTION = """\
    values_{n} = frame.to_numpy()
    x_{n} = tf.convert_to_tensor(values_{n})
    x_{n} = tf.cast(x_{n}, tf.float32)
    out.append(x_{n} * 2.0)
"""

AT_MODULE = """\
values_{n} = frame.to_numpy()
x_{n} = tf.convert_to_tensor(values_{n})
x_{n} = tf.cast(x_{n}, tf.float32)
"""


def shaped(shape: str, findings: int) -> str:
    """A file of ``findings`` copies of one shape's finding."""
    if shape == "classes":
        return HEADER + "".join(LAYER.format(n=n) for n in range(findings))
    if shape == "function":
        return HEADER + "\ndef load(frame):\n    out = []\n" + \
            "".join(IN_FUNCTION.format(n=n) for n in range(findings)) + "    return out\n"
    return HEADER + "import pandas as pd\n\nframe = pd.DataFrame({'a': [1.0]})\n" + \
        "".join(AT_MODULE.format(n=n) for n in range(findings))


def program(lines: int, findings: int) -> str:
    """About ``lines`` lines holding ``findings`` bugs, spread evenly."""
    buggy = [textwrap.dedent(t) for t in BUGGY]
    clean = textwrap.dedent(CLEAN)
    chunks, size, made = [HEADER], HEADER.count("\n"), 0
    per_clean = clean.count("\n") + 1
    n = 0
    while size < lines:
        due = made < findings and n % max(1, (lines // per_clean) // max(findings, 1)) == 0
        text = (buggy[made % len(buggy)] if due else clean).format(n=n) + "\n"
        made += due
        chunks.append(text)
        size += text.count("\n")
        n += 1
    while made < findings:  # the file is full: the rest go at its end
        chunks.append(buggy[made % len(buggy)].format(n=n) + "\n")
        made += 1
        n += 1
    return "".join(chunks)


WRAPPER = textwrap.dedent("""
    import json, resource, subprocess, sys, time
    start = time.perf_counter()
    done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak_kb = usage.ru_maxrss
    print(json.dumps({"seconds": seconds, "user": usage.ru_utime, "peak_mb": peak_kb / 1024,
                      "rc": done.returncode,
                      "tail": done.stderr.decode(errors="replace")[-300:]}))
""")


def measure(path: Path, env: dict) -> dict:
    argv = [sys.executable, "-m", "migrate", "fix", "--unsafe-fixes", "--no-cache", str(path)]
    done = subprocess.run([sys.executable, "-c", WRAPPER, *argv], capture_output=True, text=True, env=env)
    return json.loads(done.stdout)


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=("spread", "classes", "function", "statements"),
                        default="spread")
    parser.add_argument("--lines", type=int, default=48_000, help="the spread shape's size")
    parser.add_argument("--findings", type=int, nargs="+", default=[250, 500, 1000, 2000])
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    rows = []
    with tempfile.TemporaryDirectory(prefix="tfm-many-") as tmp:
        for findings in args.findings:
            path = Path(tmp) / f"many_{args.shape}_{findings}.py"
            source = program(args.lines, findings) if args.shape == "spread" else shaped(args.shape, findings)
            path.write_text(source)
            timing = measure(path, env)
            fixed = path.read_text()
            row = {"shape": args.shape, "lines": source.count("\n"), "findings": findings, **timing,
                   "changed_lines": sum(a != b for a, b in zip(source.splitlines(), fixed.splitlines())),
                   "load": os.getloadavg()[0]}
            rows.append(row)
            print(f"  {args.shape:10s} {row['lines']:6d} lines {findings:5d} findings  "
                  f"{timing['seconds']:7.2f} s (user {timing['user']:6.2f} s) {timing['peak_mb']:6.0f} MB  "
                  f"rc={timing['rc']}  {1000 * timing['user'] / findings:6.2f} ms user/finding  "
                  f"load {row['load']:.1f}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
