"""Turning outcomes into what people and tools read: text findings, unified
diffs, JSON, and the end-of-run summary."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from collections import Counter
from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Optional, TextIO, Tuple

from .batch import Left, Outcome, Summary
from .result import Diagnostic, split_label
from .textdiff import unified

if TYPE_CHECKING:
    from rich.console import Console

JSON_VERSION = 1


def finding_line(diag: Diagnostic) -> str:
    """`path:line:col: recipe-id message [fix]`, the shape editors' problem matchers know."""
    tag = f"[{diag.safety} fix]" if diag.fixable else "[report only]"
    if diag.after:
        tag += f" (appears after fixing {', '.join(diag.after)})"
    return f"{diag.path}:{diag.line}:{diag.column}: {diag.recipe} {diag.message} {tag}"


def in_order(outcomes: Iterable[Outcome]) -> List[Outcome]:
    """Outcomes by path, each one's findings by line, column and recipe:
    every format lists them so, whatever the order of the paths given."""
    ordered = sorted(outcomes, key=lambda o: _path_key(str(o.path)))
    for outcome in ordered:
        if outcome.result is not None:
            outcome.result.diagnostics.sort(key=_position)
    return ordered


def left_in_order(left: List[Left]) -> List[Left]:
    return sorted(left, key=lambda item: _position(item.diagnostic))


def _path_key(path: str) -> Tuple[Tuple[str, ...], int]:
    """A path by its parts, a notebook cell by its number (cell 10 after cell 9)."""
    file, cell = split_label(path)
    return tuple(file.replace("\\", "/").split("/")), cell or 0


def _position(diag: Diagnostic) -> Tuple:
    return (_path_key(diag.path), diag.line, diag.column, diag.recipe, diag.message)


def unified_diff(outcome: Outcome) -> str:
    """The change of a file; of a notebook, one diff per changed cell, named
    ``nb.ipynb:cell N`` (a cell's source, not the JSON around it)."""
    result = outcome.result
    if result is None or not result.changed:
        return ""
    if outcome.path.suffix == ".ipynb":
        from .notebook import NotebookResult  # loaded by the run that made ``result``

        assert isinstance(result, NotebookResult)
        return "".join(unified(cell.label, cell.source, cell.output)
                       for cell in result.cells if cell.output != cell.source)
    return unified(str(outcome.path), result.source, result.output)


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
    outcomes = list(outcomes)
    diagnostics = [diagnostic_json(d) for o in outcomes if o.result for d in o.result.diagnostics]
    return json.dumps({"version": JSON_VERSION, "diagnostics": diagnostics,
                       "errors": _errors(outcomes)}, indent=2)


def _errors(outcomes: List[Outcome]) -> List[dict]:
    return [{"path": str(o.path), "reason": o.problem} for o in outcomes if o.problem]


def fix_json(outcomes: List[Outcome], left: Dict[int, List[Left]]) -> str:
    """`fix --format json`: what is left, at the line of the file as written
    (``line``) and of the original (``original_line``, null for a written line)."""
    diagnostics = [dict(diagnostic_json(item.diagnostic), original_line=item.original_line)
                   for o in outcomes for item in left[id(o)]]
    return json.dumps({"version": JSON_VERSION, "diagnostics": diagnostics,
                       "errors": _errors(outcomes), "fixed": _fixed(outcomes),
                       "written": [str(o.path) for o in outcomes if o.written]}, indent=2)


def _fixed(outcomes: List[Outcome]) -> int:
    return sum(1 for o in outcomes if o.written for d in o.result.diagnostics if d.applied)


def fix_counts(outcomes: List[Outcome], left: Dict[int, List[Left]], unsafe_fixes: bool) -> str:
    """`2 fixed, 1 left: unsafe, rerun with --unsafe-fixes`: a fix counts once
    it is on disk; a refused write leaves its findings."""
    reasons: Counter = Counter()
    for outcome in outcomes:
        refused = outcome.result is not None and outcome.result.changed and not outcome.written
        for item in left[id(outcome)]:
            diag = item.diagnostic
            reasons["not written (the write was refused)" if refused
                    else "report only" if not diag.fixable
                    else "unsafe, rerun with --unsafe-fixes" if diag.safety == "unsafe" and not unsafe_fixes
                    else "its fix did not apply"] += 1
    total = sum(reasons.values())
    text = f"{_fixed(outcomes)} fixed, {total} left"
    if len(reasons) == 1:
        return f"{text}: {next(iter(reasons))}"
    return text + ("" if not reasons else ": " + "; ".join(f"{n} {why}" for why, n in sorted(reasons.items())))


def print_summary(console: Callable[[], "Console"], summary: Summary, verb: str, count: int,
                  quiet: bool = False, stream: Optional[TextIO] = None) -> None:
    """The files that could not be processed, then (unless ``quiet``) files
    scanned / ``count`` files that ``verb`` / skipped and findings per
    recipe, on stderr (``stream``, the file of ``console()``). The count
    line and the table are plain text, as Ruff prints its statistics: a
    check with nothing else to say never imports rich (the table made with
    rich cost a seed-003 check 5% of its instructions)."""
    if summary.problems:
        from rich.text import Text

        for problem in summary.problems:
            console().print(Text.assemble(("error: ", "red"), problem))
    if quiet:
        return
    stream = stream or sys.stderr
    stream.write(f"{summary.scanned} file(s) scanned, {count} {verb}, "
                 f"{summary.skipped} could not be processed\n")
    if summary.findings:
        rows = [("recipe", "findings")] + [(recipe, str(n)) for recipe, n in sorted(summary.findings.items())]
        stream.write(_columns(rows))


def _columns(rows: List[Tuple[str, str]]) -> str:
    """Two left-aligned columns, each padded to its widest cell, two spaces
    between: the bytes rich's borderless table printed off a terminal. Unlike
    rich, the header is not bold on a terminal and no cell is cut to fit
    the terminal's width."""
    widths = [max(len(row[i]) for row in rows) for i in (0, 1)]
    return "".join(f"{name:<{widths[0]}}  {value:<{widths[1]}}\n" for name, value in rows)
