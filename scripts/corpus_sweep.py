"""Run every recipe (unsafe fixes on) over the installed tf_keras, keras and
tensorflow/python sources, in memory: no file is written.

It checks what must hold on any real code: no file makes the engine fail,
every rewrite parses, a second pass over a rewrite changes nothing. And it
lists every finding, for review: library code is expected to be almost
clean, so each finding is either explained in docs/corpus-findings.md or is
a false positive to fix in its recipe.

Usage: python scripts/corpus_sweep.py [--jobs N] [--findings]
(--findings prints the findings as markdown table rows.)
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from migrate import batch
from migrate.engine import Options, check_output, transform
from migrate.registry import all_recipes
from migrate.result import Status

PACKAGES = (("tf_keras", ""), ("keras", ""), ("tensorflow", "python"))


def corpus_roots() -> List[Tuple[str, Path]]:
    """(label, directory) of each installed package, found without importing it."""
    roots = []
    for package, sub in PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        directory = Path(list(spec.submodule_search_locations)[0]) / sub
        if directory.is_dir():
            roots.append((f"{package}/{sub}".rstrip("/"), directory))
    return roots


def corpus_files() -> List[Tuple[str, Path]]:
    """(display name, path) of every .py file, in a stable order."""
    found = []
    for label, root in corpus_roots():
        for path in sorted(root.rglob("*.py")):
            found.append((f"{label}/{path.relative_to(root).as_posix()}", path))
    return found


@dataclass(frozen=True)
class Finding:
    where: str  # display-name:line
    recipe: str
    message: str
    applied: bool


@dataclass
class Report:
    files: int = 0
    seconds: float = 0.0
    statuses: Counter = field(default_factory=Counter)
    failures: List[str] = field(default_factory=list)  # engine failures: must be empty
    unparsable_output: List[str] = field(default_factory=list)
    not_idempotent: List[str] = field(default_factory=list)
    skipped: Dict[str, str] = field(default_factory=dict)  # fissix cannot parse: reason
    findings: List[Finding] = field(default_factory=list)


def sweep(jobs: int, files: Optional[List[Tuple[str, Path]]] = None) -> Report:
    files = corpus_files() if files is None else files
    names = {path: name for name, path in files}
    options = Options(tuple(all_recipes().values()), unsafe_fixes=True)
    report = Report(files=len(files))
    started = time.perf_counter()
    for outcome in batch.run([path for _, path in files], options, jobs=jobs):
        name = names[outcome.path]
        result = outcome.result
        if result is None:
            report.statuses["unreadable"] += 1
            report.skipped[name] = outcome.problem or "unreadable"
            continue
        report.statuses[result.status.value] += 1
        if result.status is Status.FAILED:
            report.failures.append(f"{name}: {result.reason}")
        elif result.status is Status.SKIPPED:
            report.skipped[name] = result.reason or ""
        elif result.status is Status.CHANGED:
            _check_rewrite(name, result.output, options, report)
        report.findings.extend(Finding(f"{name}:{d.line}", d.recipe, d.message, d.applied)
                               for d in result.diagnostics)
    report.seconds = time.perf_counter() - started
    return report


def _check_rewrite(name: str, output: str, options: Options, report: Report) -> None:
    problem = check_output(output, name)
    if problem:
        report.unparsable_output.append(f"{name}: {problem}")
        return
    again = transform(output, name, options)
    if again.status is not Status.UNCHANGED:
        report.not_idempotent.append(f"{name}: second pass {again.status.value} "
                                     f"{[(d.line, d.recipe) for d in again.diagnostics]}")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=batch.default_jobs())
    parser.add_argument("--findings", action="store_true", help="print findings as table rows")
    args = parser.parse_args(argv)
    report = sweep(args.jobs)
    print(f"{report.files} files in {report.seconds:.1f} s with {args.jobs} job(s): "
          f"{dict(report.statuses)}")
    for name, reason in sorted(report.skipped.items()):
        print(f"  skipped {name}: {reason}")
    for title, items in (("ENGINE FAILURES", report.failures),
                         ("UNPARSABLE OUTPUT", report.unparsable_output),
                         ("NOT IDEMPOTENT", report.not_idempotent)):
        for item in items:
            print(f"{title}: {item}")
    print(f"{len(report.findings)} finding(s): {dict(Counter(f.recipe for f in report.findings))}")
    if args.findings:
        for finding in report.findings:
            print(f"| `{finding.where}` | {finding.recipe} | {finding.message} |")
    return 1 if report.failures or report.unparsable_output or report.not_idempotent else 0


if __name__ == "__main__":
    sys.exit(main())
