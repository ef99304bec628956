"""The plain `check` path of migrate/cli.py (no Typer, no rich) prints what
the Typer app prints for the same arguments, byte for byte, and exits the
same; a command line it does not know goes to Typer."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from migrate.batch import Summary
from migrate.cli import PLAIN, plain_check
from migrate.output import print_summary

ROOT = Path(__file__).resolve().parents[1]
SEED003 = ROOT / "fixtures" / "per-step-tape" / "seed003_churn_ig.before.py"
CLEAN = "import tensorflow as tf\n\n\ndef step(model, x):\n    with tf.GradientTape() as tape:\n" \
        "        loss = model(x)\n    return tape.gradient(loss, model.trainable_variables)\n"
TYPER = "import sys; from migrate.app import app; app(prog_name='tf-migrate')"
PLAIN_RUN = ("import sys, atexit; atexit.register(lambda: sys.stderr.write('loaded: %s' % sorted("
             "{m.split('.')[0] for m in sys.modules} & {'typer', 'click', 'rich'}))); "
             "from migrate.cli import main; main()")


def _run(code: str, args, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, input=stdin,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args, without_rich", [
    (["check", "--no-cache", str(SEED003)], True),
    (["check", "--no-cache", "clean.py", "--format", "json"], True),
    (["check", "--no-cache", "clean.py"], True),
    (["check", "--no-cache", "--select=typed-convert,scalar-target", "--format=sarif", str(SEED003)], True),
    (["check", "--no-cache", "-q", "--exit-zero", "--statistics", str(SEED003), "clean.py"], False),
    (["check", "--no-cache", "--ignore", "typed-convert", "--stdin-filename", "buffer.py", "-"], False),
    (["check", "--no-cache", "--select", "no-such-recipe", "clean.py"], False),
    (["check", "--no-cache", "missing.py", "broken.py"], False),
])
def test_the_plain_path_prints_what_typer_prints(args, without_rich, tmp_path):
    (tmp_path / "clean.py").write_text(CLEAN)
    (tmp_path / "broken.py").write_text("def f(:\n")
    assert plain_check(args) is not None  # this line takes the plain path
    stdin = SEED003.read_text() if "-" in args else ""
    plain, typer = _run(PLAIN_RUN, args, tmp_path, stdin), _run(TYPER, args, tmp_path, stdin)
    stderr, loaded = plain.stderr.rsplit("loaded: ", 1)
    assert (plain.returncode, plain.stdout, stderr) == (typer.returncode, typer.stdout, typer.stderr)
    assert plain.stdout or typer.stderr
    assert "typer" not in loaded and ("rich" not in loaded or not without_rich), loaded


@pytest.mark.parametrize("args", [
    [], ["fix", "a.py"], ["check", "--fix", "a.py"], ["check", "--help"], ["check", "-j", "2", "a.py"],
    ["check", "--", "a.py"], ["check", "--format"], ["check", "--format", "-q"], ["check", "-qa.py"],
    ["check", "--no-cache=yes", "a.py"],
])
def test_what_the_plain_path_does_not_know_goes_to_typer(args):
    assert plain_check(args) is None


def test_plain_options_are_the_typer_check_options():
    import typer.main

    from migrate.cli import app

    params = typer.main.get_command(app).commands["check"].params
    for name, (field, takes) in PLAIN.items():
        param = next(p for p in params if name in p.opts + p.secondary_opts)
        assert param.name == field, name
        kind = "list" if param.multiple else ("flag" if name in param.opts else "no") \
            if param.is_flag else "value"
        assert kind == takes, name


def _summary_text(findings: dict) -> str:
    stream = io.StringIO()
    summary = Summary(scanned=2, flagged=1, findings=Counter(findings))
    print_summary(lambda: pytest.fail("the summary needs no console"), summary, "with findings", 1,
                  stream=stream)
    return stream.getvalue()


@pytest.mark.parametrize("findings, table", [
    ({"typed-convert": 4, "per-step-tape": 12},  # ids wider than the header
     "recipe         findings\nper-step-tape  12      \ntyped-convert  4       \n"),
    ({"ab": 3, "c": 123456789},  # ids narrower than the header, a count wider than it
     "recipe  findings \nab      3        \nc       123456789\n"),
])
def test_the_findings_table_is_plain_text(findings, table):
    expected = "2 file(s) scanned, 1 with findings, 0 could not be processed\n" + table
    assert _summary_text(findings) == expected


@pytest.mark.parametrize("findings", [{"typed-convert": 4, "per-step-tape": 12}, {"ab": 3, "c": 123456789},
                                      {"numpy-accumulator": 1, "x": 20, "vectorize-sample-loop": 300}])
def test_the_findings_table_is_what_rich_printed_off_a_terminal(findings):
    from rich.console import Console
    from rich.table import Table

    rich_table = Table("recipe", "findings", box=None, pad_edge=False)  # how the summary was printed
    for recipe, count in sorted(findings.items()):
        rich_table.add_row(recipe, str(count))
    stream = io.StringIO()
    Console(file=stream, highlight=False, soft_wrap=True).print(rich_table)
    assert _summary_text(findings).split("\n", 1)[1] == stream.getvalue()
