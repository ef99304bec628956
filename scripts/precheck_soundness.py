"""Do the prefilter and the prechecks change any answer on real code?

For every .py file under the given directories (default: the installed
tf_keras, keras and tensorflow/python sources, as scripts/corpus_sweep.py),
the engine runs every recipe with unsafe fixes on, in `check` mode
(isolated) and in `fix` mode (chained), once as shipped (sliced: fissix parses
only the top-level statements the prechecks point at, migrate/slicing.py),
once shipped but parsing the whole text, and once with every recipe's
tokens and precheck removed. Any file whose status, output or findings
differ is printed: a precheck that stopped a file the recipe would have
reported on, or a slice that lost what a finding depends on. One difference is expected and listed apart: a file
fissix cannot parse is "skipped" when parsed, but "unchanged" when no recipe
can match it and so it is never parsed. Slow (the unfiltered run parses
every file for every recipe): a few minutes on 2 cores.
tests/test_prefilter.py holds the fast checks CI runs.

Usage: python scripts/precheck_soundness.py [DIR ...] [--jobs N]
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
UNFILTERED = tuple(dataclasses.replace(r, tokens=(), precheck=None) for r in SHIPPED)


def _answer(source: str, recipes, isolated: bool, sliced: bool = True) -> tuple:
    result = transform(source, "file.py", Options(recipes, unsafe_fixes=True, isolated=isolated),
                       sliced=sliced)
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
        if shipped != _answer(source, SHIPPED, isolated, sliced=False):
            differ.append(f"{mode}: sliced")
        elif shipped[1:] != unfiltered[1:]:
            differ.append(f"{mode}: findings or output")
        elif shipped[0] != unfiltered[0]:
            expected = (shipped[0], unfiltered[0]) == (Status.UNCHANGED, Status.SKIPPED) \
                and not any(wants(recipe, source) for recipe in SHIPPED)
            differ.append(f"{mode}: never parsed" if expected else f"{mode}: status")
    return path, differ, found


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path)
    parser.add_argument("--jobs", type=int, default=multiprocessing.cpu_count())
    args = parser.parse_args(argv)
    if args.dirs:
        roots = args.dirs
    else:
        sys.path.insert(0, str(Path(__file__).parent))
        from corpus_sweep import corpus_roots
        roots = [root for _, root in corpus_roots()]
    paths = [str(p) for root in roots for p in sorted(root.rglob("*.py"))]
    changed = with_findings = 0
    with multiprocessing.Pool(args.jobs) as pool:
        for path, differ, found in pool.imap_unordered(compare, paths, chunksize=4):
            with_findings += found
            if differ:
                changed += any(not d.endswith("never parsed") for d in differ)
                print(f"{path}: {'; '.join(differ)}", flush=True)
    print(f"{len(paths)} files, {with_findings} with findings, {changed} answer(s) changed "
          "by the prefilter or the slicing")
    return 1 if changed else 0

if __name__ == "__main__":
    sys.exit(main())
