"""The engine: source text in, a SourceResult out. Pure and never raises.

parse (fissix) -> each enabled recipe's Bowler fixers -> re-parse + compile
-> repeat to a fixpoint (capped) -> result. A recipe whose output does not
parse is discarded for that pass and reported; a recipe that crashes is
reported and the others still run.
"""

from __future__ import annotations

import difflib
import re
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Sequence, Tuple

from fissix import pygram, pytree
from fissix.pgen2 import driver as pgen_driver
from fissix.pgen2.parse import ParseError
from fissix.pgen2.tokenize import TokenError

from . import prefilter
from .recipe import PassContext, Recipe, SourceFacts, running, stop_running
from .result import Diagnostic, Edit, SourceResult, Status

if TYPE_CHECKING:
    from bowler.tool import BowlerTool

MAX_PASSES = 5
_GRAMMAR = pygram.python_grammar_no_print_and_exec_statement


@dataclass(frozen=True)
class Options:
    """What a run enables. ``isolated`` runs every recipe alone on the input
    (no chaining), so each diagnostic's fix edits are relative to the input:
    what `check --format json` and editors need. ``only``, when given, names
    the findings whose fix may be applied, as (path, recipe, line, column) of
    the input text (`fix --interactive` applies one finding at a time); every
    other finding is reported, not applied."""

    recipes: Tuple[Recipe, ...]
    unsafe_fixes: bool = False
    apply: bool = True
    isolated: bool = False
    recipe_options: Tuple[Tuple[str, object], ...] = ()
    only: Optional[FrozenSet[Tuple[str, str, int, int]]] = None


class _Unparsable(Exception):
    pass


def parse(source: str) -> pytree.Node:
    """fissix parse with a reason a person can act on; raises _Unparsable."""
    drv = pgen_driver.Driver(_GRAMMAR, convert=pytree.convert)
    try:
        return drv.parse_string(source)
    except (ParseError, TokenError, IndentationError, SyntaxError) as err:
        raise _Unparsable(_parse_reason(source, err)) from None


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


def _compile(source: str, filename: str) -> None:
    """CPython's own verdict on ``source``; its warnings about user code
    (``x is 1``) are not ours to print."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        compile(source, filename, "exec", dont_inherit=True)


def check_output(source: str, filename: str) -> Optional[str]:
    """None when ``source`` parses with fissix and compiles; else the reason."""
    try:
        parse(source)
        _compile(source, filename)
    except _Unparsable as err:
        return str(err)
    except (SyntaxError, ValueError) as err:
        return f"{type(err).__name__}: {err}"
    return None


_tools: Dict[str, BowlerTool] = {}


def _tool(recipe: Recipe) -> BowlerTool:
    """One compiled BowlerTool per recipe per process (patterns compile once).
    Bowler is imported on first use: a run answered from the cache needs none."""
    tool = _tools.get(recipe.id)
    if tool is None:
        from bowler import Query
        from bowler.tool import BowlerTool

        fixers = recipe.query(Query()).compile()
        tool = BowlerTool(fixers, interactive=False, write=False, silent=True,
                          options={"print_function": True})
        tool.driver.grammar = _GRAMMAR
        _tools[recipe.id] = tool
    return tool


def _refactor(tool: "BowlerTool", tree: pytree.Node, path: str) -> None:
    """``tool.refactor_tree(tree, path)``. When no fixer can match anything
    but the root (patterns headed by ``file_input``, as every recipe here
    selects), the same fixer calls are made on the root alone: fissix would
    walk every node in pre- and post-order and run its bottom matcher over
    every leaf to find that one node, once per recipe per pass."""
    root = pygram.python_symbols.file_input
    heads = (tool.bmi_pre_order_heads, tool.bmi_post_order_heads)
    if tool.BM.fixers or any(fixers for table in heads for kind, fixers in table.items() if kind != root):
        tool.refactor_tree(tree, path)
        return
    every = tool.pre_order + tool.post_order
    for fixer in every:
        fixer.start_tree(tree, path)
    for table in heads:  # the order of refactor_tree's two traversals
        for fixer in table.get(root, []):
            results = fixer.match(tree)
            if results:
                new = fixer.transform(tree, results)
                if new is not None:
                    tree.replace(new)
    for fixer in every:
        fixer.finish_tree(tree, path)


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
    if not prefilter.matcher(recipe.tokens)(source):
        return False
    if recipe.precheck is None:
        return True
    try:
        return recipe.precheck((prechecks or _Prechecks()).facts_of(source))
    except SyntaxError:  # CPython cannot parse it: the fissix parse decides
        return True


def transform(source: str, path: str, options: Options) -> SourceResult:
    """Run the enabled recipes over ``source``; never raises."""
    try:
        return _transform(source, path, options)
    except Exception as err:  # the engine's contract: a failure is a value
        return SourceResult(path, Status.FAILED, source, source,
                            reason=f"internal error: {type(err).__name__}: {err}")


def _transform(source: str, path: str, options: Options) -> SourceResult:
    text, had_newline = _with_final_newline(source)
    prechecks = _Prechecks()
    candidates = [r for r in options.recipes if wants(r, text, prechecks)]
    trees = _Trees()
    if candidates:
        try:
            trees.keep(text, parse(text))
        except _Unparsable as err:
            return SourceResult(path, Status.SKIPPED, source, source, reason=str(err))
    result = SourceResult(path, Status.UNCHANGED, source, source)
    if not candidates:
        return result

    if options.isolated:
        for recipe in candidates:
            _run_to_fixpoint(text, path, [recipe], options, result, trees, prechecks)
        final = text
    else:
        # every enabled recipe, re-filtered on each pass's text: one recipe's
        # output may bring in another's tokens (a TensorArray loop to batch)
        final = _run_to_fixpoint(text, path, options.recipes, options, result, trees, prechecks)

    result.output = final if had_newline else final[:-1]
    if result.errors:
        result.status = Status.FAILED
        result.reason = result.errors[0]
    elif result.output != source:
        result.status = Status.CHANGED
    return result


def _with_final_newline(source: str) -> Tuple[str, bool]:
    if source.endswith("\n") or not source:
        return source, True
    return source + "\n", False


class _Trees:
    """The last parse, handed to the next recipe while the text is the same
    and no fix was applied to it (recipes propose before they mutate): a
    clean file is parsed once, not once per recipe."""

    def __init__(self) -> None:
        self.text: Optional[str] = None
        self.tree: Optional[pytree.Node] = None

    def take(self, text: str) -> pytree.Node:
        tree, self.tree = self.tree, None
        return tree if tree is not None and self.text == text else parse(text)

    def keep(self, text: str, tree: pytree.Node) -> None:
        self.text, self.tree = text, tree


def _run_to_fixpoint(text: str, path: str, recipes: Sequence[Recipe], options: Options,
                     result: SourceResult, trees: _Trees, prechecks: _Prechecks) -> str:
    """Apply ``recipes`` in order until nothing changes; diagnostics of the
    first pass are kept, later passes only add findings on new lines."""
    seen, start = set(), text
    for _ in range(MAX_PASSES):
        before = text
        for recipe in recipes:
            if wants(recipe, text, prechecks):
                text = _run_recipe(recipe, text, path, options, result, seen, trees,
                                   _only(options, path, text == start))
        if text == before:
            break
    else:
        result.errors.append(f"{path}: recipes did not converge after {MAX_PASSES} passes")
    return text


def _only(options: Options, path: str, on_input: bool) -> Optional[FrozenSet[Tuple[str, int, int]]]:
    """The (recipe, line, column) findings allowed a fix in this recipe run:
    positions name findings of the input text, so none once the text changed."""
    if options.only is None:
        return None
    if not on_input:
        return frozenset()
    return frozenset((recipe, line, column) for where, recipe, line, column in options.only
                     if where == path)


def _run_recipe(recipe: Recipe, text: str, path: str, options: Options,
                result: SourceResult, seen: set, trees: _Trees,
                only: Optional[FrozenSet[Tuple[str, int, int]]] = None) -> str:
    ctx = PassContext(recipe, text.splitlines(), options.unsafe_fixes, options.apply,
                      dict(options.recipe_options), only=only)
    token = running(ctx)
    try:
        tree = trees.take(text)
        _refactor(_tool(recipe), tree, path)
        new_text = str(tree)
    except Exception as err:  # a recipe bug must not take the batch down
        result.errors.append(f"recipe {recipe.id} crashed: {type(err).__name__}: {err}")
        return text
    finally:
        stop_running(token)
    if new_text == text and not any(p.applied for p in ctx.proposals):
        trees.keep(text, tree)

    if new_text != text:
        problem = check_output(new_text, path)
        if problem:
            result.errors.append(f"recipe {recipe.id} produced code that does not parse "
                                 f"({problem}); its rewrite was discarded")
            for proposal in ctx.proposals:
                proposal.applied = False
            new_text = text
    edits = _edits(text, new_text)
    for proposal in ctx.proposals:
        key = (proposal.recipe, proposal.message, ctx.lines[proposal.line - 1].strip()
               if proposal.line <= len(ctx.lines) else "")
        if key in seen and not proposal.applied:
            continue
        seen.add(key)
        mine = [e for e in edits if _overlaps(e, proposal)] if proposal.applied else None
        result.diagnostics.append(Diagnostic(
            path, proposal.line, proposal.column, proposal.end_line, proposal.end_column,
            proposal.recipe, proposal.message, proposal.safety, proposal.fixable,
            proposal.applied, mine))
    _assign_orphans(edits, result.diagnostics[-len(ctx.proposals):] if ctx.proposals else [])
    return new_text


def _edits(old: str, new: str) -> List[Edit]:
    """Line-level edits turning ``old`` into ``new`` (1-based, end exclusive)."""
    if old == new:
        return []
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    edits = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            edits.append(Edit(i1 + 1, 1, i2 + 1, 1, "".join(b[j1:j2])))
    return edits


def _overlaps(edit: Edit, proposal) -> bool:
    last = max(edit.end_line - 1, edit.line)
    return edit.line <= proposal.end_line and proposal.line <= last


def _assign_orphans(edits: List[Edit], diagnostics: List[Diagnostic]) -> None:
    """An edit no finding overlaps (an import added at the top, a removed
    helper) belongs to the nearest applied finding of the same pass."""
    applied = [d for d in diagnostics if d.applied and d.fix is not None]
    if not applied:
        return
    claimed = {e for d in applied for e in d.fix}
    for edit in edits:
        if edit not in claimed:
            nearest = min(applied, key=lambda d: abs(d.line - edit.line))
            nearest.fix.append(edit)
            nearest.fix.sort(key=lambda e: (e.line, e.column))


def apply_edits(source: str, edits: Sequence[Edit]) -> str:
    """Apply non-overlapping line edits (relative to ``source``)."""
    lines = source.splitlines(keepends=True)
    for edit in sorted(edits, key=lambda e: (e.line, e.end_line), reverse=True):
        lines[edit.line - 1:edit.end_line - 1] = [edit.replacement] if edit.replacement else []
    return "".join(lines)
