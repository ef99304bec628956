"""Notebooks: code cells through the engine as one module, IPython lines
masked, findings and fixes per cell, the rest kept."""

from __future__ import annotations

import json
import re
import pickle
from pathlib import Path

import nbformat
import pytest
from typer.testing import CliRunner

from migrate.cli import app
from migrate.engine import Options, apply_edits
from migrate.notebook import analyse, check_cell, join, mask, unmask
from migrate.recipe import Recipe, propose
from notebook_cases import (COUNTS, COUNTS_FIXED, FINDING, IMPORTS, PROSE, SHAPE, sources,
                            statement_cells, training_notebook, write)

runner = CliRunner()

MAGIC_CELL = "%matplotlib inline\nimport numpy as np\n!pip install foo \\\n    bar\nnp.zeros?"
BUGGY_CELL = ("x = old_api(1)\nfiles = !ls\nfor i in range(3):\n"
              "    %time risky(i)\n    y = old_api(i)")
BASH_CELL = "%%bash\necho old_api(1)"


def make_notebook(*sources: str) -> str:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python",
                                       "display_name": "Python 3"}
    notebook.cells = [nbformat.v4.new_markdown_cell("# Training\nold_api() in prose")]
    for number, source in enumerate(sources, start=1):
        cell = nbformat.v4.new_code_cell(source, execution_count=number)
        cell.outputs = [nbformat.v4.new_output("stream", text=f"out {number}\n"),
                        nbformat.v4.new_output("execute_result", {"text/plain": "42"},
                                               execution_count=number)]
        cell.metadata["tags"] = [f"t{number}"]
        notebook.cells.append(cell)
    return nbformat.writes(notebook) + "\n"


@pytest.fixture
def notebook_path(tmp_path, toy_recipes):
    path = tmp_path / "train.ipynb"
    path.write_text(make_notebook(MAGIC_CELL, BUGGY_CELL, BASH_CELL))
    return path


def test_fix_changes_only_the_buggy_cell(notebook_path):
    before = json.loads(notebook_path.read_text())
    result = runner.invoke(app, ["fix", str(notebook_path)])
    assert result.exit_code == 0, result.output
    after = json.loads(notebook_path.read_text())
    assert "".join(after["cells"][2]["source"]) == BUGGY_CELL.replace("old_api", "new_api")
    after["cells"][2]["source"] = before["cells"][2]["source"]
    assert after == before  # outputs, metadata, magics, markdown and the %%bash cell untouched


def test_fix_rewrites_only_the_changed_source_lines(notebook_path):
    before = notebook_path.read_text().splitlines()
    runner.invoke(app, ["fix", str(notebook_path)])
    after = notebook_path.read_text().splitlines()
    assert len(before) == len(after)
    changed = [(old, new) for old, new in zip(before, after) if old != new]
    assert changed == [('    "x = old_api(1)\\n",', '    "x = new_api(1)\\n",'),
                       ('    "    y = old_api(i)"', '    "    y = new_api(i)"')]


def test_check_names_cell_and_line(notebook_path):
    result = runner.invoke(app, ["check", str(notebook_path)])
    assert f"{notebook_path}:cell 3:1:5: toy-rename old_api is deprecated [safe fix]" in result.stdout
    assert f"{notebook_path}:cell 3:5:9: toy-rename" in result.stdout
    assert "risky" not in result.stdout  # it sits on a %time line, which is not Python
    assert result.exit_code == 1


def test_diff_shows_the_change_and_writes_nothing(notebook_path):
    before = notebook_path.read_bytes()
    result = runner.invoke(app, ["diff", str(notebook_path)])
    assert result.stdout.splitlines()[:5] == [
        f"--- a{notebook_path}:cell 3", f"+++ b{notebook_path}:cell 3", "@@ -1,5 +1,5 @@",  # absolute
        "-x = old_api(1)", "+x = new_api(1)"]
    assert notebook_path.read_bytes() == before


def test_unparsable_cell_is_named_and_others_still_fixed(tmp_path, toy_recipes):
    path = tmp_path / "nb.ipynb"
    path.write_text(make_notebook("old_api()", "def broken(:\n    old_api()"))
    result = runner.invoke(app, ["fix", str(path)])
    assert result.exit_code == 2
    assert f"{path}:cell 3: syntax error at line 1" in result.stderr
    cells = json.loads(path.read_text())["cells"]
    assert "".join(cells[1]["source"]) == "new_api()"
    assert "".join(cells[2]["source"]) == "def broken(:\n    old_api()"


def test_interactive_reviews_cells(tmp_path, toy_recipes):
    path = tmp_path / "nb.ipynb"
    path.write_text(make_notebook("a = old_api()", "!ls\nb = old_api()"))
    result = runner.invoke(app, ["fix", "--interactive", str(path)], input="n\ny\n")
    assert f"{path}:cell 2:1" in result.stdout and f"{path}:cell 3:2" in result.stdout
    cells = json.loads(path.read_text())["cells"]
    assert ["".join(c["source"]) for c in cells[1:]] == ["a = old_api()", "!ls\nb = new_api()"]
    assert cells[2]["outputs"] and cells[2]["metadata"] == {"tags": ["t2"]}


def test_non_python_notebook_is_left_alone(tmp_path, toy_recipes):
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "ir", "language": "R", "display_name": "R"}
    notebook.cells = [nbformat.v4.new_code_cell("old_api()")]
    path = tmp_path / "r.ipynb"
    path.write_text(nbformat.writes(notebook))
    assert runner.invoke(app, ["check", str(path)]).exit_code == 0


def test_not_a_notebook_is_a_problem_not_a_crash(tmp_path, toy_recipes):
    path = tmp_path / "bad.ipynb"
    path.write_text("{not json")
    result = runner.invoke(app, ["check", str(path)])
    assert result.exit_code == 2 and "bad.ipynb: not a readable notebook" in result.stderr


@pytest.mark.parametrize("source", [
    MAGIC_CELL,
    BUGGY_CELL,
    "def f():\n    !echo hi\n    return 1\n",
    "result = %timeit -o f()\nobj??\n?obj\n",
    "%%time\nx = 1\n",
])
def test_mask_parses_and_unmask_restores(source):
    masked = mask(source)
    assert check_cell(source) is None
    assert len(masked.text.splitlines()) == len(source.splitlines())  # line numbers kept
    assert unmask(masked.text, masked) == source


def test_python_lines_ending_in_question_marks_are_examined():
    source = "x = old_api()  # why?\ns = 'ok?'\nnp.*load*?\n"
    assert mask(source).hidden == ("np.*load*?\n",)


def test_percent_inside_brackets_or_strings_is_python():
    source = 'x = (a\n     % b)\ndoc = """\n%d items\n"""\n%time f()\n'
    assert mask(source).hidden == ("%time f()\n",)
    assert check_cell(source) is None


def test_cell_magic_with_foreign_body_is_not_python():
    assert mask(BASH_CELL) is None


def test_unmask_refuses_a_dropped_magic_line():
    masked = mask("!ls\nx = 1\n")
    assert unmask("x = 1\n", masked) is None


def test_notebook_outcome_survives_pickling(notebook_path):
    """The worker pool sends outcomes between processes."""
    from migrate.batch import process
    from migrate.engine import Options
    from migrate.registry import resolve

    outcome = process(notebook_path, Options(tuple(resolve(None))))
    copy = pickle.loads(pickle.dumps(outcome))
    assert copy.result.output == outcome.result.output
    assert copy.result.compose({}) == notebook_path.read_text()


def test_sarif_and_github_name_the_notebook_and_cell(notebook_path, monkeypatch):
    monkeypatch.chdir(notebook_path.parent)
    sarif = json.loads(runner.invoke(app, ["check", "--format", "sarif", notebook_path.name]).stdout)
    [first, second] = sarif["runs"][0]["results"]
    location = first["locations"][0]["physicalLocation"]
    assert location == {"artifactLocation": {"uri": "train.ipynb"}}
    assert first["message"]["text"] == "cell 3, line 1: old_api is deprecated"
    assert second["message"]["text"].startswith("cell 3, line 5: ")
    github = runner.invoke(app, ["check", "--format", "github", notebook_path.name]).stdout
    assert github.splitlines()[0] == ("::warning file=train.ipynb,title=toy-rename::"
                                      "cell 3, line 1: old_api is deprecated [safe fix]")


def test_stdin_with_a_notebook_filename_is_a_notebook(toy_recipes):
    text = make_notebook("!ls\nold_api()")
    result = runner.invoke(app, ["fix", "-", "--stdin-filename", "nb.ipynb"], input=text)
    cells = json.loads(result.stdout)["cells"]
    assert "".join(cells[1]["source"]) == "!ls\nnew_api()" and result.exit_code == 0
    check = runner.invoke(app, ["check", "-", "--stdin-filename", "nb.ipynb"], input=text)
    assert "nb.ipynb:cell 2:2:1: toy-rename" in check.stdout


# --- a realistic notebook and the real recipes: cells analysed as one module


@pytest.fixture
def training(tmp_path):
    path = tmp_path / "train.ipynb"
    write(path, training_notebook())
    return path


def test_check_finds_a_bug_whose_imports_are_in_cell_1(training, monkeypatch):
    monkeypatch.chdir(training.parent)
    result = runner.invoke(app, ["check", training.name])
    [line] = result.stdout.splitlines()
    assert line.startswith(f"train.ipynb:cell 3:3:12: {FINDING} convert then cast")
    assert line.endswith("[safe fix]") and result.exit_code == 1


def test_check_json_names_the_cell_with_cell_relative_positions_and_fix(training, monkeypatch):
    monkeypatch.chdir(training.parent)
    report = json.loads(runner.invoke(app, ["check", "--format", "json", training.name]).stdout)
    [diag] = report["diagnostics"]
    assert (diag["path"], diag["line"], diag["end_line"], diag["recipe"]) == ("train.ipynb:cell 3", 3, 3, FINDING)
    edits = [_edit(**e) for e in diag["fix"]["edits"]]
    assert apply_edits(COUNTS, edits) == COUNTS_FIXED
    assert report["errors"] == []


def _edit(**fields):
    from migrate.result import Edit

    return Edit(**fields)


def test_fix_rewrites_only_the_finding_cell_and_keeps_the_rest(training):
    before = json.loads(training.read_text())
    result = runner.invoke(app, ["fix", str(training)])
    assert result.exit_code == 0, result.output
    after = json.loads(training.read_text())
    assert sources(training) == [IMPORTS, PROSE, COUNTS_FIXED, SHAPE]
    after["cells"][2]["source"] = before["cells"][2]["source"]
    assert after == before  # magics, markdown, outputs, execution counts, metadata


def test_diff_prints_one_labelled_diff_per_changed_cell(training, monkeypatch):
    monkeypatch.chdir(training.parent)
    before = training.read_bytes()
    result = runner.invoke(app, ["diff", training.name])
    assert result.stdout.splitlines() == [
        "--- a/train.ipynb:cell 3",
        "+++ b/train.ipynb:cell 3",
        "@@ -1,6 +1,6 @@",
        " def monthly_counts(months):",
        "     counts = np.array([[3, 0, 7], [1, 2, 2 ** 20]][:months])",
        "-    return tf.cast(tf.convert_to_tensor(counts), dtype=tf.float32)",
        "+    return tf.convert_to_tensor(counts, dtype=tf.float32)",
        " ",
        " !nvidia-smi -L",
        " %time counts = monthly_counts(2)",
        "\\ No newline at end of file",
    ]
    assert result.exit_code == 1 and training.read_bytes() == before


def test_the_cell_alone_has_no_finding():
    """Aliases nobody presumes (`tfl`, `onp`) are known only from cell 1's
    imports: the cell analysed alone gives nothing, the notebook a finding."""
    from migrate.registry import resolve

    options = Options(tuple(resolve(None)), isolated=True)
    imports = "import numpy as onp\nimport tensorflow as tfl"
    counts = re.sub(r"\btf\.", "tfl.", re.sub(r"\bnp\.", "onp.", COUNTS))
    assert analyse([(2, counts)], "nb.ipynb", options).findings == []
    assert [f.cell for f in analyse([(0, imports), (2, counts)], "nb.ipynb", options).findings] == [2]


def test_a_cell_cpython_cannot_parse_is_exit_2_even_when_no_recipe_applies(tmp_path):
    notebook = training_notebook()
    notebook.cells[3].source = "print('unclosed'"
    path = tmp_path / "nb.ipynb"
    write(path, notebook)
    result = runner.invoke(app, ["check", str(path)])
    assert result.exit_code == 2
    assert f"{path}:cell 4: syntax error at line 1" in result.stderr
    assert f"{path}:cell 3:3:12: {FINDING}" in result.stdout  # the other cells are still checked


def test_an_unparsable_cell_is_exit_2_in_a_notebook_no_recipe_looks_at(tmp_path):
    path = tmp_path / "plain.ipynb"
    path.write_text(make_notebook("import os\n%cd /data", "print('unclosed'"))
    result = runner.invoke(app, ["check", str(path)])
    assert result.exit_code == 2 and result.stdout == ""
    assert f"{path}:cell 3: syntax error at line 1" in result.stderr
    assert result.stderr.count(str(path)) == 1  # the reason names the notebook once


def test_a_future_import_in_a_later_cell_does_not_stop_a_fix(tmp_path):
    notebook = training_notebook()
    notebook.cells[2].source = "from __future__ import division\n" + COUNTS
    path = tmp_path / "nb.ipynb"
    write(path, notebook)
    assert runner.invoke(app, ["fix", str(path)]).exit_code == 0
    assert sources(path)[2] == "from __future__ import division\n" + COUNTS_FIXED


def test_a_cell_only_fissix_cannot_parse_is_named_and_left_out(tmp_path):
    notebook = training_notebook()
    notebook.cells[3].source = "match counts.shape:\n    case _:\n        pass"
    path = tmp_path / "nb.ipynb"
    write(path, notebook)
    result = runner.invoke(app, ["fix", str(path)])
    assert result.exit_code == 2
    assert f"{path}:cell 4: fissix cannot parse a match statement (PEP 634) at line 1" in result.stderr
    assert sources(path)[2:] == [COUNTS_FIXED, notebook.cells[3].source]


# --- cutting the module back into cells (toy recipes)


def test_join_and_split_round_trip_keeps_each_cell():
    cells = [(0, "import x\n!ls"), (2, ""), (3, "for i in x:\n    y = i\n"), (5, "z = 1")]
    module = join([(i, s, mask(s)) for i, s in cells])
    assert module.text.count(module.tag) == 3
    assert [part.restore(seg) for part, seg in zip(module.parts, module.split(module.text))] == \
        [s for _, s in cells]
    assert [module.locate(line).index for line in range(1, len(module.text.splitlines()) + 1)] == \
        [0, 0, 0, 2, 3, 3, 3, 5]


def test_line_separators_other_than_newline_do_not_shift_cells():
    """str.splitlines would also cut at a form feed or U+2028; the tokenizer does not."""
    from migrate.registry import resolve

    cells = [(0, IMPORTS + "\n\x0cpage = 'a\u2028b\x1cc'"), (2, COUNTS)]
    analysis = analyse(cells, "nb.ipynb", Options(tuple(resolve(None)), isolated=True))
    [finding] = analysis.findings
    assert (finding.cell, finding.diagnostic.line) == (2, 3)
    assert apply_edits(COUNTS, finding.diagnostic.fix) == COUNTS_FIXED


def test_a_boundary_that_appears_in_a_cell_gets_another_tag():
    module = join([(0, "# tf-migrate:cell-boundary\n", mask("# tf-migrate:cell-boundary\n")),
                   (1, "x = 1", mask("x = 1"))])
    assert module.split(module.text) == ["# tf-migrate:cell-boundary\n", "x = 1\n"]


def _drop_pass(node, capture, filename):
    if propose(node, "pass is useless"):
        node.remove()


DROP_PASS = Recipe(id="toy-drop-pass", summary="removes pass statements", safety="safe",
                   query=lambda q: q.select("simple_stmt< 'pass' any* >").modify(_drop_pass),
                   tokens=("pass",))


def test_a_rewrite_that_loses_a_boundary_leaves_the_notebook_unchanged():
    cells = [(0, "import x"), (1, "y = old_api()")]
    analysis = analyse(cells, "nb.ipynb", Options((DROP_PASS,)))
    assert analysis.errors == ["nb.ipynb: a rewrite moved or removed a cell boundary; "
                               "notebook left unchanged"]
    assert analysis.outputs == dict(cells)


def test_a_fix_that_adds_an_import_to_cell_1_carries_edits_for_both_cells(tmp_path, toy_recipes):
    cells = [(0, "import os\n%matplotlib inline"), (2, "ones = make_ones()")]
    options = Options((toy_recipes["toy-import"],), isolated=True)
    [finding] = analyse(cells, "nb.ipynb", options).findings
    assert (finding.cell, finding.diagnostic.path, finding.diagnostic.line) == (2, "nb.ipynb:cell 3", 1)
    assert finding.diagnostic.fix is None  # one path cannot carry edits of two cells
    fixed = {i: apply_edits(source, finding.edits[i]) for i, source in cells}
    assert fixed == {0: "import os\nimport numpy\n%matplotlib inline", 2: "ones = numpy.ones()"}
    path = tmp_path / "nb.ipynb"
    path.write_text(make_notebook(*[s for _, s in cells]))
    assert runner.invoke(app, ["fix", str(path)]).exit_code == 0
    assert sources(path)[1:] == list(fixed.values())


# --- every fixture as a notebook, one top-level statement per cell


FIXTURES = sorted(Path(__file__).resolve().parent.parent.glob("fixtures/*/*.before.py"))


@pytest.mark.parametrize("before", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_fixture_cut_into_cells_gets_the_files_findings_and_rewrite(before):
    """The same findings at the same places, and the same code (as an AST: a
    statement a recipe removes leaves its cell's blank lines) as the file."""
    import ast

    from migrate.engine import transform
    from migrate.registry import resolve

    text = before.read_text()
    cells = statement_cells(text)
    assert "".join(cells) == text and len(cells) > 3
    first_line = {i: 1 + sum(c.count("\n") for c in cells[:i]) for i in range(len(cells))}
    recipes = tuple(resolve(None))
    checked = Options(recipes, unsafe_fixes=True, isolated=True)
    notebook = analyse(list(enumerate(cells)), "nb.ipynb", checked)
    assert notebook.errors == []
    assert sorted((f.diagnostic.recipe, first_line[f.cell] + f.diagnostic.line - 1, f.diagnostic.column)
                  for f in notebook.findings) == \
        sorted((d.recipe, d.line, d.column) for d in transform(text, str(before), checked).diagnostics)
    fixed = Options(recipes, unsafe_fixes=True)
    rewritten = analyse(list(enumerate(cells)), "nb.ipynb", fixed)
    assert rewritten.errors == []
    assert ast.dump(ast.parse("".join(rewritten.outputs[i] for i in range(len(cells))))) == \
        ast.dump(ast.parse(transform(text, str(before), fixed).output))
