"""The recipe API: what a module in `recipes/` declares, and how its transform
reports a finding.

A recipe module defines one module-level ``RECIPE = Recipe(...)``; its module
docstring is the `explain` text (what it does, why, CAVEATS). The transform is
a Bowler query built from callables (never string selectors, which Bowler
would ``eval``)::

    def _modify(node, capture, filename):
        if not propose(node, "why this is a bug", safety="unsafe"):
            return                  # reported only, or suppressed
        ...mutate the fissix tree...

    RECIPE = Recipe(
        id="my-recipe", summary="...", safety="safe",
        query=lambda q: q.select(PATTERN).filter(_matches).modify(_modify),
        tokens=("convert_to_tensor",),
    )

`propose` records a finding for the node and answers whether the engine wants
the fix applied now (the finding's safety is allowed and it is not suppressed
by ``# tf-migrate: ignore``). A recipe never prints, exits or writes files.
"""

from __future__ import annotations

import ast
import contextvars
import re
import warnings
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Literal, Optional, Sequence, Tuple, Union

from fissix.pytree import Node

Safety = Literal["safe", "unsafe"]

SUPPRESSION = re.compile(r"#\s*tf-migrate:\s*ignore(?:\[(?P<ids>[^\]]*)\])?")
_ID = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Recipe:
    """One fix: identity, safety, the Bowler query that finds and rewrites it.

    ``query`` receives a fresh ``bowler.Query`` and returns it with selectors,
    filters and modifiers attached. ``tokens`` feed the text prefilter: a file
    containing none of them is never parsed for this recipe (an empty tuple
    means "always run"). ``precheck``, when given, is a sharper necessary
    condition on a file the tokens let through, asked of its SourceFacts
    (the text and its stdlib ``ast``: CPython's C parser is several times
    faster than fissix's): it must answer truthy for every file in which the
    recipe could report anything. It may answer True (anywhere) or the list
    of ``ast`` nodes where a finding can be (none: the file is ruled out).
    ``before_fails`` names what the runner must see go
    wrong in this recipe's `before` fixtures: ``"none-gradient"``,
    ``"graph-error"``, ``"completeness"``, or None for a behaviour-preserving
    recipe whose before and after must agree.
    """

    id: str
    summary: str
    safety: Safety
    query: Callable
    tokens: Tuple[str, ...] = ()
    precheck: Optional[Callable[["SourceFacts"], Union[bool, Sequence[ast.AST]]]] = None
    before_fails: Optional[str] = None
    doc: str = ""

    def __post_init__(self) -> None:
        if not _ID.match(self.id):
            raise ValueError(f"recipe id {self.id!r} is not kebab-case")
        if self.safety not in ("safe", "unsafe"):
            raise ValueError(f"recipe {self.id}: safety must be 'safe' or 'unsafe'")


def child_nodes(node: ast.AST) -> List[ast.AST]:
    """``list(ast.iter_child_nodes(node))`` without its two generators."""
    children: List[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            children.extend([item for item in value if isinstance(item, ast.AST)])
        elif isinstance(value, ast.AST):
            children.append(value)
    return children


def walk(node: ast.AST) -> List[ast.AST]:
    """``list(ast.walk(node))``: the same nodes in the same order (breadth
    first), ~25% faster (no generator per node); prechecks walk a lot."""
    found = [node]
    append, extend = found.append, found.extend
    # child_nodes' loop, inlined: a list per node made the walk slower than ast.walk
    for item in found:  # grows as it goes: breadth first
        for name in item._fields:
            value = getattr(item, name, None)
            if isinstance(value, list):
                extend([child for child in value if isinstance(child, ast.AST)])
            elif isinstance(value, ast.AST):
                append(value)
    return found


class SourceFacts:
    """One source text as recipes' prechecks see it: ``text``, and the
    stdlib ``ast`` ``tree``, built on first use and at most once, and views
    derived from them. On text
    CPython cannot parse, ``tree`` raises SyntaxError and the engine leaves
    the decision to the fissix parse."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._views: dict = {}

    def _view(self, name: str, build):
        if name not in self._views:
            try:
                self._views[name] = build()
            except SyntaxError as err:
                self._views[name] = err
            except (ValueError, MemoryError, RecursionError) as err:
                self._views[name] = SyntaxError(f"{type(err).__name__}: {err}")
        view = self._views[name]
        if isinstance(view, SyntaxError):
            raise view
        return view

    @property
    def tree(self) -> ast.Module:
        return self._view("tree", self._parse)

    def parsed(self) -> Optional[ast.Module]:
        """The ``tree`` when something has built it already and the text
        parsed; else None (nothing is parsed here)."""
        tree = self._views.get("tree")
        return None if isinstance(tree, SyntaxError) else tree

    def nodes(self, *types: type) -> List[ast.AST]:
        """Every node of the tree of one of ``types`` (exact classes), from
        one walk shared by every precheck: each precheck walking the whole
        tree on its own cost more than the parse."""
        index = self._view("nodes", self._index)
        return [node for kind in types for node in index.get(kind, ())]

    def _index(self) -> Dict[type, List[ast.AST]]:
        index: Dict[type, List[ast.AST]] = {}
        for node in walk(self.tree):
            found = index.get(type(node))
            if found is None:
                found = index[type(node)] = []
            found.append(node)
        return index

    def derived(self, name: str, build: Callable[["SourceFacts"], object]):
        """``build(self)``, computed once per text and shared by every
        precheck that asks for ``name`` (the import lines, the import table)."""
        return self._view(name, lambda: build(self))

    def _parse(self) -> ast.Module:
        with warnings.catch_warnings():  # `x is 1` in user code is not ours to report
            warnings.simplefilter("ignore", SyntaxWarning)
            return ast.parse(self.text)


@dataclass(eq=False, repr=False)
class Proposal:
    """A finding a recipe made during one pass, before it became a Diagnostic."""

    recipe: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    safety: Safety
    fixable: bool
    applied: bool


@dataclass(eq=False, repr=False)
class PassContext:
    """What the engine tells a running recipe, and what the recipe tells back."""

    recipe: Recipe
    lines: list
    unsafe_fixes: bool
    apply: bool = True
    options: dict = field(default_factory=dict)
    proposals: list = field(default_factory=list)
    only: Optional[frozenset] = None  # (recipe, line, column) allowed a fix; None: all

    def suppressed(self, line: int) -> bool:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        match = SUPPRESSION.search(text)
        if not match:
            return False
        ids = match.group("ids")
        return ids is None or self.recipe.id in {i.strip() for i in ids.split(",")}


_current: contextvars.ContextVar[PassContext] = contextvars.ContextVar("tf_migrate_pass")


def node_range(node) -> Tuple[int, int, int, int]:
    """1-based (line, column, end_line, end_column) of a fissix node's code."""
    leaves = list(node.leaves()) if isinstance(node, Node) else [node]
    leaves = [leaf for leaf in leaves if leaf.value or leaf is leaves[0]] or leaves
    first, last = leaves[0], leaves[-1]
    text = last.value
    end_line = last.lineno + text.count("\n")
    end_col = (len(text) - text.rfind("\n") - 1) if "\n" in text else last.column + len(text)
    return first.lineno, first.column + 1, end_line, end_col + 1


def propose(node, message: str, *, safety: Optional[Safety] = None, fixable: bool = True) -> bool:
    """Record a finding at ``node``; True when the recipe should rewrite it now.

    ``safety`` overrides the recipe's default for this one finding (a recipe
    that is safe only when it can prove something passes ``"unsafe"`` when it
    cannot). ``fixable=False`` reports without offering a fix.
    """
    ctx = _current.get()
    line, col, end_line, end_col = node_range(node)
    if ctx.suppressed(line):
        return False
    safety = safety or ctx.recipe.safety
    apply = ctx.apply and fixable and (safety == "safe" or ctx.unsafe_fixes)
    apply = apply and (ctx.only is None or (ctx.recipe.id, line, col) in ctx.only)
    ctx.proposals.append(
        Proposal(ctx.recipe.id, line, col, end_line, end_col, message, safety, fixable, apply)
    )
    return apply


def option(name: str, default=None):
    """A per-run option for the running recipe (e.g. ``target_index``)."""
    return _current.get().options.get(name, default)


def running(ctx: PassContext):
    """Make ``ctx`` the context `propose` sees; returns the reset token."""
    return _current.set(ctx)


def stop_running(token) -> None:
    _current.reset(token)
