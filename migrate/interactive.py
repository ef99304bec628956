"""`fix --interactive`: review each change of each file's final diff before
it lands (a change is a hunk, or the hunks one finding's fix spans). Answers come line by line from stdin, so a terminal and a pipe
(`printf 'y\\nn\\n' | tf-migrate fix -i ...`) work alike.

A file's accepted hunks are applied to its original text (a rejected hunk
keeps its lines byte-identical), the partial result is re-parsed, and the
file is written atomically once all its hunks are decided. Each hunk is
labelled with the recipe(s) whose edits it contains; those come from a second,
isolated engine run, whose edits are relative to the original text.
"""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, FrozenSet, Iterable, List, Optional, Set, TextIO

from rich.console import Console
from rich.text import Text

from . import batch, files, notebook, output
from .discovery import discover
from .engine import Options, check_output
from .result import Diagnostic, Edit

CONTEXT = 3
HELP = """\
y - accept this change
n - reject this change
a - accept this and every remaining change in this file
d - reject this and every remaining change in this file
r - accept this and every remaining change of the same recipe (in all files)
q - quit: files already reviewed are written, nothing else
? - show this help"""
ANSWERS = "ynadrq"


class NoAnswers(Exception):
    """stdin ended before the first answer: nobody is there to review."""


class Quit(Exception):
    """The reviewer answered q (or stdin ran out after some answers)."""


@dataclass
class Unit:
    """A text reviewed hunk by hunk: a whole .py file, or one notebook cell."""

    label: str
    source: str
    output: str
    diagnostics: List[Diagnostic]
    check: Callable[[str], Optional[str]]


@dataclass
class Hunk:
    """One run of changed lines: source lines [start, end) become ``new``."""

    unit: Unit
    start: int
    end: int
    new: List[str]
    diagnostics: List[Diagnostic] = field(default_factory=list)

    @property
    def recipes(self) -> FrozenSet[str]:
        return frozenset(d.recipe for d in self.diagnostics)


def hunks_of(unit: Unit) -> List[Hunk]:
    """Every non-equal run of lines between the unit's source and output."""
    old = unit.source.splitlines(keepends=True)
    new = unit.output.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    found = [Hunk(unit, i1, i2, new[j1:j2])
             for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
    for hunk in found:
        hunk.diagnostics = _overlapping(hunk, unit.diagnostics)
    return found


def _overlapping(hunk: Hunk, diagnostics: List[Diagnostic]) -> List[Diagnostic]:
    """Findings whose fix edits touch the hunk's lines (1-based, inclusive)."""
    first, last = hunk.start + 1, max(hunk.end, hunk.start + 1)

    def touches(edit: Edit) -> bool:
        return edit.line <= last and first <= max(edit.end_line - 1, edit.line)

    return [d for d in diagnostics if d.fix and any(touches(e) for e in d.fix)]


@dataclass
class Change:
    """What one answer decides: every hunk one finding's fix spans (half a fix
    would parse and still be wrong, e.g. a call rewritten without its import),
    or a hunk no finding explains."""

    hunks: List[Hunk]

    @property
    def diagnostics(self) -> List[Diagnostic]:
        unique = {id(d): d for hunk in self.hunks for d in hunk.diagnostics}
        return list(unique.values())

    @property
    def recipes(self) -> FrozenSet[str]:
        return frozenset(d.recipe for d in self.diagnostics)


def changes_of(unit: Unit) -> List[Change]:
    """The unit's hunks grouped by the findings they share, in line order."""
    groups: List[List[Hunk]] = []
    for hunk in hunks_of(unit):
        mine = {id(d) for d in hunk.diagnostics}
        joined = [g for g in groups if any(id(d) in mine for h in g for d in h.diagnostics)]
        groups = [g for g in groups if g not in joined]
        groups.append(sorted([hunk, *(h for g in joined for h in g)], key=lambda h: h.start))
    return sorted((Change(g) for g in groups), key=lambda c: c.hunks[0].start)


def compose(unit: Unit, accepted: Iterable[Hunk]) -> str:
    """The unit's source with only the ``accepted`` hunks applied."""
    lines = unit.source.splitlines(keepends=True)
    for hunk in sorted(accepted, key=lambda h: h.start, reverse=True):
        lines[hunk.start:hunk.end] = hunk.new
    return "".join(lines)


@dataclass
class Reviewer:
    """The state of one review session across files."""

    console: Console
    answers: TextIO
    recipes_accepted: Set[FrozenSet[str]] = field(default_factory=set)
    asked: int = 0

    def ask(self, change: Change) -> str:
        """One answer letter for ``change`` (auto 'y' when its recipe was accepted with r)."""
        if change.recipes and any(change.recipes <= chosen for chosen in self.recipes_accepted):
            self.console.print(Text(f"accepted ({', '.join(sorted(change.recipes))}: r)", "dim"))
            return "y"
        while True:
            self.console.print(Text("Apply this change? [y,n,a,d,r,q,?] ", "bold blue"), end="")
            line = self.answers.readline()
            if not line:
                self.console.print()
                if self.asked == 0:
                    raise NoAnswers()
                self.console.print("no more answers on stdin: stopping as if 'q'")
                raise Quit()
            self.asked += 1
            answer = line.strip().lower()[:1]
            if not self.answers.isatty():
                self.console.print(answer)
            if answer and answer in ANSWERS:
                return answer
            self.console.print(HELP, markup=False)


def show(console: Console, change: Change, number: int, total: int) -> None:
    """The change's header (where, which recipe, why) and its coloured diff."""
    first = change.hunks[0]
    console.print()
    console.print(Text(f"{first.unit.label}:{first.start + 1}  (change {number}/{total})", "bold"))
    for diag in change.diagnostics:
        console.print(Text.assemble((diag.recipe, "bold magenta"), f" [{diag.safety}] ",
                                    diag.message))
    if not change.diagnostics:
        console.print(Text("(no finding overlaps this change)", "dim"))
    for hunk in change.hunks:
        if len(change.hunks) > 1:
            console.print(Text(f"@@ line {hunk.start + 1}", "cyan"))
        console.print(_diff(hunk), end="")


def _diff(hunk: Hunk) -> Text:
    old = hunk.unit.source.splitlines(keepends=True)
    body = Text()
    for line in old[max(0, hunk.start - CONTEXT):hunk.start]:
        body.append(" " + _visible(line), "dim")
    for line in old[hunk.start:hunk.end]:
        body.append("-" + _visible(line), "red")
    for line in hunk.new:
        body.append("+" + _visible(line), "green")
    for line in old[hunk.end:hunk.end + CONTEXT]:
        body.append(" " + _visible(line), "dim")
    return body


def _visible(line: str) -> str:
    return line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


@dataclass
class FileReview:
    """One file's outcome, its units, and how accepted unit texts become the file's text."""

    outcome: batch.Outcome
    units: List[Unit]
    assemble: Callable[[List[str]], str]


def _file_review(outcome: batch.Outcome, isolated: batch.Outcome) -> FileReview:
    result, path = outcome.result, str(outcome.path)
    if isinstance(result, notebook.NotebookResult):
        labelled = {c.index: c for c in getattr(isolated.result, "cells", [])}
        changed = [c for c in result.cells if c.output != c.source]
        units = [Unit(c.label, c.source, c.output,
                      labelled[c.index].diagnostics if c.index in labelled else [],
                      notebook.check_cell) for c in changed]
        return FileReview(outcome, units,
                          lambda texts: result.compose({c.index: t for c, t in zip(changed, texts)}))
    diagnostics = isolated.result.diagnostics if isolated.result else []
    unit = Unit(path, result.source, result.output, diagnostics,
                lambda text: check_output(text + "\n", path))  # fissix wants a final newline
    return FileReview(outcome, [unit], lambda texts: texts[0])


@dataclass
class Session:
    """What a review did: one outcome per file looked at, and whether changes were declined."""

    outcomes: List[batch.Outcome] = field(default_factory=list)
    declined: int = 0
    quit: bool = False


def review(paths: Iterable[Path], options: Options, console: Console,
           answers: TextIO) -> Session:
    """Review every changed file among ``paths`` in order.

    Raises NoAnswers when stdin is empty before the first question.
    """
    reviewer, session = Reviewer(console, answers), Session()
    for path in paths:
        outcome = batch.process(path, options)
        session.outcomes.append(outcome)
        if outcome.result is None or not outcome.result.changed:
            continue
        isolated = batch.process(path, replace(options, isolated=True))
        try:
            session.declined += _review_file(_file_review(outcome, isolated), reviewer)
        except Quit:
            outcome.result.output = outcome.result.source  # not written
            session.quit = True
            break
    return session


def _review_file(file: FileReview, reviewer: Reviewer) -> int:
    """Ask about each change, then write the accepted ones (if they still parse);
    returns how many changes were declined."""
    per_unit = [(unit, changes_of(unit)) for unit in file.units]
    total = sum(len(c) for _, c in per_unit)
    number, declined, rest = 0, 0, None  # rest: 'a' or 'd' answered for this file
    accepted: dict = {}
    for unit, changes in per_unit:
        accepted[unit.label] = []
        for change in changes:
            number += 1
            show(reviewer.console, change, number, total)
            if rest:
                reviewer.console.print(Text(f"{'accepted' if rest == 'a' else 'rejected'} ({rest})", "dim"))
            answer = rest or reviewer.ask(change)
            if answer == "q":
                raise Quit()
            if answer in "ad":
                rest = answer
            if answer == "r":
                reviewer.recipes_accepted.add(change.recipes)
            if answer in "yar":
                accepted[unit.label].extend(change.hunks)
            else:
                declined += 1
    _write(file, [compose(unit, accepted[unit.label]) for unit in file.units],
           reviewer.console)
    return declined


def _write(file: FileReview, texts: List[str], console: Console) -> None:
    outcome = file.outcome
    result, source = outcome.result, outcome.source
    result.output = result.source
    for unit, text in zip(file.units, texts):
        problem = unit.check(text)
        if problem:
            outcome.problem = (f"{unit.label}: the accepted changes alone do not parse "
                               f"({problem}); file not written")
            console.print(Text(outcome.problem, "red"))
            return
    if all(text == unit.source for unit, text in zip(file.units, texts)):
        return
    result.output = file.assemble(texts)
    try:
        files.write(source, result.output)
        outcome.written = True
        console.print(Text(f"wrote {outcome.path}", "green"))
    except files.WriteRefused as err:
        outcome.problem = str(err)
        console.print(Text(outcome.problem, "red"))


def command(paths: List[Path], exclude: List[str], options: Options, console: Console,
            errors: Console, answers: Optional[TextIO] = None) -> int:
    """`fix --interactive`: the exit code (0 all applied, 1 changes declined or
    findings left, 2 a file not processed or no answers on a non-terminal stdin)."""
    found = discover(paths, exclude)
    try:
        session = review(found.files, options, console, answers or sys.stdin)
    except NoAnswers:
        errors.print("tf-migrate: --interactive needs answers, but stdin is not a terminal and "
                     "is empty; run it in a terminal or pipe answers (one of y,n,a,d,r,q per "
                     "line)", markup=False, highlight=False)
        return 2
    summary = batch.Summary()
    for problem in found.problems:
        summary.add(batch.Outcome(Path(problem.split(":", 1)[0]), problem=problem))
    for outcome in session.outcomes:
        summary.add(outcome)
        for diag in outcome.result.pending if outcome.result else []:
            console.print(output.finding_line(diag), markup=False, highlight=False)
    output.print_summary(errors, summary, "with changes reviewed", summary.changed)
    if found.problems or any(o.failed for o in session.outcomes):
        return 2
    pending = any(o.result and o.result.pending for o in session.outcomes)
    return 1 if session.declined or session.quit or pending else 0
