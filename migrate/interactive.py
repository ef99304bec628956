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

Everything the review prints describes the files as they are on disk after it:
a file is counted (accepted, rejected, not offered) only once it is written; a
file left by `q` (or whose write is refused) keeps its text, its decisions are
dropped and its findings count as undecided. Headers give the line in the file
as it was, however many accepted changes above it moved it. Answers come from
stdin; when it is not a terminal and holds none, the review refuses before
anything is asked.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Set, TextIO, Tuple

from rich.console import Console
from rich.text import Text

from . import batch, files, output, registry
from .discovery import discover
from .engine import Options
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


class Quit(Exception):
    """The reviewer answered q (or stdin ran out)."""


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

    def original_line(self, diag: Diagnostic, text: str) -> int:
        """Where ``diag``'s line of ``text`` (the original with accepted
        changes) is in the file as it was; a line a change wrote, at the line
        it replaced."""
        now, then = batch.units_of(self.outcome.path, text), batch.units_of(self.outcome.path, self.source)
        if now == then or diag.path not in then:
            return diag.line
        return line_map(now[diag.path], then[diag.path])(diag.line)

    @property
    def source(self) -> str:
        return self.outcome.result.source

    def offerable(self, diag: Diagnostic) -> bool:
        return diag.fixable and (diag.safety == "safe" or self.options.unsafe_fixes)

    def apply_one(self, text: str, diag: Diagnostic) -> str:
        """``text`` with only ``diag``'s fix applied (unchanged if it cannot be)."""
        recipe = next(r for r in self.options.recipes if r.id == diag.recipe)
        only = frozenset({(diag.path, diag.recipe, diag.line, diag.column)})
        result = self.run(text, replace(self.options, recipes=(recipe,), isolated=False, only=only))
        return text if result.status is Status.FAILED else result.output


def _document(outcome: batch.Outcome, options: Options) -> Document:
    engine, path = batch.engine_for(outcome.path), str(outcome.path)
    return Document(outcome, lambda text, opts: engine(text, path, opts), options)


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
class Decisions:
    """One file's answers: they count once the file is written."""

    accepted: int = 0
    rejected: List[Diagnostic] = field(default_factory=list)  # at their original lines
    not_offered: List[str] = field(default_factory=list)  # with the reason


@dataclass
class Tally:
    """What a review left on disk, for the closing summary."""

    accepted: int = 0
    rejected: int = 0
    not_offered: List[str] = field(default_factory=list)  # with the reason
    left_unsafe: int = 0
    report_only: int = 0
    undecided: int = 0  # offerable findings of files left unwritten
    unwritten: List[str] = field(default_factory=list)  # which, and why
    not_reviewed: int = 0  # files after a q

    def add(self, decisions: Decisions) -> None:
        self.accepted += decisions.accepted
        self.rejected += len(decisions.rejected)
        self.not_offered.extend(decisions.not_offered)


@dataclass
class Reviewer:
    """The state of one review session across files."""

    console: Console
    answers: TextIO
    recipes_accepted: Set[Tuple[str, str]] = field(default_factory=set)
    reasons_shown: Set[Tuple[str, str]] = field(default_factory=set)
    recipes_explained: Set[str] = field(default_factory=set)
    tally: Tally = field(default_factory=Tally)

    def ask(self) -> str:
        while True:
            self.console.print(Text("Apply this change? [y,n,a,d,r,q,?] ", "bold blue"), end="")
            line = self.answers.readline()
            if not line:
                self.console.print()
                self.console.print("no more answers on stdin: stopping as if 'q'")
                raise Quit()
            answer = line.strip().lower()[:1]
            if not self.answers.isatty():
                self.console.print(answer)
            if answer and answer in ANSWERS:
                return answer
            self.console.print(HELP, markup=False)

    def show(self, diag: Diagnostic, line: int, change: str, number: int, waiting: int) -> None:
        """Where (``line``: in the file as it was), which recipe and safety,
        why (each reason once), and the diff."""
        console = self.console
        console.print()
        more = f", {waiting} more waiting" if waiting else ""
        console.print(Text(f"{diag.path}:{line}  (change {number}{more})", "bold"))
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


def _review_file(doc: Document, reviewer: Reviewer) -> Tuple[str, Decisions]:
    """Ask about each offerable finding in line order, applying the accepted
    ones as they come; returns the accepted text and the decisions."""
    text = doc.source
    rejected_places: Set[Place] = set()
    texts = {text}  # a fix that brings back an earlier text would loop
    offered_all: List[Diagnostic] = []
    decisions = Decisions()
    number, rest = 0, None  # rest: 'a' or 'd' answered for this file
    for _ in range(MAX_QUESTIONS_PER_FILE):
        offered = [d for d in sorted(doc.findings(text), key=_position)
                   if doc.offerable(d) and place(d) not in rejected_places]
        if not offered:
            break
        diag = offered[0]
        offered_all.append(diag)
        line = doc.original_line(diag, text)
        new = doc.apply_one(text, diag)
        if new in texts:
            rejected_places.add(place(diag))
            why = ("its fix cannot be applied on its own (the engine discarded it)" if new == text
                   else "its fix would undo a change already accepted")
            decisions.not_offered.append(f"{diag.path}:{line} {diag.recipe}: {why}")
            continue
        number += 1
        reviewer.show(diag, line, diff_text(doc.label, text, new), number, len(offered) - 1)
        answer = _answer(reviewer, diag, rest)
        if answer in "ad":
            rest = answer
        if answer == "r":
            reviewer.recipes_accepted.add((diag.recipe, diag.safety))
        if answer in "yar":
            rejected_places = doc.moved(rejected_places, text, new)
            text = new
            texts.add(text)
            decisions.accepted += 1
        else:
            rejected_places.add(place(diag))
            decisions.rejected.append(replace(diag, line=line))
    if decisions.rejected:
        decisions.not_offered.extend(_not_offered(doc, offered_all, decisions.rejected))
    return text, decisions


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


def review(paths: Sequence[Path], options_of: Callable[[Path], Options], reviewer: Reviewer) -> Session:
    """Review every changed file among ``paths`` in order, each with the
    options of its config (``options_of``); after a q, the files left are
    not looked at."""
    session, tally = Session(), reviewer.tally
    for index, path in enumerate(paths):
        options = options_of(path)
        outcome = batch.process(path, options)
        session.outcomes.append(outcome)
        if outcome.result is None or not outcome.result.changed:
            continue
        doc = _document(outcome, options)
        result = outcome.result
        try:
            result.output, decisions = _review_file(doc, reviewer)
        except Quit:
            result.output = result.source
            session.quit = True
            tally.not_reviewed = len(paths) - index - 1
            _unwritten(doc, tally, "q: not written, its answers are dropped")
            break
        if _write(outcome, reviewer.console):
            tally.add(decisions)
            session.declined += len(decisions.rejected)
            result.diagnostics = doc.findings(result.output)  # what is left on disk, none applied
        else:
            _unwritten(doc, tally, f"{outcome.problem}: its answers are dropped")
    for outcome in session.outcomes:
        unsafe_fixes = options_of(outcome.path).unsafe_fixes
        for diag in outcome.result.pending if outcome.result else []:
            unsafe = diag.fixable and not (diag.safety == "safe" or unsafe_fixes)
            tally.left_unsafe += unsafe
            tally.report_only += not diag.fixable
    return session


def _unwritten(doc: Document, tally: Tally, why: str) -> None:
    """A file that keeps its text: its findings are those of the original,
    the fixable ones undecided."""
    result = doc.outcome.result
    result.diagnostics = doc.findings(result.source)
    tally.undecided += sum(doc.offerable(d) for d in result.diagnostics)
    tally.unwritten.append(f"{doc.label} ({why})")


def _write(outcome: batch.Outcome, console: Console) -> bool:
    """Whether the file on disk now holds the reviewed text (a refused write keeps the original)."""
    result = outcome.result
    if not result.changed:
        return True
    try:
        files.write(outcome.source, result.output)
    except files.WriteRefused as err:
        outcome.problem = str(err)
        result.output = result.source
        console.print(Text(outcome.problem, "red"), highlight=False)
        return False
    outcome.written = True
    console.print(Text(f"wrote {outcome.path}", "green"))
    return True


def print_tally(console: Console, tally: Tally) -> None:
    """The closing summary: accepted, rejected, not offered (and why), left,
    undecided (and which files were not written or not reviewed)."""
    console.print()
    console.print(Text(f"{tally.accepted} accepted, {tally.rejected} rejected, "
                       f"{len(tally.not_offered)} not offered, {tally.left_unsafe} left unsafe"
                       + (" (rerun with --unsafe-fixes to review them)" if tally.left_unsafe else "")
                       + (f", {tally.report_only} report-only" if tally.report_only else "")
                       + (f", {tally.undecided} undecided" if tally.undecided else ""),
                       "bold"))
    for line in tally.not_offered:
        console.print(f"  not offered: {line}", markup=False, highlight=False)
    for line in tally.unwritten:
        console.print(f"  unchanged: {line}", markup=False, highlight=False)
    if tally.not_reviewed:
        console.print(f"  not reviewed: {tally.not_reviewed} more file(s) after q", highlight=False)


class _Peeked:
    """stdin whose first line was read ahead (to refuse before asking)."""

    def __init__(self, first: str, rest: TextIO):
        self.first, self.rest = first, rest

    def readline(self) -> str:
        line, self.first = self.first or self.rest.readline(), ""
        return line

    def isatty(self) -> bool:
        return False


def _answers(stdin: TextIO) -> Optional[TextIO]:
    """Where the answers come from; None when stdin is not a terminal and
    holds none (it is read up to the first line, nothing more)."""
    if stdin.isatty():
        return stdin
    first = stdin.readline()
    return _Peeked(first, stdin) if first else None


def command(paths: List[Path], exclude_of: Callable[[Path], List[str]],
            options_of: Callable[[Path], Options], console: Console,
            errors: Console, answers: Optional[TextIO] = None) -> int:
    """`fix --interactive`: the exit code (0 all applied, 1 changes declined or
    findings left, 2 a file not processed or no answers on a non-terminal stdin).
    Each folder is walked with the excludes, and each file run with the
    options, of the config that applies there, as `check` does."""
    source = _answers(answers or sys.stdin)
    if source is None:
        errors.print("tf-migrate: --interactive needs answers: stdin is not a terminal and is "
                     "empty (run it in a terminal, or pipe answers, one of y,n,a,d,r,q per line)",
                     markup=False, highlight=False)
        return 2
    found = discover(paths, exclude_of=exclude_of)
    for warning in sorted(found.warnings):
        errors.print(f"warning: {warning}", markup=False, highlight=False)
    reviewer = Reviewer(console, source)
    session = review(found.files, options_of, reviewer)
    summary = batch.Summary()
    for problem in found.problems:
        summary.add(batch.Outcome(Path(problem.split(":", 1)[0]), problem=problem))
    for outcome in session.outcomes:
        summary.add(outcome)
        for diag in sorted(outcome.result.pending if outcome.result else [], key=_position):
            console.print(output.finding_line(diag), markup=False, highlight=False)
    print_tally(console, reviewer.tally)
    output.print_summary(lambda: errors, summary, "written", sum(o.written for o in session.outcomes),
                         stream=errors.file)
    if found.problems or any(o.failed for o in session.outcomes):
        return 2
    pending = any(o.result and o.result.pending for o in session.outcomes)
    return 1 if session.declined or session.quit or pending else 0
