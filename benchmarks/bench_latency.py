"""Time `tf-migrate check FILE` on one file, as an editor runs it on every save.

Each run is a whole process (`python -m migrate check --no-cache FILE`):
start-up, imports, the work on the file, the output. Reported: the median
and the minimum of ``--runs`` wall times, the median CPU time (user + system)
of the same runs (the steadier figure on a shared machine), and the load
average before and after. Bytecode is cached as in an installed copy
(PYTHONDONTWRITEBYTECODE is dropped; the .pyc files go to a temporary
PYTHONPYCACHEPREFIX, and one run that is not counted writes them);
``--no-bytecode`` keeps PYTHONDONTWRITEBYTECODE=1, so every run compiles
the sources. ``--instructions`` also counts the instructions of one run
under valgrind's callgrind, a figure the machine's load does not move.

Files: the seed-003 program (fixtures/per-step-tape/seed003_churn_ig.before.py,
120 lines, 9 findings) and a clean 14-line training step (no finding).
Targets (issue 25): seed-003 <= 0.3 s, the clean file <= 0.2 s.

Usage: python benchmarks/bench_latency.py [--runs 21] [--no-bytecode] [--instructions] [FILE ...]
       [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]
SEED003 = ROOT / "fixtures" / "per-step-tape" / "seed003_churn_ig.before.py"
CLEAN = '''import tensorflow as tf


def train_step(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        pred = model(x, training=True)
        loss = tf.reduce_mean(tf.square(pred - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def predict(model, x):
    return model(x)
'''


def command(path: Path) -> List[str]:
    return [sys.executable, "-m", "migrate", "check", "--no-cache", str(path)]


def one_run(path: Path, env: Dict[str, str]) -> tuple:
    """(wall seconds, CPU seconds) of one `check` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command(path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def instructions(path: Path, env: Dict[str, str], tmp: str) -> int:
    """The instructions of one `check` process (callgrind's ``Collected``)."""
    done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/callgrind.out",
                           *command(path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          env=env, cwd=ROOT)
    return int(re.search(r"Collected : (\d+)", done.stderr).group(1))


def measure(path: Path, runs: int, env: Dict[str, str]) -> dict:
    one_run(path, env)  # writes the bytecode; not counted
    load_before = os.getloadavg()[0]
    times = [one_run(path, env) for _ in range(runs)]
    walls, cpus = [w for w, _ in times], [c for _, c in times]
    return {"file": str(path), "runs": runs, "median": statistics.median(walls), "min": min(walls),
            "cpu_median": statistics.median(cpus), "load_before": load_before,
            "load_after": os.getloadavg()[0]}


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    parser.add_argument("--no-bytecode", action="store_true", help="compile the sources in every run")
    parser.add_argument("--instructions", action="store_true", help="also count one run's instructions")
    args = parser.parse_args(argv)
    if args.instructions and not shutil.which("valgrind"):
        parser.error("--instructions needs valgrind")
    rows = []
    with tempfile.TemporaryDirectory(prefix="tfm-latency-") as tmp:
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", TF_CPP_MIN_LOG_LEVEL="3")
        if not args.no_bytecode:
            del env["PYTHONDONTWRITEBYTECODE"]
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pyc")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        clean = Path(tmp) / "clean_step.py"
        clean.write_text(CLEAN)
        for path in args.files or [SEED003, clean]:
            row = measure(path.resolve(), args.runs, env)
            if args.instructions:
                row["instructions"] = instructions(path.resolve(), env, tmp)
            rows.append(row)
            counted = f", {row['instructions'] / 1e6:,.0f} M instructions" if args.instructions else ""
            print(f"  {path.name:32s} median {row['median']:.3f} s  min {row['min']:.3f} s  "
                  f"CPU median {row['cpu_median']:.3f} s  ({row['runs']} runs, load "
                  f"{row['load_before']:.1f} -> {row['load_after']:.1f}{counted})", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
