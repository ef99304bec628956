"""The engine: source text in, a SourceResult out. Pure and never raises.

CPython's verdict on the text -> prefilter -> one fissix parse -> one
traversal by every candidate recipe (migrate/traversal.py) -> when the text
changed, parse only the statements that did (migrate/reparse.py) -> repeat
to a fixpoint (capped) -> result. A recipe
whose output does not parse only reports for that pass; a recipe that
crashes is reported and the others still run.
"""

from __future__ import annotations

import ast
import bisect
import gc
import re
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple, Union

from fissix import pytree
from fissix.pgen2.parse import ParseError
from fissix.pgen2.tokenize import TokenError

from . import fastparse, incremental, prefilter, speedups, traversal
from .edits import Owned, apply_edits, old_line, old_lines, pass_edits, split_lines
from .recipe import PassContext, Recipe, SourceFacts
from .reparse import reparse
from .options import Options
from .result import Diagnostic, Edit, SourceResult, Status

__all__ = ["Options", "apply_edits", "check_output", "parse", "transform", "wants"]

MAX_PASSES = 10  # a pass may leave a match for the next one (migrate/traversal.py)


class _Unparsable(Exception):
    pass


def parse(source: str) -> pytree.Node:
    """fissix parse with a reason a person can act on; raises _Unparsable.
    The cyclic garbage collector pauses meanwhile: a parse allocates a node
    per token and nothing it makes is garbage (a large file parses ~20%
    faster)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        if speedups.on("fastparse"):
            return fastparse.parse_string(source, traversal.GRAMMAR)
        return fastparse.fissix_parse(source, traversal.GRAMMAR)
    except (ParseError, TokenError, IndentationError, SyntaxError) as err:
        raise _Unparsable(_parse_reason(source, err)) from None
    finally:
        if paused:
            gc.enable()


def _parse_reason(source: str, err: Exception) -> str:
    lineno = None
    if isinstance(err, ParseError):
        lineno = err.context[1][0]
    try:
        _compile(source, "<input>")
    except SyntaxError as syn:
        return f"syntax error at line {syn.lineno}: {syn.msg}"
    where = f" at line {lineno}" if lineno else ""
    line = source.splitlines()[lineno - 1] if lineno and lineno <= len(source.splitlines()) else ""
    feature = _unsupported_feature(line)
    return f"fissix cannot parse {feature}{where}" if feature else f"fissix cannot parse this file{where}: {err}"


def _unsupported_feature(line: str) -> str:
    checks = [
        (r"^\s*(async\s+)?def\b.*[(,]\s*/\s*[,)]", "positional-only parameters (PEP 570)"),
        (r"^\s*match\b.*:\s*$", "a match statement (PEP 634)"),
        (r"^\s*except\s*\*", "except* (PEP 654)"),
        (r"^\s*@", "a relaxed decorator expression (PEP 614)"),
        (r"^\s*(def|class)\s+\w+\s*\[", "type parameters (PEP 695)"),
        (r"^\s*(async\s+)?with\s*\(.*\bas\b|\bas\s+\w+\s*,\s*$",
         "a parenthesized with statement (Python 3.10)"),
        (r"^\s*type\s+\w+", "a type alias statement (PEP 695)"),
    ]
    for pattern, name in checks:
        if re.search(pattern, line):
            return name
    return ""


def _compile(source: Union[str, ast.Module], filename: str) -> None:
    """CPython's own verdict on ``source``; its warnings about user code
    (``x is 1``) are not ours to print."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        compile(source, filename, "exec", dont_inherit=True)


def check_output(source: str, filename: str) -> Optional[str]:
    """None when ``source`` parses with fissix and compiles; else the reason."""
    return _validated(source, filename)[1]


class _Prechecks:
    """The SourceFacts of the current text, shared by all the recipes'
    prechecks until the text changes."""

    def __init__(self) -> None:
        self.facts = SourceFacts("")

    def facts_of(self, text: str) -> SourceFacts:
        if text != self.facts.text:
            self.facts = SourceFacts(text)
        return self.facts


def wants(recipe: Recipe, source: str, prechecks: Optional[_Prechecks] = None) -> bool:
    """Prefilter: can ``source`` contain this recipe's pattern at all? The
    text tokens first, then the recipe's precheck."""
    return bool(_places(recipe, source, prechecks or _Prechecks()))


def _places(recipe: Recipe, source: str, prechecks: _Prechecks) -> Union[bool, Sequence]:
    """The precheck's answer: False, True (anywhere) or the ``ast`` nodes
    where the pattern can be."""
    if not prefilter.matcher(recipe.tokens)(source):
        return False
    if recipe.precheck is None or not speedups.on("prechecks"):
        return True
    try:
        answer = recipe.precheck(prechecks.facts_of(source))
    except SyntaxError:  # CPython cannot parse it: the fissix parse decides
        return True
    return answer if isinstance(answer, (bool, list, tuple)) else bool(answer)


def transform(source: str, path: str, options: Options) -> SourceResult:
    """Run the enabled recipes over ``source``; never raises."""
    try:
        return _transform(source, path, options)
    except Exception as err:  # the engine's contract: a failure is a value
        return SourceResult(path, Status.FAILED, source, source,
                            reason=f"internal error: {type(err).__name__}: {err}")


def _transform(source: str, path: str, options: Options) -> SourceResult:
    text, had_newline = _with_final_newline(source)
    with _collector_paused():
        unreadable, candidates = _prefiltered(text, path, options)
    if unreadable:
        return SourceResult(path, Status.SKIPPED, source, source, reason=unreadable)
    if not candidates:
        return SourceResult(path, Status.UNCHANGED, source, source)
    result, final = _run(text, source, path, options, candidates)
    return result if final is None else _finished(result, final, source, had_newline, options)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector pauses: what the prechecks build (the
    stdlib ``ast``, its indexes) is many objects, none of them cyclic
    garbage, freed by reference counting once the file is decided; a
    collection meanwhile would only traverse them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _prefiltered(text: str, path: str, options: Options) -> Tuple[Optional[str], List[Recipe]]:
    """CPython's verdict on ``text`` (a reason when it cannot compile) and
    the recipes the prefilter lets through."""
    prechecks = _Prechecks()
    answers = _answers(options.recipes, text, prechecks)
    unreadable = _cpython_verdict(text, path, prechecks.facts)
    if unreadable:
        return unreadable, []
    if isinstance(answers, Exception):
        raise answers
    # the prechecks' ``ast`` tree, as heavy as the fissix one, is freed on return
    return None, [recipe for recipe, answer in answers if answer]


def _run(text: str, source: str, path: str, options: Options,
         candidates: List[Recipe]) -> Tuple[SourceResult, Optional[str]]:
    """The fissix run of ``candidates`` over ``text`` (``source`` with a final
    newline): the result so far and the fixpoint's text
    (None when fissix cannot parse it)."""
    try:
        tree = parse(text)
    except _Unparsable as err:
        return SourceResult(path, Status.SKIPPED, source, source, reason=str(err)), None
    result = SourceResult(path, Status.UNCHANGED, source, source)
    return result, _Fixpoint(path, options, result).run(text, tree, candidates)


def _finished(result: SourceResult, final: str, source: str, had_newline: bool,
              options: Options) -> SourceResult:
    if not options.isolated:
        result.output = final if had_newline else final[:-1]
    if result.errors:
        result.status = Status.FAILED
        result.reason = result.errors[0]
    elif result.output != source:
        result.status = Status.CHANGED
    return result


def _answers(recipes: Sequence[Recipe], text: str,
             prechecks: _Prechecks) -> Union[List[Tuple[Recipe, Union[bool, Sequence]]], Exception]:
    """Each recipe's prefilter answer (``_places``), asked before CPython's
    verdict so that the stdlib ``ast`` is built only when a precheck gets
    past its text stage and needs it (a precheck that fails is the
    file's internal error only once the verdict says it compiles)."""
    try:
        return [(recipe, _places(recipe, text, prechecks)) for recipe in recipes]
    except Exception as err:
        return err


def _cpython_verdict(text: str, path: str, facts: Optional[SourceFacts] = None) -> Optional[str]:
    """Why CPython cannot compile the text (then the file is skipped, whatever
    the prefilter says), or None. ``compile`` is several times cheaper than
    building the stdlib ``ast``, which only the files a precheck reads
    need; when a precheck has built it (``facts``), that ``ast`` is compiled,
    so the text is parsed once (the same parser and compiler: the same
    verdict; what only the ``ast`` objects hit, a recursion limit, is asked
    of the text)."""
    source = facts.parsed() if facts is not None else None
    if source is None:
        source = text
    try:
        _compile(source, path)
    except SyntaxError as err:
        if err.lineno:
            return f"syntax error at line {err.lineno}: {err.msg}"
        return f"cannot be compiled: {err.msg or err}"
    except (ValueError, MemoryError, RecursionError) as err:
        if source is not text:
            return _cpython_verdict(text, path)
        return f"cannot be compiled: {type(err).__name__}: {err}"
    return None


def _with_final_newline(source: str) -> Tuple[str, bool]:
    if source.endswith("\n") or not source:
        return source, True
    return source + "\n", False


@dataclass(eq=False, repr=False)
class _PassOutcome:
    text: str  # the text after the pass
    tree: Optional[pytree.Node]  # its parse, when the pass changed the text
    state: traversal.Pass
    edits: List[Owned]  # relative to the pass's text, each with its recipe
    revisit: Optional["_Revisit"] = None  # what the next pass visits (None: everything)


@dataclass(eq=False, repr=False)
class _Revisit:
    """What the pass after a changed one visits (migrate/incremental.py):
    ``statements`` (ids of its tree's top-level statements), except the
    recipes ``everywhere``, which crashed or only reported in the changed
    pass. A recipe that did not run that pass at all was ruled out on its
    text by the prefilter: it found nothing there either."""

    statements: set
    everywhere: FrozenSet[str]
    context: Optional[incremental.Context]  # what the pass's module holds (None: the whole tree)

    @classmethod
    def after(cls, spans, text: str, tree: pytree.Node, everywhere: FrozenSet[str],
              recipes: Sequence[Recipe]) -> Optional["_Revisit"]:
        """``recipes``: every enabled one (a later pass may run any)."""
        if not speedups.on("incremental"):
            return None
        incremental.read_spans(spans, text)
        fixers = incremental.fixers_of(recipes)
        statements = incremental.to_revisit(spans, tree, fixers)
        if statements is None:
            return None
        return cls(statements, everywhere, incremental.context_of(tree, statements, fixers))


class _Fixpoint:
    """Passes over one text until nothing changes: each pass is one traversal
    by every recipe that still wants the text; a changed text is re-parsed
    once (that parse is the next pass's tree and the check that it parses)."""

    def __init__(self, path: str, options: Options, result: SourceResult):
        self.path, self.options, self.result = path, options, result
        self.seen: set = set()
        self.applied: List[str] = []  # recipes whose fixes earlier passes applied, in order
        self.history: List[List[Edit]] = []  # each changed pass's edits, oldest first
        self.found: dict = {}  # recipe id -> lines of its findings on the input
        self.input: Optional[str] = None  # the text `only` positions refer to

    def run(self, text: str, tree: pytree.Node, recipes: Sequence[Recipe]) -> str:
        """The fixpoint's text. The cycle collector is paused meanwhile and
        runs once after each pass, the objects alive before the first pass
        (the input's tree, most of which every pass keeps) and those that
        survived the last collection frozen out of its sight: a pass
        allocates many small objects, and each collection they would
        trigger, like a full one after a pass, would traverse the whole
        tree. Thawed at the end, they are the collector's again."""
        enabled = gc.isenabled()
        gc.disable()
        gc.freeze()
        try:
            return self._run(text, tree, recipes)
        finally:
            gc.unfreeze()
            if enabled:
                gc.enable()

    def _run(self, text: str, tree: pytree.Node, recipes: Sequence[Recipe]) -> str:
        self.input = text
        trees = [tree]  # handed over: a pass turns its tree into its output's
        del tree
        revisit = None
        for number in range(MAX_PASSES):
            outcome = self._pass(text, trees, recipes, revisit)
            edits = outcome.edits
            self._report(outcome.state, edits)
            if number == 0 and self.options.isolated:
                self._isolate(text, outcome.state.postponed)
            if outcome.text == text and not outcome.state.postponed:
                return text
            if outcome.text != text:
                self.history.append([edit for edit, _ in edits])
            applied = [p.recipe for p in outcome.state.proposals() if p.applied]
            self.applied = list(dict.fromkeys(self.applied + applied))
            text = outcome.text
            trees.append(outcome.tree or parse(text))
            revisit = outcome.revisit
            del outcome
            gc.collect()  # the pass's garbage: replaced statements, the old tree's facts
            gc.freeze()  # and what survives it (mostly the new tree) is not traversed again
            # the text is parsed already: only the token prefilter is worth asking
            # (a fix may bring in another recipe's tokens: a TensorArray loop to batch)
            recipes = [r for r in self.options.recipes if prefilter.matcher(r.tokens)(text)]
            if not recipes:
                return text
        self.result.errors.append(f"{self.path}: recipes did not converge after {MAX_PASSES} passes")
        return text

    def _isolate(self, text: str, postponed: set) -> None:
        """Check mode: recipes that met another's fix in the input's pass run
        again on the input alone, so their findings and edits are the
        input's (their rewrites are not chained: later passes find them
        again and drop them as already reported). The input is parsed once
        and each re-run gets a copy (fissix's ``clone``, a third of a
        parse's cost: a chain of re-runs parsed the same text each time)."""
        pristine = parse(text) if postponed else None
        while postponed:
            recipes = [r for r in self.options.recipes if r.id in postponed]
            tree = fastparse.clone(pristine)
            tree.used_names = set(pristine.used_names)  # what a parse records; a fixer may add to it
            outcome = self._pass(text, [tree], recipes, chained=False)
            self._report(outcome.state, outcome.edits)
            postponed = outcome.state.postponed

    def _pass(self, text: str, trees: List[pytree.Node], recipes: Sequence[Recipe],
              revisit: Optional[_Revisit] = None, chained: bool = True) -> _PassOutcome:
        """One traversal of the tree taken from ``trees``; a recipe that
        crashes is dropped and one whose rewrite does not parse only
        reports, and the pass is re-run from ``text`` without their edits.
        ``revisit`` (from the previous pass) restricts the recipes that ran
        it to the statements it names; a restricted pass that changed
        another statement is run again on the whole tree. No pass follows
        an isolated re-run (``chained`` False): what the next pass would
        revisit is not worked out."""
        tree = trees.pop()
        old = split_lines(text)
        lines = [line.rstrip("\r\n") for line in old]
        dropped: set = set()
        report_only: set = set()
        while True:
            active = [r for r in recipes if r.id not in dropped]
            contexts = {r.id: PassContext(r, lines, self.options.unsafe_fixes,
                                          self.options.apply and r.id not in report_only,
                                          dict(self.options.recipe_options),
                                          only=self._only(text)) for r in active}
            within, everywhere, context = (None, frozenset(), None) if revisit is None else \
                (revisit.statements, revisit.everywhere, revisit.context)
            state = traversal.run(active, tree, self.path, contexts, within, everywhere, context,
                                  among=self.options.recipes)
            revisit = None  # a re-run parses the text again: its statements are new
            if state.crashed:
                for recipe, error in state.crashed.items():
                    self.result.errors.append(f"recipe {recipe} crashed: {error}")
                dropped |= set(state.crashed)
                tree = parse(text)
                continue
            if state.strayed():
                tree = parse(text)
                continue
            new_text, edits = pass_edits(old, state.spans, tree, state.owners) if state.modified \
                else (text, [])
            if new_text == text:
                return _PassOutcome(text, None, state, [])
            # the untouched statements' nodes move to the output's tree; when that
            # fails, a fissix tree being a web of parent links, the cyclic collector
            # frees this one before the output is parsed, so two never pile up
            new_tree = reparse(tree, state.spans, parse) if speedups.on("reparse") else None
            spans, state.root, state.spans = state.spans, None, []
            del tree
            if new_tree is not None and _compiles(new_text, self.path):
                return _PassOutcome(new_text, new_tree, state, edits,
                                    _Revisit.after(spans, text, new_tree, frozenset(dropped | report_only),
                                                   self.options.recipes) if chained else None)
            new_tree = spans = None
            gc.collect()
            new_tree, problem = _validated(new_text, self.path)
            if problem is None:
                return _PassOutcome(new_text, new_tree, state, edits)
            for recipe in self._culprits(text, active, state):
                self.result.errors.append(f"recipe {recipe} produced code that does not parse "
                                          f"({problem}); its rewrite was discarded")
                report_only.add(recipe)
            tree = parse(text)

    def _only(self, text: str) -> Optional[FrozenSet[Tuple[str, int, int]]]:
        """The (recipe, line, column) findings allowed a fix on ``text``:
        ``only`` names findings of the input, so none once the text changed."""
        if self.options.only is None:
            return None
        if text != self.input:
            return frozenset()
        return frozenset((recipe, line, column) for where, recipe, line, column
                         in self.options.only if where == self.path)

    def _culprits(self, text: str, active: Sequence[Recipe], state: traversal.Pass) -> List[str]:
        """The recipes whose rewrite, alone on ``text``, does not parse (all
        that rewrote when only their combination fails)."""
        rewrote = [r for r in active if any(p.applied for p in state.contexts[r.id].proposals)]
        if len(rewrote) <= 1:
            return [r.id for r in rewrote]
        broken = []
        for recipe in rewrote:
            tree = parse(text)
            contexts = {recipe.id: PassContext(recipe, text.splitlines(), self.options.unsafe_fixes,
                                               True, dict(self.options.recipe_options))}
            traversal.run([recipe], tree, self.path, contexts)
            if _validated(str(tree), self.path)[1] is not None:
                broken.append(recipe.id)
        return broken or [r.id for r in rewrote]

    def _report(self, state: traversal.Pass, edits: List[Owned]) -> None:
        """The pass's proposals as diagnostics: a finding already reported by
        an earlier pass is not repeated; one that appears only after other
        recipes' fixes says so (``after``)."""
        made = []
        overlapping = _Overlaps(edits)
        occurrences: Dict[tuple, int] = {}
        for proposal in state.proposals():
            lines = state.contexts[proposal.recipe].lines
            text = lines[proposal.line - 1].strip() if proposal.line <= len(lines) else ""
            # identical lines at different places are different findings: the
            # key counts them (the n-th of a pass is the n-th of the next)
            same = (proposal.recipe, proposal.message, text)
            occurrences[same] = occurrences.get(same, 0) + 1
            key = same + (occurrences[same],)
            if key in self.seen and (self.options.isolated or not proposal.applied):
                continue
            self.seen.add(key)
            after = [r for r in self.applied if r != proposal.recipe] or None
            after = after if self.options.isolated else None
            fix = [e for e, owner in overlapping(proposal) if owner in (None, proposal.recipe)] \
                if proposal.applied else None
            line, end_line = proposal.line, proposal.end_line
            if self.options.isolated and self.history:  # positions in the checked text
                (first, last), end_line = self._input_lines(line), self._input_lines(end_line)[1]
                if any(first <= seen <= last for seen in self.found.get(proposal.recipe, ())):
                    continue  # found on the input, by a rerun whose rewrite was not chained
                line = self._input_line(line)  # the statement it concerns, not its edit's first line
                if after:
                    fix = None  # its edits would be relative to the fixed text
            elif not self.history:
                self.found.setdefault(proposal.recipe, []).append(line)
            made.append(Diagnostic(
                self.path, line, proposal.column, end_line, proposal.end_column,
                proposal.recipe, proposal.message, proposal.safety, proposal.fixable,
                proposal.applied, fix, after))
        _assign_orphans(edits, made)
        self.result.diagnostics.extend(made)

    def _input_lines(self, line: int) -> Tuple[int, int]:
        first = last = line
        for edits in reversed(self.history):
            first, last = old_lines(edits, first)[0], old_lines(edits, last)[1]
        return first, last

    def _input_line(self, line: int) -> int:
        for edits in reversed(self.history):
            line = old_line(edits, line)
        return line


def _validated(text: str, filename: str) -> Tuple[Optional[pytree.Node], Optional[str]]:
    """(fissix tree, None) when ``text`` parses with fissix and compiles; else (None, reason)."""
    try:
        tree = parse(text)
        _compile(text, filename)
    except _Unparsable as err:
        return None, str(err)
    except (SyntaxError, ValueError) as err:
        return None, f"{type(err).__name__}: {err}"
    return tree, None


def _compiles(text: str, filename: str) -> bool:
    try:
        _compile(text, filename)
    except (SyntaxError, ValueError):
        return False
    return True


class _Overlaps:
    """The edits (in their order) whose lines meet a proposal's. A pass's
    edits come in order of position, mostly: then their first and last lines
    both increase, and two bisections find them (linear in findings, where a
    scan per finding made a pass quadratic)."""

    def __init__(self, edits: List[Owned]):
        self.edits = edits
        self.firsts = [edit.line for edit, _ in edits]
        self.lasts = [_last_line(edit) for edit, _ in edits]
        self.ordered = all(a <= b for a, b in zip(self.firsts, self.firsts[1:])) \
            and all(a <= b for a, b in zip(self.lasts, self.lasts[1:]))

    def __call__(self, proposal) -> List[Owned]:
        if not self.ordered:
            return [owned for owned in self.edits if _overlaps(owned[0], proposal)]
        end = bisect.bisect_right(self.firsts, proposal.end_line)
        begin = bisect.bisect_left(self.lasts, proposal.line, 0, end)
        return self.edits[begin:end]


def _last_line(edit: Edit) -> int:
    return max(edit.end_line - 1, edit.line)


def _overlaps(edit: Edit, proposal) -> bool:
    return edit.line <= proposal.end_line and proposal.line <= _last_line(edit)


def _assign_orphans(edits: List[Owned], diagnostics: List[Diagnostic]) -> None:
    """An edit no finding overlaps (an import added at the top, a removed
    helper) belongs to the nearest applied finding of the recipe that made
    it in the same pass (of any recipe when several changed that place)."""
    applied = [d for d in diagnostics if d.applied and d.fix is not None]
    claimed = {e for d in applied for e in d.fix}
    nearby = {None: _Nearest(applied)}
    for recipe in {d.recipe for d in applied}:
        nearby[recipe] = _Nearest([d for d in applied if d.recipe == recipe])
    for edit, owner in edits:
        if edit in claimed:
            continue
        nearest = nearby.get(owner, nearby[None]).to(edit.line)
        if nearest is not None:
            nearest.fix.append(edit)
            nearest.fix.sort(key=lambda e: (e.line, e.column))


class _Nearest:
    """The first of ``diagnostics`` (in their order) whose line is nearest a
    given line, by bisection: a scan per orphan edit made a pass of many
    fixes quadratic."""

    def __init__(self, diagnostics: List[Diagnostic]):
        self.first: Dict[int, Tuple[int, Diagnostic]] = {}  # line -> (order, its first diagnostic)
        for order, diagnostic in enumerate(diagnostics):
            self.first.setdefault(diagnostic.line, (order, diagnostic))
        self.lines = sorted(self.first)

    def to(self, line: int) -> Optional[Diagnostic]:
        at = bisect.bisect_left(self.lines, line)
        around = self.lines[max(at - 1, 0):at + 1]
        if not around:
            return None
        distance = min(abs(other - line) for other in around)
        return min(self.first[other] for other in (line - distance, line + distance)
                   if other in self.first)[1]
