"""unused-model-instance: a Keras model or layer built for nothing is removed.

What it does: an assignment ``name = Constructor(...)`` whose constructor is a
Keras ``Model``/``Layer`` subclass defined in the file (``class Seq(tf.keras.Model)``)
or a ``tf.keras`` / ``keras`` model or layer (``tf.keras.Sequential``,
``tf.keras.layers.Dense``, ``layers.LSTM`` after ``from tensorflow.keras import
layers``), and whose name is never read in its scope (the function, or the
whole file at module level), is deleted. A comment block directly above it
goes too when a blank line or the end of the block follows it (it described
the deleted line); a comment heading a group of statements stays.

Why this is a bug: it is not a gradient bug but noise that misleads: in seed
000, ``vae = Seq()`` builds a second model that is never called or trained,
so a reader looks for where its weights are used. Constructing it only costs
time and registers layer names.

Example (seed 000)::

    vae = Seq()          # removed: `vae` is never read
    model = Seq()
    model.compile(...)

Left alone: names that are read anywhere in scope (including ``global``
declarations and closures), names a dynamic reader can reach (``locals()``,
``vars()``, ``eval``/``exec`` in the scope; for module-level names also
``globals()`` and ``getattr``/``hasattr`` with that string or a computed
one), ``_``, class attributes, tuple or chained targets, and names listed in
``__all__``. When a string after the instance names a layer as Keras would
auto-name one of its class (``get_layer("dense_1")`` after an unused
``Dense``), the finding says so and offers no fix: the removal would rename
the later layers.

CAVEATS:
- A constructor whose arguments call something other than a Keras class
  (``Dense(3, kernel_initializer=make())``) may matter for its side
  effects: that removal is offered as unsafe. Nested Keras constructors
  (``Sequential([Dense(4)])``) do not count.
- Keras numbers auto-generated layer names per class (``dense``, ``dense_1``):
  removing an instance renames the later ones. A lookup by a generated name
  in this file blocks the fix; checkpoints loaded by name are not seen.
- Under Keras 3 every unseeded initializer draws its seed from Python's
  ``random`` when the layer is constructed: removing an instance shifts the
  initial weights of the layers built after it in the same run (as another
  seed would), unless ``random.seed`` is called in between.
- A module-level name may be imported by another module, or read through
  ``globals()`` / ``getattr``; the recipe only sees this file.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Set

from fissix.pgen2 import token

from migrate.recipe import Recipe, SourceFacts, propose
from recipes._pyast import Declarations, assigned_names, declarations, dotted, may_import
from recipes._fissix import (
    call_parts, dotted_name, enclosing, find_root, following_leaf, import_table, is_call,
    is_name, name_reads, nodes_of_type, per_tree, remove_statement, single_assignment, source,
    start, syms,
)

KERAS_MODULES = ("tensorflow.keras", "keras", "tf_keras")
_KERAS_NAMESPACES = ("layers", "models")
_KERAS_CLASSES = ("Model", "Sequential")
_NOT_LAYERS = ("Input",)


class KerasNames:
    """How this file can name a Keras model or layer class, from its imports
    and its classes' dotted bases: the recipe reads both from the fissix
    tree, its precheck from the ``ast``."""

    def __init__(self, imports: Declarations, class_bases: Dict[str, List[Optional[str]]]):
        tensorflow = imports.module_aliases("tensorflow")
        self.keras = {f"{alias}.keras" for alias in tensorflow}
        for module in KERAS_MODULES:
            self.keras |= imports.module_aliases(module)
        self.namespaces: Set[str] = set()
        self.classes: Set[str] = set()
        for module in ("tensorflow", "tensorflow.keras", "keras", "tf_keras"):
            for local, original in imports.imported_names(module).items():
                if module == "tensorflow" and original == "keras":
                    self.keras.add(local)
                elif module != "tensorflow" and original in _KERAS_NAMESPACES:
                    self.namespaces.add(local)
                elif module != "tensorflow" and original in _KERAS_CLASSES:
                    self.classes.add(local)
        for keras in KERAS_MODULES:
            for namespace in _KERAS_NAMESPACES:
                for local in imports.imported_names(f"{keras}.{namespace}"):
                    self.classes.add(local)
        if self.keras or self.namespaces or self.classes:
            self._add_subclasses(class_bases)

    @classmethod
    def of(cls, root) -> "KerasNames":
        return cls(import_table(root), _class_bases(root))

    def is_keras_class(self, name: str) -> bool:
        head, _, last = name.rpartition(".")
        if not last[:1].isupper() or last in _NOT_LAYERS:
            return False
        if not head:
            return last in self.classes
        if head in self.namespaces:
            return True
        for keras in self.keras:
            if head == keras and last in _KERAS_CLASSES:
                return True
            if head.startswith(keras + ".") and head[len(keras) + 1:].split(".")[0] in _KERAS_NAMESPACES:
                return True
        return False

    def _add_subclasses(self, class_bases) -> None:
        """Classes of this file that derive (transitively) from a Keras class."""
        while True:
            before = len(self.classes)
            self.classes |= {name for name, bases in class_bases.items()
                             if any(b and (b in self.classes or self.is_keras_class(b)) for b in bases)}
            if len(self.classes) == before:
                return


def _class_bases(root) -> Dict[str, List[Optional[str]]]:
    bases: Dict[str, List[Optional[str]]] = {}
    for node in nodes_of_type(root, syms.classdef):
        if len(node.children) > 3 and node.children[2].type == token.LPAR:
            items = node.children[3]
            items = items.children if items.type == syms.arglist else [items]
            bases.setdefault(node.children[1].value, []).extend(
                dotted_name(b) for b in items if b.type != token.COMMA)
    return bases


def _exported(root) -> Set[str]:
    names = set()
    for node in nodes_of_type(root, syms.expr_stmt):
        parts = single_assignment(node)
        if parts and is_name(parts[0], "__all__"):
            names |= {leaf.value.strip("'\"") for leaf in parts[1].leaves() if leaf.type == token.STRING}
    return names


# `name = Constructor(...)`, alone on its line: a Keras object is built and bound
PATTERN = "simple_stmt< expr=expr_stmt< target=NAME '=' power< any+ trailer< '(' any* ')' > > > any >"


def _facts(root) -> tuple:
    return KerasNames.of(root), _exported(root)


def _unused_instance(node, capture, filename):
    """(expr_stmt, statement, constructor, calls inside) when the statement
    binds a Keras object to a name nothing in its scope reads, not even a
    dynamic reader."""
    keras, exported = per_tree(node, "unused-model-instance", _facts)
    target, expr = capture["target"], capture["expr"]
    if target.value == "_" or target.value in exported:
        return None
    value = expr.children[2]
    call = call_parts(value)
    if not call or not keras.is_keras_class(call[0]):
        return None
    scope = enclosing(node, syms.funcdef, syms.classdef)
    if scope is not None and scope.type == syms.classdef:
        return None
    root = find_root(node)
    scope = scope if scope is not None else root
    if any(leaf is not target for leaf in name_reads(scope, target.value)) \
            or _dynamic_reader(scope, root, target.value):
        return None
    calls_inside = any(is_call(n) and not keras.is_keras_class(call_parts(n)[0] if call_parts(n) else "")
                       for n in value.children[-1].pre_order())
    return expr, node, call[0], calls_inside


# calls that read a scope's names by string; ``vars()`` only without arguments
_SCOPE_READERS = ("locals", "vars", "eval", "exec")
_ATTRIBUTE_READERS = ("getattr", "hasattr")


def _dynamic_reader(scope, root, name: str) -> Optional[str]:
    """The call that can reach ``name`` without spelling it: ``locals()``,
    ``vars()``, ``eval``/``exec`` in its scope; for a module-level name also
    ``globals()`` and a ``getattr(module, ...)`` by string anywhere."""
    module_level = scope is root
    for leaf in (root if module_level else scope).leaves():
        after = leaf.next_sibling
        if not is_name(leaf) or after is None or after.type != syms.trailer \
                or after.children[0].type != token.LPAR or leaf.prev_sibling is not None \
                and leaf.prev_sibling.type == token.DOT:
            continue
        arguments = [c for c in after.children[1:-1]]
        arguments = arguments[0].children if arguments and arguments[0].type == syms.arglist \
            else arguments
        positional = [a for a in arguments if a.type != token.COMMA]
        callee = leaf.value
        if callee in _SCOPE_READERS and (callee != "vars" or not positional) \
                or module_level and callee == "globals":
            return f"{callee}()"
        if module_level and callee in _ATTRIBUTE_READERS and len(positional) >= 2:
            key = positional[1]
            if key.type != token.STRING or key.value.strip("'\"") == name:
                return f"{callee}(..., {source(key)})"
    return None


def _generated_name_lookup(root, constructor: str, stmt):
    """A string after ``stmt`` naming a layer as Keras numbers the
    constructor's class (``"dense_1"`` for ``Dense``): removing one instance
    renames every later auto-named one of that class."""
    pattern = re.compile(rf"(?<![\w]){re.escape(_snake_case(constructor.rpartition('.')[2]))}(_\d+)?(?![\w])")
    after = start(stmt)
    for leaf in root.leaves():
        if leaf.type == token.STRING and start(leaf) > after and pattern.search(leaf.value.strip("'\"")):
            return leaf
    return None


def _snake_case(name: str) -> str:
    """Keras's default layer name for a class (``Conv2D`` -> ``conv2d``)."""
    text = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", text).lower()


def _drop_describing_comments(stmt) -> None:
    """Drop the comment block directly above ``stmt`` when a blank line or the
    end of the block follows it: it described the removed line."""
    follower = following_leaf(stmt)
    ends_group = follower is None or follower.type in (token.DEDENT, token.ENDMARKER) \
        or follower.prefix.startswith("\n")
    if not ends_group:
        return
    holder = stmt.prev_sibling if stmt.prev_sibling is not None \
        and stmt.prev_sibling.type == token.INDENT else stmt
    lines = holder.prefix.split("\n")
    tail, body = lines[-1], lines[:-1]
    while body and body[-1].strip().startswith("#"):
        body.pop()
    holder.prefix = "\n".join(body + [tail]) if body else tail


def _modify(node, capture, filename) -> None:
    found = _unused_instance(node, capture, filename)
    if found is None:
        return
    expr, stmt, constructor, calls_inside = found
    name = capture["target"].value
    message = f"`{name} = {constructor}(...)` builds a Keras object that is never used"
    if calls_inside:
        message += " (its arguments call code that may have side effects)"
    call = call_parts(expr.children[-1])
    lookup = None if "name" in call[2] else _generated_name_lookup(find_root(node), constructor, stmt)
    if lookup:
        message += (f"; removing it renames the auto-named `{constructor}` objects built "
                    f"after it, and {lookup.value} (line {lookup.lineno}) "
                    f"looks one up by that name: not removed automatically")
    if propose(expr, message, safety="unsafe" if calls_inside else None, fixable=lookup is None):
        _drop_describing_comments(stmt)
        remove_statement(stmt)


# the modules whose import lets a file name a Keras class (KerasNames)
_KERAS_IMPORTS = ("tensorflow",) + KERAS_MODULES + tuple(
    f"{keras}.{namespace}" for keras in KERAS_MODULES for namespace in _KERAS_NAMESPACES)


def _may_hold_an_unused_instance(facts: SourceFacts) -> bool:
    """Precheck: the file imports Keras in a way KerasNames knows, and some
    function or module scope binds a name to a call of a Keras class and no
    code inside that scope loads the name (one walk of the ``ast``)."""
    if not may_import(facts, _KERAS_IMPORTS):
        return False
    found = declarations(facts)
    keras = KerasNames(found, found.class_bases)
    if not (keras.keras or keras.namespaces or keras.classes):
        return False
    tree = facts.tree
    built, loaded = [], {id(tree): set()}
    stack = [(tree, (tree,), False)]
    while stack:
        node, chain, in_class = stack.pop()
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                for scope in chain:
                    loaded[id(scope)].add(node.id)
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            chain, in_class = chain + (node,), False
            loaded[id(node)] = set()
        elif isinstance(node, ast.ClassDef):
            in_class = True
        elif (not in_class and isinstance(node, (ast.Assign, ast.AnnAssign))
              and isinstance(node.value, ast.Call)
              and keras.is_keras_class(dotted(node.value.func) or ".")):
            built.extend((chain[-1], name) for name in assigned_names(node) if name != "_")
        stack.extend((child, chain, in_class) for child in ast.iter_child_nodes(node))
    return any(name not in loaded[id(scope)] for scope, name in built)


RECIPE = Recipe(
    id="unused-model-instance",
    summary="remove a Keras model or layer that is built and never used",
    safety="safe",
    query=lambda q: q.select(PATTERN).modify(_modify),
    tokens=("keras",),
    precheck=_may_hold_an_unused_instance,
    before_fails=None,
)
