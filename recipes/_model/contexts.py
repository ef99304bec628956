"""Where gradients are recorded: Keras ``call``/``train_step``, tape bodies,
``tf.function``s, loss and metric functions handed to a Keras model's
``compile``, and the module functions any of them call (transitively, by
name). Code that follows a closed tape in the same scope is told apart,
so NumPy work on finished gradients is not mistaken for a gradient cut.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Dict, List, Optional, Set, Tuple

from ._tree import (call_args, call_parts, index_of, literal_elements, split_arguments, statements, syms,
                    token)
from .flow import attribute_path
from .values import Kind

if TYPE_CHECKING:
    from . import Model

_STEPS = {"train_step", "test_step"}
_COMPILED = ("loss", "metrics", "weighted_metrics")  # compile's keywords naming functions


@dataclass(eq=False)
class Tape:
    """``with <...>.GradientTape(...) as name:``; ``body`` is its suite."""

    statement: object
    name: Optional[str]
    body: object
    scope: object
    model: "Model" = field(repr=False)

    @cached_property
    def end_line(self) -> int:
        return last_line(self.statement)

    def watch_arguments(self) -> List:
        """Expressions passed to ``name.watch`` in the body (lists flattened)."""
        found = []
        for node in self.body.pre_order():
            call = call_parts(node)
            args = call_args(node.children[-1]) if call else []
            if not call or call[0] != f"{self.name}.watch" or len(args) != 1:
                continue
            elements = literal_elements(args[0])
            found.extend(elements if elements is not None else args)
        return found

    def later_statements(self, names) -> List:
        """Statements after the ``with`` in its block, up to one that rebinds
        the tape or any of ``names``."""
        siblings = statements(self.statement.parent)
        later = []
        for stmt in siblings[index_of(siblings, self.statement) + 1:]:
            bound = self.model.names_bound_in(stmt)
            if self.name in bound or bound & names:
                break
            later.append(stmt)
        return later


@dataclass(eq=False, repr=False)
class Context:
    """``how``: keras_call, train_step, tape, tape_callee, tf_function or
    compiled (a loss or metric of ``compile``: Keras traces it in its train
    step, the loss under its tape); ``owner``: the funcdef, or the Tape."""

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
        self.compiled_losses: Set[int] = set()  # funcdefs handed to compile as losses (metrics are not differentiated)
        self._roots()
        self._callees()

    def _tapes(self) -> List[Tape]:
        found = []
        for stmt in self.model.index.withs:
            for item in stmt.children[1:-2]:
                expr = item.children[0] if item.type == syms.with_item else item
                callee = _callee(expr)
                if callee is None or not names_a_tape(self.model.qualified_children(callee)) \
                        and not names_a_tape(attribute_path(callee)):
                    continue
                name = item.children[2].value if item.type == syms.with_item and \
                    item.children[2].type == token.NAME else None
                found.append(Tape(stmt, name, stmt.children[-1], self.model.scope_of(stmt), self.model))
        return found

    def _roots(self) -> None:
        model = self.model
        for scope in model.index.scopes.values():
            for callee, call in scope.calls:
                self._wrapped(callee, call)
                self._compiled(callee, call)
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

    def _compiled(self, callee: str, call) -> None:
        """``model.compile(optimizer, loss, metrics, loss=..., metrics=...)``
        on a Keras model (a name the model knows as one, or ``self`` in a
        Model subclass) makes its loss and metric functions compiled."""
        receiver, _, method = callee.rpartition(".")
        if method != "compile" or "." in receiver or not receiver:
            return
        model = self.model
        head = call.children[0]
        if receiver == "self":
            function = model.scope_of(call).node
            cls = model.method_class(function) if function.type == syms.funcdef else None
            if cls is None or model.keras_role(cls) != "model":
                return
        elif model.kind_of(head).kind != Kind.MODEL:
            return
        positional, keywords = split_arguments(call.children[2])
        given = positional[1:3] + [keywords[k] for k in _COMPILED if k in keywords]
        losses = {id(e) for e in positional[1:2] + [keywords[k] for k in ("loss",) if k in keywords]}
        for expr in given:
            elements = literal_elements(expr)
            for element in elements if elements is not None else [expr]:
                for function in model.functions_called(element):
                    self.functions.setdefault(id(function), "compiled")
                    if id(expr) in losses:
                        self.compiled_losses.add(id(function))

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


def names_a_tape(path: Optional[str]) -> bool:
    """Does a callee's path (as spelled, or canonical) construct a tape
    (``GradientTape``, ``ForwardGradientTape``, an import of either)?"""
    return (path or "").endswith("GradientTape")


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


def last_line(node) -> int:
    """The line of the last token of ``node``."""
    for leaf in reversed(list(node.leaves())):
        if leaf.type not in (token.DEDENT, token.INDENT):
            return leaf.lineno
    return 0
