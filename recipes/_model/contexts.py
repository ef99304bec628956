"""Where gradients are recorded: Keras ``call``/``train_step``, tape bodies,
``tf.function``s, and the module functions any of them call (transitively,
by name). Code that follows a closed tape in the same scope is told apart,
so NumPy work on finished gradients is not mistaken for a gradient cut.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from ._tree import split_arguments, syms, token
from .flow import attribute_path

if TYPE_CHECKING:
    from . import Model

_STEPS = {"train_step", "test_step"}


@dataclass(eq=False)
class Tape:
    """``with <...>.GradientTape(...) as name:``; ``body`` is its suite."""

    statement: object
    name: Optional[str]
    body: object
    scope: object

    @cached_property
    def end_line(self) -> int:
        return _last_line(self.statement)


@dataclass(frozen=True, eq=False)
class Context:
    """``how``: keras_call, train_step, tape, tape_callee, tf_function or
    compiled_loss (a loss or metric handed to ``compile``);
    ``owner``: the funcdef, or the Tape."""

    how: str
    owner: object


class Contexts:
    """The module's tapes and the functions that run in a gradient context,
    found once; questions about a node climb its ancestors only."""

    def __init__(self, model: "Model"):
        self.model = model
        self.tapes = self._tapes()
        self._tape_statements = {}
        self._closing: Dict[int, Tuple[List[int], List[Tape]]] = {}
        for tape in self.tapes:
            self._tape_statements.setdefault(id(tape.statement), tape)
            ends, tapes = self._closing.setdefault(id(tape.scope), ([], []))
            ends.append(tape.end_line)
            tapes.append(tape)
        for ends, tapes in self._closing.values():
            order = sorted(range(len(ends)), key=ends.__getitem__)
            ends[:], tapes[:] = [ends[i] for i in order], [tapes[i] for i in order]
        self.functions: Dict[int, str] = {}
        self._roots()
        self._callees()

    def _tapes(self) -> List[Tape]:
        found = []
        for stmt in self.model.index.withs:
            for item in stmt.children[1:-2]:
                expr = item.children[0] if item.type == syms.with_item else item
                callee = _callee(expr)
                if callee is None or not (self.model.qualified_children(callee) or
                                          attribute_path(callee) or "").endswith("GradientTape"):
                    continue
                name = item.children[2].value if item.type == syms.with_item and \
                    item.children[2].type == token.NAME else None
                found.append(Tape(stmt, name, stmt.children[-1], self.model.scope_of(stmt)))
        return found

    def _roots(self) -> None:
        model = self.model
        for scope in model.index.scopes.values():
            for callee, call in scope.calls:
                self._wrapped(callee, call)
                self._handed_to_compile(callee, call)
            node = scope.node
            if node.type != syms.funcdef:
                continue
            cls = model.method_class(node)
            role = model.keras_role(cls) if cls is not None else None
            name = node.children[1].value
            if role and name == "call":
                self.functions[id(node)] = "keras_call"
            elif role == "model" and name in _STEPS:
                self.functions[id(node)] = "train_step"
            elif any(model.qualified(d) == "tensorflow.function" for d in _decorators(node)):
                self.functions[id(node)] = "tf_function"

    def _wrapped(self, callee: str, call) -> None:
        """``tf.function(fn)`` makes ``fn`` a tf.function."""
        if not callee.endswith("function"):
            return
        head = call.children[:callee.count(".") + 1]
        if self.model.qualified_children(head) != "tensorflow.function":
            return
        args = split_arguments(call.children[len(head)])[0]
        for function in self.model.functions_called(args[0]) if args else ():
            self.functions.setdefault(id(function), "tf_function")

    def _handed_to_compile(self, callee: str, call) -> None:
        """``model.compile(loss=fn, metrics=[fn])``: Keras runs ``fn`` in its
        train step, on the tape."""
        if not callee.endswith(".compile"):
            return
        keywords = split_arguments(call.children[callee.count(".") + 1])[1]
        for key in ("loss", "metrics"):
            value = keywords.get(key)
            if value is None:
                continue
            items = [value]
            if value.type == syms.atom and len(value.children) == 3:  # [fn, ...], (fn, ...)
                inner = value.children[1]
                items = inner.children if inner.type in (syms.listmaker, syms.testlist_gexp) else [inner]
            for item in items:
                if item.type == token.NAME:
                    for function in self.model.functions_called(item):
                        self.functions.setdefault(id(function), "compiled_loss")

    def _callees(self) -> None:
        """Everything called by name from a context (or from a function
        nested in one) is in a context."""
        model = self.model
        nested: Dict[int, List] = {}
        for scope in model.index.scopes.values():
            if scope.parent is not None and scope.kind == "function":
                nested.setdefault(id(scope.parent), []).append(scope)
        pending = [model.index.scopes[i] for i in list(self.functions)]
        pending += [scope for scope in {id(t.scope): t.scope for t in self.tapes}.values()]
        whole = {id(scope) for scope in pending if id(scope.node) in self.functions}
        while pending:
            scope = pending.pop()
            for _, call in scope.calls:
                if id(scope) not in whole and self.tape_of(call) is None:
                    continue
                for function in model.functions_called(call):
                    if id(function) not in self.functions:
                        self.functions[id(function)] = "tape_callee"
                        callee = model.index.scopes[id(function)]
                        whole.add(id(callee))
                        pending.append(callee)
            for inner in nested.get(id(scope), ()):
                if id(inner) not in whole and (id(scope) in whole or self.tape_of(inner.node)):
                    whole.add(id(inner))
                    pending.append(inner)

    def context(self, node) -> Optional[Context]:
        child, parent = node, node.parent
        while parent is not None:
            if parent.type == syms.with_stmt and child is parent.children[-1] \
                    and id(parent) in self._tape_statements:
                return Context("tape", self._tape_statements[id(parent)])
            if parent.type == syms.funcdef and id(parent) in self.functions:
                return Context(self.functions[id(parent)], parent)
            child, parent = parent, parent.parent
        return None

    def tape_of(self, node) -> Optional[Tape]:
        child, parent = node, node.parent
        while parent is not None:
            if parent.type == syms.with_stmt and child is parent.children[-1] \
                    and id(parent) in self._tape_statements:
                return self._tape_statements[id(parent)]
            child, parent = parent, parent.parent
        return None

    def after_tape(self, node) -> Optional[Tape]:
        """The last tape of ``node``'s scope whose block ends before ``node``."""
        if self.tape_of(node) is not None:
            return None
        ends, tapes = self._closing.get(id(self.model.scope_of(node)), ((), ()))
        before = bisect_left(ends, node.get_lineno() or 0)
        return tapes[before - 1] if before else None


def _decorators(funcdef) -> List:
    parent = funcdef.parent
    if parent is None or parent.type != syms.decorated:
        return []
    first = parent.children[0]
    decorators = first.children if first.type == syms.decorators else [first]
    return [decorator.children[1] for decorator in decorators]


def _callee(expr):
    """The callee children of ``a.b.C(...)``; None when not a call."""
    if expr.type != syms.power or expr.children[-1].type != syms.trailer \
            or expr.children[-1].children[0].type != token.LPAR:
        return None
    return expr.children[:-1]


def _last_line(node) -> int:
    for leaf in reversed(list(node.leaves())):
        if leaf.type not in (token.DEDENT, token.INDENT):
            return leaf.lineno
    return 0
