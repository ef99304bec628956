"""unused-model-instance: a Keras model or layer built for nothing is removed.

What it does: an assignment ``name = Constructor(...)`` whose constructor is a
Keras ``Model``/``Layer`` subclass defined in the file (``class Seq(tf.keras.Model)``)
or a ``tf.keras`` / ``keras`` model or layer (``tf.keras.Sequential``,
``tf.keras.layers.Dense``, ``layers.LSTM`` after ``from tensorflow.keras import
layers``; any import spelling, ``tensorflow.compat.v2`` and the unbound
``tf``/``keras``/``layers`` of a pasted snippet included: the semantic
model's kinds, ``recipes._model``), and whose name is never read in its scope (the function, or the
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
import bisect
import re
from typing import Dict, List, Optional, Set, Tuple, Union

from fissix.pgen2 import token

from migrate.recipe import Recipe, SourceFacts, propose
from recipes._model import Kind, model_of
from recipes._model.imports import CONVENTIONAL
from recipes._pyast import Declarations, assigned_names, declarations, dotted
from recipes._fissix import (
    call_parts, enclosing, find_root, following_leaf, is_call,
    is_name, name_reads, nodes_of_type, per_tree, remove_statement, single_assignment,
    start, syms,
)

KERAS_MODULES = ("tensorflow.keras", "keras", "tf_keras")
_KERAS_NAMESPACES = ("layers", "models")
_KERAS_CLASSES = ("Model", "Sequential")
_NOT_LAYERS = ("Input",)


class KerasNames:
    """How this file can name a Keras model or layer class, from its imports
    and its classes' dotted bases in the ``ast``: the precheck's view, never
    narrower than the model's (_builds_keras_object): every import of
    TensorFlow or Keras (``tensorflow.compat.v2`` too) and the presumed
    ``tf``/``keras``/``layers`` of a pasted snippet count."""

    def __init__(self, imports: Declarations, class_bases: Dict[str, List[Optional[str]]]):
        presumed = {module: alias for alias, module in CONVENTIONAL.items()}
        tensorflow = {presumed["tensorflow"]}.union(*(aliases for module, aliases in imports.aliases.items()
                                    if module.split(".")[0] == "tensorflow"))
        self.keras = {f"{alias}{compat}.keras" for alias in tensorflow
                      for compat in ("", ".compat.v1", ".compat.v2")} | {presumed["keras"]}
        for module in KERAS_MODULES:
            self.keras |= imports.module_aliases(module)
        self.namespaces: Set[str] = {presumed["keras.layers"]}
        self.classes: Set[str] = set()
        for module, names in imports.names.items():
            root = module.split(".")[0]
            if root not in ("tensorflow", "keras", "tf_keras"):
                continue
            for local, original in names.items():
                if original == "keras":
                    self.keras.add(local)
                elif original in _KERAS_NAMESPACES:
                    self.namespaces.add(local)
                elif original in _KERAS_CLASSES or module.rpartition(".")[2] in _KERAS_NAMESPACES:
                    self.classes.add(local)
        self._add_subclasses(class_bases)

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


def _exported(root) -> Set[str]:
    names = set()
    for node in nodes_of_type(root, syms.expr_stmt):
        parts = single_assignment(node)
        if parts and is_name(parts[0], "__all__"):
            names |= {leaf.value.strip("'\"") for leaf in parts[1].leaves() if leaf.type == token.STRING}
    return names


# `name = Constructor(...)`, alone on its line: a Keras object is built and bound
PATTERN = "simple_stmt< expr=expr_stmt< target=NAME '=' power< any+ trailer< '(' any* ')' > > > any >"


def _builds_keras_object(call, model) -> bool:
    """Does ``call`` construct a Keras model or layer (the model's kinds): a
    Keras ``Model``/``Sequential``/``layers.*``/``models.*`` class under any
    import spelling (or a presumed alias), or a Keras subclass of the file?"""
    value = model.kind_of(call)
    if value.kind not in (Kind.MODEL, Kind.LAYER) or value.origin is None:
        return False
    if value.origin.type == syms.classdef:
        return True
    callee = model.callee(call) or ""
    return bool(_KERAS_CONSTRUCTOR.match(callee)) and callee.rpartition(".")[2] not in _NOT_LAYERS


# canonical names (recipes._model) of the Keras classes KerasNames knows
_KERAS_CONSTRUCTOR = re.compile(r"keras\.(?:(?:Model|Sequential)$|(?:layers|models)\.[A-Z]\w*$)")


def _unused_instance(node, capture, filename):
    """(expr_stmt, statement, constructor, calls inside) when the statement
    binds a Keras object to a name nothing in its scope reads, not even a
    dynamic reader."""
    exported = per_tree(node, "unused-model-instance", _exported)
    model = model_of(node)
    target, expr = capture["target"], capture["expr"]
    if target.value == "_" or target.value in exported:
        return None
    value = expr.children[2]
    call = call_parts(value)
    if not call or not _builds_keras_object(value, model):
        return None
    scope = enclosing(node, syms.funcdef, syms.classdef)
    if scope is not None and scope.type == syms.classdef:
        return None
    scope = scope if scope is not None else find_root(node)
    if any(leaf is not target for leaf in name_reads(scope, target.value)) \
            or model.may_be_read_dynamically(target.value, target):
        return None
    calls_inside = any(is_call(n) and not _builds_keras_object(n, model)
                       for n in value.children[-1].pre_order())
    return expr, node, call[0], calls_inside


def _generated_name_lookup(root, constructor: str, stmt):
    """A string after ``stmt`` naming a layer as Keras numbers the
    constructor's class (``"dense_1"`` for ``Dense``): removing one instance
    renames every later auto-named one of that class."""
    strings = per_tree(root, "unused-model-instance: strings by word", _strings_by_word)
    found = strings.get(_snake_case(constructor.rpartition(".")[2]), ([], []))
    after = start(stmt)
    for leaf in found[1][bisect.bisect_right(found[0], after):]:
        if find_root(leaf) is root:  # not removed earlier in this pass
            return leaf
    return None


def _strings_by_word(root) -> Dict[str, Tuple[list, list]]:
    """The STRING leaves of the tree, in order, under each Keras layer name
    they spell as a whole word (``dense`` for ``"dense"`` and ``"dense_1"``),
    with their positions: built once per tree, so each lookup is a bisection."""
    index: Dict[str, Tuple[list, list]] = {}
    for leaf in sorted(nodes_of_type(root, token.STRING), key=start):
        for word in set(re.findall(r"\w+", leaf.value)):
            numbered = re.fullmatch(r"(.+)_\d+", word)
            for key in {word, numbered.group(1)} if numbered else {word}:
                positions, leaves = index.setdefault(key, ([], []))
                positions.append(start(leaf))
                leaves.append(leaf)
    return index


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


def _may_hold_an_unused_instance(facts: SourceFacts) -> Union[bool, List[ast.AST]]:
    """Precheck: the functions that bind a name to a call of a Keras class
    (KerasNames: any import spelling, or a presumed alias) and load it
    nowhere inside (one walk of the ``ast``); True for such a name at module
    level (a load anywhere counts, so the whole file matters)."""
    found = declarations(facts)
    keras = KerasNames(found, found.class_bases)
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
    unused = [scope for scope, name in built if name not in loaded[id(scope)]]
    return True if any(scope is tree for scope in unused) else unused


RECIPE = Recipe(
    id="unused-model-instance",
    summary="remove a Keras model or layer that is built and never used",
    safety="safe",
    query=lambda q: q.select(PATTERN).modify(_modify),
    tokens=("keras",),
    precheck=_may_hold_an_unused_instance,
    before_fails=None,
)
