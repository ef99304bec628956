"""`fix --verify`: link a rewrite's failure to the finding `fix` left unfixed
on the failing line (an unsafe fix not applied, a report-only finding), so
the user sees which finding to act on instead of a bare failure.

The engine numbers a finding by the file it read; the run fails on a line
of the file as written. The two are matched through the lines the rewrite
left unchanged (difflib), and reported with the written file's number."""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

from migrate.result import Diagnostic

from .report import ProgramReport, Report

# where a failed check's error says the program failed: ``... (at file:line)`` (tfm_checks.describe_error)
ERROR_AT = re.compile(r"\(at (.+):(\d+)\)$")


def failing_lines(program: ProgramReport, path: str) -> Dict[int, Set[str]]:
    """line of ``path`` -> the failed checks that point at it (an error's
    ``(at file:line)``, a tape.gradient call that returned None)."""
    target = os.path.realpath(path)
    lines: Dict[int, Set[str]] = {}
    for check in program.checks:
        if check.passed:
            continue
        match = ERROR_AT.search(check.error or "")
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


def original_lines(original: str, written: str) -> Dict[int, int]:
    """line of the written text -> the same line in the original, for every
    line the rewrite left as it was."""
    matcher = difflib.SequenceMatcher(None, original.splitlines(), written.splitlines(),
                                      autojunk=False)
    mapping = {}
    for block in matcher.get_matching_blocks():
        for offset in range(block.size):
            mapping[block.b + offset + 1] = block.a + offset + 1
    return mapping


def _read(path: str) -> Optional[str]:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def unfixed_on_failures(report: Report,
                        files: Dict[str, Tuple[str, Sequence[Diagnostic]]]) -> List[str]:
    """One line per finding left unfixed on a line where a rewrite failed;
    ``files``: rewritten path -> (its original text, the findings left unfixed,
    numbered as in that text). A failed rewrite without such a line lists the
    file's unfixed findings."""
    out: List[str] = []
    for pair in report.pairs:
        rewritten = pair.rewritten
        original, findings = files.get(rewritten.path, ("", []))
        written = _read(rewritten.path)
        if rewritten.ok or not findings or written is None:
            continue
        to_original = original_lines(original, written)
        named = []
        for line, checks in sorted(failing_lines(rewritten, rewritten.path).items()):
            for diagnostic in findings:
                if to_original.get(line) == diagnostic.line:
                    named.append(diagnostic)
                    where = "" if line == diagnostic.line else f" (line {diagnostic.line} before the fix)"
                    out.append(f"{rewritten.path}:{line}: {', '.join(sorted(checks))} failed on "
                               f"this line, where a finding was left unfixed{where}: "
                               f"{_finding(diagnostic)}")
        if not named:
            failed = ", ".join(c.name for c in rewritten.checks if not c.passed) or rewritten.status
            out.append(f"{rewritten.path}: the rewrite fails ({failed}); findings left unfixed "
                       f"in it (lines before the fix):")
            out += [f"  {rewritten.path}:{d.line}: {_finding(d)}" for d in findings]
    return out
