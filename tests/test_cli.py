"""The command line end to end through Typer's CliRunner, on toy recipes."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import re
import sys
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from migrate.cli import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent

FIXABLE = b"import x\r\n\r\ny = old_api(1)  # comment\r\n"
FIXED = b"import x\r\n\r\ny = new_api(1)  # comment\r\n"


@pytest.fixture
def tree(tmp_path, toy_recipes):
    (tmp_path / "fixable.py").write_bytes(FIXABLE)
    os.chmod(tmp_path / "fixable.py", 0o751)
    (tmp_path / "posonly.py").write_bytes(b"def f(a, /):\n    return old_api(a)\n")
    (tmp_path / "latin.py").write_bytes(b"s = 'caf\xe9'\nold_api()\n")
    (tmp_path / "clean.py").write_bytes(b"print('nothing to see')\n")
    return tmp_path


def snapshot(root):
    return {p.name: (p.read_bytes(), stat.S_IMODE(p.stat().st_mode)) for p in sorted(root.iterdir())}


def test_check_reports_finding_and_names_bad_files(tree):
    before = snapshot(tree)
    result = runner.invoke(app, ["check", str(tree)])
    assert result.exit_code == 2
    assert f"{tree / 'fixable.py'}:3:5: toy-rename old_api is deprecated [safe fix]" in result.stdout
    assert "posonly.py: fissix cannot parse positional-only parameters" in result.stderr
    assert "latin.py: not valid utf-8 (byte 0xe9" in result.stderr
    assert "4 file(s) scanned, 1 with findings, 2 could not be processed" in result.stderr
    assert snapshot(tree) == before


def test_check_json(tree):
    result = runner.invoke(app, ["check", "--format", "json", str(tree / "fixable.py")])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    [diag] = data["diagnostics"]
    assert (diag["recipe"], diag["line"], diag["column"], diag["end_column"]) == ("toy-rename", 3, 5, 12)
    assert diag["fix"]["edits"] == [{"line": 3, "column": 1, "end_line": 4, "end_column": 1,
                                     "replacement": "y = new_api(1)  # comment\n"}]


def test_diff_prints_and_changes_nothing(tree):
    before = snapshot(tree)
    result = runner.invoke(app, ["diff", str(tree)])
    assert result.exit_code == 2  # two files could not be processed
    assert "-y = old_api(1)  # comment" in result.stdout
    assert "+y = new_api(1)  # comment" in result.stdout
    assert snapshot(tree) == before


def test_fix_rewrites_only_the_fixable_file(tree):
    before = snapshot(tree)
    result = runner.invoke(app, ["fix", str(tree)])
    assert result.exit_code == 2
    after = snapshot(tree)
    assert after["fixable.py"] == (FIXED, 0o751)  # CRLF and mode kept
    assert {k: v for k, v in after.items() if k != "fixable.py"} == \
        {k: v for k, v in before.items() if k != "fixable.py"}
    assert not [p for p in tree.iterdir() if p.name.endswith(".tf-migrate")]  # no temp files left


def test_fix_clean_tree_exits_zero(tmp_path, toy_recipes):
    (tmp_path / "a.py").write_text("old_api()\n")
    assert runner.invoke(app, ["fix", str(tmp_path)]).exit_code == 0
    assert (tmp_path / "a.py").read_text() == "new_api()\n"
    assert runner.invoke(app, ["check", str(tmp_path)]).exit_code == 0


def test_fix_leaves_unsafe_findings_and_exits_one(tmp_path, toy_recipes):
    (tmp_path / "a.py").write_text("risky()\n")
    result = runner.invoke(app, ["fix", str(tmp_path)])
    assert result.exit_code == 1 and "[unsafe fix]" in result.stdout
    assert (tmp_path / "a.py").read_text() == "risky()\n"
    assert runner.invoke(app, ["fix", "--unsafe-fixes", str(tmp_path)]).exit_code == 0
    assert (tmp_path / "a.py").read_text() == "safer()\n"


def test_fix_stdin_round_trip(toy_recipes):
    result = runner.invoke(app, ["fix", "-", "--stdin-filename", "buf.py"],
                           input="a = old_api()\r\nb = 2\r\n")
    assert result.exit_code == 0
    assert result.stdout_bytes == b"a = new_api()\r\nb = 2\r\n"


def test_fix_stdin_reports_pending_on_stderr(toy_recipes):
    result = runner.invoke(app, ["fix", "-"], input="risky()\n")
    assert result.stdout == "risky()\n" and result.exit_code == 1
    assert "toy-risky" in result.stderr


def test_select_ignore_and_unknown_ids(tmp_path, toy_recipes):
    (tmp_path / "a.py").write_text("old_api()\nrisky()\n")
    result = runner.invoke(app, ["check", "--select", "toy-risky", str(tmp_path)])
    assert "toy-risky" in result.stdout and "toy-rename" not in result.stdout
    result = runner.invoke(app, ["check", "--ignore", "toy-risky", str(tmp_path)])
    assert "toy-rename" in result.stdout and "toy-risky" not in result.stdout
    result = runner.invoke(app, ["check", "--select", "no-such", str(tmp_path)])
    assert result.exit_code == 2 and "unknown recipe id 'no-such' (see `tf-migrate list`)" in result.stderr


@pytest.mark.parametrize("command", [["check", "--select"], ["fix", "--ignore"], ["diff", "--select"]])
def test_misspelt_recipe_id_gets_did_you_mean(tmp_path, toy_recipes, command):
    (tmp_path / "a.py").write_text("old_api()\n")
    result = runner.invoke(app, [*command, "toy-renam,toy-risky", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr == "tf-migrate: unknown recipe id 'toy-renam' (did you mean toy-rename?)\n"
    assert (tmp_path / "a.py").read_text() == "old_api()\n"


def test_explain_unknown_id_gets_did_you_mean(toy_recipes):
    result = runner.invoke(app, ["explain", "toy-risk"])
    assert result.exit_code == 2 and "did you mean toy-risky?" in result.stderr
    result = runner.invoke(app, ["explain", "toy-im"])  # a prefix
    assert "did you mean toy-import?" in result.stderr


def test_real_recipe_ids_suggested():
    from migrate.registry import unknown_id

    assert unknown_id("numpy-acumulator").endswith("(did you mean numpy-accumulator?)")
    assert unknown_id("typed").endswith("(did you mean typed-convert?)")
    assert unknown_id("zzz").endswith("(see `tf-migrate list`)")


def test_gitignore_and_exclude(tmp_path, toy_recipes):
    (tmp_path / ".gitignore").write_text("build/\nskip_me.py\n")
    for rel in ("build/a.py", "skip_me.py", "keep.py", "vendor/v.py"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text("old_api()\n")
    result = runner.invoke(app, ["check", "--exclude", "vendor/", str(tmp_path)])
    assert "keep.py" in result.stdout
    for hidden in ("build", "skip_me.py", "v.py"):
        assert hidden not in result.stdout


def test_symlink_out_of_tree_is_not_followed(tmp_path, toy_recipes):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.py").write_text("old_api()\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    result = runner.invoke(app, ["fix", str(root)])
    assert (outside / "o.py").read_text() == "old_api()\n"
    assert "symlink out of" in result.stderr


def test_pyproject_config_and_flags_win(tmp_path, toy_recipes):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.tf-migrate]\nignore = ["toy-rename"]\nunsafe-fixes = true\n')
    (tmp_path / "a.py").write_text("old_api()\nrisky()\n")
    assert runner.invoke(app, ["fix", str(tmp_path)]).exit_code == 0
    assert (tmp_path / "a.py").read_text() == "old_api()\nsafer()\n"
    runner.invoke(app, ["fix", "--ignore", "toy-risky", str(tmp_path)])
    assert (tmp_path / "a.py").read_text() == "new_api()\nsafer()\n"


def test_bad_config_is_a_usage_error(tmp_path, toy_recipes):
    (tmp_path / "pyproject.toml").write_text('[tool.tf-migrate]\nselct = ["x"]\n')
    (tmp_path / "a.py").write_text("x = 1\n")
    result = runner.invoke(app, ["check", str(tmp_path)])
    assert result.exit_code == 2 and "[tool.tf-migrate] unknown key(s): selct" in result.stderr


@pytest.mark.parametrize("body, key, reason", [
    ('target-index = "zero"', "target-index", "must be an integer, not 'zero'"),
    ("target-index = true", "target-index", "must be an integer, not True"),
    ('unsafe-fixes = "yes"', "unsafe-fixes", "must be true or false, not 'yes'"),
    ('select = "toy-rename"', "select", "must be a list of strings, not 'toy-rename'"),
    ("exclude = [1]", "exclude", "must be a list of strings, not [1]"),
])
def test_config_error_names_the_key_and_the_file_once(tmp_path, toy_recipes, body, key, reason):
    config = tmp_path / "pyproject.toml"
    config.write_text(f"[tool.tf-migrate]\n{body}\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    result = runner.invoke(app, ["check", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr == f"tf-migrate: {config}: [tool.tf-migrate] {key} {reason}\n"
    assert result.stderr.count(str(config)) == 1


def test_encoding_cookie_and_bom_survive_fix(tmp_path, toy_recipes):
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\ns = 'caf\xe9'\nold_api()\n")
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbfs = 'caf\xc3\xa9'\nold_api()\n")
    assert runner.invoke(app, ["fix", str(tmp_path)]).exit_code == 0
    assert latin.read_bytes() == b"# -*- coding: latin-1 -*-\ns = 'caf\xe9'\nnew_api()\n"
    assert bom.read_bytes() == b"\xef\xbb\xbfs = 'caf\xc3\xa9'\nnew_api()\n"


def test_file_changed_between_read_and_write_is_not_overwritten(tmp_path, toy_recipes, monkeypatch):
    from migrate import batch

    target = tmp_path / "a.py"
    target.write_text("old_api()\n")
    real_process = batch.process

    def process_then_edit(path, options):
        outcome = real_process(path, options)
        path.write_text("old_api()  # edited meanwhile\n")
        return outcome

    monkeypatch.setattr(batch, "process", process_then_edit)
    result = runner.invoke(app, ["fix", str(tmp_path)])
    assert result.exit_code == 2 and "changed on disk since it was read" in result.stderr
    assert target.read_text() == "old_api()  # edited meanwhile\n"


def test_list_and_help(toy_recipes):
    result = runner.invoke(app, ["list"])
    assert result.exit_code == 0 and "toy-rename" in result.stdout and "unsafe" in result.stdout
    assert runner.invoke(app, ["--help"]).exit_code == 0


COMMANDS = ["", "fix", "diff", "check", "list", "explain", "lsp"]


def run_help(command, flag="-h"):
    """The help as a user's 80-column terminal shows it, from a real process."""
    env = dict(os.environ, COLUMNS="80", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "migrate", *command.split(), flag],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_short_and_long_help_flags_agree(command):
    assert run_help(command, "-h") == run_help(command, "--help")


@pytest.mark.parametrize("command", COMMANDS)
def test_help_fits_80_columns_without_cutting_text(command):
    from migrate.cli import app as typer_app
    from typer.main import get_command

    text = run_help(command)
    assert max(len(line) for line in text.splitlines()) <= 80
    group = get_command(typer_app)
    cmd = group.commands[command] if command else group
    pieces = [cmd.help or ""] + [p.help or "" for p in cmd.params if not p.hidden]
    if not command:
        pieces += [c.short_help or "" for c in group.commands.values()]
    squeezed = re.sub(r"\s+", "", text)
    for piece in pieces:  # every help text whole, wrapped but never cut
        assert re.sub(r"\s+", "", piece.replace("\b", "")) in squeezed, piece


@pytest.mark.parametrize("command", ["fix", "diff", "check"])
def test_metavars_are_readable(command):
    text = run_help(command)
    assert "<" not in text and "list[" not in text
    for shown in ("--select ID[,ID...]", "--ignore ID[,ID...]", "--exclude GLOB", "--shard K/N",
                  "--files-from FILE", "--cache-dir DIR", "-j, --jobs N", "[PATH]...",
                  "--target-index N", "--stdin-filename PATH"):
        assert shown in text
    assert "PATH: files or directories" in text


@pytest.mark.parametrize("command", ["", "fix", "diff", "check"])
def test_epilog_gives_exit_codes_and_suppression_syntax(command):
    text = run_help(command)
    assert "Exit codes:" in text
    for code in ("0  nothing to do", "1  findings (check)", "2  usage or config error"):
        assert code in text
    assert "# tf-migrate: ignore[scalar-target,typed-convert]" in text


def test_version_comes_from_package_metadata():
    from importlib.metadata import version

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout == f"tf-migrate {version('tf-migrate')}\n"


def test_shared_options_are_defined_once():
    """fix, diff and check take the same shared options, with the same help."""
    from migrate.cli import SHARED
    from migrate.cli import app as typer_app
    from typer.main import get_command

    commands = get_command(typer_app).commands
    for name in ("fix", "diff", "check"):
        params = {p.name: p for p in commands[name].params}
        for option in SHARED:  # check takes --unsafe-fixes for --fix and --diff
            assert params[option].help == SHARED[option][1].help


def test_python_dash_m_and_console_script():
    for cmd in ([sys.executable, "-m", "migrate", "--help"], ["tf-migrate", "--help"]):
        done = subprocess.run(cmd, capture_output=True, text=True)
        assert done.returncode == 0 and "check" in done.stdout


def test_readme_lists_every_recipe_with_its_safety_and_summary():
    from pathlib import Path

    from migrate.registry import all_recipes

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    for recipe in all_recipes().values():
        assert f"| `{recipe.id}` | {recipe.safety} | {recipe.summary} |" in readme


def test_explain_real_recipe_shows_rationale_and_seed_example():
    result = runner.invoke(app, ["explain", "numpy-accumulator"])
    assert result.exit_code == 0
    assert "__array__" in result.stdout  # the real mechanism, from the docstring
    assert "CAVEATS" in result.stdout.upper()
    assert "seed_hierarchical.before.py" in result.stdout  # the seed program is the example
    assert "TensorArray" in result.stdout and "np.zeros" in result.stdout
    assert runner.invoke(app, ["explain", "no-such-recipe"]).exit_code == 2


SHIFTING = "x = make_ones()\n\nrisky()\n"  # the safe fix adds an import line above the unsafe finding


def test_fix_reports_findings_left_at_lines_of_the_written_file(tmp_path, toy_recipes):
    target = tmp_path / "a.py"
    target.write_text(SHIFTING)
    result = runner.invoke(app, ["fix", "--no-cache", str(target)])
    assert target.read_text() == "import numpy\nx = numpy.ones()\n\nrisky()\n"
    assert result.stdout == f"{target}:4:1: toy-risky risky() may change behaviour [unsafe fix]\n"
    assert "1 fixed, 1 left: unsafe, rerun with --unsafe-fixes" in result.stderr
    assert result.exit_code == 1


def test_fix_json_gives_written_and_original_lines(tmp_path, toy_recipes):
    target = tmp_path / "a.py"
    target.write_text(SHIFTING)
    result = runner.invoke(app, ["fix", "--no-cache", "--format", "json", str(target)])
    data = json.loads(result.stdout)
    [left] = data["diagnostics"]
    assert (left["recipe"], left["line"], left["original_line"]) == ("toy-risky", 4, 3)
    assert left["fix"]["edits"][0]["line"] == 4  # an edit of the written file
    assert data["fixed"] == 1 and data["written"] == [str(target)] and data["errors"] == []
    schema = json.loads((ROOT / "migrate" / "schemas" / "check.schema.json").read_text())
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)


def test_fix_json_line_the_fix_wrote_has_no_original(tmp_path, toy_recipes):
    """A finding on a line the fix itself wrote has no line in the original."""
    target = tmp_path / "a.py"
    target.write_text("x = old_api(risky(1))\n")
    data = json.loads(runner.invoke(app, ["fix", "--no-cache", "--format", "json", str(target)]).stdout)
    [left] = data["diagnostics"]
    assert (left["recipe"], left["line"], left["original_line"]) == ("toy-risky", 1, None)


def test_refused_write_is_not_counted_as_fixed(tmp_path, toy_recipes):
    target = tmp_path / "a.py"
    target.write_text("old_api()\n")
    target.chmod(0o444)
    result = runner.invoke(app, ["fix", "--no-cache", str(target)])
    assert "read-only file" in result.stderr
    assert "1 file(s) scanned, 0 written, 1 could not be processed" in result.stderr
    assert "0 fixed, 1 left: not written (the write was refused)" in result.stderr
    assert result.stdout == f"{target}:1:1: toy-rename old_api is deprecated [safe fix]\n"
    assert result.exit_code == 2 and target.read_text() == "old_api()\n"


def test_counts_list_each_reason_left(tmp_path, toy_recipes):
    (tmp_path / "a.py").write_text("old_api()\nrisky()\nlegacy_api()\n")
    result = runner.invoke(app, ["fix", "--no-cache", str(tmp_path)])
    assert ("1 fixed, 2 left: 1 report only; 1 unsafe, rerun with --unsafe-fixes"
            in result.stderr)
    result = runner.invoke(app, ["fix", "--no-cache", "--unsafe-fixes", str(tmp_path)])
    assert "1 fixed, 1 left: report only" in result.stderr


def test_installed_wheel_explains_with_its_example(tmp_path):
    """Built like a release (the sdist's files only), installed in a fresh
    venv, run away from the repository: the example comes from the wheel."""
    import shutil
    import venv

    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for folder in ("migrate", "recipes", "fixtures"):
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"),
                    str(source)], check=True, env=env, capture_output=True)
    [wheel] = (tmp_path / "dist").glob("tf_migrate-*.whl")
    venv.create(tmp_path / "venv", system_site_packages=True, with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "-q", str(wheel)],
                   check=True, env=env, capture_output=True)
    shutil.rmtree(source)  # nothing may come from a source tree
    where = subprocess.run([str(python), "-c", "import migrate; print(migrate.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert where.stdout.startswith(str(tmp_path / "venv"))
    done = subprocess.run([str(tmp_path / "venv" / "bin" / "tf-migrate"), "explain", "numpy-accumulator"],
                          cwd=tmp_path, env=dict(env, COLUMNS="100"), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Example (numpy-accumulator/seed_hierarchical.before.py)" in done.stdout
    assert "tf.TensorArray" in done.stdout and "np.zeros" in done.stdout
    assert "no example found" not in done.stdout


@pytest.mark.parametrize("command", [["list"], ["explain", "per-step-tape"]])
def test_summaries_are_printed_verbatim_not_as_markup(command):
    from migrate.registry import all_recipes

    summary = all_recipes()["per-step-tape"].summary
    assert "[i]" in summary
    text = re.sub(r"[│\s]+", " ", runner.invoke(app, command).stdout)
    assert re.sub(r"\s+", " ", summary) in text


def test_explain_example_shows_only_its_recipes_change_in_plain_text():
    """The seed program of per-step-tape also has typed-convert, scalar-target
    and suffix-mixup findings: its fixture's after carries their fixes, the
    example must not. Piped, nothing is padded, wrapped or coloured."""
    before = (ROOT / "fixtures" / "per-step-tape" / "seed003_churn_ig.before.py").read_text()
    full_after = (ROOT / "fixtures" / "per-step-tape" / "seed003_churn_ig.after.py").read_text()
    result = runner.invoke(app, ["explain", "per-step-tape"])
    assert result.exit_code == 0
    example = result.stdout.split("Example (per-step-tape/seed003_churn_ig.before.py):\n", 1)[1]
    changed = [line for line in example.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert any("tape.watch(path_1_step)" in line for line in changed)
    for other in ("dtype=tf.float32", "[:, 0]", "avg_gradients_2"):
        assert other in full_after and not any(other in line for line in changed)
    assert "\x1b[" not in result.stdout
    assert all(line == line.rstrip() or line == " " for line in result.stdout.splitlines())  # " ": a diff's blank context line
    assert all(line[1:] in before.splitlines() for line in changed if line.startswith("-"))
