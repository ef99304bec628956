"""Jupyter notebooks: the code cells, in order, go through the engine as one module.

A notebook is one namespace: the imports are in cell 1 and the code using
them in cell 5, so a recipe must see the cells together. The code cells are
joined into one module, a boundary line (``pass  # tf-migrate:cell-boundary N``)
between two cells; the engine runs once; its output is cut back into cells at
the boundaries, and findings and fix edits are mapped back to (cell, line).
A rewrite that loses or moves a boundary is discarded for the whole notebook,
with the reason: cells depend on each other, so half a rewrite is not safe.

IPython syntax is not Python, so before joining, a cell's magic and shell
lines (``%line``, ``!shell``, ``x = !cmd``, ``obj?`` / ``?obj`` help, with
their backslash continuations) are masked as ``pass`` placeholders of the same
indentation, and restored afterwards: they never cause a parse failure and
come back byte-identical. So are one-line ``from __future__`` imports, which
IPython allows atop any cell but a module only atop the first. A cell whose
first line is a cell magic is left alone unless the magic runs its body as
Python (``%%time``, ``%%capture``...).
A cell CPython (or fissix) cannot parse is named in an error and left out;
the other cells are still analysed. Markdown and raw cells, outputs,
execution counts and all metadata are kept; the file is re-serialised by
nbformat only when a cell changed.

Diagnostics name the cell: their path is ``nb.ipynb:cell N`` (N counts every
cell from 1, markdown included, as the notebook shows them top to bottom) and
their lines, columns and fix edits are relative to that cell's source. A fix
whose edits span several cells (an import a fix adds to cell 1) keeps them
per cell in ``Finding.edits`` (the LSP applies them); its Diagnostic carries
no fix, since one path cannot hold edits of several cells.

CAVEATS:
- A line is only taken for IPython syntax where a statement starts (not inside
  brackets or strings); recognising ``x = !cmd`` and help lines is a heuristic.
- The cells are analysed in notebook order, not in the order they ran.
"""

from __future__ import annotations

import bisect
import copy
import io
import re
import tokenize
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .edits import line_edits, split_lines
from .engine import Options, apply_edits, check_output, transform
from .result import Diagnostic, Edit, SourceResult, Status, cell_label

MARK = "tf-migrate: masked IPython line"
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug"}
_ASSIGNED_MAGIC = re.compile(r"^[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!]")
_HELP = re.compile(r"^(\?{1,2}[\w.*]+|[\w.*]+\?{1,2})$")  # obj?  obj??  ?obj  np.*load*?
_FUTURE = re.compile(r"^from\s+__future__\s+import\s+[\w\s,]+$")
BOUNDARY = "tf-migrate:cell-boundary"


def _is_masked(stripped: str) -> bool:
    return (stripped.startswith(("%", "!", "?"))
            or bool(_HELP.match(stripped))
            or bool(_ASSIGNED_MAGIC.match(stripped))
            or bool(_FUTURE.match(stripped)))


@dataclass(frozen=True)
class Masked:
    """A cell's source as Python the engine can parse, and the lines it hides."""

    text: str
    hidden: Tuple[str, ...]


def mask(source: str) -> Optional[Masked]:
    """Replace IPython-only lines by placeholders; None for a non-Python cell magic."""
    lines = source.splitlines(keepends=True)
    first = next((line.strip() for line in lines if line.strip()), "")
    if first.startswith("%%") and first[2:].split(" ", 1)[0] not in PYTHON_CELL_MAGICS:
        return None
    out: List[str] = []
    hidden: List[str] = []
    continued_indent: Optional[str] = None
    for line in lines:
        stripped = line.strip()
        if continued_indent is None and (not _is_masked(stripped) or _inside_statement(out)):
            out.append(line)
            continue
        indent = continued_indent if continued_indent is not None else line[:len(line) - len(line.lstrip())]
        newline = "\n" if line.endswith("\n") else ""
        out.append(f"{indent}pass  # {MARK}{newline}")
        hidden.append(line)
        continued_indent = indent if stripped.endswith("\\") else None
    return Masked("".join(out), tuple(hidden))


def _inside_statement(previous: List[str]) -> bool:
    """Do the lines so far end inside brackets, a string or a backslash
    continuation? Then a line starting with % is a modulo, not a magic."""
    try:
        for _ in tokenize.generate_tokens(io.StringIO("".join(previous)).readline):
            pass
    except tokenize.TokenError:
        return True
    except SyntaxError:  # not Python so far: the engine will say so
        return False
    return False


def unmask(text: str, masked: Masked) -> Optional[str]:
    """Put the hidden lines back; None when a recipe dropped or duplicated one."""
    lines = text.splitlines(keepends=True)
    hidden = iter(masked.hidden)
    restored = []
    count = 0
    for line in lines:
        if line.strip() == f"pass  # {MARK}":
            count += 1
            original = next(hidden, None)
            if original is None:
                return None
            restored.append(original.rstrip("\n") + ("\n" if line.endswith("\n") else ""))
        else:
            restored.append(line)
    return "".join(restored) if count == len(masked.hidden) else None


def check_cell(text: str) -> Optional[str]:
    """None when a cell's source (magics masked) parses; else the reason."""
    masked = mask(text)
    return None if masked is None else check_output(masked.text + "\n", "<cell>")


def _python_problem(text: str) -> Optional[str]:
    """CPython's verdict on one masked cell, whatever recipes would look at."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            compile(text, "<cell>", "exec", dont_inherit=True)
    except SyntaxError as err:
        return f"syntax error at line {err.lineno}: {err.msg}"
    except ValueError as err:  # a NUL byte
        return f"ValueError: {err}"
    return None


@dataclass(frozen=True)
class _Part:
    """One code cell inside the joined module."""

    index: int  # position in the notebook, from 0, markdown cells included
    source: str
    masked: Masked
    start: int  # the module line of the cell's first line, from 1

    def restore(self, segment: str) -> Optional[str]:
        """The cell's text from its module segment; None when a magic line moved."""
        if not self.source.endswith("\n") and segment.endswith("\n"):
            segment = segment[:-1]
        return unmask(segment, self.masked)


@dataclass(frozen=True)
class Module:
    """Code cells joined into one module, a boundary line between two cells."""

    text: str
    parts: Tuple[_Part, ...]
    tag: str

    def boundary(self, part: _Part) -> str:
        return _boundary(self.tag, part.index)

    def locate(self, line: int) -> _Part:
        """The cell a module line belongs to (a boundary belongs to the cell before it)."""
        starts = [p.start for p in self.parts]
        return self.parts[max(bisect.bisect_right(starts, line) - 1, 0)]

    def split(self, text: str) -> Optional[List[str]]:
        """``text`` (a rewrite of this module) cut back into one segment per
        cell; None unless every boundary is there, once, in order."""
        if text.count(self.tag) != len(self.parts) - 1:
            return None
        segments: List[List[str]] = [[]]
        expected = iter(self.parts[1:])
        following = next(expected, None)
        for line in split_lines(text):
            if following is not None and line.rstrip("\r\n") == self.boundary(following):
                segments.append([])
                following = next(expected, None)
            else:
                segments[-1].append(line)
        return ["".join(s) for s in segments] if following is None else None


def _boundary(tag: str, index: int) -> str:
    """A statement no recipe touches, so the line stays where it is."""
    return f"pass  # {tag} {index + 1}"


def join(cells: Sequence[Tuple[int, str, Masked]]) -> Module:
    """The cells ``(index, source, masked)`` as one module, in the order given."""
    tag = BOUNDARY
    while any(tag in source for _, source, _ in cells):  # a tag no cell contains
        tag += "-"
    text, parts = "", []
    for index, source, masked in cells:
        if parts:
            text += _boundary(tag, index) + "\n"
        parts.append(_Part(index, source, masked, text.count("\n") + 1))
        text += masked.text if masked.text.endswith("\n") or not masked.text else masked.text + "\n"
    return Module(text, tuple(parts), tag)


@dataclass
class Finding:
    """A finding in one cell, and its fix as edits per cell (by notebook index)
    relative to each cell's source; empty when report-only or not mappable."""

    cell: int
    diagnostic: Diagnostic
    edits: Dict[int, List[Edit]] = field(default_factory=dict)


@dataclass
class Analysis:
    """What the engine made of a notebook's code cells."""

    outputs: Dict[int, str] = field(default_factory=dict)  # every analysed cell's new source
    findings: List[Finding] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)


def analyse(cells: Sequence[Tuple[int, str]], path: str, options: Options) -> Analysis:
    """Run the engine over the code cells ``(index, source)`` as one module,
    in the order given; never raises."""
    analysis, parts = Analysis(), []
    for index, source in cells:
        masked = mask(source)
        if masked is None:
            continue
        problem = _python_problem(masked.text)
        if problem:
            analysis.errors.append(f"{cell_label(path, index + 1)}: {problem}")
        else:
            parts.append((index, source, masked))
    module, result = _run(parts, path, options, analysis)
    if module is None or result is None:
        return analysis
    analysis.errors.extend(e if e.startswith(path) else f"{path}: {e}" for e in result.errors)
    if result.status is Status.FAILED and not result.errors:
        analysis.errors.append(f"{path}: {result.reason}")
    try:
        analysis.outputs = _cells_of(module, result.output)
    except Uncut as reason:
        analysis.errors.append(f"{path}: {reason}; notebook left unchanged")
        analysis.outputs = {p.index: p.source for p in module.parts}
        for diag in result.diagnostics:
            diag.applied = False
    analysis.findings = [_finding(module, diag, path, options.isolated) for diag in result.diagnostics]
    return analysis


def _run(parts: List[Tuple[int, str, Masked]], path: str, options: Options,
         analysis: Analysis) -> Tuple[Optional[Module], Optional[SourceResult]]:
    """Join and transform; cells fissix cannot parse are named and left out."""
    while parts:
        module = join(parts)
        result = transform(module.text, path, _in_module(options, module, path))
        if result.status is not Status.SKIPPED:
            return module, result
        unparsable = {}
        for index, _, masked in parts:
            problem = check_output(masked.text + "\n", "<cell>")
            if problem:
                unparsable[index] = problem
        if not unparsable:  # only the cells together fail to parse
            analysis.errors.append(f"{path}: {result.reason}")
            return None, None
        analysis.errors.extend(f"{cell_label(path, i + 1)}: {p}" for i, p in unparsable.items())
        parts = [p for p in parts if p[0] not in unparsable]
    return None, None


def _in_module(options: Options, module: Module, path: str) -> Options:
    """``options.only`` names findings by cell and cell line (as reported);
    the engine sees the joined module's lines."""
    if options.only is None:
        return options
    offsets = {cell_label(path, p.index + 1): p.start - 1 for p in module.parts}
    return replace(options, only=frozenset(
        (path, recipe, line + offsets[where], column) if where in offsets
        else (where, recipe, line, column)
        for where, recipe, line, column in options.only))


class Uncut(Exception):
    """A rewrite of the module cannot be cut back into cells; the message says why."""


def _cells_of(module: Module, text: str) -> Dict[int, str]:
    """Each cell's new source (by notebook index) from a rewrite of ``module``."""
    segments = module.split(text)
    if segments is None:
        raise Uncut("a rewrite moved or removed a cell boundary")
    outputs = {}
    for part, segment in zip(module.parts, segments):
        restored = part.restore(segment)
        if restored is None:
            raise Uncut(f"a rewrite moved an IPython magic line of cell {part.index + 1}")
        outputs[part.index] = restored
    return outputs


def _finding(module: Module, diag: Diagnostic, path: str, isolated: bool) -> Finding:
    """``diag`` (module positions) as a finding of the cell it is in."""
    part = module.locate(diag.line)
    edits: Dict[int, List[Edit]] = {}
    if isolated and diag.fixable and diag.fix:  # only then are the edits relative to the module
        try:
            outputs = _cells_of(module, apply_edits(module.text, diag.fix))
            edits = {p.index: line_edits(p.source, outputs[p.index])
                     for p in module.parts if outputs[p.index] != p.source}
        except Uncut:
            pass  # no fix offered: it cannot be expressed per cell
    offset = part.start - 1
    mapped = replace(diag, path=cell_label(path, part.index + 1), line=diag.line - offset,
                     end_line=diag.end_line - offset,
                     fix=edits[part.index] if set(edits) == {part.index} else None)
    return Finding(part.index, mapped, edits)


@dataclass
class Cell:
    """One code cell's fate: its source before and after, and its findings."""

    index: int
    label: str
    source: str
    output: str
    diagnostics: List[Diagnostic] = field(default_factory=list)


@dataclass
class NotebookResult(SourceResult):
    """A SourceResult whose source/output are the notebook file's text, with
    the per-cell detail that `--interactive` and `diff` need."""

    cells: List[Cell] = field(default_factory=list)
    findings: List[Finding] = field(default_factory=list)
    notebook: Any = None

    def compose(self, sources: Dict[int, str]) -> str:
        """The notebook file text with the code cells at these indexes replaced."""
        import nbformat

        if not sources:
            return self.source
        notebook = copy.deepcopy(self.notebook)
        for index, text in sources.items():
            notebook.cells[index].source = text
        text = nbformat.writes(notebook, version=nbformat.NO_CONVERT)
        return text + "\n" if self.source.endswith("\n") and not text.endswith("\n") else text


def transform_notebook(text: str, path: str, options: Options) -> NotebookResult:
    """Run the engine over the code cells of the notebook ``text``; never raises.
    nbformat is imported here, not by every run that meets no notebook."""
    import nbformat

    try:
        notebook = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    except (nbformat.reader.NotJSONError, nbformat.ValidationError, ValueError, KeyError) as err:
        return NotebookResult(path, Status.SKIPPED, text, text, reason=f"not a readable notebook ({err})")
    if notebook.get("nbformat", 0) < 4:
        return NotebookResult(path, Status.SKIPPED, text, text,
                              reason="notebook format before v4; upgrade it with "
                                     "`jupyter nbconvert --to notebook`")
    result = NotebookResult(path, Status.UNCHANGED, text, text, notebook=notebook)
    if _language(notebook) not in ("", "python"):
        return result
    code = [(index, cell.source) for index, cell in enumerate(notebook.cells)
            if cell.get("cell_type") == "code"]
    analysis = analyse(code, path, options)
    result.errors, result.findings = analysis.errors, analysis.findings
    result.diagnostics = [f.diagnostic for f in analysis.findings]
    for index, source in code:
        if mask(source) is not None:
            result.cells.append(Cell(index, cell_label(path, index + 1), source,
                                     analysis.outputs.get(index, source),
                                     [f.diagnostic for f in analysis.findings if f.cell == index]))
    result.output = result.compose({c.index: c.output for c in result.cells if c.output != c.source})
    if result.errors:
        result.status, result.reason = Status.FAILED, result.errors[0]
    elif result.output != text:
        result.status = Status.CHANGED
    return result


def _language(notebook) -> str:
    metadata = notebook.get("metadata", {})
    language = metadata.get("kernelspec", {}).get("language") or \
        metadata.get("language_info", {}).get("name") or ""
    return language.lower()
