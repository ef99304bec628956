"""numpy-accumulator's precheck, on the stdlib ``ast`` before any fissix
parse: the functions where a finding may be (never fewer than the recipe
finds), or True for the whole file."""

from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right
from typing import Dict, List, Optional, Set

from migrate.prefilter import GAP
from migrate.recipe import SourceFacts, child_nodes
from recipes._numpy_accumulator.buffers import (
    FACTORIES, _CONVERSIONS, _FROM_DATA, _INTEGERS, _MODEL_WEIGHTS, _PY_DTYPES, _SHAPED,
)
from recipes._model.contexts import names_a_tape
from recipes._model.imports import Imports as ImportTable
from recipes._pyast import (
    code_text, dotted, first_line, gradient_scopes, import_table, line_of, may_import, may_name_keras_classes,
    spelled_alone, spelled_as_in_ast, standalone, statements, tape_statements,
)


# The patterns below are texts: `re` compiles each (and caches it) at its first
# search, since most files never get that far (a clean file's check needs none).

# `...] = ` (not `==`) or `...] += `, possibly across a line continuation: a subscript assignment
_SUBSCRIPT_ASSIGNMENT = r"\](?:[ \t]|\\\r?\n)*(?:[-+*/%@&|^]|//|\*\*|>>|<<)?=(?!=)"


# a NumPy call (with arguments) of one of the names ``{heads}``: ``np.f(``, a
# bare ``np(``; or of one of the names imported from NumPy ``{names}``
_NUMPY_CALL = (r"(?<![\w.])(?:(?P<head>{heads})(?:{gap}*\.{gap}*(?P<attr>\w+))?|(?P<name>{names}))"
               r"{gap}*\((?!{gap}*\))")


_PRESUMED_NP = rf"{standalone('np')}(?!\w)"


# in the code's text, before any parse: a buffer needs a factory call (or a
# name imported from NumPy); a gradient context needs a tape, `tf.function`
# (as a decorator, a call or an import) or the `call`/step of a Keras class
_MAY_FILL = "|".join(rf"{standalone(name, after_dot=True)}{GAP}*\(" for name in FACTORIES) \
    + rf"|numpy{GAP}+import(?!\w)"


_MAY_OPEN_A_CONTEXT = rf"GradientTape|{standalone('function', after_dot=True)}(?!\w)"


_KERAS_METHOD = rf"{standalone('def', after_dot=True)}{GAP}+(?:call|train_step|test_step)(?!\w)"


_TENSOR_MODULES = ("tensorflow", "keras", "tf_keras")


_COMPILE_CALL = rf"\.{GAP}*compile{GAP}*\("


# what makes a tensor besides a TensorFlow or Keras name: a `self.<layer>(...)` call, a model's weights
_SELF_CALL_OR_WEIGHTS = rf"{standalone('self')}{GAP}*\.{GAP}*\w+{GAP}*\(|\.{GAP}*(?:" \
    + "|".join(_MODEL_WEIGHTS) + r")(?!\w)"


def _may_fill_a_numpy_buffer(facts: SourceFacts):
    """Precheck: the file imports NumPy or reads a presumed ``np``
    (Imports.numpy_function), something in it can make a tensor
    (Analysis.is_tensor and the model's kinds: a ``self.<layer>(...)``
    call, a model whose weights are read, or a name bound by importing
    TensorFlow or Keras, or presumed), and in the outermost functions
    returned (nested ones included) a name is bound to a NumPy factory
    and subscript-assigned, or a NumPy function is called on something,
    and the function holds one of ``_pyast.gradient_scopes`` (a buffer
    outside them too, unless a context is certain: in a module without one
    every buffer counts, numpy_accumulator._may_run_on_a_tape). The NumPy
    calls are found in the code's text, so only the statements are walked,
    and the functions holding a factory and a subscript assignment."""
    if not may_import(facts, ("numpy",)) and not re.search(_PRESUMED_NP, code_text(facts)):
        return []  # no NumPy import, no presumed `np`
    text = code_text(facts)
    if not (re.search(_MAY_FILL, text) and re.search(_SUBSCRIPT_ASSIGNMENT, text)) and not (
            re.search(_MAY_OPEN_A_CONTEXT, text) or re.search(_COMPILE_CALL, text)
            or re.search(_KERAS_METHOD, text) and may_name_keras_classes(facts)):
        return []  # no factory call (or NumPy name import) and subscript assignment; no context
    table = import_table(facts)
    tensor_names = {"tf", "keras", "layers"} | {
        record.local for record in table.records if record.module.split(".")[0] in _TENSOR_MODULES}
    if not (re.search(_SELF_CALL_OR_WEIGHTS, text) or any(spelled_alone(text, name) for name in sorted(tensor_names))):
        return []
    calls = _numpy_calls(facts, table)
    if not calls:
        return []
    functions = sorted((first_line(s.node), s.node.end_lineno, s.node)
                       for s in statements(facts, ast.FunctionDef, ast.AsyncFunctionDef) if s.function is None)
    firsts = [first for first, _, _ in functions]
    factories, calling = set(), {}
    for line, function in calls:
        at = bisect_right(firsts, line) - 1
        if at >= 0 and line <= functions[at][1]:
            calling[at] = functions[at][2]
            if function in FACTORIES:
                factories.add(at)
    found = []
    if factories:
        helpers = _helpers(facts, [line for line, function in calls if function in FACTORIES])
        filled = {line_of(facts, match.start()) for match in re.finditer(_SUBSCRIPT_ASSIGNMENT, text)}
        found = [function for first, last, function in functions
                 if any(first <= line <= last for line in filled)
                 and _fills_a_buffer(function, table, spelled_as_in_ast(facts), helpers)]
    starts = sorted(scope.lineno for scope in gradient_scopes(facts))
    if found and not _surely_a_context(facts):
        return True  # maybe no gradient context anywhere: the model must see the whole file to know it
    found = [node for node in found if bisect_right(starts, node.end_lineno) > bisect_left(starts, first_line(node))]
    calling = [node for node in calling.values() if node not in found]
    if calling:
        found += [node for node in calling
                  if bisect_right(starts, node.end_lineno) > bisect_left(starts, first_line(node))]
    return found


def _surely_a_context(facts: SourceFacts) -> bool:
    """Does the model surely find a gradient context in the file, so that
    a buffer outside ``gradient_scopes`` is preprocessing? A ``with``
    whose callee is spelled ``...GradientTape(...)`` is a tape by the
    model's own test of the spelling. Every other root hangs on what names
    resolve to (a Keras base, ``tf.function``, the receiver of
    ``compile``), which only the model knows."""
    return any(isinstance(item.context_expr, ast.Call) and names_a_tape(dotted(item.context_expr.func))
               for found in tape_statements(facts) for item in found.node.items)


def _helpers(facts: SourceFacts, lines: List[int]) -> Set[str]:
    """Names of the functions and methods whose text holds a NumPy factory
    call at one of ``lines``: a call of one may make a buffer (the model's
    kinds through functions)."""
    return {s.node.name for s in statements(facts, ast.FunctionDef, ast.AsyncFunctionDef)
            if any(first_line(s.node) <= line <= s.node.end_lineno for line in lines)}


def _numpy_calls(facts: SourceFacts, table: ImportTable) -> List[tuple]:
    """(line, NumPy function name) of every call with arguments that may be
    a NumPy function's (Imports.numpy_function), found in the code's text."""
    heads = sorted(table.module_aliases("numpy") | {"np"})
    imported = table.imported_names("numpy")
    pattern = re.compile(_NUMPY_CALL.format(
        heads="|".join(map(re.escape, heads)), gap=GAP,
        names="|".join(map(re.escape, sorted(imported))) or r"(?!)"))
    return [(line_of(facts, match.start()),
             match.group("attr") or "" if match.group("head") else imported[match.group("name")])
            for match in pattern.finditer(code_text(facts))]


def _fills_a_buffer(function: ast.AST, imports: ImportTable, same_names: bool, helpers: Set[str]) -> bool:
    """Does ``function`` or a function nested in it hold a buffer
    (Analysis._buffers: a name whose first ``name = value`` in that scope is
    a NumPy factory, without an integer ``dtype`` when the ``ast``'s names
    are the text's, rebound at most once, by a conversion) and assign to a
    subscript of that name something that may be a tensor (no number:
    _examine, Analysis.is_tensor)?"""
    values: Dict[int, Dict[str, list]] = {}  # scope -> name -> (position, value) of `name = value`
    filled: Dict[int, Set[str]] = {}  # scope -> names subscript-assigned in it (nested scopes too)
    stack = [(child, (function,)) for child in child_nodes(function)]
    while stack:
        node, scopes = stack.pop()
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and scopes[-1] is not None:
            values.setdefault(id(scopes[-1]), {}).setdefault(node.targets[0].id, []).append(
                ((node.lineno, node.col_offset), node.value))
        if isinstance(node, (ast.Assign, ast.AugAssign)) and not _is_a_number(node.value) \
                or isinstance(node, ast.AnnAssign):  # the model sees `: T = v`, not `v`
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                base = target
                while isinstance(base, ast.Subscript):
                    base = base.value
                if base is not target and isinstance(base, ast.Name):
                    for scope in scopes:
                        if scope is not None:
                            filled.setdefault(id(scope), set()).add(base.id)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = scopes + (node,)
        elif isinstance(node, (ast.ClassDef, ast.Lambda)):
            inner = scopes + (None,)  # no function's own bindings (scope_nodes)
        else:
            inner = scopes
        stack.extend((child, inner) for child in child_nodes(node))
    for scope, bound in values.items():
        for name, found in bound.items():
            first, *rebound = [value for _, value in sorted(found, key=lambda pair: pair[0])]
            if name in filled.get(scope, ()) and isinstance(first, ast.Call) and len(rebound) <= 1 \
                    and all(_may_convert(value, name) for value in rebound):
                callee = dotted(first.func) or ""
                factory = imports.numpy_function(callee)
                if factory in FACTORIES and not (same_names and _factory_dtype(first, factory) in _INTEGERS) \
                        or callee.rpartition(".")[2] in helpers and callee.count(".") <= 1:
                    return True
    return False


def _may_convert(value: ast.AST, name: str) -> bool:
    """May ``value`` be ``tf.convert_to_tensor(name, ...)`` (Analysis.converts)?"""
    return isinstance(value, ast.Call) and (dotted(value.func) or "").rpartition(".")[2] in _CONVERSIONS \
        and bool(value.args) and isinstance(value.args[0], ast.Name) and value.args[0].id == name


def _factory_dtype(call: ast.Call, function: str) -> Optional[str]:
    """The dtype a factory call names by a name (_new_buffer, _dtype_name), or None."""
    where = _SHAPED.get(function, _FROM_DATA.get(function))
    keywords = {k.arg: k.value for k in call.keywords}
    node = keywords.get("dtype", call.args[where] if where is not None and len(call.args) > where
                        and not any(isinstance(a, ast.Starred) for a in call.args[:where + 1]) else None)
    name = dotted(node) if node is not None else None
    return _PY_DTYPES.get(name) if name in _PY_DTYPES else (name or "").rpartition(".")[2] or None


def _is_a_number(node: Optional[ast.AST]) -> bool:
    """A literal number, bool or None (signed): the model knows it for no tensor."""
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, complex, bool, type(None))
