"""Show a verify Report: a rich table (pass/fail per check and program, then
what failed and why), side by side for a rewrite, one column per runtime
when several ran (`--tf all`, `--keras 3`); or JSON."""

from __future__ import annotations

import json
import os
from typing import Dict, List, Optional, Tuple

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .report import Check, ProgramReport, Report

CHECK_ORDER = ("run", "gradients", "graph", "training", "attribution", "equivalence",
               "dynamic", "api")
HEADERS = {"gradients": "grad", "training": "train", "attribution": "attr",
           "equivalence": "equiv", "dynamic": "dyn"}


def to_json(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, default=str)


def _names(programs: List[ProgramReport]) -> List[str]:
    present = {c.name for p in programs for c in p.checks}
    return [name for name in CHECK_ORDER if name in present]


def _label(program: ProgramReport) -> str:
    try:
        relative = os.path.relpath(program.path)
    except ValueError:  # another drive on Windows
        return program.path
    return program.path if relative.startswith("..") else relative


def _cell(check) -> Text:
    if check is None:
        return Text("-", style="dim")
    return Text("ok", style="green") if check.passed else Text("FAIL", style="bold red")


def _verdict(program: ProgramReport) -> Text:
    return Text(program.verdict, style="green" if program.ok else "bold red")


def render(report: Report, console: Console) -> None:
    if report.pairs:
        _render_pairs(report, console)
    elif len(report.runtimes) > 1:
        _render_matrix(report, console)
    else:
        _render_programs(report, console)
    _render_reasons(report, console)
    for problem in report.problems:
        console.print(Text(problem, style="red"))
    for skipped in report.skipped:
        console.print(Text(f"skipped {skipped}", style="dim"))
    _render_summary(report, console)


def _render_programs(report: Report, console: Console) -> None:
    names = _names(report.programs)
    table = Table(title="tf-migrate verify", show_lines=False)
    table.add_column("program", overflow="fold", ratio=2)
    table.add_column("role", no_wrap=True)
    for name in names:
        table.add_column(HEADERS.get(name, name), justify="center", no_wrap=True)
    table.add_column("s", justify="right", no_wrap=True)
    table.add_column("verdict", overflow="fold", ratio=3)
    for program in report.programs:
        row = [Text(_label(program)), Text(program.role)]
        row += [_cell(program.check(name)) for name in names]
        row.append(Text(f"{program.elapsed:.2f}" if program.elapsed is not None else "-"))
        row.append(_verdict(program))
        table.add_row(*row)
    console.print(table)


def _render_matrix(report: Report, console: Console) -> None:
    """One row per program, one column per runtime: its verdict there."""
    table = Table(title="tf-migrate verify", show_lines=False)
    table.add_column("program", overflow="fold", ratio=3)
    table.add_column("role", no_wrap=True)
    for _, label in report.runtimes:
        table.add_column(label, overflow="fold", ratio=2)
    rows: Dict[Tuple[str, str], Dict[str, ProgramReport]] = {}
    for program in report.programs:
        rows.setdefault((program.path, program.role), {})[program.runtime] = program
    for by_runtime in rows.values():
        first = next(iter(by_runtime.values()))
        cells = [_short_verdict(by_runtime.get(name)) for name, _ in report.runtimes]
        table.add_row(Text(_label(first)), Text(first.role), *cells)
    console.print(table)


def _short_verdict(program: Optional[ProgramReport]) -> Text:
    if program is None:
        return Text("-", style="dim")
    text = program.verdict
    if text.startswith("expected failure observed ("):
        text = "fails as expected: " + text.rsplit(": ", 1)[-1].rstrip(")")
    elif "(not judged" in text:
        text = text.split(" (not judged")[0] + " (not judged)"
    return Text(text, style="green" if program.ok else "bold red")


def _render_pairs(report: Report, console: Console) -> None:
    names = _names(report.programs)
    table = Table(title="tf-migrate fix --verify: original vs rewritten")
    for column in ("program", "check", "original", "rewritten"):
        table.add_column(column, overflow="fold")
    for pair in report.pairs:
        for index, name in enumerate(names):
            table.add_row(Text(_label(pair.original) if index == 0 else ""), Text(name),
                          _cell(pair.original.check(name)), _cell(pair.rewritten.check(name)))
        table.add_row(Text(""), Text("verdict"), _verdict(pair.original),
                      _verdict(pair.rewritten), end_section=True)
    console.print(table)


def _render_reasons(report: Report, console: Console) -> None:
    """One line per failed check (with its numbers), and why a program did not run."""
    labels = dict(report.runtimes)
    for program in report.programs:
        lines = [f"  {program.status}: {program.message}"] if program.message else []
        lines += [_reason(check) for check in program.checks if not check.passed]
        lines += [f"  {diagnosis['message']}" for diagnosis in program.diagnoses]
        if lines:
            runtime = labels.get(program.runtime, f"Keras {program.keras}")
            console.print(Text(f"{_label(program)} [{program.role}, {runtime}]: "
                               f"{program.verdict}", style="bold"))
            for line in lines:
                console.print(Text(line))


def _reason(check: Check) -> str:
    text = f"  {check.name}: {check.summary}"
    if check.error:
        text += f" -- {check.error}"
    return text


def _render_summary(report: Report, console: Console) -> None:
    console.print(_counts(report.programs) + f"; {report.wall_seconds:.1f} s")
    several = len(report.runtimes) > 1
    for name, label in report.runtimes if several else []:
        console.print(f"  {label}: " + _counts([p for p in report.programs if p.runtime == name]))
    labels = dict(report.runtimes)
    seen = {(w.runtime, w.python, w.python_version, w.tf, w.keras): w for w in report.workers}
    for worker in seen.values():
        prefix = f"{labels.get(worker.runtime, worker.runtime)}: " if several else ""
        console.print(f"{prefix}ran by {worker.python} (Python {worker.python_version}), "
                      f"TensorFlow {worker.tf}, {worker.keras}", style="dim")


def _counts(programs: List[ProgramReport]) -> str:
    good = sum(p.ok for p in programs)
    return f"{len(programs)} program run(s): {good} as expected, {len(programs) - good} not"
