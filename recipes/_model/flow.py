"""Scopes, bindings and reaching definitions over a fissix tree.

One walk per scope records, for every NAME that is read, the bindings that
can reach it (loops run to a fixpoint, branches merge), and what each of the
scope's top-level statements changed. A question about a name at an
arbitrary statement (hoisting) finds the name's bindings at the entry of the
top-level statement holding it by binary search, then walks that one
statement for that one name (once; cached).

State is a ``ChainMap`` of key -> frozenset of bindings; a branch or a loop
body writes into its own child map, so a merge touches only the keys that
changed. Keys are names or dotted attribute paths (``self.buf``); a path
that was never bound falls back to its prefix (``self``).
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from collections import ChainMap
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from migrate.conventions import MUTATORS

from ._tree import literal_elements, split_arguments, statements, syms, token, unparen
from .imports import ImportRecord, import_bindings

EMPTY: FrozenSet = frozenset()

DYNAMIC_BUILTINS = frozenset({"locals", "globals", "vars", "eval", "exec", "getattr",
                              "hasattr", "setattr", "delattr"})
NOT_VARIABLES = frozenset({"True", "False", "None", "and", "or", "not", "in", "is", "if",
                            "else", "for", "lambda", "await", "yield", "async"})
_COMPREHENSIONS = (syms.comp_for,)
_COMPREHENSION_OWNERS = (syms.listmaker, syms.testlist_gexp, syms.dictsetmaker, syms.argument)
_PARAMETER_LISTS = (syms.typedargslist, syms.varargslist)


@dataclass(eq=False)
class Binding:
    """One place that binds ``name`` (a variable or a dotted attribute path).

    ``how``: assign, augassign, annassign, mutation, for, comprehension, with,
    walrus, import, param, def, class, except, del; ``many`` for MANY, which
    stands for too many bindings to list (node None). ``value`` is the expression
    bound to exactly this name when known; ``source`` + ``path`` locate it in
    an unpacked value (``for i, (x, y) in src`` binds ``y`` at path (1, 1)).
    """

    name: str
    node: object = field(repr=False)
    statement: object = field(repr=False)
    how: str
    value: object = field(default=None, repr=False)
    source: object = field(default=None, repr=False)
    path: Tuple[int, ...] = ()
    imported: Optional[str] = None
    annotation: object = field(default=None, repr=False)

    @property
    def line(self) -> int:
        return self.node.get_lineno() or 0 if self.node is not None else 0


MANY = Binding("*", None, None, "many")
_MANY_SET = frozenset((MANY,))
_MANY_LIMIT = 48


@dataclass(eq=False, repr=False)
class DynamicRead:
    """A call that reads names or attributes by a string: ``locals()``,
    ``getattr(obj, "name")``, ``model.get_layer("dense_1")``..."""

    node: object
    how: str
    name: Optional[str] = None


class Scope:
    """A module, function or class body and what its walk found."""

    def __init__(self, node, parent: Optional["Scope"]):
        self.node = node
        self.parent = parent
        self.kind = "module" if parent is None else "class" if node.type == syms.classdef else "function"
        self.by_name: Dict[str, List[Binding]] = {}
        self.globals: Set[str] = set()
        self.dynamic: List[DynamicRead] = []
        self.calls: List[Tuple[str, object]] = []
        self.returns: List[object] = []
        self.top: Dict[int, int] = {}
        self.changes: Dict[str, Tuple[List[int], List[FrozenSet]]] = {}
        self.tracked: Dict[Tuple[str, int], Dict[int, FrozenSet]] = {}
        self._paths: Optional[Set[str]] = None

    @property
    def body(self):
        return self.node if self.kind == "module" else self.node.children[-1]

    def binds(self, name: str) -> bool:
        return name in self.by_name and name not in self.globals

    def binds_path(self, path: str) -> bool:
        """Is the attribute path ``path`` (or a longer one) bound here?"""
        if self._paths is None:
            self._paths = set()
            for key in self.by_name:
                for prefix in _prefixes(key)[1:]:
                    self._paths.add(prefix)
        return path in self._paths


class Index:
    """What the walks of all scopes share: bindings made once per target
    (so loop passes reach a fixpoint), reads, scopes, imports."""

    def __init__(self):
        self.made: Dict[Tuple[int, str, str], Binding] = {}
        self.targets: Dict[int, Binding] = {}
        self.seen: Set[int] = set()
        self.reads: Dict[int, FrozenSet] = {}
        self.scopes: Dict[int, Scope] = {}
        self.read_names: Set[str] = set()
        self.imports: List[ImportRecord] = []
        self.withs: List[object] = []
        self.pending: List[Scope] = []


def union(first: FrozenSet, second: FrozenSet) -> FrozenSet:
    """Bindings that may reach, from either side. More than ``_MANY_LIMIT``
    (a name reused by thousands of loops of a long script) become MANY: a
    set that large answers no question, and keeping it would make the walk
    quadratic."""
    if first is second or not second:
        return first
    joined = first | second
    return joined if len(joined) <= _MANY_LIMIT and MANY not in joined else _MANY_SET


def lookup(state, key: str) -> FrozenSet:
    """``state[key]``, else the value of its longest bound prefix, else EMPTY."""
    maps = state.maps
    while True:
        for mapping in maps:
            if key in mapping:
                return mapping[key]
        dot = key.rfind(".")
        if dot < 0:
            return EMPTY
        key = key[:dot]


def _changed(branch, base) -> Set[str]:
    keys: Set[str] = set()
    for mapping in branch.maps[:len(branch.maps) - len(base.maps)]:
        keys.update(mapping)
    return keys


def attribute_path(children) -> Optional[str]:
    """``a.b.c`` for [NAME, .b, .c] children of a power node, else None."""
    first = children[0]
    if first.type != token.NAME:
        return None
    parts = [first.value]
    for trailer in children[1:]:
        if trailer.type != syms.trailer or trailer.children[0].type != token.DOT:
            return None
        parts.append(trailer.children[1].value)
    return ".".join(parts)


def string_literal(node) -> Optional[str]:
    if node.type != token.STRING:
        return None
    try:
        value = ast.literal_eval(node.value)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


class Walker:
    """Walks one scope. ``track`` None: every key, recording reads, nested
    scopes and calls into the index; else only those keys, recording each
    statement's entry state of ``track_key`` in ``self.at``."""

    def __init__(self, scope: Scope, index: Index, track_key: Optional[str] = None):
        self.scope = scope
        self.index = index
        self.eager = track_key is None
        self.track_key = track_key
        self.track = None if self.eager else _prefixes(track_key)
        self.at: Dict[int, FrozenSet] = {}
        self.loops: List[Tuple[object, list, list]] = []
        self.attribute_keys: Dict[str, Set[str]] = {}

    # ------------------------------------------------------------ bindings

    def make(self, name, node, statement, how, **fields) -> Binding:
        key = (id(node), name, how)
        binding = self.index.made.get(key)
        if binding is None:
            binding = self.index.made[key] = Binding(name, node, statement, how, **fields)
            self.scope.by_name.setdefault(name, []).append(binding)
            if how != "mutation":
                self.index.targets[id(node)] = binding
        return binding

    def bind(self, state, binding: Binding, kill: bool = True) -> None:
        key = binding.name
        if self.track is not None and key not in self.track:
            return
        if not kill:
            state[key] = union(lookup(state, key), frozenset((binding,)))
            return
        state[key] = frozenset((binding,))
        for longer in self.attribute_keys.get(key, ()):
            state[longer] = state[key]
        if "." in key:
            for prefix in _prefixes(key)[:-1]:
                self.attribute_keys.setdefault(prefix, set()).add(key)

    # ------------------------------------------------------------ scope

    def run(self) -> None:
        """Walk the whole scope, recording after each of its top-level
        statements the keys that statement changed (``Scope.changes``)."""
        state = ChainMap()
        node = self.scope.node
        if self.scope.kind == "function":
            self.parameters(node.children[2], node, state)
        changes = self.scope.changes
        for key, bindings in state.items():
            _record(changes, key, 0, bindings)
        for i, stmt in enumerate(statements(self.scope.body)):
            self.scope.top[id(stmt)] = i
            step = state.new_child()
            falls = self.statement(stmt, step)
            for key, bindings in step.maps[0].items():
                _record(changes, key, i + 1, bindings)
            state.update(step.maps[0])
            if not falls:
                break

    def run_one(self, stmt, entry: Dict[str, FrozenSet]) -> None:
        """Walk one top-level statement from a known entry state."""
        for key in entry:
            for prefix in _prefixes(key)[:-1]:
                self.attribute_keys.setdefault(prefix, set()).add(key)
        self.statement(stmt, ChainMap(dict(entry)))

    def parameters(self, parameters, owner, state) -> None:
        """Bind the parameters of a def (``parameters`` node) or a lambda (a
        varargslist or single NAME)."""
        node = parameters
        if node.type == syms.parameters:
            if len(node.children) == 2:
                return
            node = node.children[1]
        items = node.children if node.type in _PARAMETER_LISTS else [node]
        position = 0
        for i, item in enumerate(items):
            if i and items[i - 1].type == token.EQUAL:
                continue  # a default value, read in the enclosing scope
            name, annotation = (item, None) if item.type == token.NAME else \
                (item.children[0], item.children[2]) if item.type == syms.tname else (None, None)
            if name is None:
                continue
            default = items[i + 2] if i + 2 < len(items) and items[i + 1].type == token.EQUAL else None
            self.bind(state, self.make(name.value, name, owner, "param", value=default,
                                       annotation=annotation, path=(position,)))
            position += 1

    def first_visit(self, node) -> bool:
        """True the first time the eager walk meets ``node`` (loop bodies are
        walked until their bindings settle; facts are recorded once)."""
        if not self.eager or id(node) in self.index.seen:
            return False
        self.index.seen.add(id(node))
        return True

    def nested(self, node) -> None:
        if self.eager and id(node) not in self.index.scopes:
            scope = Scope(node, self.scope)
            self.index.scopes[id(node)] = scope
            self.index.pending.append(scope)

    # ------------------------------------------------------------ statements

    def block(self, block, state) -> bool:
        """Walk a block; False when it cannot fall through (return, raise,
        break, continue)."""
        for stmt in statements(block):
            if not self.statement(stmt, state):
                return False
        return True

    def statement(self, stmt, state) -> bool:
        if not self.eager:
            self.at[id(stmt)] = lookup(state, self.track_key)
        kind = stmt.type
        if kind == syms.simple_stmt:
            falls = True
            for small in stmt.children:
                falls = self.small(small, state) and falls
            return falls
        if kind == syms.if_stmt:
            return self.if_statement(stmt, state)
        if kind == syms.while_stmt:
            return self.loop(state, lambda head: self.expr(stmt.children[1], head),
                             stmt.children[3], stmt.children[6] if len(stmt.children) > 4 else None)
        if kind == syms.for_stmt:
            return self.for_statement(stmt, state)
        if kind == syms.try_stmt:
            return self.try_statement(stmt, state)
        if kind == syms.with_stmt:
            return self.with_statement(stmt, state)
        if kind in (syms.funcdef, syms.classdef):
            self.definition(stmt, state, stmt)
            return True
        if kind == syms.decorated:
            for decorator in stmt.children[:-1]:
                self.expr(decorator, state)
            return self.statement(stmt.children[-1], state)
        if kind in (syms.async_stmt, syms.async_funcdef):
            return self.statement(stmt.children[1], state)
        return self.small(stmt, state)

    def small(self, node, state) -> bool:
        kind = node.type
        if kind == token.NAME and node.value in ("return", "raise"):
            return False
        if kind == token.NAME and node.value in ("break", "continue"):
            self.jump(node.value, state)
            return False
        if kind == syms.expr_stmt:
            self.assignment(node, state)
        elif kind in (syms.return_stmt, syms.raise_stmt):
            for child in node.children[1:]:
                self.expr(child, state)
            if kind == syms.return_stmt and len(node.children) > 1 and self.first_visit(node):
                self.scope.returns.append(node.children[1])
            return False
        elif kind in (syms.import_name, syms.import_from):
            for record, leaf in import_bindings(node):
                self.bind(state, self.make(record.local, leaf, node, "import", imported=record.target))
                if self.first_visit(leaf):
                    self.index.imports.append(record)
        elif kind == syms.global_stmt:
            self.scope.globals.update(c.value for c in node.children[1:] if c.type == token.NAME)
        elif kind == syms.del_stmt:
            self.store(node.children[1], node, state, "del")
        elif kind not in (token.NEWLINE, token.SEMI):
            self.expr(node, state)
        return True

    def assignment(self, node, state) -> None:
        children = node.children
        second = children[1]
        if second.type == syms.annassign:
            self.expr(second.children[1], state)
            if len(second.children) > 3:
                self.expr(second.children[3], state)
                self.store(children[0], node, state, "annassign", value=second.children[3],
                           annotation=second.children[1])
            return
        if second.type != token.EQUAL:  # augmented: ``x += v`` reads x and v
            self.expr(children[2], state)
            self.expr(children[0], state)
            self.store(children[0], node, state, "augassign", value=node)
            return
        value = children[-1]
        self.expr(value, state)
        for target in children[:-1:2]:
            self.store(target, node, state, "assign", value=value, source=value)

    def store(self, target, statement, state, how, value=None, source=None, path=(),
              annotation=None) -> None:
        """Bind the names a target binds; subscript and attribute stores
        read their object and bind (or mutate) its dotted path."""
        kind = target.type
        if kind == token.NAME:
            self.bind(state, self.make(target.value, target, statement, how, value=value,
                                       source=source, path=path, annotation=annotation))
            return
        if kind == syms.star_expr:
            self.store(target.children[1], statement, state, how, source=source, path=path + (-1,))
            return
        elements = _elements(target)
        if elements is not None:
            values = _elements(value) if value is not None else None
            if values is not None and len(values) != len(elements):
                values = None
            for i, element in enumerate(elements):
                self.store(element, statement, state, how, value=values[i] if values else None,
                           source=source, path=path + (i,))
            return
        if kind == syms.power:
            children = target.children
            for child in children[:-1]:
                self.expr(child, state)
            last = children[-1]
            owner = attribute_path(children[:-1])
            if last.children[0].type == token.DOT:
                if owner is not None:
                    self.bind(state, self.make(f"{owner}.{last.children[1].value}", target,
                                               statement, how, value=value, source=source,
                                               path=path, annotation=annotation))
                return
            self.expr(last, state)
            if owner is not None:
                self.bind(state, self.make(owner, target, statement, "mutation", value=value),
                          kill=False)
            return
        self.expr(target, state)

    def definition(self, node, state, statement) -> None:
        """A def or class: what it evaluates here, the name it binds, and its
        body as a scope of its own."""
        if node.type == syms.funcdef:
            self._parameter_defaults(node.children[2], state)
            if node.children[3].type == token.RARROW:
                self.expr(node.children[4], state)
        elif len(node.children) > 4:
            self.expr(node.children[3], state)
        how = "def" if node.type == syms.funcdef else "class"
        name = node.children[1]
        self.bind(state, self.make(name.value, name, statement, how, value=node))
        self.nested(node)

    def _parameter_defaults(self, parameters, state) -> None:
        """Defaults and annotations are evaluated where the def runs."""
        if len(parameters.children) == 2:
            return
        inner = parameters.children[1]
        items = inner.children if inner.type in _PARAMETER_LISTS else [inner]
        for i, item in enumerate(items):
            if i and items[i - 1].type == token.EQUAL:
                self.expr(item, state)
            elif item.type == syms.tname:
                self.expr(item.children[2], state)

    def if_statement(self, stmt, state) -> bool:
        children, i, branches, has_else = stmt.children, 0, [], False
        while i < len(children):
            word = children[i].value
            if word in ("if", "elif"):
                self.expr(children[i + 1], state)
                suite, i = children[i + 3], i + 4
            else:
                suite, i, has_else = children[i + 2], i + 3, True
            branch = state.new_child()
            branches.append(branch if self.block(suite, branch) else None)
        if not has_else:
            branches.append(state)
        return self.merge(state, branches)

    def for_statement(self, stmt, state) -> bool:
        children = stmt.children
        target, iterable = children[1], children[3]
        self.expr(iterable, state)
        return self.loop(state, lambda head: self.store(target, stmt, head, "for", source=iterable),
                         children[5], children[8] if len(children) > 6 else None)

    def loop(self, state, header, body, orelse) -> bool:
        """A loop body's bindings reach its head again: iterate to a fixpoint."""
        carried: Dict[str, FrozenSet] = {}
        for _ in range(10):
            head = state.new_child()
            head.update(carried)
            frame = (head, [], [])
            self.loops.append(frame)
            inner = head.new_child()
            header(inner)
            falls = self.block(body, inner)
            self.loops.pop()
            grown = dict(carried)
            for end in ([inner] if falls else []) + frame[2]:
                for key in _changed(end, state):
                    grown[key] = union(grown.get(key, lookup(state, key)), lookup(end, key))
            if grown == carried:
                break
            carried = grown
        exits = frame[1]
        if orelse is not None:
            rest = head.new_child()
            exits = ([rest] if self.block(orelse, rest) else []) + exits
        else:
            exits = [head] + exits
        return self.merge(state, exits)

    def jump(self, word, state) -> None:
        if not self.loops:
            return
        head, breaks, continues = self.loops[-1]
        flat: Dict[str, FrozenSet] = {}
        for mapping in reversed(state.maps[:len(state.maps) - len(head.maps)]):
            flat.update(mapping)
        (breaks if word == "break" else continues).append(ChainMap(flat, *head.maps))

    def try_statement(self, stmt, state) -> bool:
        children = stmt.children
        body = state.new_child()
        body_falls = self.block(children[2], body)
        handler_entry = state.new_child()
        for key in _changed(body, state):
            handler_entry[key] = union(lookup(state, key), lookup(body, key))
        ends, i, final = [], 3, None
        while i < len(children):
            head = children[i]
            if head.type == syms.except_clause or head.value == "except":
                branch = handler_entry.new_child()
                if head.type == syms.except_clause:
                    self.except_clause(head, stmt, branch)
                ends.append(branch if self.block(children[i + 2], branch) else None)
            elif head.value == "else":
                if body_falls:
                    body_falls = self.block(children[i + 2], body)
            elif head.value == "finally":
                final = children[i + 2]
            i += 3
        ends.append(body if body_falls else None)
        falls = self.merge(state, ends)
        if final is not None:
            falls = self.block(final, state) and falls
        return falls

    def except_clause(self, clause, stmt, state) -> None:
        parts = clause.children
        if len(parts) > 1:
            self.expr(parts[1], state)
        if len(parts) == 4:
            self.store(parts[3], stmt, state, "except")

    def with_statement(self, stmt, state) -> bool:
        if self.first_visit(stmt):
            self.index.withs.append(stmt)
        for item in stmt.children[1:-2]:
            if item.type == syms.with_item:
                self.expr(item.children[0], state)
                self.store(item.children[2], stmt, state, "with", value=item.children[0],
                           source=item.children[0])
            elif item.type != token.COMMA:
                self.expr(item, state)
        return self.block(stmt.children[-1], state)

    def merge(self, state, branches) -> bool:
        live = [b for b in branches if b is not None]
        if not live:
            return False
        keys: Set[str] = set()
        for branch in live:
            if branch is not state:
                keys |= _changed(branch, state)
        for key in keys:
            merged = EMPTY
            for branch in live:
                merged = union(merged, lookup(branch, key))
            state[key] = merged
        return True

    # ------------------------------------------------------------ expressions

    def expr(self, node, state) -> None:
        """Reads, walrus bindings and calls of an expression, left to right.
        An explicit stack, not recursion: expressions nest thousands deep."""
        work = [node]  # nodes, and (power,) for its calls once its children are walked
        while work:
            node = work.pop()
            if node.__class__ is tuple:
                self.calls(node[0], state)
                continue
            kind = node.type
            if kind == token.NAME:
                self.read(node, state)
                continue
            if kind < 256:
                continue
            children = node.children
            if kind in _COMPREHENSION_OWNERS and len(children) > 1 and children[-1].type in _COMPREHENSIONS:
                self.comprehension([c for c in children[:-1] if c.type != token.COLON], children[-1], state)
            elif kind == syms.argument and len(children) == 3 and children[1].type == token.EQUAL:
                work.append(children[2])
            elif kind == syms.trailer and children[0].type == token.DOT:
                continue
            elif kind == syms.lambdef:
                self.lambda_(node, state)
            elif kind == syms.namedexpr_test:
                self.expr(children[2], state)
                self.store(children[0], node, state, "walrus", value=children[2])
            else:
                if kind == syms.power:
                    work.append((node,))
                work.extend(reversed(children))

    def lambda_(self, node, state) -> None:
        """Defaults read here; parameters bind in the lambda's own state."""
        children = node.children
        inner = state.new_child()
        if children[1].type != token.COLON:
            self._parameter_defaults_lambda(children[1], state)
            self.parameters(children[1], node, inner)
        self.expr(children[-1], inner)

    def _parameter_defaults_lambda(self, params, state) -> None:
        items = params.children if params.type in _PARAMETER_LISTS else [params]
        for i, item in enumerate(items):
            if i and items[i - 1].type == token.EQUAL:
                self.expr(item, state)

    def read(self, leaf, state) -> None:
        name = leaf.value
        if name in NOT_VARIABLES:
            return
        if self.eager:
            self.index.reads[id(leaf)] = lookup(state, name)
            self.index.read_names.add(name)

    def comprehension(self, elements, clause, state) -> None:
        """Targets bind in the comprehension's own scope; the first iterable
        is evaluated outside it."""
        inner = state.new_child()
        first = True
        while clause is not None:
            parts = clause.children
            if clause.type in _COMPREHENSIONS:
                at = next(i for i, p in enumerate(parts) if p.type == token.NAME and p.value == "for")
                self.expr(parts[at + 3], state if first else inner)
                self.store(parts[at + 1], clause, inner, "comprehension", source=parts[at + 3])
                first = False
                rest = parts[at + 4:]
            else:
                self.expr(parts[1], inner)
                rest = parts[2:]
            clause = rest[0] if rest else None
        for element in elements:
            self.expr(element, inner)

    def calls(self, node, state) -> None:
        """Calls that mutate their receiver (``buf.append(x)``), read names by
        a string (``locals()``, ``getattr(o, "n")``, ``m.get_layer("n")``), or
        may call a function of this module (``f(x)``, ``self.f(x)``)."""
        children = node.children
        for i in range(1, len(children)):
            call = children[i]
            if call.type != syms.trailer or call.children[0].type != token.LPAR:
                continue
            callee = attribute_path(children[:i])
            if callee is None:
                return
            owner, _, method = callee.rpartition(".")
            if owner and method in MUTATORS:
                self.bind(state, self.make(owner, node, statement_of(node), "mutation", value=node),
                          kill=False)
            if self.first_visit(node):
                self.scope.calls.append((callee, node))
                self.dynamic_read(callee, method, call, node)
            return

    def dynamic_read(self, callee, method, call, node) -> None:
        if callee in DYNAMIC_BUILTINS:
            args = split_arguments(call)[0]
            name = string_literal(args[1]) if len(args) > 1 and "attr" in callee else None
            self.scope.dynamic.append(DynamicRead(node, callee, name))
        elif method == "get_layer" and callee != method:
            args = split_arguments(call)[0]
            self.scope.dynamic.append(DynamicRead(node, "get_layer",
                                                  string_literal(args[0]) if args else None))


def _prefixes(key: str) -> Tuple[str, ...]:
    parts = key.split(".")
    return tuple(".".join(parts[:i]) for i in range(1, len(parts) + 1))


def _elements(node) -> Optional[List]:
    """Items of a tuple/list target or value (parenthesised or bare)."""
    if node is None:
        return None
    node = unparen(node)
    if node.type == syms.atom:
        return literal_elements(node)
    if node.type in (syms.exprlist, syms.testlist_star_expr, syms.testlist, syms.testlist_gexp):
        return [c for c in node.children if c.type != token.COMMA]
    return None


def statement_of(node):
    """The statement whose entry state answers questions about ``node``: the
    nearest ancestor that is a child of a block (or a one-line body)."""
    while node.parent is not None:
        parent = node.parent
        if parent.type in (syms.suite, syms.file_input):
            return node
        if node.type == syms.simple_stmt and parent.type not in (syms.suite, syms.file_input):
            return node
        node = parent
    return node


def build(root) -> Index:
    """Walk the module and every scope in it, once."""
    index = Index()
    module = Scope(root, None)
    index.scopes[id(root)] = module
    index.pending.append(module)
    while index.pending:
        Walker(index.pending.pop(), index).run()
    return index


def _record(changes, key: str, position: int, bindings: FrozenSet) -> None:
    positions, values = changes.setdefault(key, ([], []))
    positions.append(position)
    values.append(bindings)


def _own_entry(scope: Scope, key: str, position: int) -> Optional[FrozenSet]:
    """Bindings of exactly ``key`` before the ``position``-th top-level
    statement; None when it was never bound by then."""
    history = scope.changes.get(key)
    if not history:
        return None
    positions, bindings = history
    at = bisect_right(positions, position)
    return bindings[at - 1] if at else None


def track(scope: Scope, index: Index, key: str, node) -> Optional[FrozenSet]:
    """Bindings of ``key`` reaching the entry of ``node``'s statement: the
    top-level statement holding it is walked for this key alone, from its
    entry state, once."""
    stmt = statement_of(node)
    top = stmt
    while top is not None and id(top) not in scope.top:
        top = top.parent
    if top is None:
        return None
    position = scope.top[id(top)]
    found = scope.tracked.get((key, position))
    if found is None:
        seed = {p: _own_entry(scope, p, position) for p in _prefixes(key)}
        walker = Walker(scope, index, track_key=key)
        walker.run_one(top, {p: bindings for p, bindings in seed.items() if bindings is not None})
        found = scope.tracked[(key, position)] = walker.at
    return found.get(id(stmt))


__all__ = ["MANY", "Binding", "DynamicRead", "Scope", "Index", "build", "track", "statement_of",
           "attribute_path", "string_literal", "lookup", "EMPTY"]
