"""Benchmark (not a test): `verify fixtures/` against its floor, under the
current TF and under the real TF 2.3.

The floor is one TensorFlow import per worker plus the sum of the fixtures'
own run times, each measured inside the worker (the child times a program
from its job arriving to its answer). The rest is the runner's overhead:
starting the worker, the JSON protocol, the parent's discovery, API check and
judging. Target: total <= 1.3 x floor.

``--tf23`` adds the TF 2.3 runtime twice: a first run that includes creating
its environment (a fresh cache folder: venv + pip install; pip's own
download cache is not cleared, say so when quoting), then a cached run.
``--naive`` also times the obvious alternative, one ``python FILE`` per fixture
(a TF import each; the protocol functions are not even called).

Usage: python benchmarks/bench_verify.py [--tf23] [--jobs N] [--naive] [--api 2.3] [PATH ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from migrate.runner import VerifyOptions, verify
from migrate.runner.pool import worker_env
from migrate.runner.runtimes import current, tf23

ROOT = Path(__file__).resolve().parent.parent


def naive(paths) -> float:
    started = time.perf_counter()
    for path in paths:
        subprocess.run([sys.executable, str(path)], env=worker_env("2", 0), cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def timed_run(name: str, paths, runtime_of, options: dict) -> dict:
    """Build (or reuse) the runtime, run verify, and return the figures."""
    started = time.perf_counter()
    runtime = runtime_of()
    setup = time.perf_counter() - started
    report = verify(paths, VerifyOptions(runtimes=(runtime,), **options))
    total = time.perf_counter() - started
    imports = sum(w.import_seconds for w in report.workers)
    runs = sum(p.elapsed or 0.0 for p in report.programs)
    good = sum(p.ok for p in report.programs)
    return {"name": name, "setup": setup, "imports": imports, "runs": runs, "total": total,
            "verify": total - setup, "programs": len(report.programs), "ok": good,
            "workers": len(report.workers), "report": report}


def show(figures) -> None:
    print(f"{'runtime':<34} {'setup':>7} {'TF import':>9} {'runs':>7} {'verify':>7} "
          f"{'total':>7} {'overhead':>8}  programs")
    for f in figures:
        floor = f["imports"] + f["runs"]
        print(f"{f['name']:<34} {f['setup']:7.1f} {f['imports']:9.1f} {f['runs']:7.1f} "
              f"{f['verify']:7.1f} {f['total']:7.1f} {f['verify'] / floor:7.2f}x  "
              f"{f['ok']}/{f['programs']} as expected, {f['workers']} worker(s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[ROOT / "fixtures"])
    parser.add_argument("--naive", action="store_true", help="also run each file as `python FILE`")
    parser.add_argument("--api", default=None, help="add the TF API check (e.g. 2.3)")
    parser.add_argument("--tf23", action="store_true",
                        help="also TF 2.3: first run with environment creation, then cached")
    parser.add_argument("--jobs", type=int, default=1, help="workers per runtime")
    args = parser.parse_args()
    options = {"api": args.api, "jobs": args.jobs}
    print(f"cpus: {os.cpu_count()}, jobs: {args.jobs}")

    figures = [timed_run("current TF + tf-keras", args.paths, current, options)]
    if args.tf23:
        console = Console(stderr=True)
        with tempfile.TemporaryDirectory(prefix="tfm-bench-cache-") as cache:
            build = lambda: tf23(None, Path(cache), False, console)  # noqa: E731
            figures.append(timed_run("TF 2.3, first run (env creation)", args.paths, build, options))
            figures.append(timed_run("TF 2.3, cached environment", args.paths, build, options))
    show(figures)
    for f in figures:
        slowest = sorted(f["report"].programs, key=lambda p: -(p.elapsed or 0.0))[:3]
        print(f"slowest under {f['name']}: " + ", ".join(
            f"{os.path.relpath(p.path, ROOT)} {p.elapsed or 0.0:.1f} s" for p in slowest))
    if args.naive:
        files = [Path(p.path) for p in figures[0]["report"].programs]
        elapsed = naive(files)
        print(f"naive `python FILE` x {len(files)}: {elapsed:7.2f} s "
              f"({elapsed / figures[0]['total']:.1f} x verify)")


if __name__ == "__main__":
    main()
