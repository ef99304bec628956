"""`fix --interactive`: review a file one finding's fix at a time. Answers
come line by line from stdin, so a terminal and a pipe
(`printf 'y\\nn\\n' | tf-migrate fix -i ...`) work alike.

Each question is one recipe's fix of one finding (so one safety). The change
shown is computed by the engine on the text as it stands: the original with
the accepted fixes only (the engine applies just that finding, see
``Options.only``). So an accepted change never rests on a rejected one; a
finding that appears only after a change the reviewer rejected (a follow-on of
the fixpoint, a name that change introduces) is not offered, and the closing
summary says why. The file is written atomically once all its findings are
decided.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, List, Optional, Set, TextIO, Tuple

from rich.console import Console
from rich.text import Text

from . import batch, files, output, registry
from .discovery import discover
from .engine import Options, transform
from .result import Diagnostic, SourceResult, Status, split_label
from .textdiff import line_map, unified

HELP = """\
y - accept this change
n - reject this change
a - accept this and every remaining change in this file
d - reject this and every remaining change in this file
r - accept this and every remaining change of the same recipe and safety (in all files)
q - quit: files already reviewed are written, nothing else
? - show this help"""
ANSWERS = "ynadrq"
MAX_QUESTIONS_PER_FILE = 500  # a recipe pair that undoes each other cannot ask forever


class NoAnswers(Exception):
    """stdin ended before the first answer: nobody is there to review."""


class Quit(Exception):
    """The reviewer answered q (or stdin ran out after some answers)."""


Place = Tuple[str, str, str, int]


def place(diag: Diagnostic) -> Place:
    """Where a rejected finding is (file or cell, recipe, safety, line): it is
    followed through the accepted changes so that it is not asked again."""
    return (diag.path, diag.recipe, diag.safety, diag.line)


def _position(diag: Diagnostic) -> Tuple[int, int, int]:
    cell = split_label(diag.path)[1]
    return (cell or 0, diag.line, diag.column)


def _reason(diag: Diagnostic) -> str:
    """The message without the code it quotes: the same reason at another place."""
    return re.sub(r"`[^`]*`", "`…`", diag.message)


@dataclass
class Document:
    """One file under review and how the engine reads its text (a .py file,
    or a notebook's JSON): what it finds there, and one finding's fix alone."""

    outcome: batch.Outcome
    run: Callable[[str, Options], SourceResult]
    options: Options

    @property
    def label(self) -> str:
        return str(self.outcome.path)

    def findings(self, text: str) -> List[Diagnostic]:
        """Every recipe's findings on ``text``, nothing applied."""
        return self.run(text, replace(self.options, apply=False, isolated=True)).diagnostics

    def moved(self, places: Set[Place], old: str, new: str) -> Set[Place]:
        """``places`` of ``old`` where they are in ``new``."""
        before, after = batch.units_of(self.outcome.path, old), batch.units_of(self.outcome.path, new)
        maps = {label: line_map(before[label], after.get(label, "")) for label in before}
        return {(where, recipe, safety, maps[where](line) if where in maps else line)
                for where, recipe, safety, line in places}

    def offerable(self, diag: Diagnostic) -> bool:
        return diag.fixable and (diag.safety == "safe" or self.options.unsafe_fixes)

    def apply_one(self, text: str, diag: Diagnostic) -> str:
        """``text`` with only ``diag``'s fix applied (unchanged if it cannot be)."""
        recipe = next(r for r in self.options.recipes if r.id == diag.recipe)
        only = frozenset({(diag.path, diag.recipe, diag.line, diag.column)})
        result = self.run(text, replace(self.options, recipes=(recipe,), isolated=False, only=only))
        return text if result.status is Status.FAILED else result.output


def _document(outcome: batch.Outcome, options: Options) -> Document:
    path = str(outcome.path)
    if outcome.path.suffix == ".ipynb":
        from .notebook import transform_notebook

        return Document(outcome, lambda text, opts: transform_notebook(text, path, opts), options)
    return Document(outcome, lambda text, opts: transform(text, path, opts), options)


def diff_text(label: str, old: str, new: str) -> str:
    """A unified diff of two file texts; a notebook's per changed code cell."""
    path = Path(label)
    before, after = batch.units_of(path, old), batch.units_of(path, new)
    return "".join(unified(unit, text, after.get(unit, "")) for unit, text in before.items()
                   if text != after.get(unit, ""))


def _coloured(diff: str) -> Text:
    body = Text()
    for line in diff.splitlines(keepends=True):
        style = ("bold" if line.startswith(("---", "+++")) else "cyan" if line.startswith("@@")
                 else "red" if line.startswith("-") else "green" if line.startswith("+") else "dim")
        body.append(line, style)
    return body


@dataclass
class Tally:
    """What a review decided, for the closing summary."""

    accepted: int = 0
    rejected: int = 0
    not_offered: List[str] = field(default_factory=list)  # with the reason
    left_unsafe: int = 0
    report_only: int = 0


@dataclass
class Reviewer:
    """The state of one review session across files."""

    console: Console
    answers: TextIO
    recipes_accepted: Set[Tuple[str, str]] = field(default_factory=set)
    reasons_shown: Set[Tuple[str, str]] = field(default_factory=set)
    recipes_explained: Set[str] = field(default_factory=set)
    asked: int = 0
    tally: Tally = field(default_factory=Tally)

    def ask(self) -> str:
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

    def show(self, doc: Document, diag: Diagnostic, change: str, number: int, waiting: int) -> None:
        """Where, which recipe and safety, why (each reason once), and the diff."""
        console = self.console
        console.print()
        more = f", {waiting} more waiting" if waiting else ""
        console.print(Text(f"{diag.path}:{diag.line}  (change {number}{more})", "bold"))
        console.print(Text.assemble((diag.recipe, "bold magenta"), f" [{diag.safety} fix]"))
        if diag.recipe not in self.recipes_explained:
            self.recipes_explained.add(diag.recipe)
            recipe = registry.all_recipes().get(diag.recipe)
            if recipe is not None:
                console.print(Text(f"why: {recipe.summary} (tf-migrate explain {recipe.id})", "italic"))
        reason = (diag.recipe, _reason(diag))
        if reason in self.reasons_shown:
            console.print(Text("(same reason as above)", "dim"))
        else:
            self.reasons_shown.add(reason)
            console.print(diag.message, markup=False, highlight=False)
        console.print(_coloured(change), end="")


def _review_file(doc: Document, reviewer: Reviewer) -> Tuple[str, int]:
    """Ask about each offerable finding in line order, applying the accepted
    ones as they come; returns the accepted text and how many were declined."""
    text = doc.outcome.result.source
    rejected_places: Set[Place] = set()
    texts = {text}  # a fix that brings back an earlier text would loop
    offered_all: List[Diagnostic] = []
    rejected: List[Diagnostic] = []
    declined, number, rest = 0, 0, None  # rest: 'a' or 'd' answered for this file
    for _ in range(MAX_QUESTIONS_PER_FILE):
        offered = [d for d in sorted(doc.findings(text), key=_position)
                   if doc.offerable(d) and place(d) not in rejected_places]
        if not offered:
            break
        diag = offered[0]
        offered_all.append(diag)
        new = doc.apply_one(text, diag)
        if new in texts:
            rejected_places.add(place(diag))
            why = ("its fix cannot be applied on its own (the engine discarded it)" if new == text
                   else "its fix would undo a change already accepted")
            reviewer.tally.not_offered.append(f"{diag.path}:{diag.line} {diag.recipe}: {why}")
            continue
        number += 1
        reviewer.show(doc, diag, diff_text(doc.label, text, new), number, len(offered) - 1)
        answer = _answer(reviewer, diag, rest)
        if answer in "ad":
            rest = answer
        if answer == "r":
            reviewer.recipes_accepted.add((diag.recipe, diag.safety))
        if answer in "yar":
            rejected_places = doc.moved(rejected_places, text, new)
            text = new
            texts.add(text)
            reviewer.tally.accepted += 1
        else:
            rejected_places.add(place(diag))
            declined += 1
            reviewer.tally.rejected += 1
            rejected.append(diag)
    if rejected:
        reviewer.tally.not_offered.extend(_not_offered(doc, offered_all, rejected))
    return text, declined


def _answer(reviewer: Reviewer, diag: Diagnostic, rest: Optional[str]) -> str:
    if rest:
        reviewer.console.print(Text(f"{'accepted' if rest == 'a' else 'rejected'} ({rest})", "dim"))
        return rest
    if (diag.recipe, diag.safety) in reviewer.recipes_accepted:
        reviewer.console.print(Text(f"accepted ({diag.recipe} [{diag.safety}]: r)", "dim"))
        return "y"
    answer = reviewer.ask()
    if answer == "q":
        raise Quit()
    return answer


def _not_offered(doc: Document, offered: List[Diagnostic], rejected: List[Diagnostic]) -> List[str]:
    """Findings the full run reaches (its fixpoint) that were never offered:
    they appear only after a change that was rejected."""
    def kind(diag: Diagnostic) -> Tuple[str, str, str, str]:
        return (diag.path, diag.recipe, diag.safety, _reason(diag))

    asked = Counter(kind(d) for d in offered)
    culprits = ", ".join(f"{d.recipe} at line {d.line}" for d in rejected)
    lines = []
    for diag in sorted(doc.outcome.result.diagnostics, key=_position):
        if asked[kind(diag)]:
            asked[kind(diag)] -= 1
        elif diag.applied:
            lines.append(f"{diag.path}:{diag.line} {diag.recipe} [{diag.safety}]: appears only "
                         f"after a change that was rejected ({culprits})")
    return lines


@dataclass
class Session:
    """What a review did: one outcome per file looked at, and whether changes were declined."""

    outcomes: List[batch.Outcome] = field(default_factory=list)
    declined: int = 0
    quit: bool = False


def review(paths: Iterable[Path], options: Options, reviewer: Reviewer) -> Session:
    """Review every changed file among ``paths`` in order.

    Raises NoAnswers when stdin is empty before the first question.
    """
    session = Session()
    for path in paths:
        outcome = batch.process(path, options)
        session.outcomes.append(outcome)
        if outcome.result is None or not outcome.result.changed:
            continue
        doc = _document(outcome, options)
        result = outcome.result
        try:
            text, declined = _review_file(doc, reviewer)
        except Quit:
            result.output = result.source  # not written
            session.quit = True
            break
        session.declined += declined
        result.output = text
        _write(outcome, reviewer.console)
        result.diagnostics = doc.findings(result.output)  # what is left on disk, none applied
    for outcome in session.outcomes:
        for diag in outcome.result.pending if outcome.result else []:
            unsafe = diag.fixable and not (diag.safety == "safe" or options.unsafe_fixes)
            reviewer.tally.left_unsafe += unsafe
            reviewer.tally.report_only += not diag.fixable
    return session


def _write(outcome: batch.Outcome, console: Console) -> None:
    result = outcome.result
    if not result.changed:
        return
    try:
        files.write(outcome.source, result.output)
        outcome.written = True
        console.print(Text(f"wrote {outcome.path}", "green"))
    except files.WriteRefused as err:
        outcome.problem = str(err)
        result.output = result.source
        console.print(Text(outcome.problem, "red"))


def print_tally(console: Console, tally: Tally) -> None:
    """The closing summary: accepted, rejected, not offered (and why), left."""
    console.print()
    console.print(Text(f"{tally.accepted} accepted, {tally.rejected} rejected, "
                       f"{len(tally.not_offered)} not offered, {tally.left_unsafe} left unsafe"
                       + (" (rerun with --unsafe-fixes to review them)" if tally.left_unsafe else "")
                       + (f", {tally.report_only} report-only" if tally.report_only else ""),
                       "bold"))
    for line in tally.not_offered:
        console.print(f"  not offered: {line}", markup=False, highlight=False)


def command(paths: List[Path], exclude: List[str], options: Options, console: Console,
            errors: Console, answers: Optional[TextIO] = None) -> int:
    """`fix --interactive`: the exit code (0 all applied, 1 changes declined or
    findings left, 2 a file not processed or no answers on a non-terminal stdin)."""
    found = discover(paths, exclude)
    reviewer = Reviewer(console, answers or sys.stdin)
    try:
        session = review(found.files, options, reviewer)
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
    print_tally(console, reviewer.tally)
    output.print_summary(errors, summary, "written", sum(o.written for o in session.outcomes))
    if found.problems or any(o.failed for o in session.outcomes):
        return 2
    pending = any(o.result and o.result.pending for o in session.outcomes)
    return 1 if session.declined or session.quit or pending else 0
