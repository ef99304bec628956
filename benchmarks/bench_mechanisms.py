"""What each speed mechanism saves: CPU time with all of them, and with each
switched off alone (``TF_MIGRATE_WITHOUT``, migrate/speedups.py).

Measured, each a whole process, in rounds (every configuration once per
round, so that a comparison is of runs of the same minutes), the median of
``--rounds``: the child's user + system CPU time (getrusage), which the
load of a shared machine moves far less than wall time.

- ``bench_check``: `check --no-cache --jobs 1` on tf_keras (586 files) and
  on bench_check's candidate copy (every file parsed by every recipe; every
  ``--every``-th file of it);
- ``bench_many_findings``: `fix --unsafe-fixes --no-cache` on its ``spread``
  file (``--lines``, 48k) with ``--findings`` bugs.

Usage: python benchmarks/bench_mechanisms.py [--rounds 3] [--findings 500] [--lines 48000]
       [--every N] [--rotate K] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_check import candidate_copy, tf_keras_dir  # noqa: E402
from bench_many_findings import program  # noqa: E402
from migrate.speedups import MECHANISMS  # noqa: E402


def cpu_of(argv: List[str], env: Dict[str, str]) -> float:
    """User + system CPU seconds of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--findings", type=int, default=500)
    parser.add_argument("--lines", type=int, default=48_000, help="the spread file's size")
    parser.add_argument("--every", type=int, default=1, help="keep every N-th file of the candidate copy")
    parser.add_argument("--rotate", type=int, default=0, help="start the configurations' order this far in")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    configs = ["all"] + [f"-{m}" for m in MECHANISMS]
    configs = configs[args.rotate:] + configs[:args.rotate]  # parallel runs in different orders
    with tempfile.TemporaryDirectory(prefix="tfm-mech-") as tmp:
        work = Path(tmp)
        candidate_copy(tf_keras_dir(), work / "candidates")
        for index, path in enumerate(sorted((work / "candidates").rglob("*.py"))):
            if index % args.every:
                path.unlink()
        many = work / "many.py"
        source = program(args.lines, args.findings)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(TF_CPP_MIN_LOG_LEVEL="3", PYTHONPYCACHEPREFIX=str(work / "pyc"))
        cli = [sys.executable, "-m", "migrate"]
        benches = {
            "tf_keras": cli + ["check", "--no-cache", "--jobs", "1", str(tf_keras_dir())],
            "candidates": cli + ["check", "--no-cache", "--jobs", "1", str(work / "candidates")],
            "many_findings": cli + ["fix", "--unsafe-fixes", "--no-cache", str(many)],
        }
        subprocess.run(cli + ["--help"], stdout=subprocess.DEVNULL, env=env)  # writes the bytecode
        times: Dict[str, Dict[str, List[float]]] = {c: {b: [] for b in benches} for c in configs}
        for number in range(args.rounds):
            for config in configs:
                run_env = dict(env, TF_MIGRATE_WITHOUT="" if config == "all" else config[1:])
                for bench, command in benches.items():
                    many.write_text(source)
                    times[config][bench].append(cpu_of(command, run_env))
                print(f"round {number + 1} {config:16s} " + "  ".join(
                    f"{b} {times[config][b][-1]:6.2f}" for b in benches)
                    + f"  load {os.getloadavg()[0]:.1f}", flush=True)
    medians = {c: {b: statistics.median(v) for b, v in t.items()} for c, t in times.items()}
    print("\nmedian CPU seconds (user + system)")
    for config, row in medians.items():
        print(f"{config:16s} " + "  ".join(f"{b} {s:6.2f}" for b, s in row.items()))
    if args.json:
        args.json.write_text(json.dumps({"rounds": times, "medians": medians}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
