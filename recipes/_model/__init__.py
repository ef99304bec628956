"""The semantic model of one module (a file, or a notebook's cells joined in
order), shared by every recipe: imports, the kind of each expression,
reaching definitions, dynamic readers and gradient contexts.

    m = model_of(node)   # any node of the tree; built on first use, cached on the root
    forget(root)         # once after a round of modifiers changed the tree

Questions (each answered from indices built by one walk, or computed once
and memoized):
- imports: ``m.qualified(expr)``, ``m.callee(call)`` -> canonical names
  (``"tensorflow.shape"``, ``"keras.layers.Dense"``, ``"numpy.zeros"``);
  ``m.imports`` (aliases, presumed conventional aliases of a pasted snippet);
  ``m.presumed(name)``: a snippet's unbound ``tape`` / ``model`` by its uses;
- kinds: ``m.kind_of(expr)``, ``m.iter_kind(expr)``, ``m.receiver_kind(power, end)`` -> ``Value`` (``Kind``,
  element, items, output ``width`` of models and layers built here, origin);
  ``m.may_hold_a_tensor(expr)``: the kind, else computed from a tensor;
- data flow: ``m.reaching(name_or_attr, at)``, ``m.last_assignment(...)``,
  ``m.assignments(function_or_module)`` (name -> values of ``name = value``),
  ``m.names_bound_in(statement)``,
  ``m.assigned_value(...)``,
  ``m.same_value_at(expr, at, origin)``, ``m.hoist_above(expr, origin)``,
  ``m.dynamic_readers(node)``, ``m.may_be_read_dynamically(name, node)``,
  ``m.layer_names_read()``;
- gradient contexts: ``m.gradient_context(node)`` (keras_call, train_step,
  tape, tape_callee, tf_function), ``m.tapes``, ``m.tape_of(node)``,
  ``m.tape_named(name, at)``, ``m.after_tape(node)``; a Tape gives its
  ``watch_arguments()`` and ``later_statements(names)``;
- differentiated targets (differentiation.py): ``m.differentiation.walk(target)``
  -> ``Slice`` (live, cut ops, assigns read on the way, reads);
- gradient data flow (gradients.py): ``m.gradient_flow`` -> ``of(expr)``
  (``Flow``: origins, the origins a gradient is taken with respect to),
  ``of_bindings(bindings)``, ``difference_input(expr)`` (``x`` of ``x - baseline``);
- what a gradient sees (recording.py): ``Sources.of(m, expr)`` (the variables
  differentiated), ``feeders(m, expr)`` (the assignments reaching it),
  ``effects(m, expr)`` (why running it elsewhere may differ); whether uses of
  a value need a NumPy array (uses.py: ``numpy_reliance``).
A node the walk never saw (made by a modifier after the build) is UNKNOWN
and never an error.
"""

from __future__ import annotations

import functools
import gc
from bisect import bisect_left, bisect_right
from typing import Dict, FrozenSet, List, Optional, Set

from migrate.toplevel import unseen

from . import flow
from ._tree import split_arguments, syms, token
from .contexts import Context, Contexts, Tape, last_line
from .differentiation import Differentiation
from .flow import MANY, NOT_VARIABLES, Binding, DynamicRead, Scope, attribute_path, statement_of
from .gradients import Flow, GradientFlow
from .imports import build_imports, canonical
from .kinds import Kinds
from .presumed import presumed_values
from .tensor_sources import TensorSources
from .values import UNKNOWN, Kind, Value

__all__ = ["MANY", "Binding", "Context", "DynamicRead", "Flow", "Kind", "Model", "Tape", "Value", "forget",
           "model_of"]

_FACTS, _KEY = "_tf_migrate_facts", "semantic model"
_LOCALS_READERS = {"locals", "vars", "eval", "exec"}
_LOCAL_TO_EXPRESSIONS = {"comprehension", "walrus", "param"}  # bound inside one statement
_NOT_BOUND_HERE = {"mutation", "del", "comprehension", "param", "many"}  # names_bound_in leaves them out


def _guarded(default):
    """Answer ``default`` (the answer that promises nothing) when a question
    about very deeply nested code exhausts Python's recursion (fissix's own
    tree walks recurse); only the outermost question catches it, so inner
    answers are never replaced by a default."""
    def wrap(method):
        @functools.wraps(method)
        def answer(self, *args):
            if self._answering:
                return method(self, *args)
            self._answering = True
            try:
                return method(self, *args)
            except RecursionError:
                return default() if callable(default) else default
            finally:
                self._answering = False
        return answer
    return wrap


def _without_gc_pauses(build, root):
    """``build(root)`` with the cycle collector paused: the walk allocates many
    small live objects, and each collection it would trigger traverses the
    whole (live) tree; paused, a build takes less than half the time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return build(root)
    finally:
        if enabled:
            gc.enable()


def _root(node):
    while node.parent is not None:
        node = node.parent
    return node


def _name_leaves(root) -> Dict[str, List]:
    """Every NAME leaf under ``root`` by its text, in the order of
    ``root.leaves()`` (walked without its recursive generators)."""
    found: Dict[str, List] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.children:
            stack.extend(reversed(node.children))
        elif node.type == token.NAME:
            found.setdefault(node.value, []).append(node)
    return found


def model_of(node) -> "Model":
    """The model of the module ``node`` belongs to (built once per tree).

    Kept among the tree's per-tree facts (the root's ``_tf_migrate_facts``,
    the convention of the engine's per-tree cache), so dropping those facts
    after a pass mutated the tree drops the model too."""
    facts = _root(node).__dict__.setdefault(_FACTS, {})
    model = facts.get(_KEY)
    if model is None:
        model = facts[_KEY] = Model(_root(node))
    return model


def forget(node) -> None:
    """Drop the model of ``node``'s tree; the next ``model_of`` rebuilds it."""
    _root(node).__dict__.get(_FACTS, {}).pop(_KEY, None)


class Model:
    """Everything the recipes ask about one module; get it with ``model_of``."""

    def __init__(self, root):
        self.root = root
        self.index = _without_gc_pauses(flow.build, root)
        bound = {name for scope in self.index.scopes.values() for name in scope.by_name}
        self.imports = build_imports(self.index.imports, self.index.read_names - bound)
        self._unbound = self.index.read_names - bound - self.imports.presumed
        self._presumed: Optional[Dict[str, Value]] = None
        self._kinds = Kinds(self)
        self._likely: Optional[Kinds] = None
        self._tensor_sources: Optional[TensorSources] = None
        self._call_sites: Dict[int, Optional[List]] = {}
        self._name_leaves: Optional[Dict[str, List]] = None
        self._contexts: Optional[Contexts] = None
        self._by_line: Dict[int, tuple] = {}
        self._reached: Dict[tuple, tuple] = {}  # (key, id(at)) -> (at, reaching bindings)
        self._qualified: Dict[tuple, tuple] = {}  # (id(head), path) -> (head, canonical name)
        self._attributes: Dict[int, Dict[str, List[Binding]]] = {}
        self._reader_summary: Optional[_Readers] = None
        self._gradient_flow: Optional[GradientFlow] = None
        self._differentiation: Optional[Differentiation] = None
        self._answering = False

    # ------------------------------------------------------------ names and imports

    @_guarded(None)
    def qualified(self, expr) -> Optional[str]:
        """Canonical dotted name of ``tf.keras.layers.Dense``, ``layers.Dense``,
        ``np.zeros``, ``Dense``... when its first name is an import (or a
        presumed conventional alias); else None."""
        if expr.type == token.NAME:
            return self.qualified_children([expr])
        if expr.type == syms.dotted_name:
            return self._qualified_path(expr.children[0], "".join(l.value for l in expr.leaves()))
        if expr.type == syms.power:
            return self.qualified_children(expr.children)
        return None

    @_guarded(None)
    def callee(self, call) -> Optional[str]:
        """Canonical name of what a call node calls (``tf.compat.v2.zeros(3)``
        -> ``"tensorflow.zeros"``); None when not a call of an imported name."""
        if call.type != syms.power:
            return None
        for i, trailer in enumerate(call.children[1:], 1):
            if trailer.type == syms.trailer and trailer.children[0].type == token.LPAR:
                return self.qualified_children(call.children[:i])
        return None

    def qualified_children(self, children) -> Optional[str]:
        """``qualified`` for the first children of a power node (a callee)."""
        path = attribute_path(children)
        return self._qualified_path(children[0], path) if path is not None else None

    def _qualified_path(self, head, path: str) -> Optional[str]:
        if self.root.was_changed:  # a modifier changed the tree: asked of the tree as it is now
            return self._qualify(head, path)
        found = self._qualified.get((id(head), path))
        if found is None:  # ``head`` is kept with its answer, so its id is not reused
            found = self._qualified[(id(head), path)] = (head, self._qualify(head, path))
        return found[1]

    def _qualify(self, head, path: str) -> Optional[str]:
        # a call named like a mutator on a module (``tf.fill(...)``) does not rebind it
        bindings = [b for b in self.reaching(head.value, head) if b.how != "mutation"]
        if not bindings and head.value not in self.imports.presumed:
            bindings = [b for b in self._free(head.value, self.scope_of(head)) if b.how != "mutation"]
        if bindings:
            targets = {b.imported for b in bindings}
            if len(targets) != 1 or any(b.how != "import" for b in bindings) or None in targets:
                return None
            target = targets.pop()
        elif head.value in self.imports.presumed:
            target = self.imports.module_of(head.value)
        else:
            return None
        return canonical(target + path[len(head.value):])

    # ------------------------------------------------------------ scopes and data flow

    def scope_of(self, node) -> Scope:
        """The function, class body or module whose names ``node`` reads."""
        child, parent = node, node.parent
        while parent is not None:
            if parent.type in (syms.funcdef, syms.classdef) and child is parent.children[-1] \
                    or parent.type == syms.funcdef and child is parent.children[2]:
                found = self.index.scopes.get(id(parent))
                if found is not None:
                    return found
            child, parent = parent, parent.parent
        return self.index.scopes[id(self.root)]

    def assignments(self, scope) -> Dict[str, List]:
        """name -> the values of every plain ``name = value`` of the function
        or module ``scope`` (nested scopes left out), in source order."""
        found: Dict[str, List] = {}
        walked = self.index.scopes.get(id(scope))
        for name, bindings in (walked.by_name.items() if walked is not None else ()):
            values = [b.value for b in bindings if b.how == "assign" and b.value is not None
                      and b.node.parent.type == syms.expr_stmt and len(b.node.parent.children) == 3
                      and b.node.parent.children[0] is b.node]
            if values and "." not in name:
                found[name] = sorted(values, key=_first_position)
        return found

    def names_bound_in(self, stmt) -> Set[str]:
        """The names ``stmt`` binds in its own scope: assignments (augmented,
        annotated, walrus), ``for``/``with``/``except`` targets, imports,
        ``def``/``class`` (not the names of the scopes it opens)."""
        scope = self.scope_of(stmt)
        lines, bindings = self._bindings_by_line(scope)
        first = next(stmt.leaves()).lineno
        return {b.name for b in bindings[bisect_left(lines, first):bisect_right(lines, last_line(stmt))]
                if b.how not in _NOT_BOUND_HERE and "." not in b.name and _within(b.node, stmt)}

    def _bindings_by_line(self, scope: Scope):
        found = self._by_line.get(id(scope))
        if found is None:
            ordered = sorted((b for bindings in scope.by_name.values() for b in bindings if b.node is not None),
                             key=lambda b: b.line)
            found = self._by_line[id(scope)] = ([b.line for b in ordered], ordered)
        return found

    @_guarded(list)
    def reaching(self, key: str, at) -> List[Binding]:
        """Bindings of a name or dotted attribute path that can reach ``at``
        (the NAME leaf that reads it, or any node: its statement's entry)."""
        if self.root.was_changed:  # a modifier changed the tree: asked of the tree as it is now
            return self._reaching(key, at)
        found = self._reached.get((key, id(at)))
        if found is None:  # ``at`` is kept with its answer, so its id is not reused
            found = self._reached[(key, id(at))] = (at, self._reaching(key, at))
        return list(found[1])

    def _reaching(self, key: str, at) -> List[Binding]:
        recorded = self.index.reads.get(id(at)) if at.type == token.NAME and at.value == key else None
        scope = self.scope_of(at)
        root = key.partition(".")[0]
        if recorded is None and "." not in key:
            recorded = self._read_at_entry(statement_of(at), key)
        if recorded is None and scope.binds(root):
            recorded = flow.track(scope, self.index, key, at)
            if recorded is None:
                recorded = frozenset(scope.by_name.get(key, ()))
        if not recorded and not scope.binds(root):
            recorded = self._free(key, scope)
        return sorted(recorded or (), key=_position)

    def _read_at_entry(self, stmt, name: str):
        """What a read of ``name`` in a one-statement line saw: the entry
        state of that statement (reads run before its own bindings), unless
        the read sees a binding made inside the statement (a comprehension,
        a walrus, a lambda)."""
        if stmt.type != syms.simple_stmt or len(stmt.children) != 2:
            return None
        for leaf in stmt.leaves():
            bindings = self.index.reads.get(id(leaf)) if leaf.value == name else None
            if bindings is not None and not any(b.how in _LOCAL_TO_EXPRESSIONS and _within(b.node, stmt)
                                                for b in bindings):
                return bindings
        return None

    def _free(self, key: str, scope: Scope):
        """A name a scope reads but does not bind: any binding of the scope
        that provides it (function bodies run later, so all of them)."""
        root = key.partition(".")[0]
        outer = self.index.scopes[id(self.root)] if root in scope.globals else scope.parent
        while outer is not None:
            if outer.kind != "class" and outer.binds(root):
                return outer.by_name.get(key) or outer.by_name.get(root, ())
            outer = outer.parent
        return ()

    @_guarded(None)
    def last_assignment(self, key: str, at) -> Optional[Binding]:
        """The one binding of ``key`` that reaches ``at``; None when there is
        none or there are several (branches, loops, mutations)."""
        found = self.reaching(key, at)
        return found[0] if len(found) == 1 and found[0] is not MANY else None

    @_guarded(None)
    def assigned_value(self, key: str, at):
        """The expression assigned by the one binding of ``key`` that reaches
        ``at`` (an element of a literal tuple for an unpacking); None when
        none or several reach, or it is no assignment (a parameter, a loop
        target, an import, a mutation...)."""
        binding = self.last_assignment(key, at)
        return binding.value if binding is not None and binding.how in ("assign", "annassign") else None

    @_guarded(False)
    def same_value_at(self, expr, at, origin) -> bool:
        """Can ``expr`` (found at ``origin``) be evaluated at the entry of
        ``at``'s statement (one that holds ``origin`` or comes before it in
        an enclosing block) with the same value as at ``origin``? Only when no
        binding (assignment, mutation, loop target) of a name or attribute
        path it reads that reaches ``origin`` lies in between: inside ``at``
        or in the statements from ``at`` down to ``origin``. Data flow only:
        whether calls inside ``expr`` have side effects is the recipe's
        concern."""
        scope = self.scope_of(origin)
        if self.scope_of(at) is not scope:
            return False
        between = _between(statement_of(at), origin)
        if between is None:
            return False
        for key, where in _inputs(expr, self.index.reads, statement_of(origin)):
            if "." in key and not scope.binds_path(key):
                continue  # never bound itself: its first name's bindings decide
            for binding in self.reaching(key, where):
                if binding is MANY:
                    return False
                node = binding.node
                while node is not None and node is not scope.node:
                    if id(node) in between:
                        return False
                    node = node.parent
        return True

    @_guarded(None)
    def hoist_above(self, expr, origin):
        """The outermost loop around ``origin`` (in its scope) above which
        ``expr`` has the same value at every iteration; None when not even
        the innermost loop qualifies."""
        found, node = None, origin.parent
        scope = self.scope_of(origin)
        while node is not None and node is not scope.node:
            if node.type in (syms.for_stmt, syms.while_stmt):
                if not self.same_value_at(expr, node, origin):
                    break
                found = node
            node = node.parent
        return found

    def dynamic_readers(self, node) -> List[DynamicRead]:
        """Calls in ``node``'s scope (or the scope ``node`` is) that read
        names or attributes through strings."""
        scope = self.index.scopes.get(id(node)) or self.scope_of(node)
        return list(scope.dynamic)

    @_guarded(True)
    def may_be_read_dynamically(self, name: str, node) -> bool:
        """Could ``name`` (a variable of ``node``'s scope, or a dotted attribute
        path) be read without being spelled: ``locals()``, ``vars()``,
        ``eval``, ``exec`` in the scope; ``globals()``, ``eval``, ``exec``
        anywhere for a module-level name; ``getattr(obj, "name")`` anywhere,
        and for attributes also ``getattr`` with a computed name or
        ``vars(obj)``."""
        readers = self._readers()
        if "." in name:
            return name.rpartition(".")[2] in readers.names or readers.any_attribute \
                or unseen().reads_attributes  # a statement this run does not see may read it
        scope = self.scope_of(node)
        module_level = scope.kind == "module" or name in scope.globals
        return name in readers.names or id(scope) in readers.local_scopes \
            or (module_level and readers.global_anywhere)

    def _readers(self) -> "_Readers":
        if self._reader_summary is None:
            self._reader_summary = _Readers(self.index.scopes.values())
        return self._reader_summary

    def layer_names_read(self) -> Set[str]:
        """Names passed to ``get_layer("...")`` anywhere in the module."""
        return {read.name for scope in self.index.scopes.values() for read in scope.dynamic
                if read.how == "get_layer" and read.name}

    # ------------------------------------------------------------ kinds

    @_guarded(UNKNOWN)
    def kind_of(self, expr) -> Value:
        """What ``expr`` evaluates to (UNKNOWN when not provable)."""
        return self._kinds.value(expr) if expr.parent is not None or expr is self.root else UNKNOWN

    @_guarded(UNKNOWN)
    def receiver_kind(self, power, end: int) -> Value:
        """The kind of ``power.children[:end]``: the receiver of a method
        called further along a chain (``self.model`` in ``self.model.predict(x)``,
        which has no node of its own)."""
        if end == 1:
            return self.kind_of(power.children[0])
        found = self._kinds._power_chain(power, power.children[:end])
        return found if found is not None else UNKNOWN

    @_guarded(UNKNOWN)
    def likely_kind_of(self, expr) -> Value:
        """``kind_of``, where a parameter the model cannot type is also typed
        from what every call of its function in this module passes (calls
        from other modules are not seen: an answer to report on, not to
        prove a fix safe)."""
        if self._likely is None:
            self._likely = Kinds(self, call_sites=True)
        return self._likely.value(expr) if expr.parent is not None or expr is self.root else UNKNOWN

    @_guarded(False)
    def may_hold_a_tensor(self, expr, assumed: FrozenSet[int] = frozenset()) -> bool:
        """May ``expr`` hold a tensor: its kind, else computed from one (names'
        reaching bindings, TensorFlow calls, a layer an instance holds);
        ``assumed``: ids of binding values to count as tensors
        (tensor_sources.py). For finding, not for proving a fix safe."""
        if expr.parent is None and expr is not self.root:
            return False
        if self._tensor_sources is None:
            self._tensor_sources = TensorSources(self)
        return self._tensor_sources(expr, assumed)

    @_guarded(UNKNOWN)
    def iter_kind(self, expr) -> Value:
        """What one step of iterating ``expr`` gives."""
        return self._kinds.element(expr)

    @_guarded(UNKNOWN)
    def binding_kind(self, binding: Binding) -> Value:
        return self._kinds.binding(binding)

    def keras_role(self, cls) -> Optional[str]:
        return self._kinds.keras_role(cls)

    # ------------------------------------------------------------ classes and functions

    def method_class(self, funcdef):
        """The classdef whose body defines ``funcdef`` directly; else None."""
        node = funcdef.parent
        if node is not None and node.type == syms.decorated:
            node = node.parent
        if node is not None and node.type == syms.suite and node.parent.type == syms.classdef:
            return node.parent
        return None

    def is_static(self, funcdef) -> bool:
        parent = funcdef.parent
        return parent.type == syms.decorated and "staticmethod" in str(parent.children[0])

    def methods(self, cls) -> Dict[str, object]:
        scope = self.index.scopes.get(id(cls))
        if scope is None:
            return {}
        return {name: b.value for name, bindings in scope.by_name.items()
                for b in bindings[-1:] if b.how == "def"}

    def bases(self, cls) -> List:
        """Each base of a class: its canonical name (str) when imported, the
        classdef when defined in this module, else None."""
        if len(cls.children) < 6 or cls.children[3].type == token.RPAR:
            return []
        arglist = cls.children[3]
        found = []
        for base in (arglist.children if arglist.type == syms.arglist else [arglist]):
            if base.type in (token.COMMA, syms.argument):
                continue
            name = self.qualified(base)
            if name is None and base.type == token.NAME:
                classes = [b.value for b in self.reaching(base.value, base) if b.how == "class"]
                name = classes[0] if len(classes) == 1 else None
            found.append(name)
        return found

    def attribute_bindings(self, cls, attr: str) -> List[Binding]:
        """``self.attr = ...`` in any method of ``cls`` and ``attr = ...`` in
        its body."""
        table = self._attributes.get(id(cls))
        if table is None:
            table = self._attributes[id(cls)] = self._attribute_table(cls)
        return table.get(attr, [])

    def _attribute_table(self, cls) -> Dict[str, List[Binding]]:
        table: Dict[str, List[Binding]] = {}
        body = self.index.scopes.get(id(cls))
        if body is None:
            return table
        for name, bindings in body.by_name.items():
            table.setdefault(name, []).extend(bindings)
        for function in self.methods(cls).values():
            scope = self.index.scopes.get(id(function))
            owner = _first_parameter(function)
            if scope is None or owner is None or self.is_static(function):
                continue
            prefix = owner + "."
            for key, bindings in scope.by_name.items():
                if key.startswith(prefix) and "." not in key[len(prefix):]:
                    table.setdefault(key[len(prefix):], []).extend(bindings)
        return table

    def functions_called(self, call) -> List:
        """The funcdefs of this module that a call (or a bare name) may run:
        ``f(...)`` by its reaching bindings, ``self.f(...)`` in a method."""
        head = call.children[0] if call.type == syms.power else call
        if head.type != token.NAME:
            return []
        if call.type == syms.power and len(call.children) > 2 and call.children[1].children[0].type == token.DOT:
            function = self.scope_of(call).node
            cls = self.method_class(function) if function.type == syms.funcdef else None
            if cls is None or not self._is_self(head, function):
                return []
            method = self.methods(cls).get(call.children[1].children[1].value)
            return [method] if method is not None else []
        return [b.value for b in self.reaching(head.value, head) if b.how == "def"]

    @_guarded(None)
    def call_sites(self, function) -> Optional[List]:
        """(call trailer, position shift) of every call of the module
        function or method ``function`` in this module (``f(...)``,
        ``self.f(...)``: shift 1); None when its name appears anywhere else
        (it may be passed around and called with anything)."""
        key = id(function)
        if key not in self._call_sites:
            self._call_sites[key] = self._find_call_sites(function)
        return self._call_sites[key]

    def _find_call_sites(self, function) -> Optional[List]:
        name = function.children[1]
        method = self.method_class(function) is not None
        # named in a statement this run does not see; a restricted pass keeps every statement naming a
        # module-level function (migrate/toplevel.py), so there its name is an attribute's
        if name.value in unseen().names and not _at_module_level(function):
            return None
        shift = 1 if method and not self.is_static(function) else 0
        if self._name_leaves is None:  # every NAME leaf by its text, built once
            self._name_leaves = _name_leaves(self.root)
        sites = []
        for leaf in self._name_leaves.get(name.value, ()):
            if leaf is name or not method and _is_attribute_name(leaf):
                continue  # `obj.pool` names an attribute, not the module function `pool`
            call, at = _call_headed_by(leaf)
            if call is None or not any(f is function for f in self.functions_called(call)):
                return None  # used otherwise, or another function of that name
            sites.append((call.children[at], shift if at == 2 else 0))
        return sites

    def _is_self(self, leaf, function) -> bool:
        return any(b.how == "param" and b.path == (0,) and b.statement is function
                   for b in self.reaching(leaf.value, leaf))

    # ------------------------------------------------------------ gradient contexts

    @property
    def contexts(self) -> Contexts:
        if self._contexts is None:
            self._contexts = Contexts(self)
        return self._contexts

    @property
    def tapes(self) -> List[Tape]:
        return self.contexts.tapes

    @_guarded(None)
    def gradient_context(self, node) -> Optional[Context]:
        """The innermost reason ``node`` runs where gradients are recorded
        (see Context.how); None for plain, sampling or preprocessing code."""
        return self.contexts.context(node)

    def in_gradient_context(self, node) -> bool:
        return self.gradient_context(node) is not None

    @property
    def gradient_flow(self) -> GradientFlow:
        """Which values are gradients with respect to which inputs (gradients.py)."""
        if self._gradient_flow is None:
            self._gradient_flow = GradientFlow(self)
        return self._gradient_flow

    @property
    def differentiation(self) -> "Differentiation":
        """What differentiated targets are made of, and where they are cut (differentiation.py)."""
        if self._differentiation is None:
            self._differentiation = Differentiation(self)
        return self._differentiation

    @_guarded(None)
    def tape_of(self, node) -> Optional[Tape]:
        return self.contexts.tape_of(node)

    @_guarded(None)
    def presumed(self, name: str) -> Optional[Value]:
        """What a name bound nowhere in a pasted snippet is, by its uses
        (``presumed.py``: a tape, a Keras model); None when nothing says."""
        if self._presumed is None:
            if self._name_leaves is None:
                self._name_leaves = _name_leaves(self.root)
            self._presumed = presumed_values(self._unbound, self._name_leaves, self.root)
        return self._presumed.get(name)

    @_guarded(None)
    def tape_named(self, name: str, at) -> Optional[Tape]:
        """The tape ``name`` is where ``at`` runs: the one ``with
        ...GradientTape() as name`` binding that reaches it (``at``: the
        NAME leaf, or any node: its statement's entry); None when another
        binding, or several, reach."""
        binding = self.last_assignment(name, at)
        if binding is None or binding.how != "with":
            return None
        return next((tape for tape in self.contexts.tapes
                     if tape.statement is binding.statement and tape.name == name), None)

    @_guarded(None)
    def after_tape(self, node) -> Optional[Tape]:
        """The tape whose block closed before ``node`` in the same scope."""
        return self.contexts.after_tape(node)


class _Readers:
    """The module's dynamic readers, summed up once for name questions."""

    def __init__(self, scopes):
        self.names: Set[str] = set()
        self.local_scopes: Set[int] = set()
        self.global_anywhere = False
        self.any_attribute = False
        for scope in scopes:
            for read in scope.dynamic:
                if read.how in ("getattr", "hasattr"):
                    if read.name is not None:
                        self.names.add(read.name)
                    else:
                        self.any_attribute = True
                elif read.how == "vars" and split_arguments(read.node.children[1])[0]:
                    self.any_attribute = True
                elif read.how in _LOCALS_READERS:
                    self.local_scopes.add(id(scope))
                    self.global_anywhere |= read.how in ("eval", "exec")
                elif read.how == "globals":
                    self.global_anywhere = True


def _at_module_level(function) -> bool:
    holder = function.parent.parent if function.parent.type == syms.decorated else function.parent
    return holder.type == syms.file_input


def _is_attribute_name(leaf) -> bool:
    """``leaf`` is the ``name`` of ``obj.name``."""
    parent = leaf.parent
    return parent is not None and parent.type == syms.trailer and parent.children[0].type == token.DOT


def _call_headed_by(leaf):
    """(call, index of its argument trailer) when ``leaf`` is the callee of
    ``leaf(...)`` or ``obj.leaf(...)``; (None, 0) otherwise."""
    parent = leaf.parent
    if parent is not None and parent.type == syms.power and parent.children[0] is leaf \
            and len(parent.children) > 1 and parent.children[1].type == syms.trailer \
            and parent.children[1].children[0].type == token.LPAR:
        return parent, 1
    if parent is not None and parent.type == syms.trailer and parent.children[0].type == token.DOT:
        power = parent.parent
        if power.children[0].type == token.NAME and len(power.children) > 2 and power.children[1] is parent \
                and power.children[2].type == syms.trailer and power.children[2].children[0].type == token.LPAR:
            return power, 2
    return None, 0


def _first_parameter(funcdef) -> Optional[str]:
    params = funcdef.children[2]
    if len(params.children) == 2:
        return None
    first = params.children[1]
    first = first.children[0] if first.type == syms.typedargslist else first
    first = first.children[0] if first.type == syms.tname else first
    return first.value if first.type == token.NAME else None


def _between(at, origin) -> Optional[Set[int]]:
    """Ids of the statements run from the entry of ``at`` until ``origin``:
    ``at`` itself when it holds ``origin``, else ``at`` and its following
    siblings up to the one holding ``origin``; None when ``at`` is neither."""
    node = origin
    while node is not None and node.parent is not at.parent:
        node = node.parent
    if node is None:
        return None
    found, sibling = set(), at
    while sibling is not None:
        found.add(id(sibling))
        if sibling is node:
            return found
        sibling = sibling.next_sibling
    return None


def _first_position(node):
    leaf = next(node.leaves())
    return leaf.lineno, leaf.column


def _position(binding: Binding):
    return (binding.line, id(binding.node))


def _within(node, ancestor) -> bool:
    while node is not None:
        if node is ancestor:
            return True
        node = node.parent
    return False


def _inputs(expr, reads, statement):
    """(name or attribute path, where to ask what reaches it) for what
    ``expr`` reads: a name at its own recorded read, anything else at the
    entry of ``statement``."""
    for node in expr.pre_order():
        if node.type == token.NAME and node.value not in NOT_VARIABLES \
                and not (node.prev_sibling is not None and node.prev_sibling.type == token.DOT) \
                and not (node.parent is not None and node.parent.type == syms.argument
                         and node.parent.children[0] is node and len(node.parent.children) == 3):
            yield node.value, node if id(node) in reads else statement
        elif node.type == syms.power:
            for end in range(2, len(node.children) + 1):
                path = attribute_path(node.children[:end])
                if path is None:
                    break
                yield path, statement
