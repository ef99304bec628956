"""Time `tf-migrate check` against plain Bowler and tf_upgrade_v2, side by side,
on the installed tf_keras sources (586 files) and on a copy of them in which
every file is a candidate for every recipe (so every file is parsed).

Measured, each in its own child process (wall time, peak RSS of the child
and its workers via getrusage(RUSAGE_CHILDREN) in a wrapper process), the
best of --repeat rounds in which every command runs once:
- `tf-migrate check` cold (empty cache) and warm (same cache again);
- `tf-migrate check --no-cache` with --jobs 1 and --jobs 2;
- a plain Bowler query with the same recipes' queries (Query API, callables,
  in-process, no prefilter), findings only, nothing written;
- `tf_upgrade_v2 --intree` (into a scratch --outtree), recording whether it crashes.

Targets (issue 11): on the candidate copy, --jobs 1 without cache <= 0.6x
plain Bowler; on tf_keras cold <= 0.10x and warm <= 0.02x plain Bowler; on
the tf-models-official sources (``--tfmo DIR``: ``pip download --no-deps
tf-models-official`` and unzip the wheel; not committed) cold <= 0.10x.
Earlier (issue 7): --jobs 2 >= 1.7x --jobs 1 on the candidate copy, peak RSS
<= 300 MB.

Usage: python benchmarks/bench_check.py [--repeat N] [--skip-upgrade] [--tfmo DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional

WRAPPER = textwrap.dedent("""
    import json, resource, subprocess, sys, time
    start = time.perf_counter()
    done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    tail = " | ".join(line.strip() for line in lines[-3:])
    print(json.dumps({"seconds": seconds, "peak_mb": peak_kb / 1024, "rc": done.returncode,
                      "tail": tail[-400:]}))
""")

PLAIN_BOWLER = textwrap.dedent("""
    import sys
    from bowler import Query
    from migrate.recipe import PassContext, running
    from migrate.registry import all_recipes

    recipes = list(all_recipes().values())
    # findings only: propose() answers "do not rewrite", as a dry run would
    running(PassContext(recipes[0], [], unsafe_fixes=False, apply=False))
    query = Query(sys.argv[1])
    for recipe in recipes:
        query = recipe.query(query)
    query.execute(interactive=False, write=False, silent=True)
""")


@dataclass
class Timing:
    name: str
    corpus: str
    seconds: float
    peak_mb: float
    rc: int
    tail: str
    rounds: List[float] = field(default_factory=list)  # every round's seconds (the best is ``seconds``)


def tf_keras_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("tf_keras")
    return Path(list(spec.submodule_search_locations)[0])


# Appended to every file of the candidate copy: it passes every recipe's text
# prefilter and precheck, so each file is parsed and analysed by every recipe,
# and it is a finding for none of them.
CANDIDATE_TAIL = """

import numpy as np  # tf-migrate benchmark: every recipe's candidate, no recipe's finding
import tensorflow as tf


def _tf_migrate_benchmark(x, n):
    buf = np.zeros(n)
    buf[0] = n
    layer = tf.keras.layers.Dense(1); n += 1
    d = tf.cast(tf.convert_to_tensor(*[x]), tf.float32)
    arr = tf.TensorArray(tf.float32, size=n)
    for _ in range(1):
        with tf.GradientTape():
            if n:
                step = tf.Variable(0.0)
    step.assign_add(1.0)
    for i in range(n):
        arr = arr.write(i, d)
    with tf.GradientTape() as tape:
        tape.watch(x[0])
        y2 = d * 2
        print(float(n), x.predict(n), tf.argmax(x))
    x1, x2 = x, x
    b2 = (y2 - x1) * x2
    return tape.gradient(y2, d), arr, b2
"""


def candidate_copy(source: Path, target: Path) -> int:
    """Copy the .py files with CANDIDATE_TAIL appended."""
    count = 0
    for path in source.rglob("*.py"):
        out = target / path.relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8")
        out.write_text(text + ("" if text.endswith("\n") else "\n") + CANDIDATE_TAIL, encoding="utf-8")
        count += 1
    return count


@dataclass
class Measurement:
    """One command to time: ``before`` resets state before each run."""

    name: str
    corpus: str
    argv: List[str]
    before: Optional[Callable[[], None]] = None
    once: bool = False  # in the first round only (a slow peer, timed for the record)
    best: Optional[Timing] = None
    rounds: List[float] = field(default_factory=list)  # every run's seconds, in round order

    def run(self, env: Dict[str, str]) -> None:
        if self.before:
            self.before()
        done = subprocess.run([sys.executable, "-c", WRAPPER, *self.argv], capture_output=True,
                              text=True, env=env)
        timing = Timing(self.name, self.corpus, **json.loads(done.stdout))
        self.rounds.append(timing.seconds)
        if self.best is None or timing.seconds < self.best.seconds:
            self.best = timing


def measure_all(measurements: List[Measurement], repeat: int, env: Dict[str, str]) -> List[Timing]:
    """The best of ``repeat`` runs of each, taken in rounds (every command
    once per round, in order): this host's speed drifts by a third over
    minutes, and a ratio of two bests taken minutes apart measured the drift."""
    for round_ in range(repeat):
        for measurement in measurements:
            if round_ == 0 or not measurement.once:
                measurement.run(env)
        print(f"  round {round_ + 1}/{repeat} done", flush=True)
    for m in measurements:
        print(f"  {m.corpus:10s} {m.name:28s} {m.best.seconds:8.2f} s {m.best.peak_mb:7.0f} MB  "
              f"rc={m.best.rc}  (rounds: {' '.join(f'{t:.2f}' for t in m.rounds)})", flush=True)
        m.best.rounds = m.rounds
    return [m.best for m in measurements]


def run_all(repeat: int, skip_upgrade: bool, work: Path, tfmo: Optional[Path] = None) -> List[Timing]:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "XDG_CACHE_HOME": str(work / "xdg")}
    # as installed tools run: with their bytecode cached (not recompiled each start)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cli = [sys.executable, "-m", "migrate"]
    corpora = {"tf_keras": tf_keras_dir(), "candidates": work / "candidates"}
    files = candidate_copy(corpora["tf_keras"], corpora["candidates"])
    print(f"corpora: tf_keras {corpora['tf_keras']} ({files} files), candidate copy in {work}")
    plain = work / "plain_bowler.py"
    plain.write_text(PLAIN_BOWLER)
    measurements = []
    if tfmo is not None:
        count = sum(1 for _ in tfmo.rglob("*.py"))
        print(f"corpus: tf-models-official {tfmo} ({count} files)")
        cache = work / "cache-tfmo"
        measurements += [
            Measurement("check cold", "tfmo", cli + ["check", "--cache-dir", str(cache), str(tfmo)],
                        before=lambda cache=cache: shutil.rmtree(cache, ignore_errors=True)),
            Measurement("plain Bowler (1 process)", "tfmo", [sys.executable, str(plain), str(tfmo)])]
    for label, root in corpora.items():
        cache = work / f"cache-{label}"

        def clear(cache=cache):
            shutil.rmtree(cache, ignore_errors=True)

        check = cli + ["check", "--cache-dir", str(cache), str(root)]
        measurements += [Measurement("check cold", label, check, before=clear),
                         Measurement("check warm", label, check)]  # the cold run just filled the cache
        measurements += [Measurement(f"check --no-cache --jobs {jobs}", label,
                                     cli + ["check", "--no-cache", "--jobs", str(jobs), str(root)])
                         for jobs in (1, 2)]
        measurements.append(Measurement("plain Bowler (1 process)", label,
                                        [sys.executable, str(plain), str(root)]))
    if not skip_upgrade and shutil.which("tf_upgrade_v2"):
        out = work / "upgraded"
        measurements.append(Measurement(
            "tf_upgrade_v2 --intree", "tf_keras",
            ["tf_upgrade_v2", "--intree", str(corpora["tf_keras"]), "--outtree", str(out),
             "--reportfile", str(work / "report.txt")],
            before=lambda: shutil.rmtree(out, ignore_errors=True), once=True))
    timings = measure_all(measurements, repeat, env)
    for upgrade in (t for t in timings if t.name.startswith("tf_upgrade_v2")):
        written = sum(1 for _ in out.rglob("*.py")) if out.exists() else 0
        upgrade.name += f": {'crashed' if upgrade.rc else 'completed'}, {written}/{files} files written"
    return timings


def ratios(timings: List[Timing]) -> Dict[str, float]:
    by = {(t.corpus, t.name): t for t in timings}
    out = {}
    if ("tfmo", "check cold") in by:
        out["tfmo: cold / plain Bowler"] = (by[("tfmo", "check cold")].seconds
                                            / by[("tfmo", "plain Bowler (1 process)")].seconds)
    for corpus in ("tf_keras", "candidates"):
        plain = by[(corpus, "plain Bowler (1 process)")].seconds
        out[f"{corpus}: cold / plain Bowler"] = by[(corpus, "check cold")].seconds / plain
        out[f"{corpus}: warm / plain Bowler"] = by[(corpus, "check warm")].seconds / plain
        out[f"{corpus}: --jobs 1 no cache / plain Bowler"] = (
            by[(corpus, "check --no-cache --jobs 1")].seconds / plain)
        out[f"{corpus}: speed-up --jobs 2 over --jobs 1"] = (
            by[(corpus, "check --no-cache --jobs 1")].seconds
            / by[(corpus, "check --no-cache --jobs 2")].seconds)
    for corpus in ("tfmo", "tf_keras"):  # the cold targets, round by round (the same minutes)
        if (corpus, "check cold") in by:
            pairs = zip(by[(corpus, "check cold")].rounds, by[(corpus, "plain Bowler (1 process)")].rounds)
            out[f"{corpus}: cold / plain Bowler, worst round"] = max(cold / plain for cold, plain in pairs)
    out["peak RSS, MB (max over tf-migrate runs)"] = max(
        t.peak_mb for t in timings if t.name.startswith("check"))
    return out


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1,
                        help="best of N runs per measurement, taken in N rounds")
    parser.add_argument("--skip-upgrade", action="store_true", help="do not run tf_upgrade_v2")
    parser.add_argument("--tfmo", type=Path, help="the unzipped tf-models-official sources")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    print(f"{platform.python_version()} on {os.cpu_count()} core(s), "
          f"load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="tfm-bench-") as tmp:
        timings = run_all(args.repeat, args.skip_upgrade, Path(tmp), args.tfmo)
    figures = ratios(timings)
    print()
    for name, value in figures.items():
        print(f"  {name:48s} {value:8.3f}")
    upgrade = [t for t in timings if t.name.startswith("tf_upgrade_v2")]
    for t in upgrade:
        print(f"  tf_upgrade_v2: rc={t.rc}, {t.name.split(': ')[-1]}, stderr ends: {t.tail}")
    if args.json:
        args.json.write_text(json.dumps({"timings": [asdict(t) for t in timings],
                                         "ratios": figures,
                                         "load_average": os.getloadavg()}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
