"""A notebook as people write them, built with nbformat: imports (and a
magic) in cell 1, markdown between code cells, outputs and execution counts,
and in cell 3 a real typed-convert finding (fixtures/typed-convert/
numpy_array.before.py) that uses the `np` and `tf` imported in cell 1."""

from __future__ import annotations

import ast

import nbformat

IMPORTS = "%matplotlib inline\nimport numpy as np\nimport tensorflow as tf"
PROSE = "## Monthly counts\nConvert the counts for the model (float32)."
COUNTS = ("def monthly_counts(months):\n"
          "    counts = np.array([[3, 0, 7], [1, 2, 2 ** 20]][:months])\n"
          "    return tf.cast(tf.convert_to_tensor(counts), dtype=tf.float32)\n"
          "\n"
          "!nvidia-smi -L\n"
          "%time counts = monthly_counts(2)")
COUNTS_FIXED = COUNTS.replace("tf.cast(tf.convert_to_tensor(counts), dtype=tf.float32)",
                              "tf.convert_to_tensor(counts, dtype=tf.float32)")
SHAPE = "counts.shape"
FINDING = "typed-convert"


def training_notebook(with_last_cell: bool = True) -> nbformat.NotebookNode:
    """Cells: 1 imports, 2 markdown, 3 the finding, 4 a use of its result."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python",
                                       "display_name": "Python 3"}
    notebook.metadata["language_info"] = {"name": "python", "version": "3.11.7"}
    imports = nbformat.v4.new_code_cell(IMPORTS, execution_count=1)
    counts = nbformat.v4.new_code_cell(COUNTS, execution_count=2)
    counts.outputs = [nbformat.v4.new_output(
        "stream", text="GPU 0: Tesla T4\nCPU times: user 3 ms, sys: 0 ns, total: 3 ms\n")]
    counts.metadata["collapsed"] = False
    shape = nbformat.v4.new_code_cell(SHAPE, execution_count=3)
    shape.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "TensorShape([2, 3])"},
                                            execution_count=3)]
    notebook.cells = [imports, nbformat.v4.new_markdown_cell(PROSE), counts]
    if with_last_cell:
        notebook.cells.append(shape)
    return notebook


def write(path, notebook: nbformat.NotebookNode) -> None:
    path.write_text(nbformat.writes(notebook) + "\n", encoding="utf-8")


def sources(path) -> list:
    return [cell.source for cell in nbformat.read(str(path), as_version=4).cells]


def statement_cells(text: str) -> list:
    """``text`` cut before each top-level statement (decorators included), as
    a notebook of one definition per cell would hold it."""
    tree = ast.parse(text)
    starts = sorted({(s.decorator_list[0].lineno if getattr(s, "decorator_list", None) else s.lineno)
                     for s in tree.body})
    lines = text.splitlines(keepends=True)
    cuts = [1] + starts[1:] + [len(lines) + 1]
    return ["".join(lines[a - 1:b - 1]) for a, b in zip(cuts, cuts[1:])]
