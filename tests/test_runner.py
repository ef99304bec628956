"""The runner: static API check, judging, and (marked tf) real TF workers on
small programs written here: a plain script with a NumPy-accumulator bug, a
hanging and a crashing program, protocol programs that train or do not, and
attributions that are complete or not. TF-running tests batch their programs
into as few verify calls as possible: each call imports TF once per worker."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

import migrate.runner
from migrate.runner import VerifyOptions, verify, verify_fixed, verify_rewrite
from migrate.runner.api_check import check_source
from migrate.runner.judge import equivalence, judge
from migrate.runner.programs import classify
from migrate.runner.report import Check, ProgramReport
from migrate.runner.runtimes import current

from fixture_cases import all_cases

PROGRAMS = {
    "numpy_accumulator.py": '''
        import numpy as np
        import tensorflow as tf

        layer = tf.keras.layers.Dense(1)
        x = tf.random.normal((4, 3))
        with tf.GradientTape() as tape:
            y = layer(x)
            buffer = np.zeros((4, 1), dtype=np.float32)
            for i in range(4):
                buffer[i] = y[i]
            loss = tf.reduce_sum(tf.convert_to_tensor(buffer))
        grads = tape.gradient(loss, layer.trainable_variables)  # BUG-LINE
        print("gradients:", grads)
    ''',
    "traced_none.py": '''
        import tensorflow as tf

        used = tf.Variable(1.0)
        unused = tf.Variable(2.0)


        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                loss = used * x
            return tape.gradient(loss, [used, unused])  # TRACED-LINE


        step(tf.constant(3.0))
    ''',
    "hang.py": '''
        import tensorflow as tf

        while True:
            pass
    ''',
    "trains.py": '''
        import numpy as np
        import tensorflow as tf


        def training_case():
            model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="tanh"),
                                         tf.keras.layers.Dense(1)])
            x = np.random.rand(16, 3).astype("float32")
            return model, x, x.sum(axis=1, keepdims=True)
    ''',
    "crash.py": '''
        import os
        import tensorflow as tf

        os._exit(3)
    ''',
    "graph_error.py": '''
        import numpy as np
        import tensorflow as tf


        class Accumulator(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.dense = tf.keras.layers.Dense(2)

            def call(self, x):
                out = np.zeros((x.shape[0], 2), dtype=np.float32)
                for i in range(x.shape[0]):
                    out[i] = self.dense(x[i:i + 1])[0]  # GRAPH-LINE
                return tf.convert_to_tensor(out)


        def training_case():
            x = np.random.rand(8, 3).astype("float32")
            return Accumulator(), x, np.random.rand(8, 2).astype("float32")
    ''',
    "ig_complete.py": '''
        import tensorflow as tf


        def f(x):
            return tf.reduce_sum(x * x)


        def attribution_case():
            x = tf.constant([[1.0, -2.0, 3.0]])
            baseline = tf.zeros_like(x)
            alphas = (tf.range(50, dtype=tf.float32) + 0.5) / 50.0
            grads = []
            for alpha in alphas:
                step = baseline + alpha * (x - baseline)
                with tf.GradientTape() as tape:
                    tape.watch(step)
                    y = f(step)
                grads.append(tape.gradient(y, step))
            attributions = (x - baseline) * tf.reduce_mean(tf.stack(grads), axis=0)
            return [{"name": "x", "attributions": attributions, "input": x,
                     "f_input": f(x), "f_baseline": f(baseline)}]
    ''',
    "ig_incomplete.py": '''
        import tensorflow as tf


        def f(x):
            return tf.reduce_sum(x * x)


        def attribution_case():
            x = tf.constant([[1.0, -2.0, 3.0]])
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = f(x)
            attributions = x * tape.gradient(y, x)  # gradient x input: not complete here
            return {"name": "x", "attributions": attributions, "input": x,
                    "f_input": y, "f_baseline": f(tf.zeros_like(x))}
    ''',
}


def write_programs(directory: Path, names) -> dict:
    directory.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name in names:
        paths[name] = directory / name
        paths[name].write_text(textwrap.dedent(PROGRAMS[name]).lstrip())
    return paths


def line_of(path: Path, marker: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if marker in line)


# ---- static: the TF 2.3 API check -------------------------------------------------------

def test_api_check_flags_names_tf23_lacks_through_every_alias():
    source = textwrap.dedent('''
        import tensorflow as tf
        import tensorflow.experimental.numpy as tnp
        from tensorflow import keras
        from tensorflow.keras import layers, ops
        x = tf.keras.ops.sum(tf.constant([1.0]))
        y = tf.experimental.numpy.zeros(3)
        z = keras.utils.set_random_seed
        w = layers.LSTM(4).units
        v = tf.compat.v1.placeholder
    ''')
    found = {(m.line, m.symbol) for m in check_source(source, "x.py")}
    assert found == {
        (3, "tf.experimental.numpy"),
        (5, "tf.keras.ops"),
        (6, "tf.keras.ops"),
        (7, "tf.experimental.numpy"),
        (8, "tf.keras.utils.set_random_seed"),
    }


def test_api_check_reads_compat_v2_as_tf_and_passes_tf23_code():
    source = textwrap.dedent('''
        import tensorflow.compat.v2 as tf
        arr = tf.TensorArray(tf.float32, size=3)
        grads = tf.GradientTape
        tf.keras.layers.experimental.preprocessing.Normalization
    ''')
    assert check_source(source, "x.py") == []


@pytest.mark.parametrize("case", [c for c in all_cases() if c.after], ids=lambda c: c.id)
def test_api_check_passes_every_fixture_after(case):
    assert check_source(case.after.read_text(), str(case.after)) == []


# ---- static: judging ---------------------------------------------------------------------

def _report(role, expected, *checks):
    report = ProgramReport("p.py", role, "2", "ran", "some-recipe", expected)
    report.checks = [Check(name, passed, "") for name, passed in checks]
    return report


@pytest.mark.parametrize("expected,checks,ok,verdict", [
    ("none-gradient", [("gradients", False), ("training", False)], True, "expected failure observed"),
    ("none-gradient", [("gradients", True), ("dynamic", False)], True, "expected failure observed"),
    ("graph-error", [("gradients", True), ("graph", True)], False, "unexpectedly passed"),
    ("graph-error", [("gradients", False), ("graph", True)], False, "failed for another reason"),
    ("completeness", [("attribution", False), ("api", False)], False, "fail: api"),
])
def test_a_before_must_fail_the_check_its_recipe_names(expected, checks, ok, verdict):
    got_verdict, got_ok = judge(_report("before", expected, *checks))
    assert got_ok is ok
    assert got_verdict.startswith(verdict)


def test_an_after_passes_only_when_every_check_passes():
    assert judge(_report("after", None, ("gradients", True), ("graph", True))) == ("pass", True)
    assert judge(_report("after", None, ("graph", False))) == ("fail: graph", False)
    timed_out = ProgramReport("p.py", "after", "2", "timeout")
    assert judge(timed_out) == ("timed out", False)


def _outputs(values, dtype="float32"):
    report = ProgramReport("p.py", "after", "2", "ran")
    report.outputs = {"y": {"dtype": dtype, "shape": [len(values)], "values": values}}
    return report


def test_equivalence_compares_dtype_and_values():
    assert equivalence(_outputs([1.0, 2.0]), _outputs([1.0, 2.0 + 1e-7])).passed
    assert not equivalence(_outputs([1.0, 2.0]), _outputs([1.0, 2.1])).passed
    assert not equivalence(_outputs([1.0, 2.0]), _outputs([1.0, 2.0], "float64")).passed
    assert not equivalence(ProgramReport("p.py", "before", "2", "ran"), _outputs([1.0])).passed


def test_protocol_programs_are_told_from_plain_scripts(tmp_path):
    paths = write_programs(tmp_path, ["trains.py", "numpy_accumulator.py"])
    assert classify(paths["trains.py"]).mode == "protocol"
    assert classify(paths["numpy_accumulator.py"]).mode == "script"
    assert classify(paths["trains.py"]).role == "program"


def test_child_code_is_python_38_syntax():
    child = Path(migrate.runner.__file__).parent / "child"
    for path in child.glob("*.py"):
        ast.parse(path.read_text(), filename=str(path), feature_version=(3, 8))


def test_verify_command_rejects_an_unknown_format(tmp_path):
    from migrate.cli import app

    result = CliRunner().invoke(app, ["verify", str(tmp_path), "--format", "xml"])
    assert result.exit_code == 2


# ---- TensorFlow ---------------------------------------------------------------------------

def _site_dirs():
    return [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and Path(p).is_dir()]


@pytest.fixture(scope="module")
def other_python(tmp_path_factory) -> Path:
    """A second interpreter (another executable path) that sees this one's
    packages, TensorFlow included, also when this one is itself a venv (whose
    packages --system-site-packages would not show): a .pth file adds this
    interpreter's site directories, their own .pth files included."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    [site] = venv.glob("lib/python*/site-packages")
    (site / "tfm_parent_site.pth").write_text(
        "".join(f"import site; site.addsitedir({path!r})\n" for path in _site_dirs()))
    return venv / "bin" / "python"


@pytest.fixture(scope="module")
def batch(tmp_path_factory, other_python):
    """One verify call over every program, under the second interpreter."""
    paths = write_programs(tmp_path_factory.mktemp("programs"), list(PROGRAMS))
    order = ["numpy_accumulator.py", "traced_none.py", "hang.py", "trains.py", "crash.py", "graph_error.py",
             "ig_complete.py", "ig_incomplete.py"]
    report = verify([paths[name] for name in order],
                    VerifyOptions(timeout=10, runtimes=(current(str(other_python)),)))
    by_name = {Path(p.path).name: p for p in report.programs}
    return paths, report, by_name


@pytest.mark.tf
def test_plain_script_names_the_tape_gradient_call_that_returned_none(batch):
    paths, _, by_name = batch
    program = by_name["numpy_accumulator.py"]
    dynamic = program.check("dynamic")
    assert program.check("run").passed
    assert not dynamic.passed and not program.ok
    [call] = dynamic.details["none_calls"]
    assert Path(call["file"]) == paths["numpy_accumulator.py"].resolve()
    assert call["line"] == line_of(paths["numpy_accumulator.py"], "BUG-LINE")
    assert call["entirely"] and len(call["none_sources"]) == 2


@pytest.mark.tf
def test_a_none_inside_tf_function_is_mapped_back_to_the_program_line(batch):
    paths, _, by_name = batch
    [call] = by_name["traced_none.py"].check("dynamic").details["none_calls"]
    assert call["line"] == line_of(paths["traced_none.py"], "TRACED-LINE")
    assert call["function"] == "step"
    assert not call["entirely"] and call["none_sources"] == ["Variable:0"]


@pytest.mark.tf
def test_a_hang_and_a_crash_are_reported_and_the_others_still_run(batch):
    _, report, by_name = batch
    assert by_name["hang.py"].status == "timeout" and not by_name["hang.py"].ok
    assert "10 s" in by_name["hang.py"].message
    assert by_name["crash.py"].status == "crashed"
    assert "exit code 3" in by_name["crash.py"].message
    assert [p.status for p in report.programs].count("ran") == 6
    assert by_name["trains.py"].ok and by_name["ig_complete.py"].ok
    assert len(report.workers) == 3  # the first, one after the hang, one after the crash


@pytest.mark.tf
def test_the_report_says_which_interpreter_ran(batch, other_python):
    _, report, by_name = batch
    assert {w.python for w in report.workers} == {str(other_python)}
    assert by_name["trains.py"].interpreter == str(other_python)
    assert all("Keras 2" in w.keras for w in report.workers)


@pytest.mark.tf
def test_a_training_program_passes_every_check_with_numbers(batch):
    _, _, by_name = batch
    program = by_name["trains.py"]
    assert [c.name for c in program.checks] == ["run", "gradients", "training", "graph", "dynamic"]
    assert all(c.passed for c in program.checks)
    assert program.check("gradients").numbers["variables"] == 4
    training = program.check("training").numbers
    assert training["final_loss"] < training["initial_loss"]
    assert "fit_loss" in program.check("graph").numbers


@pytest.mark.tf
def test_numpy_in_call_fails_graph_mode_with_the_program_line(batch):
    paths, _, by_name = batch
    program = by_name["graph_error.py"]
    graph = program.check("graph")
    assert not graph.passed
    assert "symbolic" in graph.error
    assert graph.error.endswith(f"graph_error.py:{line_of(paths['graph_error.py'], 'GRAPH-LINE')})")
    assert program.check("gradients").numbers["none"] == 2


@pytest.mark.tf
def test_completeness_separates_integrated_gradients_from_gradient_times_input(batch):
    _, _, by_name = batch
    complete = by_name["ig_complete.py"].check("attribution")
    incomplete = by_name["ig_incomplete.py"].check("attribution")
    assert complete.passed and complete.numbers["worst_error_over_tolerance"] < 1
    [entry] = incomplete.details["entries"]
    assert not incomplete.passed
    assert entry["sum"] == pytest.approx(2 * entry["f_input_minus_f_baseline"])


@pytest.mark.tf
def test_keras_3_runs_the_programs_again_under_keras_3(tmp_path):
    paths = write_programs(tmp_path, ["trains.py"])
    report = verify([paths["trains.py"]], VerifyOptions(runtimes=(current(keras="2"), current(keras="3"))))
    assert [p.keras for p in report.programs] == ["2", "3"]
    assert all(p.ok for p in report.programs)
    assert ["Keras 3" in w.keras for w in report.workers] == [False, True]


@pytest.mark.tf
def test_verify_rewrite_reports_original_and_rewrite_side_by_side(tmp_path):
    paths = write_programs(tmp_path, ["graph_error.py", "trains.py"])
    rewritten = tmp_path / "rewritten.py"
    rewritten.write_text(paths["trains.py"].read_text() + "\nimport tensorflow.experimental.numpy\n")
    report = verify_rewrite([(paths["graph_error.py"], rewritten)])
    [pair] = report.pairs
    assert pair.original.ok and "not judged" in pair.original.verdict
    assert pair.rewritten.check("training").passed
    assert not pair.rewritten.check("api").passed and not report.ok


@pytest.mark.tf
def test_verify_fixed_runs_the_original_text_under_the_real_name(tmp_path):
    paths = write_programs(tmp_path, ["graph_error.py", "trains.py"])
    original_text = paths["graph_error.py"].read_text()
    report = verify_fixed([(paths["trains.py"], original_text)])
    [pair] = report.pairs
    assert pair.original.path == f"{paths['trains.py']} (original)"
    assert not pair.original.check("graph").passed and pair.original.ok
    assert pair.rewritten.path == str(paths["trains.py"]) and pair.rewritten.ok
    assert pair.rewritten.check("api").passed and report.ok


@pytest.mark.tf
@pytest.mark.skipif(not any(c.after for c in all_cases()), reason="no fixture pair yet")
def test_fix_verify_shows_the_fixture_before_and_its_rewrite(tmp_path):
    from migrate.cli import app

    case = next(c for c in all_cases() if c.after)
    target = tmp_path / case.before.name
    target.write_text(case.before.read_text())
    result = CliRunner().invoke(app, ["fix", str(target), "--unsafe-fixes", "--verify"])
    assert result.exit_code == 0, result.output
    assert "original vs rewritten" in result.output
    assert target.read_text() != case.before.read_text()


@pytest.mark.tf
def test_cli_verify_exit_codes_and_json(tmp_path):
    from migrate.cli import app

    paths = write_programs(tmp_path, ["trains.py", "numpy_accumulator.py"])
    result = CliRunner().invoke(app, ["verify", str(tmp_path), "--format", "json", "--api", "2.3"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    verdicts = {Path(p["path"]).name: p["ok"] for p in data["programs"]}
    assert verdicts == {"trains.py": True, "numpy_accumulator.py": False}
    text = CliRunner().invoke(app, ["verify", str(paths["trains.py"])])
    assert text.exit_code == 0, text.output
    assert "1 program run(s): 1 as expected, 0 not" in text.output
