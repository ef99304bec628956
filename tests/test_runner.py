"""The runner: static API check, judging, and (marked tf) real TF workers on
small programs written here: a plain script with a NumPy-accumulator bug, a
hanging and a crashing program, protocol programs that train or do not, and
attributions that are complete or not. TF-running tests batch their programs
into as few verify calls as possible: each call imports TF once per worker."""

from __future__ import annotations

import ast
import io
import json
import re
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

import migrate.runner
from migrate.runner import VerifyOptions, verify, verify_fixed, verify_rewrite
from migrate.runner.api_check import check_source
from migrate.runner.judge import equivalence, judge
from migrate.runner.programs import classify
from migrate.runner.report import Check, ProgramReport
from migrate.result import Diagnostic
from migrate.runner import environments
from migrate.runner.environments import EnvironmentSpec, Interpreter, Unavailable
from migrate.runner.report import Pair, Report
from migrate.runner.runtimes import current
from migrate.runner.unfixed import unfixed_on_failures

from fixture_cases import all_cases
from tf23_runtime import tf23_cache_dir, tf23_runtime

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
        import time

        import tensorflow as tf

        while True:  # asleep, not spinning: the wait for the timeout leaves the core to other tests
            time.sleep(60)
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
    "tf23_runtime_names.py": '''
        """Logs a small regression the TF 2.3 way: names that exist only once TF
        is imported (the version dunder, TensorBoard's summary ops attached to
        tf.summary, Keras' metrics and losses behind tf.metrics / tf.losses, the
        lazily loaded tf.estimator)."""
        import tempfile

        import numpy as np
        import tensorflow as tf

        print("TensorFlow", tf.__version__, tf.version.VERSION, tf.keras.__version__)
        logdir = tempfile.mkdtemp()
        writer = tf.summary.create_file_writer(logdir)
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        optimizer = tf.keras.optimizers.Adam(0.01)
        metric = tf.metrics.MeanSquaredError()
        loss_fn = tf.losses.Huber()
        x = np.random.rand(8, 3).astype("float32")
        y = x.sum(axis=1, keepdims=True)
        with writer.as_default():
            for step in range(3):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                metric.update_state(y, model(x))
                tf.summary.scalar("loss", loss, step=step)
                tf.summary.histogram("kernel", model.trainable_variables[0], step=step)
                tf.summary.text("mode", tf.estimator.ModeKeys.TRAIN, step=step)
        writer.flush()
        assert tf.io.gfile.listdir(logdir)
        print(tf.__name__, "mse", float(metric.result()))
    ''',
    "two_inputs.py": '''
        """Integrated gradients for a model with a 4-feature and a 6-feature
        input, written once per input and copied."""
        import numpy as np
        import tensorflow as tf

        first = tf.keras.layers.Input(shape=(4,))
        second = tf.keras.layers.Input(shape=(6,))
        joined = tf.keras.layers.Concatenate()([first, second])
        model = tf.keras.Model([first, second], tf.keras.layers.Dense(1)(joined))
        probe = tf.keras.Sequential()


        def path_gradients(inputs, baseline, which, steps=16):
            grads = []
            for alpha in np.linspace(0.0, 1.0, steps):
                step = baseline[which] + alpha * (inputs[which] - baseline[which])
                feed = list(inputs)
                feed[which] = step
                with tf.GradientTape() as tape:
                    tape.watch(step)
                    score = model(feed)[:, 0]
                grads.append(tape.gradient(score, step))
            return tf.reduce_mean(tf.stack(grads), axis=0)


        inputs_1 = tf.random.normal((1, 4))
        inputs_2 = tf.random.normal((1, 6))
        baseline_1 = tf.zeros_like(inputs_1)
        baseline_2 = tf.zeros_like(inputs_2)
        avg_gradients_1 = path_gradients([inputs_1, inputs_2], [baseline_1, baseline_2], 0)
        avg_gradients_2 = path_gradients([inputs_1, inputs_2], [baseline_1, baseline_2], 1)
        integrated_gradients_1 = (inputs_1 - baseline_1) * avg_gradients_1
        integrated_gradients_2 = (inputs_2 - baseline_2) * avg_gradients_1  # MIXUP-LINE
        print(integrated_gradients_1.numpy().sum(), integrated_gradients_2.numpy().sum())
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


def test_api_check_knows_the_names_tf23_attaches_at_import():
    source = textwrap.dedent(PROGRAMS["tf23_runtime_names.py"])
    assert check_source(source, "tf23_runtime_names.py") == []
    later = source + "tf.summary.graph\ntf.metrics.F1Score\n"  # not in TF 2.3
    assert [m.symbol for m in check_source(later, "x.py")] == ["tf.summary.graph",
                                                               "tf.metrics.F1Score"]


# ---- static: judging ---------------------------------------------------------------------

def _report(role, expected, *checks):
    report = ProgramReport("p.py", role, "2", "ran", "some-recipe", expected)
    report.checks = [Check(name, passed, "", {}, *rest) for name, passed, *rest in checks]
    return report


_NONE = {"none_calls": [{"file": "p.py", "line": 3, "none_sources": ["x"]}]}


@pytest.mark.parametrize("expected,checks,ok,verdict", [
    ("none-gradient", [("gradients", False, _NONE), ("training", False)], True, "expected failure observed"),
    ("none-gradient", [("gradients", True), ("dynamic", False, {"none_variables": ["dense/kernel:0"]})], True,
     "expected failure observed"),
    ("none-gradient", [("gradients", False, {}, "ValueError: No gradients provided for any variable: ...")], True,
     "expected failure observed"),
    ("none-gradient", [("gradients", False, {}, "LookupError: Exception encountered when calling layer 'r'")],
     True, "expected failure observed"),  # "No gradient defined for operation", its message elided by Keras
    ("none-gradient", [("gradients", False, {}, "ValueError: Argument `initial_value` could not be lifted")],
     False, "failed for another reason"),  # raised, but no None gradient was seen
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


# ---- runtimes and the TF 2.3 environment (no TensorFlow import) ----------------------------

def _one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


@pytest.fixture
def bare_python(tmp_path) -> Path:
    """An interpreter that has neither TensorFlow nor NumPy."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")],
                   check=True)
    return tmp_path / "bare" / "bin" / "python"


def test_verify_with_an_interpreter_without_tensorflow_is_one_line_exit_2(tmp_path, bare_python):
    from migrate.cli import app

    program = write_programs(tmp_path / "p", ["trains.py"])["trains.py"]
    line = _one_line_error(CliRunner().invoke(app, ["verify", str(program),
                                                    "--python", str(bare_python)]))
    assert str(bare_python) in line and "'tensorflow'" in line and "pip install" in line
    line = _one_line_error(CliRunner().invoke(app, ["verify", str(program),
                                                    "--python", str(tmp_path / "nope")]))
    assert line == f"tf-migrate: --python {tmp_path / 'nope'}: no such file"


@pytest.mark.tf  # the runtime is checked first: without TensorFlow, that is what it names
def test_verify_of_a_path_that_does_not_exist_exits_2(tmp_path):
    from migrate.cli import app

    result = CliRunner().invoke(app, ["verify", str(tmp_path / "missing.py")])
    assert result.exit_code == 2, result.output
    assert "missing.py" in result.output


def test_no_python_38_names_what_to_install(tmp_path, monkeypatch):
    from migrate.cli import app

    monkeypatch.setenv("PATH", str(tmp_path))  # no python3.8 / python3.7, no pyenv
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    with pytest.raises(Unavailable, match=r"no Python 3\.8 or 3\.7 found .*pyenv install 3\.8"):
        environments.find_base_python(None)
    line = _one_line_error(CliRunner().invoke(app, ["verify", "--tf", "2.3", str(tmp_path)]))
    assert "pyenv install 3.8" in line


def test_tf23_from_an_interpreter_of_another_version_is_refused(tmp_path):
    from migrate.cli import app

    line = _one_line_error(CliRunner().invoke(
        app, ["verify", "--tf", "2.3", "--python", sys.executable, str(tmp_path)]))
    version = "%d.%d" % sys.version_info[:2]
    assert f"is Python {version}; tf2.3 needs Python 3.8 or 3.7" in line
    line = _one_line_error(CliRunner().invoke(app, ["verify", "--tf", "2.3", "--keras", "3",
                                                    str(tmp_path)]))
    assert "TF 2.3 has only its own tf.keras" in line


def test_tf23_tests_skip_with_the_reason_and_fail_when_ci_requires_them(monkeypatch):
    import required
    import tf23_runtime as helper

    monkeypatch.setattr(helper, "_built", lambda: "no Python 3.8 or 3.7 found")
    monkeypatch.delenv(required.REQUIRE, raising=False)
    with pytest.raises(pytest.skip.Exception, match="TF 2.3 runtime unavailable: no Python 3.8"):
        helper.tf23_runtime()
    monkeypatch.setenv(required.REQUIRE, "1")
    with pytest.raises(pytest.fail.Exception, match="TF_MIGRATE_REQUIRE_ALL=1 but TF 2.3 runtime"):
        helper.tf23_runtime()


def _toy_spec(*packages) -> EnvironmentSpec:
    return EnvironmentSpec("toy", packages, (tuple(sys.version_info[:2]),))


def test_an_environment_is_reused_only_after_a_complete_build(tmp_path):
    base = Interpreter(sys.executable, tuple(sys.version_info[:2]))
    spec = _toy_spec()
    folder = environments.location(base, tmp_path, spec)
    folder.mkdir(parents=True)
    (folder / "left-by-a-killed-install").write_text("")
    assert environments.ready(base, tmp_path, spec) is None  # no marker: not reused
    python = environments.ensure(base, tmp_path, False, Console(file=io.StringIO()), spec)
    assert python.exists() and not (folder / "left-by-a-killed-install").exists()
    assert environments.ready(base, tmp_path, spec) == python
    (folder / "kept").write_text("")
    environments.ensure(base, tmp_path, False, Console(file=io.StringIO()), spec)
    assert (folder / "kept").exists()  # reused
    environments.ensure(base, tmp_path, True, Console(file=io.StringIO()), spec)
    assert not (folder / "kept").exists()  # --refresh rebuilt it


def test_a_failed_install_is_one_line_and_never_reused(tmp_path):
    base = Interpreter(sys.executable, tuple(sys.version_info[:2]))
    wheel = tmp_path / "no_such_package-1.0-py3-none-any.whl"
    zipfile.ZipFile(wheel, "w").close()  # a wheel with nothing in it: pip processes it, then fails
    spec = _toy_spec(str(wheel))
    said = io.StringIO()
    with pytest.raises(Unavailable) as failure:
        environments.ensure(base, tmp_path, False, Console(file=said), spec)
    message = str(failure.value)
    assert "\n" not in message and message.startswith("could not install")
    assert "no-such-package" in message and "install.log" in message
    assert environments.ready(base, tmp_path, spec) is None
    # the progress lines a log keeps (not a terminal: no spinner), with the time elapsed
    steps = [line for line in said.getvalue().splitlines()
             if line.startswith("tf-migrate: toy [") and "] still " not in line]  # a slow host adds those
    assert re.fullmatch(r"tf-migrate: toy \[ +\d+ s\] create the environment", steps[0])
    assert re.fullmatch(r"tf-migrate: toy \[ +\d+ s\] install .*no_such_package.*", steps[1])
    assert any(re.match(r"tf-migrate: toy \[ +\d+ s\] collecting: ", line) for line in steps)


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


PIP_LINES = [(0, "Collecting tensorflow-cpu==2.3.0"),
             (1, "Downloading tensorflow_cpu-2.3.0-cp38-cp38-manylinux2010_x86_64.whl (137.3 MB)"),
             (40, "Collecting numpy<1.19.0,>=1.16.0"),  # another phase, EVERY s later: said
             (41, "Downloading numpy-1.18.5-cp38-cp38-manylinux1_x86_64.whl (20.6 MB)"),  # too soon
             (50, "Collecting absl-py>=0.7.0"),  # the phase last said: quiet
             (51, "Using cached absl_py-2.1.0-py3-none-any.whl (133 kB)"),  # another, EVERY s later
             (52, "Installing collected packages: numpy, absl-py, tensorflow-cpu")]


def test_the_build_says_pips_phase_and_the_time_and_keeps_talking_while_pip_is_quiet():
    clock, said = _Clock(), io.StringIO()
    progress = environments.Progress(Console(file=said, width=200), "tf2.3", clock)
    progress.step("install tensorflow-cpu==2.3.0")
    for at, line in PIP_LINES:
        clock.now = 100 + at
        progress.line(line)
    for at in range(53, 200):  # installing: pip says nothing, ask once a second
        clock.now = 100 + at
        progress.quiet()
    assert said.getvalue().splitlines() == [
        "tf-migrate: tf2.3 [   0 s] install tensorflow-cpu==2.3.0",
        "tf-migrate: tf2.3 [   0 s] collecting: Collecting tensorflow-cpu==2.3.0",
        "tf-migrate: tf2.3 [   1 s] downloading: Downloading tensorflow_cpu-2.3.0-cp38-cp38-"
        "manylinux2010_x86_64.whl (137.3 MB)",
        "tf-migrate: tf2.3 [  40 s] collecting: Collecting numpy<1.19.0,>=1.16.0",
        "tf-migrate: tf2.3 [  51 s] downloading: Using cached absl_py-2.1.0-py3-none-any.whl (133 kB)",
        "tf-migrate: tf2.3 [  52 s] installing: Installing collected packages: numpy, absl-py, "
        "tensorflow-cpu",
        "tf-migrate: tf2.3 [  82 s] still installing (pip's last line: Installing collected "
        "packages: numpy, absl-py, tensorflow-cpu)",
        "tf-migrate: tf2.3 [ 112 s] still installing (pip's last line: Installing collected "
        "packages: numpy, absl-py, tensorflow-cpu)",
        "tf-migrate: tf2.3 [ 142 s] still installing (pip's last line: Installing collected "
        "packages: numpy, absl-py, tensorflow-cpu)",
        "tf-migrate: tf2.3 [ 172 s] still installing (pip's last line: Installing collected "
        "packages: numpy, absl-py, tensorflow-cpu)"]


def _diagnostic(path, line, safety="unsafe"):
    return Diagnostic(str(path), line, 1, line, 10, "suffix-mixup", "uses the other input", safety,
                      True, False)


def test_a_failing_line_names_the_finding_left_unfixed_there(tmp_path):
    original = "a = 1\nunused = 2\nb = a * c\n"
    written = tmp_path / "w.py"
    written.write_text("a = 1\nb = a * c\n")  # a fix removed line 2: the finding moved up
    failed = ProgramReport(str(written), "rewritten", "2", "ran")
    failed.checks = [Check("run", False, "the script raised",
                           error=f"NameError: name 'c' is not defined (at {written}:2)")]
    report = Report(pairs=[Pair(ProgramReport("o", "original", "2", "ran"), failed)])
    [line] = unfixed_on_failures(report, {str(written): (original, [_diagnostic(written, 3)])})
    assert line.startswith(f"{written}:2: run failed on this line, where a finding was left "
                           "unfixed (line 3 before the fix): [suffix-mixup]")
    assert line.endswith("rerun with --unsafe-fixes)")
    elsewhere = unfixed_on_failures(report, {str(written): (original, [_diagnostic(written, 1)])})
    assert elsewhere[0].endswith("the rewrite fails (run); findings left unfixed in it "
                                 "(lines before the fix):")
    assert elsewhere[1].strip().startswith(f"{written}:1: [suffix-mixup]")


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


# the tests of `batch`: one xdist worker (--dist loadgroup) makes it once
BATCH = pytest.mark.xdist_group("runner-batch")

# what hang.py waits before it is killed; each of the other programs must finish within it,
# also on a loaded machine (two xdist workers and more: 10 s was too close there)
BATCH_TIMEOUT = 30


@pytest.fixture(scope="module")
def batch(tmp_path_factory, other_python):
    """One verify call over every program, under the second interpreter."""
    paths = write_programs(tmp_path_factory.mktemp("programs"), list(PROGRAMS))
    order = ["numpy_accumulator.py", "traced_none.py", "hang.py", "trains.py", "crash.py", "graph_error.py",
             "ig_complete.py", "ig_incomplete.py"]
    report = verify([paths[name] for name in order],
                    VerifyOptions(timeout=BATCH_TIMEOUT, runtimes=(current(str(other_python)),)))
    by_name = {Path(p.path).name: p for p in report.programs}
    return paths, report, by_name


@BATCH
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


@BATCH
@pytest.mark.tf
def test_a_none_inside_tf_function_is_mapped_back_to_the_program_line(batch):
    paths, _, by_name = batch
    [call] = by_name["traced_none.py"].check("dynamic").details["none_calls"]
    assert call["line"] == line_of(paths["traced_none.py"], "TRACED-LINE")
    assert call["function"] == "step"
    assert not call["entirely"] and call["none_sources"] == ["Variable:0"]


@BATCH
@pytest.mark.tf
def test_a_hang_and_a_crash_are_reported_and_the_others_still_run(batch):
    _, report, by_name = batch
    assert by_name["hang.py"].status == "timeout" and not by_name["hang.py"].ok
    assert f"{BATCH_TIMEOUT} s" in by_name["hang.py"].message
    assert by_name["crash.py"].status == "crashed"
    assert "exit code 3" in by_name["crash.py"].message
    assert [p.status for p in report.programs].count("ran") == 6
    assert by_name["trains.py"].ok and by_name["ig_complete.py"].ok
    assert len(report.workers) == 3  # the first, one after the hang, one after the crash


@BATCH
@pytest.mark.tf
def test_the_report_says_which_interpreter_ran(batch, other_python):
    _, report, by_name = batch
    assert {w.python for w in report.workers} == {str(other_python)}
    assert by_name["trains.py"].interpreter == str(other_python)
    assert all("Keras 2" in w.keras for w in report.workers)


@BATCH
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


@BATCH
@pytest.mark.tf
def test_numpy_in_call_fails_graph_mode_with_the_program_line(batch):
    paths, _, by_name = batch
    program = by_name["graph_error.py"]
    graph = program.check("graph")
    assert not graph.passed
    assert "symbolic" in graph.error
    assert graph.error.endswith(f"graph_error.py:{line_of(paths['graph_error.py'], 'GRAPH-LINE')})")
    assert program.check("gradients").numbers["none"] == 2


@BATCH
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
def test_keras_3_runs_the_programs_again_under_keras_3_in_a_pool_of_two(tmp_path):
    paths = write_programs(tmp_path, ["trains.py", "ig_complete.py"])
    report = verify([paths["trains.py"], paths["ig_complete.py"]],
                    VerifyOptions(runtimes=(current(keras="2"), current(keras="3")), jobs=2))
    assert [(Path(p.path).name, p.keras) for p in report.programs] == [
        ("trains.py", "2"), ("ig_complete.py", "2"), ("trains.py", "3"), ("ig_complete.py", "3")]
    assert all(p.ok for p in report.programs)
    assert ["Keras 3" in w.keras for w in report.workers] == [False, False, True, True]


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
def test_fix_verify_shows_the_fixture_before_and_its_rewrite(tmp_path):
    from migrate.cli import app

    case = next(c for c in all_cases() if c.after and not c.report_only)  # one the tool rewrites
    target = tmp_path / case.before.name
    target.write_text(case.before.read_text())
    result = CliRunner().invoke(app, ["fix", str(target), "--unsafe-fixes", "--verify"])
    assert result.exit_code == 0, result.output
    assert "original vs rewritten" in result.output
    assert target.read_text() != case.before.read_text()
    # the test's private cache has no TF 2.3 environment: said, and the current TF used
    assert "verified with the current TensorFlow and tf-keras: no TF 2.3 environment" in result.output
    assert "TensorFlow 2.3" not in result.output


@pytest.mark.tf
def test_fix_verify_runs_tf23_and_names_the_finding_left_on_the_failing_line(tmp_path):
    """The safe fix (an unused model removed) moves every line up by one; the
    unsafe suffix-mixup is left, and TF 2.3 fails on its (new) line."""
    from migrate.cli import app

    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "envs").symlink_to(tf23_cache_dir() / "envs")  # the built environment, no result cache
    target = write_programs(tmp_path, ["two_inputs.py"])["two_inputs.py"]
    before = line_of(target, "MIXUP-LINE")
    result = CliRunner().invoke(app, ["fix", str(target), "--verify", "--cache-dir", str(cache)])
    assert result.exit_code == 1, result.output
    assert "TensorFlow 2.3.0" in result.output and "current TensorFlow" not in result.output
    after = line_of(target, "MIXUP-LINE")
    assert after == before - 1
    assert (f"{target}:{after}: run failed on this line, where a finding was left unfixed "
            f"(line {before} before the fix): [suffix-mixup]") in result.output
    assert "rerun with --unsafe-fixes" in result.output


@pytest.mark.tf
def test_tf23_runs_a_program_using_names_attached_at_import(tmp_path):
    paths = write_programs(tmp_path, ["tf23_runtime_names.py"])
    report = verify([paths["tf23_runtime_names.py"]],
                    VerifyOptions(api="2.3", runtimes=(tf23_runtime(),)))
    [program] = report.programs
    assert program.ok, [(c.name, c.summary, c.error) for c in program.checks]
    assert program.check("run").passed and program.check("api").passed
    assert program.runtime == "2.3" and program.output_tail.startswith("TensorFlow 2.3.0 2.3.0")
    assert {(w.python_version[:3], w.tf) for w in report.workers} == {("3.8", "2.3.0")}


@pytest.mark.tf
def test_an_interpreter_that_has_tf23_is_used_as_is(tmp_path):
    from migrate.runner.runtimes import tf23

    env_python = tf23_runtime().python
    runtime = tf23(env_python, tmp_path / "unused-cache", False, Console(file=io.StringIO()))
    assert runtime.python == env_python and not (tmp_path / "unused-cache").exists()


@pytest.mark.tf
def test_tf_all_shows_one_table_with_a_column_per_runtime(tmp_path, monkeypatch):
    from migrate.cli import app

    write_programs(tmp_path, ["trains.py", "ig_incomplete.py"])
    monkeypatch.chdir(tmp_path)  # short relative names in the table
    result = CliRunner().invoke(app, ["verify", "--tf", "all", "--cache-dir", str(tf23_cache_dir()),
                                      "trains.py", "ig_incomplete.py"])
    assert result.exit_code == 1, result.output
    assert result.output.count("tf-migrate verify") == 1
    header = next(line for line in result.output.splitlines() if "program" in line)
    assert all(label in header for label in ("TF 2.3", "current TF + tf-keras",
                                              "current TF + Keras 3"))
    rows = {name: line for line in result.output.splitlines()
            for name in ("trains.py", "ig_incomplete.py") if name in line and "│" in line}
    assert rows["trains.py"].count("pass") == 3
    assert rows["ig_incomplete.py"].count("fail: attribution") == 3
    assert "6 program run(s): 3 as expected, 3 not" in result.output
    assert "TF 2.3: ran by" in result.output and "TensorFlow 2.3.0" in result.output
    assert "Keras 3" in result.output


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


def test_lazy_public_names_stay_the_functions_after_their_submodule_loads():
    """`migrate.runner` imports its submodules on first use; whichever
    comes first, a submodule's own import (the `verify` command's) or the
    package's name, the package's `verify` stays the function."""
    code = ("import migrate.runner.verification\n"
            "from migrate.runner import verify\nfrom migrate.runner import verify as again\n"
            "import migrate.runner as runner\n"
            "assert callable(verify) and again is verify and runner.verify is verify\n"
            "assert callable(runner.verify_fixed) and callable(runner.VerifyOptions)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
