"""One traversal of one fissix tree by every enabled recipe.

All the recipes' Bowler queries are compiled into one BowlerTool (one fissix
RefactoringTool) whose fixers are matched by fissix's bottom matcher: one walk
over the leaves finds the candidate nodes of every pattern, then each fixer's
filters and modifiers run on its nodes, deepest first.

Every filter and modifier is wrapped so that:
- `propose` sees the recipe it belongs to (a PassContext per recipe);
- a recipe that raises is recorded as crashed and called no more (the
  engine re-runs the pass without it, since it may have half-mutated the tree);
- a recipe never analyses code that another recipe changed in the same pass:
  a node in a top-level statement another recipe has mutated is left for the
  next pass, which sees the re-parsed text (so every finding is made on real
  text with real line numbers, and follow-on findings can be told apart).
"""

from __future__ import annotations

import contextvars
import importlib
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from fissix import pygram, pytree
from fissix.pgen2 import token

from . import toplevel
from .recipe import PassContext, Recipe, running, stop_running

if TYPE_CHECKING:
    from bowler.tool import BowlerTool

    from .incremental import Context

GRAMMAR = pygram.python_grammar_no_print_and_exec_statement
_FILE_INPUT = pygram.python_symbols.file_input


@dataclass(eq=False, repr=False)
class Pass:
    """What one traversal of one tree records."""

    root: Optional[pytree.Node]  # None once the pass is over
    contexts: Dict[str, PassContext]
    spans: List[Tuple[pytree.Base, int]] = field(default_factory=list)  # top-level statements, first lines
    owners: Dict[int, str] = field(default_factory=dict)  # id(top-level statement) -> recipe id
    crashed: Dict[str, str] = field(default_factory=dict)  # recipe id -> error
    postponed: set = field(default_factory=set)  # recipes with a match left for the next pass
    modified: bool = False  # a modifier ran (the tree may have changed)
    called: set = field(default_factory=set)  # (callback, node) pairs already called
    within: Optional[Set[int]] = None  # ids of the top-level statements the restricted recipes visit
    everywhere: FrozenSet[str] = frozenset()  # recipes visiting every statement even so
    regrouped: bool = False  # a modifier added or removed a statement of a module part
    regrouper: Optional[str] = None  # the recipe whose modifiers added or removed a module statement, unclaimed
    known: Optional[Set[int]] = None  # ids of the spans' statements, once a modifier added or removed one

    def skips(self, recipe: str, top) -> bool:
        """Is ``top`` outside what ``recipe`` visits in this pass?"""
        return self.within is not None and recipe not in self.everywhere and id(top) not in self.within

    def strayed(self) -> bool:
        """Did a restricted pass change a top-level statement it was not to visit?"""
        return self.within is not None and (self.regrouped or not self.within.issuperset(self.owners))

    def proposals(self) -> List:
        """Recipe by recipe, each in the order of the text (the bottom
        matcher visits the deepest nodes first)."""
        return [p for ctx in self.contexts.values()
                for p in sorted(ctx.proposals, key=lambda p: (p.line, p.column))]


_WAS_CHANGED = attrgetter("was_changed")
_active: contextvars.ContextVar[Optional[Pass]] = contextvars.ContextVar("tf_migrate_traversal", default=None)
_tools: Dict[Tuple[str, ...], "BowlerTool"] = {}
_patterns: Dict[str, Tuple[pytree.BasePattern, object]] = {}  # PATTERN -> (pattern, pattern_tree)
_compiled: Dict[Recipe, list] = {}  # a recipe's fixer classes (each tool makes its own instances)
_shared: Dict[Tuple[str, ...], Tuple[FrozenSet[str], "BowlerTool"]] = {}  # enabled ids -> (ids held, tool)


def run(recipes: Sequence[Recipe], tree: pytree.Node, path: str, contexts: Dict[str, PassContext],
        within: Optional[Set[int]] = None, everywhere: FrozenSet[str] = frozenset(),
        context: Optional["Context"] = None, among: Optional[Sequence[Recipe]] = None) -> Pass:
    """Traverse ``tree`` once with every recipe of ``recipes`` (mutating it).
    ``within``, when given, holds the ids of the only top-level statements
    the recipes not named in ``everywhere`` visit (migrate/incremental.py).
    When every recipe is so restricted, only those statements are walked,
    and with ``context`` (top-level statements of ``tree`` holding them and
    their closure, migrate/toplevel.py, and what the others hold) the pass
    sees a module of those statements alone."""
    state = Pass(tree, contexts, spans(tree), within=within, everywhere=everywhere)
    token = _active.set(state)
    walks = any(_walked(recipe) for recipe in recipes)
    walked, part = _Statements(tree, tree.children, walks), None
    if within is not None and not everywhere.intersection(r.id for r in recipes):
        part = _Part(tree, context.children) if context is not None else None
        root = part.root if part is not None else tree
        walked = _Statements(root, [child for child in root.children if id(child) in within], walks)
    try:
        with toplevel.running(context.unseen if part is not None else toplevel.unseen()):
            shared_tool(recipes, among or recipes).refactor_tree(walked, path)
    finally:
        _active.reset(token)
        _claim_regrouped(state)
        if part is not None:
            state.regrouped = not part.restore()
        if state.modified:
            forget(tree)
    return state


class _Part:
    """Some top-level statements of a tree, for one pass the children of a
    module of their own (what the recipes' per-tree facts and the semantic
    model are built from), then given back to the tree."""

    def __init__(self, tree: pytree.Node, children: List[pytree.Base]):
        self.tree, self.children = tree, list(children)
        for child in self.children:
            child.parent = None
        self.root = pytree.Node(_FILE_INPUT, self.children)
        self.root.used_names = getattr(tree, "used_names", set())

    def restore(self) -> bool:
        """Give the statements back; False (the tree is then not to be used)
        when a modifier added, removed or replaced one of them."""
        same = len(self.root.children) == len(self.children) \
            and all(a is b for a, b in zip(self.root.children, self.children))
        for child in self.root.children:
            child.parent = self.tree if same else None
        self.root.children = []
        forget(self.root)
        return same


def forget(tree: pytree.Node) -> None:
    """Drop what recipes cached about a tree a modifier has mutated: the
    per-tree facts and the semantic model (recipes/_model), if present."""
    for module in ("recipes._fissix.cache", "recipes._model"):
        try:
            drop = importlib.import_module(module).forget
        except (ImportError, AttributeError):
            continue
        drop(tree)


def tool(recipes: Sequence[Recipe]) -> "BowlerTool":
    """The BowlerTool of these recipes, compiled once per process. Bowler is
    imported on first use: a run answered from the cache needs none."""
    key = tuple(r.id for r in recipes)
    found = _tools.get(key)
    if found is None:
        from bowler.tool import BowlerTool

        fixers = [fixer for recipe in recipes for fixer in _fixers(recipe)]
        found = BowlerTool(fixers, interactive=False, write=False, silent=True,
                           options={"print_function": True})
        found.driver.grammar = GRAMMAR
        # fissix fills a node-walk table with every node type even when no
        # fixer needs that walk: emptied, refactor_tree skips the walk and
        # the bottom matcher's pass over the leaves is the only traversal
        if not found.bmi_pre_order:
            found.bmi_pre_order_heads = {}
        if not found.bmi_post_order:
            found.bmi_post_order_heads = {}
        _tools[key] = found
    return found


def shared_tool(recipes: Sequence[Recipe], enabled: Sequence[Recipe]) -> "BowlerTool":
    """The tool that runs a pass of ``recipes`` (some of ``enabled``, in its
    order): one for every pass of a process with these ``enabled``,
    holding the recipes its passes ran so far, and widened to a new tool
    when a pass runs one it lacks. A tool costs as much as a pass of a
    small file, and a recipe outside the pass costs little: its fixers
    fail at once (``_matching``), and the bottom matcher reports each
    fixer's nodes whatever else it holds (tests/test_traversal.py)."""
    key = tuple(r.id for r in enabled)
    held, found = _shared.get(key, (frozenset(), None))
    if found is None or not held.issuperset(r.id for r in recipes):
        wanted = held.union(r.id for r in recipes)
        union = [r for r in enabled if r.id in wanted]
        held, found = _shared[key] = frozenset(wanted), tool(union)
    return found


def _compile_pattern(fixer) -> None:
    """``BaseFix.compile_pattern``, once per pattern text in a process (and
    unwrapped): every BowlerTool instantiates its fixers, one for each set
    of recipes a pass runs, and fissix's pattern compiler was most of the
    cost of a tool. Patterns and their trees are only read."""
    found = _patterns.get(fixer.PATTERN)
    if found is None:
        from fissix.patcomp import PatternCompiler

        pattern, tree = PatternCompiler().compile_pattern(fixer.PATTERN, with_tree=True)
        found = _patterns[fixer.PATTERN] = (_unwrapped(pattern), tree)
    fixer.pattern, fixer.pattern_tree = found


def _unwrapped(pattern: pytree.BasePattern) -> pytree.BasePattern:
    """The same pattern without the wildcards fissix's compiler wraps around
    each ``< ... >`` body (matched once, one alternative, unnamed): the body
    itself matches the same children with the same results, and a body
    without a repeat then matches child by child instead of through
    fissix's generator of every way a sequence can match (most of a pass's
    matching time)."""
    if isinstance(pattern, pytree.NodePattern) and pattern.content is not None:
        content = [_unwrapped(p) for p in pattern.content]
        only = content[0] if len(content) == 1 else None
        if isinstance(only, pytree.WildcardPattern) and only.min == only.max == 1 \
                and only.name is None and only.content is not None and len(only.content) == 1:
            content = list(only.content[0])
        return pytree.NodePattern(pattern.type, content, pattern.name)
    if isinstance(pattern, pytree.WildcardPattern) and pattern.content is not None:
        return pytree.WildcardPattern([[_unwrapped(p) for p in alternative] for alternative in pattern.content],
                                      pattern.min, pattern.max, pattern.name)
    return pattern


class _Statements:
    """Top-level statements of a tree, walked as fissix walks a tree (what
    ``refactor_tree`` asks of one): the same nodes in the same order,
    without the others; the walks the matchers take go by an explicit
    stack, not by fissix's generator per node (one resumption per level for
    every node yielded)."""

    def __init__(self, root: pytree.Node, children: List[pytree.Base], walks: bool):
        self.root, self.children, self.walks = root, children, walks
        self.used_names = getattr(root, "used_names", set())

    @property
    def was_changed(self) -> bool:
        return self.root.was_changed

    def pre_order(self):
        if not self.walks:
            return
        yield self.root
        for child in self.children:
            yield from child.pre_order()

    def post_order(self):
        """Each node after its children; as in fissix, a node's children are
        the list it had when the walk reached it."""
        if not self.walks:
            return
        stack = [(self.root, iter(self.children))]
        while stack:
            node, rest = stack[-1]
            child = next(rest, None)
            if child is None:
                stack.pop()
                yield node
            elif isinstance(child, pytree.Leaf):
                yield child
            else:
                stack.append((child, iter(child.children)))

    def leaves(self):
        stack = list(reversed(self.children))
        while stack:
            node = stack.pop()
            if isinstance(node, pytree.Leaf):
                yield node
            else:
                stack.extend(reversed(node.children))


def _fixers(recipe: Recipe) -> list:
    """The recipe's Bowler query compiled to fixer classes, its callbacks
    wrapped (see the module docstring), matched by the bottom matcher; once
    per recipe in a process."""
    found = _compiled.get(recipe)
    if found is None:
        found = _compiled[recipe] = _compile(recipe)
    return found


def _walked(recipe: Recipe) -> bool:
    """Does a pattern of ``recipe`` need fissix's node-by-node walk?"""
    return not all(fixer.BM_compatible for fixer in _fixers(recipe))


def _compile(recipe: Recipe) -> list:
    from bowler import Query

    query = recipe.query(Query())
    for transform in query.transforms:
        transform.filters[:] = [_guarded(recipe, f, filtering=True) for f in transform.filters]
        transform.callbacks[:] = [_guarded(recipe, c, filtering=False) for c in transform.callbacks]
    fixers = query.compile()
    for fixer in fixers:
        fixer.compile_pattern = _compile_pattern
        fixer.match = _matching(recipe.id, fixer.match)
        fixer.BM_compatible = _bottom_matchable(fixer)
    return fixers


def _matching(recipe: str, match: Callable) -> Callable:
    """The fixer's ``match``, which fails at once in a pass that does not
    run its recipe: one tool holds every enabled recipe's fixers."""
    def matching(fixer, node):
        state = _active.get()
        return (state is None or recipe in state.contexts) and match(fixer, node)

    return matching


def _bottom_matchable(fixer) -> bool:
    """Can fissix's bottom matcher find this pattern's nodes? It climbs from
    one leaf of the pattern chosen for being a name literal (``'watch'``);
    a path that starts at a bare ``NAME`` or an operator (``'='``) never
    matches, so such a pattern (suffix-mixup's ``name_N = ...``) is left
    to fissix's node-by-node traversal."""
    from fissix import btm_utils

    reduced = btm_utils.reduce_tree(fixer({"print_function": True}, []).pattern_tree)
    path = reduced.get_linear_subpattern() if reduced is not None else None
    return bool(path) and (isinstance(path[0], str) or path[0] not in (-1, token.NAME))


def spans(root: pytree.Node) -> List[Tuple[pytree.Base, int]]:
    """Each top-level statement with the line its text (prefix included) begins on."""
    found = []
    for child in root.children:
        first = child if isinstance(child, pytree.Leaf) else next(child.leaves())
        found.append((child, first.lineno - first.prefix.count("\n")))
    return found


def top_statement(node) -> pytree.Base:
    """The statement directly under the module that contains ``node``."""
    while node.parent is not None and node.parent.type != _FILE_INPUT:
        node = node.parent
    return node


def _guarded(recipe: Recipe, callback: Callable, filtering: bool) -> Callable:
    def call(node, capture, filename):
        state = _active.get()
        if recipe.id in state.crashed or (id(call), id(node)) in state.called:
            return False if filtering else None  # the bottom matcher may report a node twice
        state.called.add((id(call), id(node)))
        if state.regrouper not in (None, recipe.id):
            _claim_regrouped(state)
        top = top_statement(node)
        if state.owners.get(id(top), recipe.id) != recipe.id:
            state.postponed.add(recipe.id)
            return False if filtering else None
        if state.skips(recipe.id, top):
            return False if filtering else None
        root_size = len(state.root.children)
        context = state.contexts[recipe.id]
        made = len(context.proposals)
        token = running(context)
        try:
            return callback(node, capture, filename)
        except Exception as err:  # a recipe bug must not take the others down
            state.crashed[recipe.id] = f"{type(err).__name__}: {err}"
            return False if filtering else None
        finally:
            stop_running(token)
            if not filtering:
                state.modified = True
                if any(p.applied for p in context.proposals[made:]):
                    top.changed()  # a fix was applied here, even by `leaf.value = ...` alone
                _claim(state, recipe.id, top, root_size)

    return call


def _claim(state: Pass, recipe: str, top, root_size: int) -> None:
    """Record the top-level statements ``recipe``'s modifier changed, removed or added."""
    if top.was_changed or top.parent is None:
        state.owners.setdefault(id(top), recipe)
    if len(state.root.children) != root_size:  # statements added or removed at module level
        state.regrouper = recipe  # the module's statements are looked at once its turn ends


def _claim_regrouped(state: Pass) -> None:
    """The module's changed and new statements belong to the recipe whose
    modifiers last added or removed one, if no other has them: looked at
    when another recipe's callback comes or the pass ends, not after each
    modifier (a scan of every statement per fix made a module of many
    fixed statements quadratic)."""
    recipe, state.regrouper = state.regrouper, None
    if recipe is None:
        return
    if state.known is None:
        state.known = {id(node) for node, _ in state.spans}
    children = state.root.children
    fresh = set(map(id, compress(children, map(_WAS_CHANGED, children))))
    fresh.update(set(map(id, children)).difference(state.known))
    for key in fresh.difference(state.owners):
        state.owners[key] = recipe
