"""What analysing a notebook as one module costs over the engine alone.

Every fixture (fixtures/*/*.before.py) is cut into one top-level statement
per cell, as a notebook of one definition per cell holds it, and checked as
`tf-migrate check` does (all recipes, isolated, unsafe fixes on) three ways:
the file itself, the joined module text through the engine alone, and
notebook.analyse (mask, join, engine, cut back, map findings and fix edits).
The best of --repeat runs of each, in seconds, after one warm-up pass.

Usage: python benchmarks/bench_notebook.py [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from migrate.engine import Options, transform  # noqa: E402
from migrate.notebook import analyse, join, mask  # noqa: E402
from migrate.registry import resolve  # noqa: E402
from notebook_cases import statement_cells  # noqa: E402


def best_of(repeat: int, run) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    repeat = parser.parse_args().repeat
    options = Options(tuple(resolve(None)), unsafe_fixes=True, isolated=True)
    cases = []
    for path in sorted(ROOT.glob("fixtures/*/*.before.py")):
        text = path.read_text(encoding="utf-8")
        cells = list(enumerate(statement_cells(text)))
        cases.append((str(path), text, cells, join([(i, s, mask(s)) for i, s in cells]).text))
    for path, text, _, _ in cases:  # compile every recipe's tools once
        transform(text, path, options)
    timings = {
        "file": best_of(repeat, lambda: [transform(t, p, options) for p, t, _, _ in cases]),
        "joined module, engine only": best_of(repeat, lambda: [transform(m, p, options)
                                                               for p, _, _, m in cases]),
        "notebook.analyse": best_of(repeat, lambda: [analyse(c, p, options) for p, _, c, _ in cases]),
    }
    print(f"{len(cases)} fixtures, {sum(len(c) for _, _, c, _ in cases)} cells, best of {repeat}:")
    for name, seconds in timings.items():
        print(f"  {name:28} {seconds:6.2f} s")
    overhead = timings["notebook.analyse"] / timings["joined module, engine only"] - 1
    print(f"  mapping overhead over the engine: {overhead:+.1%}")


if __name__ == "__main__":
    main()
