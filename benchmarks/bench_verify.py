"""Benchmark (not a test): `verify fixtures/` against its floor.

The floor is one TensorFlow import plus the sum of the fixtures' own run
times, each measured inside the worker (the child times a program from its
job arriving to its answer). The rest is the runner's overhead: starting the
worker, the JSON protocol, the parent's discovery, API check and judging.
Target: total <= 1.3 x floor.

``--naive`` also times the obvious alternative, one ``python FILE`` per fixture
(a TF import each; the protocol functions are not even called).

Usage: python benchmarks/bench_verify.py [--naive] [--api 2.3] [PATH ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from migrate.runner import VerifyOptions, verify
from migrate.runner.pool import worker_env

ROOT = Path(__file__).resolve().parent.parent


def naive(paths) -> float:
    started = time.perf_counter()
    for path in paths:
        subprocess.run([sys.executable, str(path)], env=worker_env("2", 0), cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[ROOT / "fixtures"])
    parser.add_argument("--naive", action="store_true", help="also run each file as `python FILE`")
    parser.add_argument("--api", default=None, help="add the TF API check (e.g. 2.3)")
    args = parser.parse_args()

    started = time.perf_counter()
    report = verify(args.paths, VerifyOptions(api=args.api))
    total = time.perf_counter() - started

    imports = sum(w.import_seconds for w in report.workers)
    runs = sum(p.elapsed or 0.0 for p in report.programs)
    floor = imports + runs
    print(f"programs: {len(report.programs)} (workers started: {len(report.workers)}), "
          f"cpus: {os.cpu_count()}")
    print(f"verify total:            {total:7.2f} s")
    print(f"TF import in the worker: {imports:7.2f} s")
    print(f"sum of program runs:     {runs:7.2f} s")
    print(f"floor (import + runs):   {floor:7.2f} s")
    print(f"overhead:                {total - floor:7.2f} s  ratio {total / floor:.3f} "
          f"(target <= 1.3)")
    slowest = sorted(report.programs, key=lambda p: -(p.elapsed or 0.0))[:5]
    for program in slowest:
        print(f"  {program.elapsed or 0.0:6.2f} s  {os.path.relpath(program.path, ROOT)}")
    if args.naive:
        files = [Path(p.path) for p in report.programs]
        elapsed = naive(files)
        print(f"naive `python FILE` x {len(files)}: {elapsed:7.2f} s "
              f"({elapsed / total:.1f} x verify)")


if __name__ == "__main__":
    main()
