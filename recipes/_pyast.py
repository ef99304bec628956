"""Helpers for recipes' prechecks, which rule a file out before the much
slower fissix parse: first on its text (which modules it may import), then
on the stdlib ``ast`` (CPython's C parser).

Every answer over-approximates the recipe's own analysis on the fissix tree:
a precheck may let a file through for nothing, never stop one the recipe
would report on."""

from __future__ import annotations

import ast
import re
import sys
import unicodedata
from bisect import bisect_right
from functools import lru_cache, partial
from typing import Dict, Iterator, List, Optional, Pattern, Sequence, Set, Tuple, Union

from migrate.conventions import CONVENTIONAL
from migrate.prefilter import GAP
from migrate.recipe import SourceFacts, walk
from recipes._model.imports import ImportRecord, Imports, build_imports
from recipes._model.contexts import names_a_tape
from recipes._model.kinds import keras_base_role

_CONTINUATION = re.compile(r"\\\r?\n")


def standalone(word: str, after_dot: bool = False) -> str:
    """A regular expression: ``word`` (a fixed-width expression) where no
    word character goes before it, nor a dot unless ``after_dot``. The
    check is written after the word: a pattern that starts with a literal
    is searched for fast, one that starts with a lookbehind is tried at
    every character (several times slower on a whole file)."""
    before = r"\w" if after_dot else r"[\w.]"
    return f"{word}(?<!{before}{word})"


def spelled_alone(text: str, word: str) -> bool:
    r"""Does ``text`` hold ``word`` (a literal) with no word character or dot
    before it and no word character after it? What ``standalone(word)``
    followed by ``(?!\w)`` finds, without compiling a pattern per word."""
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        before, after = text[at - 1:at], text[end:end + 1]
        if before != "." and not _word_character(before) and not _word_character(after):
            return True
        at = text.find(word, at + 1)
    return False


def _word_character(character: str) -> bool:
    r"""What ``\w`` matches (none for the empty string)."""
    return character.isalnum() or character == "_"


# an import statement is one logical line holding the word `import`; the
# module's name is on that line once backslash continuations are joined
# (a parenthesized `from m import (...)` only wraps the imported names)
_IMPORT_WORD = re.compile(standalone("import", after_dot=True) + r"(?!\w)")


def dotted(node: ast.AST) -> Optional[str]:
    """``tf.keras.Model`` for that attribute chain; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def assigned_names(node: ast.AST) -> Iterator[str]:
    """Every plain name an ``=`` / annotated assignment statement binds."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):
                yield sub.id


def may_import(facts: SourceFacts, modules: Sequence[str]) -> bool:
    """Text-only: can the file hold ``import m`` / ``from m import ...`` for
    one of ``modules`` exactly (not a submodule: ``tensorflow.compat.v2`` is
    not ``tensorflow``), or, pasted without its imports, read a conventional
    alias of one of them (``tf.``, ``np.``, ``layers.``: the model presumes
    it when the module leaves it unbound)? No parse needed."""
    pattern = _module_pattern(tuple(modules))
    if any(pattern.search(line) for line in facts.derived("import lines", _import_lines)):
        return True
    imports = " ".join(facts.derived("import lines", _import_lines))
    aliases = [alias for alias, module in CONVENTIONAL.items()
               if any(module == m or module.startswith(m + ".") for m in modules)
               and not _bound_pattern(alias).search(imports)]  # imported as something else: not presumed
    return bool(aliases) and _presumed_pattern(tuple(aliases)).search(code_text(facts)) is not None


@lru_cache(maxsize=None)
def _bound_pattern(alias: str) -> Pattern:
    """``alias`` as a whole name in an import line (``import tensorflow.compat.v2 as tf``)."""
    return re.compile(r"(?<![\w.])" + re.escape(alias) + r"(?![\w.])")


@lru_cache(maxsize=None)
def _presumed_pattern(aliases: tuple) -> Pattern:
    """``alias.`` for any of ``aliases``, not after a word character or a dot."""
    return re.compile("(?:" + "|".join(standalone(re.escape(a)) for a in aliases) + r")[ \t\f]*\.")


def _import_lines(facts: SourceFacts) -> List[str]:
    text = _CONTINUATION.sub(" ", facts.text)
    lines, end = [], -1
    for match in _IMPORT_WORD.finditer(text):
        if match.start() > end:  # not on the line taken last
            end = text.find("\n", match.end())
            end = len(text) if end < 0 else end
            lines.append(text[text.rfind("\n", 0, match.start()) + 1:end])
    return lines


@lru_cache(maxsize=None)
def _module_pattern(modules: tuple) -> Pattern:
    spelled = ["[ \t\f]*\\.[ \t\f]*".join(map(re.escape, m.split("."))) for m in modules]
    # not part of a longer dotted name on either side
    return re.compile(r"(?<![\w.])(?:" + "|".join(spelled) + r")(?!\w)(?![ \t\f]*\.)")


def import_table(facts: SourceFacts) -> Imports:
    """The semantic model's import table (``recipes._model.imports``), built
    by its own builder from the ``ast``'s import statements (anywhere but in
    expressions), every conventional alias presumed: never narrower than the
    model's, which presumes one only when the module leaves it unbound."""
    return facts.derived("import table", _import_table)


def _import_table(facts: SourceFacts) -> Imports:
    records = []
    for statement in statements(facts, ast.Import, ast.ImportFrom):
        node = statement.node
        if isinstance(node, ast.Import):
            records += [ImportRecord(alias.asname or alias.name.split(".")[0], alias.name, None,
                                     alias.asname is not None) for alias in node.names]
        else:
            module = "." * node.level + (node.module or "")
            records += [ImportRecord(alias.asname or alias.name, module, alias.name, alias.asname is not None)
                        for alias in node.names if alias.name != "*"]
    return build_imports(records, set(CONVENTIONAL))


def class_bases(facts: SourceFacts) -> Dict[str, List[Optional[str]]]:
    """class name -> the dotted names of its bases (every class of a name merged)."""
    return facts.derived("class bases", _class_bases)


def _class_bases(facts: SourceFacts) -> Dict[str, List[Optional[str]]]:
    found: Dict[str, List[Optional[str]]] = {}
    for statement in statements(facts, ast.ClassDef):
        found.setdefault(statement.node.name, []).extend(map(dotted, statement.node.bases))
    return found


class Statement:
    """A statement and where it sits: its innermost and outermost enclosing
    functions, the class whose body holds it (no function between), and the
    block (statement list) holding it, at ``index``. A plain class with
    slots: a file's statements are many, and a frozen dataclass's
    ``__init__`` cost more than the walk that makes them."""

    __slots__ = ("node", "function", "outermost", "cls", "block", "index")

    def __init__(self, node: ast.stmt, function: Optional[ast.AST], outermost: Optional[ast.AST],
                 cls: Optional[ast.ClassDef], block: List[ast.stmt], index: int) -> None:
        self.node, self.function, self.outermost, self.cls = node, function, outermost, cls
        self.block, self.index = block, index


_BLOCK_NAMES = ("body", "orelse", "finalbody", "handlers", "cases")
_PARTS = ("handlers", "cases")  # except clauses and match cases: each holds a body
_NESTED: Dict[type, Tuple[str, ...]] = {}


def _blocks(kind: type) -> Tuple[str, ...]:
    """The fields of a statement class that hold statements (or, for
    ``handlers`` and ``cases``, parts that do), in _BLOCK_NAMES' order."""
    names = _NESTED.get(kind)
    if names is None:
        names = _NESTED[kind] = tuple(name for name in _BLOCK_NAMES if name in kind._fields)
    return names


def statements(facts: SourceFacts, *types: type) -> List[Statement]:
    """Every statement of one of ``types`` (exact classes), from one walk of
    the statements only, shared by every precheck: a walk of every node
    costs more than the parse."""
    index = facts.derived("statements", _index_statements)
    return [found for kind in types for found in index.get(kind, ())]


def _index_statements(facts: SourceFacts) -> Dict[type, List[Statement]]:
    index: Dict[type, List[Statement]] = {}
    body = facts.tree.body
    stack = [Statement(node, None, None, None, body, at) for at, node in enumerate(body)]
    while stack:
        found = stack.pop()
        node = found.node
        kind = type(node)
        same = index.get(kind)
        if same is None:
            same = index[kind] = []
        same.append(found)
        names = _blocks(kind)
        if not names:
            continue
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            function, outermost, cls = node, found.outermost or node, None
        elif kind is ast.ClassDef:
            function, outermost, cls = found.function, found.outermost, node
        else:
            function, outermost, cls = found.function, found.outermost, found.cls
        for name in names:
            held = getattr(node, name)
            for block in [part.body for part in held] if name in _PARTS else [held]:
                stack.extend([Statement(child, function, outermost, cls, block, at)
                              for at, child in enumerate(block)])
    return index


def statements_at(facts: SourceFacts, line: int) -> List[ast.stmt]:
    """The innermost statements holding ``line`` (several after ``;``): what
    to walk for an expression the text shows there. Searched back from the
    line: a filter of every statement above it made a finding cost the file."""
    firsts, ordered = facts.derived("statements by line", _statements_by_line)
    holding: List[ast.stmt] = []
    for at in range(bisect_right(firsts, line) - 1, -1, -1):
        node = ordered[at]
        if holding and node.lineno != holding[0].lineno:
            break
        if node.end_lineno >= line:
            holding.append(node)
    return holding[::-1]


def _statements_by_line(facts: SourceFacts) -> Tuple[List[int], List[ast.stmt]]:
    ordered = sorted((found.node for founds in facts.derived("statements", _index_statements).values()
                      for found in founds), key=lambda node: (node.lineno, node.col_offset))
    return [node.lineno for node in ordered], ordered


def first_line(node: ast.AST) -> int:
    """The first line of a statement, its decorators included."""
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def line_of(facts: SourceFacts, offset: int) -> int:
    """The 1-based line (as the ``ast`` counts) of an offset in ``code_text``."""
    starts = facts.derived("line starts", lambda f: [m.end() for m in _LINE_BREAK.finditer(code_text(f))])
    return bisect_right(starts, offset) + 1


def code_lines(facts: SourceFacts) -> List[str]:
    """``code_text`` cut into lines (index 0 is line 1)."""
    return facts.derived("code lines", lambda f: _LINE_BREAK.split(code_text(f)))


# a comment, or a string literal (its prefix too) as the tokenizer of Python
# < 3.12 ends it (a backslash escapes any character, a one-quote string stays
# on its line); each alternative starts with its own character, a prefix
# letter checking that no word goes before it, so the search skips every
# other character without trying the pattern there
_STRINGS = [r"'''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*'''",  # written unrolled: a loop per piece,
            r'"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*"""',  # not per character
            r"'[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*'",
            r'"[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*"']
_PREFIX_LETTERS = "rRbBuUfF"
_NOT_CODE = re.compile("|".join(
    [r"#[^\n]*"] + _STRINGS
    + [rf"{letter}(?<!\w.)[{_PREFIX_LETTERS}]?(?:{'|'.join(_STRINGS)})" for letter in _PREFIX_LETTERS]))
_F_STRING = re.compile(r"(?<![\w])[rRbBuU]?[fF][rR]?['\"]")


def code_text(facts: SourceFacts) -> str:
    """The text with every comment and string literal but f-strings blanked
    (its line breaks kept, so lines stay the ``ast``'s), identifiers spelled as the
    ``ast`` spells them (NFKC): what a text gate searches for code
    (docstrings hold code examples). From Python 3.12 an f-string may nest
    its own quotes (PEP 701), which this scan cannot follow: a file with an
    f-string is searched whole."""
    return facts.derived("code text", _code_text)


def _code_text(facts: SourceFacts) -> str:
    text = facts.text
    if sys.version_info < (3, 12) or not _F_STRING.search(text):
        text = _NOT_CODE.sub(_blank, text)
    if spelled_as_in_ast(facts):
        return text
    return unicodedata.normalize("NFKC", text)  # after the blanking: a string may hold `＂`


def spelled_as_in_ast(facts: SourceFacts) -> bool:
    """Is every identifier of the text spelled as the ``ast`` spells it (no
    NFKC change)? Then a name the ``ast`` gives is one fissix sees."""
    return facts.derived("spelled as in ast", lambda f: f.text.isascii()
                         or unicodedata.is_normalized("NFKC", f.text))


def _blank(match: "re.Match") -> str:
    text = match.group()
    if text[0] in "fF" or text[0] in _PREFIX_LETTERS and text[1] in "fF":
        return text  # an f-string holds code
    if "\r" in text:
        return "".join(_LINE_BREAK.findall(text))
    return "\n" * text.count("\n") or " "


# A canonical Keras model or layer class path (recipes._model.kinds: the
# constructors and the bases of a Keras Model or Layer) continues its
# `keras` component with one of these words
_KERAS_ENTRY = rf"{GAP}*\.{GAP}*(?:Model|Sequential|Layer|layers|models|engine)(?!\w)"
# pattern texts, compiled by `re` at their first search (a file without `keras` or `layers` needs neither)
_KERAS_PATH = rf"keras{_KERAS_ENTRY}|keras{GAP}+import(?!\w)|{standalone('layers')}{GAP}*\."
_KERAS_ALIAS = rf"keras{GAP}+as{GAP}+(\w+)"


def may_name_keras_classes(facts: SourceFacts) -> bool:
    """Text only: can a name of the file resolve, as the semantic model
    canonicalizes it, to a Keras model or layer class? ``keras`` (any
    spelling: ``tf.keras``, ``tensorflow.compat.v2.keras``, ``tf_keras``,
    ``keras.api._v2.keras``) followed by ``.Model``, ``.layers``... or by
    ``import`` (``from tensorflow.keras import layers``); an alias of a
    Keras module followed by one of those (``import tensorflow.keras as K``
    ... ``K.layers``); or the presumed ``layers.`` of a pasted snippet.
    ``from tf_keras.src.engine import base_layer`` names none: the model
    knows ``keras.src...`` as no Keras class."""
    if "keras" not in facts.text and "layers" not in facts.text:
        return False
    text = code_text(facts)
    if re.search(_KERAS_PATH, text):
        return True
    aliases = {match.group(1) for match in re.finditer(_KERAS_ALIAS, text)}
    return any(re.search(rf"(?<![\w.]){re.escape(alias)}{_KERAS_ENTRY}", text) for alias in aliases)


def keras_classes(facts: SourceFacts) -> Set[str]:
    """Names of the file's classes that may derive from a Keras Model or
    Layer (``Kinds.keras_role``: a base resolving to one, or a class of the
    file of that name that does), every class of a name merged."""
    return facts.derived("keras classes", _keras_classes)


def _keras_classes(facts: SourceFacts) -> Set[str]:
    if not may_name_keras_classes(facts):
        return set()
    qualified = import_table(facts).qualified
    bases = {cls: [b for b in found if b] for cls, found in class_bases(facts).items()}
    keras = {cls for cls, found in bases.items()
             if any(keras_base_role(path) for base in found for path in qualified(base))}
    while True:
        more = {cls for cls, found in bases.items() if cls not in keras and not keras.isdisjoint(found)}
        if not more:
            return keras
        keras |= more


def tapes(facts: SourceFacts) -> List[Tuple[ast.AST, str]]:
    """(with statement, name) for every ``with <call>(...) as name:`` whose
    callee may name a tape: the model's own test (``names_a_tape`` of the
    callee as spelled, or as the import table may resolve it), so never
    narrower than its tapes (``recipes._model.contexts``)."""
    if "GradientTape" not in facts.text:
        return []
    return facts.derived("tapes", _collect_tapes)


def tape_calls(facts: SourceFacts, methods: Sequence[str]) -> List[ast.Call]:
    """The calls ``name.m(...)`` for an ``m`` of ``methods`` and the ``name``
    of one of ``tapes``: where the model's ``tape_named`` may find a tape."""
    names = {name for _, name in tapes(facts)}
    if not names:
        return []
    return [call for call in facts.nodes(ast.Call) if isinstance(call.func, ast.Attribute)
            and call.func.attr in methods and isinstance(call.func.value, ast.Name) and call.func.value.id in names]


def has_a_named_tape(facts: SourceFacts) -> List[ast.Call]:
    """Precheck of recipes whose finding is a named tape's ``gradient`` call
    (``with ...GradientTape() as tape`` ... ``tape.gradient(...)``)."""
    return tape_calls(facts, ("gradient",))


def _collect_tapes(facts: SourceFacts) -> List[Tuple[ast.AST, str]]:
    return [(statement.node, item.optional_vars.id) for statement in tape_statements(facts)
            for item in statement.node.items
            if _opens_a_tape(facts, item.context_expr) and isinstance(item.optional_vars, ast.Name)]


def tape_statements(facts: SourceFacts) -> List[Statement]:
    """The ``with`` statements that may open a tape (named or not)."""
    if "GradientTape" not in facts.text:
        return []
    return [found for found in statements(facts, ast.With, ast.AsyncWith)
            if any(_opens_a_tape(facts, item.context_expr) for item in found.node.items)]


def _opens_a_tape(facts: SourceFacts, expr: ast.AST) -> bool:
    path = dotted(expr.func) if isinstance(expr, ast.Call) else None
    return path is not None and (names_a_tape(path) or any(map(names_a_tape, import_table(facts).qualified(path))))


_STEP_NAMES = ("call", "train_step", "test_step")
_WRAPPERS = ("tensorflow.function", "tensorflow.custom_gradient")


def defines(facts: SourceFacts, *names: str) -> bool:
    """Text only: may the code define a function named one of ``names``
    (``def``, then the name, whatever separates them)?"""
    return _definition_pattern(names).search(code_text(facts)) is not None


@lru_cache(maxsize=None)
def _definition_pattern(names: Tuple[str, ...]) -> Pattern:
    return re.compile(rf"{standalone('def', after_dot=True)}{GAP}+(?:{'|'.join(names)})(?!\w)")


def gradient_scopes(facts: SourceFacts) -> List[ast.AST]:
    """The ``with`` statements that may open a tape and the functions that
    may run in a gradient context: a lexical gate around the model's
    contexts (``recipes._model.contexts``: tape bodies, Keras
    ``call``/``train_step``/``test_step``, ``tf.function``, losses and
    metrics given to ``compile``, the module functions these call, by name,
    transitively), and ``tf.custom_gradient`` functions. Never narrower:
    roots are the ``with`` statements that may open a tape, the step methods
    of ``keras_classes``, the functions decorated with what may be
    ``tf.function`` / ``tf.custom_gradient``, and every function the file
    defines with a name read in a ``.compile(...)`` or ``tf.function(...)``
    call; every function of the name a call in a joined scope may resolve
    to joins (``_function_named``: the model's ``functions_called``)."""
    return facts.derived("gradient scopes", _GradientScopes).scopes


def gradient_calls(facts: SourceFacts) -> List[ast.Call]:
    """The calls in ``gradient_scopes`` (nested functions' too): the calls
    that may run in a gradient context."""
    return facts.derived("gradient scopes", _GradientScopes).calls


class _GradientScopes:
    """The closure of ``gradient_scopes``, with the calls its walk meets."""

    __slots__ = ("scopes", "calls")

    def __init__(self, facts: SourceFacts) -> None:
        self.scopes: List[ast.AST] = []
        self.calls: List[ast.Call] = []
        code = code_text(facts)
        if "GradientTape" not in facts.text and not defines(facts, *_STEP_NAMES) \
                and not any(word in code for word in ("compile", "function", "custom_gradient")):
            return  # no root: no tape, step method, compile, tf.function or custom_gradient spelled
        defined: Dict[str, List[ast.AST]] = {}
        for found in statements(facts, ast.FunctionDef, ast.AsyncFunctionDef):
            defined.setdefault(found.node.name, []).append(found.node)
        roots = _roots(facts, defined)
        calls: Dict[int, ast.Call] = {}
        seen: Set[int] = set()
        while roots:
            scope = roots.pop()
            if id(scope) in seen:
                continue
            seen.add(id(scope))
            self.scopes.append(scope)
            for node in walk(scope):
                if isinstance(node, ast.Call) and id(node) not in calls:
                    calls[id(node)] = node
                    roots += defined.get(_function_named(node), ())
        self.calls = list(calls.values())


def _roots(facts: SourceFacts, defined: Dict[str, List[ast.AST]]) -> List[ast.AST]:
    """The roots of ``gradient_scopes``; ``defined``: the file's functions by name."""
    table = import_table(facts)
    spelled = {path.rpartition(".")[2] for path in _WRAPPERS} | {
        record.local for record in table.records if not table.qualified(record.local).isdisjoint(_WRAPPERS)}
    wraps = partial(_wraps, qualified=table.qualified, spelled=spelled)
    roots: List[ast.AST] = []
    keras = keras_classes(facts)
    for found in statements(facts, ast.FunctionDef, ast.AsyncFunctionDef):
        node = found.node
        if node.name in _STEP_NAMES and found.cls is not None and found.cls.name in keras \
                or any(wraps(decorator) for decorator in node.decorator_list):
            roots.append(node)
    roots += [found.node for found in tape_statements(facts)]
    for call in facts.nodes(ast.Call):
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "compile" or wraps(func):
            roots += [f for arg in call.args + [k.value for k in call.keywords]
                      for name in names_read(arg) for f in defined.get(name, ())]
    return roots


def _function_named(call: ast.Call) -> Optional[str]:
    """The name by which the model's ``functions_called`` may resolve a call
    to a function of the file: ``f`` of ``f(...)``, ``f(...).g(...)`` and
    ``f[0].g(...)``; ``m`` of ``x.m(...)`` and ``x.m.n(...)`` (a method)."""
    node, after = call.func, None
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node, after = (node.func if isinstance(node, ast.Call) else node.value), node
    if not isinstance(node, ast.Name):
        return None
    return after.attr if isinstance(after, ast.Attribute) else node.id


def _wraps(expr: ast.AST, qualified, spelled: Set[str]) -> bool:
    """May ``expr`` (a decorator, a callee) name ``tf.function`` or
    ``tf.custom_gradient`` (``@tf.function(jit_compile=True)`` too)? Asked
    of the import table only when its last name is one of ``spelled``: the
    wrappers' own, or a name an import binds to one (the table keeps the
    last name of a dotted path)."""
    path = dotted(expr.func if isinstance(expr, ast.Call) else expr)
    return path is not None and path.rpartition(".")[2] in spelled and not qualified(path).isdisjoint(_WRAPPERS)


def on_self(node: ast.AST) -> bool:
    """Is ``node`` ``self.x``?"""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def names_read(expr: ast.AST) -> Set[str]:
    """Every name and attribute name spelled in ``expr``."""
    return {node.id if isinstance(node, ast.Name) else node.attr for node in walk(expr)
            if isinstance(node, (ast.Name, ast.Attribute))}


def calls_one_of(facts: SourceFacts, names) -> bool:
    """Does the file call ``f(...)`` or ``x.f(...)`` for an ``f`` of ``names``
    (the model's calls of a method, ``scope.calls``, are some of these)?"""
    return any((getattr(call.func, "attr", None) or getattr(call.func, "id", None)) in names
               for call in facts.nodes(ast.Call))


def method_calls(scope: Union[ast.AST, SourceFacts], receiver: str, method: str) -> Iterator[ast.Call]:
    """Calls ``receiver.method(...)`` inside ``scope``: a node, or a file's
    SourceFacts (its whole tree, from the shared index)."""
    for node in scope.nodes(ast.Call) if isinstance(scope, SourceFacts) else walk(scope):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == method and isinstance(node.func.value, ast.Name)
                and node.func.value.id == receiver):
            yield node


def methods_calling(facts: SourceFacts, names: Sequence[str], callees: Sequence[str]) -> List[ast.AST]:
    """The functions named one of ``names`` whose body calls ``x.callee(...)``
    or ``callee(...)`` for one of ``callees``: a lexical gate around a finding
    that must sit in a Keras ``call`` or step function."""
    return [found.node for found in statements(facts, ast.FunctionDef, ast.AsyncFunctionDef)
            if found.node.name in names
            and any(isinstance(call, ast.Call) and (getattr(call.func, "attr", None)
                                                    or getattr(call.func, "id", None)) in callees
                    for call in walk(found.node))]


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")  # lines as CPython counts them (a form feed is no break)


def source_segment(facts: SourceFacts, node: ast.AST) -> str:
    """``ast.get_source_segment(facts.text, node)`` from the text's lines,
    split once per text (the stdlib splits the whole text at every call)."""
    lines = facts.derived("lines", lambda f: _LINE.findall(f.text))
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset:node.end_col_offset].decode()
    head = lines[first].encode()[node.col_offset:].decode()
    tail = lines[last].encode()[:node.end_col_offset].decode()
    return head + "".join(lines[first + 1:last]) + tail
