"""`fix --verify`: link a rewrite's failure to the finding `fix` left unfixed
on the failing line (an unsafe fix not applied, a report-only finding), so
the user sees which finding to act on instead of a bare failure."""

from __future__ import annotations

import os
import re
from typing import Dict, List, Sequence, Set

from migrate.result import Diagnostic

from .report import ProgramReport, Report

_AT = re.compile(r"\(at (.+):(\d+)\)$")


def failing_lines(program: ProgramReport, path: str) -> Dict[int, Set[str]]:
    """line of ``path`` -> the failed checks that point at it (an error's
    ``(at file:line)``, a tape.gradient call that returned None)."""
    target = os.path.realpath(path)
    lines: Dict[int, Set[str]] = {}
    for check in program.checks:
        if check.passed:
            continue
        match = _AT.search(check.error or "")
        if match and os.path.realpath(match.group(1)) == target:
            lines.setdefault(int(match.group(2)), set()).add(check.name)
        for call in check.details.get("none_calls", []):
            if os.path.realpath(call["file"]) == target:
                lines.setdefault(int(call["line"]), set()).add(check.name)
    return lines


def why_unfixed(diagnostic: Diagnostic) -> str:
    if diagnostic.fixable and diagnostic.safety == "unsafe":
        return "unsafe fix not applied: rerun with --unsafe-fixes"
    if diagnostic.fixable:
        return "fix not applied"
    return "report-only: fix by hand"


def _finding(diagnostic: Diagnostic) -> str:
    return f"[{diagnostic.recipe}] {diagnostic.message} ({why_unfixed(diagnostic)})"


def unfixed_on_failures(report: Report, pending: Dict[str, Sequence[Diagnostic]]) -> List[str]:
    """One line per finding left unfixed on a line where a rewrite failed; a
    failed rewrite without such a line lists the file's unfixed findings."""
    out: List[str] = []
    for pair in report.pairs:
        rewritten = pair.rewritten
        findings = pending.get(rewritten.path, [])
        if rewritten.ok or not findings:
            continue
        lines = failing_lines(rewritten, rewritten.path)
        named = [d for d in findings if d.line in lines]
        for diagnostic in named:
            checks = ", ".join(sorted(lines[diagnostic.line]))
            out.append(f"{rewritten.path}:{diagnostic.line}: {checks} failed on this line, where a "
                       f"finding was left unfixed: {_finding(diagnostic)}")
        if not named:
            failed = ", ".join(c.name for c in rewritten.checks if not c.passed) or rewritten.status
            out.append(f"{rewritten.path}: the rewrite fails ({failed}); findings left unfixed in it:")
            out += [f"  {rewritten.path}:{d.line}: {_finding(d)}" for d in findings]
    return out
