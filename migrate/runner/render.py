"""Show a verify Report: a rich table (pass/fail per check and program, then
what failed and why), side by side for a rewrite; or JSON."""

from __future__ import annotations

import json
import os
from typing import List

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
    else:
        _render_programs(report, console)
    _render_reasons(report.programs, console)
    for problem in report.problems:
        console.print(Text(problem, style="red"))
    for skipped in report.skipped:
        console.print(Text(f"skipped {skipped}", style="dim"))
    _render_summary(report, console)


def _render_programs(report: Report, console: Console) -> None:
    names = _names(report.programs)
    several_keras = len({p.keras for p in report.programs}) > 1
    table = Table(title="tf-migrate verify", show_lines=False)
    table.add_column("program", overflow="fold", ratio=2)
    table.add_column("role", no_wrap=True)
    if several_keras:
        table.add_column("keras")
    for name in names:
        table.add_column(HEADERS.get(name, name), justify="center", no_wrap=True)
    table.add_column("s", justify="right", no_wrap=True)
    table.add_column("verdict", overflow="fold", ratio=3)
    for program in report.programs:
        row = [Text(_label(program)), Text(program.role)]
        if several_keras:
            row.append(Text(program.keras))
        row += [_cell(program.check(name)) for name in names]
        row.append(Text(f"{program.elapsed:.2f}" if program.elapsed is not None else "-"))
        row.append(_verdict(program))
        table.add_row(*row)
    console.print(table)


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


def _render_reasons(programs: List[ProgramReport], console: Console) -> None:
    """One line per failed check (with its numbers), and why a program did not run."""
    for program in programs:
        lines = [f"  {program.status}: {program.message}"] if program.message else []
        lines += [_reason(check) for check in program.checks if not check.passed]
        if lines:
            console.print(Text(f"{_label(program)} [{program.role}, Keras {program.keras}]: "
                               f"{program.verdict}", style="bold"))
            for line in lines:
                console.print(Text(line))


def _reason(check: Check) -> str:
    text = f"  {check.name}: {check.summary}"
    if check.error:
        text += f" -- {check.error}"
    return text


def _render_summary(report: Report, console: Console) -> None:
    good = sum(p.ok for p in report.programs)
    bad = len(report.programs) - good
    console.print(f"{len(report.programs)} program run(s): {good} as expected, {bad} not; "
                  f"{report.wall_seconds:.1f} s")
    for worker in {(w.python, w.python_version, w.tf, w.keras): w for w in report.workers}.values():
        console.print(f"ran by {worker.python} (Python {worker.python_version}), "
                      f"TensorFlow {worker.tf}, {worker.keras}", style="dim")
