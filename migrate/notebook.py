"""Jupyter notebooks: each code cell goes through the engine on its own.

IPython syntax is not Python, so before the engine sees a cell its magic and
shell lines (``%line``, ``!shell``, ``x = !cmd``, ``obj?`` / ``?obj`` help,
with their backslash continuations) are masked as ``pass`` placeholders of the
same indentation, and restored afterwards: they never cause a parse failure
and come back byte-identical. A cell whose first line is a cell magic is left
alone unless the magic runs its body as Python (``%%time``, ``%%capture``...).
Markdown and raw cells, outputs, execution counts and all metadata are kept;
the file is re-serialised by nbformat only when a cell changed.

Diagnostics name the cell: their path is ``nb.ipynb:cell N`` (N counts every
cell from 1, markdown included, as the notebook shows them top to bottom) and
their lines and columns are relative to that cell's source.

CAVEATS:
- A recipe sees one cell at a time, not names defined in earlier cells.
- A line is only taken for IPython syntax where a statement starts (not inside
  brackets or strings); recognising ``x = !cmd`` and help lines is a heuristic.
"""

from __future__ import annotations

import copy
import io
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import nbformat

from . import files
from .batch import Outcome
from .engine import Options, check_output, transform
from .result import Diagnostic, SourceResult, Status, cell_label

MARK = "tf-migrate: masked IPython line"
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug"}
_ASSIGNED_MAGIC = re.compile(r"^[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!]")
_HELP = re.compile(r"^(\?{1,2}[\w.*]+|[\w.*]+\?{1,2})$")  # obj?  obj??  ?obj  np.*load*?


def _is_ipython(stripped: str) -> bool:
    return (stripped.startswith(("%", "!", "?"))
            or bool(_HELP.match(stripped))
            or bool(_ASSIGNED_MAGIC.match(stripped)))


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
        if continued_indent is None and (not _is_ipython(stripped) or _inside_statement(out)):
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
    the per-cell detail that `--interactive` needs."""

    cells: List[Cell] = field(default_factory=list)
    notebook: Any = None

    def compose(self, sources: Dict[int, str]) -> str:
        """The notebook file text with the code cells at these indexes replaced."""
        if not sources:
            return self.source
        notebook = copy.deepcopy(self.notebook)
        for index, text in sources.items():
            notebook.cells[index].source = text
        text = nbformat.writes(notebook, version=nbformat.NO_CONVERT)
        return text + "\n" if self.source.endswith("\n") and not text.endswith("\n") else text


def transform_notebook(text: str, path: str, options: Options) -> NotebookResult:
    """Run the engine over every code cell of the notebook ``text``; never raises."""
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
    for index, cell in enumerate(notebook.cells):
        if cell.get("cell_type") == "code":
            _transform_cell(index, cell.source, path, options, result)
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


def _transform_cell(index: int, source: str, path: str, options: Options,
                    result: NotebookResult) -> None:
    masked = mask(source)
    if masked is None:
        return
    label = cell_label(path, index + 1)
    cell_result = transform(masked.text, label, options)
    if cell_result.status is Status.SKIPPED:
        result.errors.append(f"{label}: {cell_result.reason}")
        return
    result.errors.extend(f"{label}: {error}" for error in cell_result.errors)
    output = unmask(cell_result.output, masked)
    if output is None:
        result.errors.append(f"{label}: a rewrite moved an IPython magic line; cell left unchanged")
        output = source
    result.cells.append(Cell(index, label, source, output, cell_result.diagnostics))
    result.diagnostics.extend(cell_result.diagnostics)


def process(path: Path, options: Options) -> Outcome:
    """batch.process for a .ipynb file: read, transform every cell; never raises."""
    try:
        source = files.read(path)
    except files.Unreadable as err:
        return Outcome(path, problem=str(err))
    result = transform_notebook(source.text, str(path), options)
    outcome = Outcome(path, result, source)
    if result.status in (Status.SKIPPED, Status.FAILED):
        outcome.problem = f"{path}: {result.reason}"
    return outcome
