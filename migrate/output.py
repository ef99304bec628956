"""Turning outcomes into what people and tools read: text findings, unified
diffs, JSON, and the end-of-run summary."""

from __future__ import annotations

import difflib
import json
from dataclasses import asdict
from typing import Iterable, List

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .batch import Outcome, Summary
from .result import Diagnostic

JSON_VERSION = 1


def finding_line(diag: Diagnostic) -> str:
    """`path:line:col: recipe-id message [fix]`, the shape editors' problem matchers know."""
    tag = f"[{diag.safety} fix]" if diag.fixable else "[report only]"
    if diag.after:
        tag += f" (appears after fixing {', '.join(diag.after)})"
    return f"{diag.path}:{diag.line}:{diag.column}: {diag.recipe} {diag.message} {tag}"


def unified_diff(outcome: Outcome) -> str:
    result = outcome.result
    if result is None or not result.changed:
        return ""
    name = str(outcome.path)
    lines = difflib.unified_diff(result.source.splitlines(keepends=True),
                                 result.output.splitlines(keepends=True),
                                 fromfile=f"a/{name}", tofile=f"b/{name}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def diagnostic_json(diag: Diagnostic) -> dict:
    fix = None
    if diag.fixable and diag.fix is not None:
        fix = {"safety": diag.safety, "edits": [asdict(e) for e in diag.fix]}
    found = {
        "path": diag.path,
        "line": diag.line,
        "column": diag.column,
        "end_line": diag.end_line,
        "end_column": diag.end_column,
        "recipe": diag.recipe,
        "safety": diag.safety,
        "message": diag.message,
        "fix": fix,
    }
    if diag.after:
        found["after"] = list(diag.after)
    return found


def to_json(outcomes: Iterable[Outcome]) -> str:
    diagnostics: List[dict] = []
    errors: List[dict] = []
    for outcome in outcomes:
        if outcome.result:
            diagnostics.extend(diagnostic_json(d) for d in outcome.result.diagnostics)
        if outcome.problem:
            errors.append({"path": str(outcome.path), "reason": outcome.problem})
    return json.dumps({"version": JSON_VERSION, "diagnostics": diagnostics, "errors": errors},
                      indent=2)


def print_summary(console: Console, summary: Summary, verb: str, count: int) -> None:
    """Files scanned / ``count`` files that ``verb`` / skipped and findings
    per recipe, on stderr."""
    for problem in summary.problems:
        console.print(Text.assemble(("error: ", "red"), problem))
    console.print(
        f"{summary.scanned} file(s) scanned, {count} {verb}, "
        f"{summary.skipped} could not be processed", highlight=False)
    if summary.findings:
        table = Table("recipe", "findings", box=None, pad_edge=False)
        for recipe, count in sorted(summary.findings.items()):
            table.add_row(recipe, str(count))
        console.print(table)
