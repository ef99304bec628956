"""Why a gradient came back None: the runtime's sighting, named by a static
finding (issue 26, item 8).

The run says where a gradient was None and for which variables: a
``tape.gradient`` call the dynamic check caught, an optimizer call that
raised "No gradients provided" (or "No gradient defined for operation"),
or the runner's own gradient step of a protocol program. The recipes whose
bug shows as a None gradient (``before_fails="none-gradient"``), run by the
engine on the program's text, say why, at a line. The two meet:

1. a finding whose lines hold the failing line (``t.gradient(f(x), x)``);
2. else a finding related to a name the failing call's arguments depend
   on: the names of that statement, closed over the program's assignments,
   mutations (``losses.append(...)``) and the bodies of the functions and
   classes called (a backwards slice on the stdlib ``ast``); a finding is
   related by the names its lines read or bind, what those were bound from,
   and the functions and classes around it; the nearest such finding, one
   before the line first;
3. else no recipe covers it, and the variables and the line are named.

A protocol program's gradient step has no line of its own: its first
none-gradient finding names the cause. `verify` and `fix --verify` print
the same sentence (``Diagnosis.sentence``); JSON carries cause and finding.
"""

from __future__ import annotations

import ast
import builtins
import os
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from migrate.conventions import CONVENTIONAL
from migrate.engine import transform
from migrate.options import Options
from migrate.registry import all_recipes
from migrate.result import Diagnostic

from .report import NO_GRADIENT, ProgramReport
from .unfixed import ERROR_AT

# a raised error that means a gradient was None, and the variables it lists
_VARIABLES = re.compile(r"variable:?\s*\(?\[([^\]]*)\]")
_SHOWN = 3  # variables named in a sentence


@dataclass(frozen=True)
class NoneGradient:
    """Where the run saw a None gradient: ``line`` None for the runner's own
    gradient step of a protocol program."""

    path: str
    line: Optional[int]
    variables: Tuple[str, ...]
    check: str  # dynamic | run | gradients ...


@dataclass(frozen=True)
class Diagnosis:
    none: NoneGradient
    finding: Optional[Diagnostic]
    shown_path: str  # the path the user knows (a fix --verify original runs from a copy)

    @property
    def cause(self) -> Optional[str]:
        return self.finding.recipe if self.finding else None

    @property
    def finding_id(self) -> Optional[str]:
        f = self.finding
        return f"{f.recipe}@{os.path.basename(self.shown_path)}:{f.line}:{f.column}" if f else None

    def sentence(self) -> str:
        name = os.path.basename(self.shown_path)
        where = f"{name}:{self.none.line}" if self.none.line else f"{name} (the gradient step of training_case())"
        shown = list(self.none.variables[:_SHOWN])
        if len(self.none.variables) > _SHOWN:
            shown.append(f"{len(self.none.variables) - _SHOWN} more")
        head = f"None gradient for {', '.join(shown)} at {where}" if shown else f"None gradient at {where}"
        f = self.finding
        if f is None:
            return f"{head}: no recipe covers it"
        return (f"{head}: cause {f.recipe} (finding {name}:{f.line}: {_first_clause(f.message)}) "
                f"-- {_way_out(f)}")

    def to_dict(self) -> dict:
        f = self.finding
        return {"path": self.shown_path, "line": self.none.line, "variables": list(self.none.variables),
                "check": self.none.check, "cause": self.cause, "finding_id": self.finding_id,
                "finding": None if f is None else {
                    "recipe": f.recipe, "line": f.line, "column": f.column, "end_line": f.end_line,
                    "message": f.message, "safety": f.safety, "fixable": f.fixable},
                "message": self.sentence()}


def _first_clause(message: str) -> str:
    clause = re.split(r"(?<=[^.])[:;] ", message, maxsplit=1)[0]
    return clause if len(clause) <= 100 else clause[:97] + "..."


def _way_out(finding: Diagnostic) -> str:
    if not finding.fixable:
        return f"report only: tf-migrate explain {finding.recipe}"
    unsafe = " --unsafe-fixes" if finding.safety == "unsafe" else ""
    return f"tf-migrate fix --select {finding.recipe}{unsafe}"


# --- what the run saw --------------------------------------------------------

def none_gradients(program: ProgramReport, path: str, shown_path: Optional[str] = None) -> List[NoneGradient]:
    """The None gradients ``program`` (run from ``path``) saw in that file,
    one per line (the runner's gradient step: line None). A copy's errors
    name the file it copies (``shown_path``: `fix --verify`'s original)."""
    targets = {os.path.realpath(path), os.path.realpath(shown_path or path)}
    found: Dict[Optional[int], NoneGradient] = {}

    def add(line: Optional[int], variables: Iterable[str], check: str) -> None:
        names = tuple(dict.fromkeys(_plain(v) for v in variables))
        seen = found.get(line)
        if seen is None or (not _named(seen.variables) and _named(names)):
            found[line] = NoneGradient(path, line, names, check)

    for check in program.checks:
        if check.passed:
            continue
        for call in check.details.get("none_calls", []):
            if os.path.realpath(call["file"]) in targets:
                add(int(call["line"]), call.get("none_sources", []), check.name)
        if check.details.get("none_variables"):
            add(None, check.details["none_variables"], check.name)
        at = ERROR_AT.search(check.error or "")
        if at and NO_GRADIENT.search(check.error) and os.path.realpath(at.group(1)) in targets:
            listed = _VARIABLES.search(check.error)
            names = re.findall(r"'([^']*)'", listed.group(1)) if listed else []
            add(int(at.group(2)), names, check.name)
    return [found[line] for line in sorted(found, key=lambda line: line or 0)]


def _plain(name: str) -> str:
    return name[:-2] if name.endswith(":0") else name


def _named(variables: Sequence[str]) -> bool:
    return any(not v.startswith("source[") for v in variables)


# --- what the recipes say ----------------------------------------------------

@lru_cache(maxsize=32)  # `--tf all` diagnoses one file once per runtime
def none_gradient_findings(text: str, path: str) -> Tuple[Diagnostic, ...]:
    """Findings of the recipes whose bug shows as a None gradient, on
    ``text`` as it is (not those that appear once another fix is applied:
    the run did not execute that code)."""
    recipes = tuple(r for r in all_recipes().values() if r.before_fails == "none-gradient")
    result = transform(text, path, Options(recipes, unsafe_fixes=True, isolated=True))
    return tuple(sorted((d for d in result.diagnostics if not d.after), key=lambda d: (d.line, d.column)))


def diagnose(none: NoneGradient, findings: Sequence[Diagnostic], text: str,
             shown_path: Optional[str] = None) -> Diagnosis:
    """The finding that explains ``none`` (rules in the module docstring)."""
    shown = shown_path or none.path
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        tree = None
    if tree is not None and none.line is not None and not _named(none.variables):  # eager tensors: no names
        none = replace(none, variables=gradient_sources(tree, text, none.line) or none.variables)
    if not findings:
        return Diagnosis(none, None, shown)
    if none.line is None:
        return Diagnosis(none, findings[0], shown)
    holding = [f for f in findings if f.line <= none.line <= f.end_line]
    if holding:
        return Diagnosis(none, holding[0], shown)
    if tree is None:
        return Diagnosis(none, None, shown)
    feeds = _feeds(tree)
    names = feeding_names(tree, none.line, feeds)
    related = [f for f in findings if names & _finding_names(tree, f, feeds)]
    if not related:
        return Diagnosis(none, None, shown)
    best = min(related, key=lambda f: (f.line > none.line, abs(none.line - f.line)))
    return Diagnosis(none, best, shown)


def gradient_sources(tree: ast.AST, text: str, line: int) -> Tuple[str, ...]:
    """The source argument of the ``.gradient(target, sources)`` call at
    ``line``, as written (``image``, ``[a, b]``); empty when there is none."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "gradient" and node.lineno <= line <= (node.end_lineno or node.lineno) \
                and len(node.args) >= 2:
            return (ast.get_source_segment(text, node.args[1]) or "",)
    return ()


def _finding_names(tree: ast.AST, finding: Diagnostic, feeds: Dict[str, Set[str]]) -> Set[str]:
    """The names a finding's lines read or bind, what those were bound from
    (``target.assign(...)`` in ``for target in model_copy.weights``), and the
    functions and classes around it (``self.var = self.add_weight(...)`` in
    ``Scale.build``)."""
    names = {n.id for n in ast.walk(tree)
             if isinstance(n, ast.Name) and finding.line <= n.lineno <= finding.end_line}
    names |= {fed for name in names for fed in feeds.get(name, ())}
    return names | {node.name for node in ast.walk(tree)
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                    and node.lineno <= finding.line <= (node.end_lineno or node.lineno)}


def feeding_names(tree: ast.AST, line: int, feeds: Optional[Dict[str, Set[str]]] = None) -> Set[str]:
    """The names the statement at ``line`` reads (its value, for an
    assignment), closed over what binds or mutates them and the bodies of
    the functions and classes they name; module aliases and builtins left
    out."""
    statement = _statement_at(tree, line)
    if statement is None:
        return set()
    source = statement.value if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)) \
        and statement.value is not None else statement
    feeds = _feeds(tree) if feeds is None else feeds
    wanted, queue = set(), list(_reads(source))
    while queue:
        name = queue.pop()
        if name in wanted:
            continue
        wanted.add(name)
        queue.extend(feeds.get(name, ()))
    return wanted - _not_data(tree)


def _statement_at(tree: ast.AST, line: int) -> Optional[ast.stmt]:
    """The innermost simple statement spanning ``line``."""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not hasattr(node, "body") \
                and node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or node.lineno >= best.lineno:
                best = node
    return best


def _feeds(tree: ast.AST) -> Dict[str, Set[str]]:
    """name -> the names its bindings (``=``, ``for``, ``with ... as``),
    its mutations (``name.append(x)``) and, for a function or class, its
    body read."""
    feeds: Dict[str, Set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in _stored(target):
                    feeds.setdefault(name, set()).update(_reads(node.value))
        elif isinstance(node, (ast.For, ast.comprehension)):
            for name in _stored(node.target):
                feeds.setdefault(name, set()).update(_reads(node.iter))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            for name in _stored(node.optional_vars):
                feeds.setdefault(name, set()).update(_reads(node.context_expr))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            feeds.setdefault(node.name, set()).update(_reads(node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver = node.func.value  # `losses.append(x)`, `v.assign_add(x)`
            while isinstance(receiver, (ast.Attribute, ast.Subscript)):
                receiver = receiver.value
            if isinstance(receiver, ast.Name):
                feeds.setdefault(receiver.id, set()).update(
                    name for arg in [*node.args, *node.keywords] for name in _reads(arg))
    return feeds


def _stored(target: ast.AST) -> Iterable[str]:
    return (n.id for n in ast.walk(target) if isinstance(n, ast.Name))


def _reads(node: ast.AST) -> Set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _not_data(tree: ast.AST) -> Set[str]:
    """Module aliases (imported or conventional) and builtins: every line
    reads them, so they relate nothing."""
    imported = {alias.asname or alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    return imported | set(CONVENTIONAL) | set(dir(builtins)) | {"self"}


# --- a report's programs ------------------------------------------------------

def diagnose_program(program: ProgramReport, path: str, shown_path: str) -> List[Diagnosis]:
    """Every None gradient ``program`` saw in its file, each with its cause."""
    sightings = none_gradients(program, path, shown_path)
    if not sightings:
        return []
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return [Diagnosis(none, None, shown_path) for none in sightings]
    findings = none_gradient_findings(text, shown_path)
    return [diagnose(none, findings, text, shown_path) for none in sightings]
