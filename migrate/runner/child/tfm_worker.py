"""The runner's child process: imports TensorFlow once, then runs programs one
after another as the parent asks, answering with JSON lines.

Protocol (one JSON object per line): the child first sends
``{"ready": true, "python": ..., "tf": ..., "keras": ..., "import_seconds": ...}``;
then for each job ``{"id", "path", "mode": "protocol"|"script", "seed"}`` read
from stdin it sends ``{"id", "elapsed", "checks": [...], "outputs", "output_tail"}``.
The protocol travels on private copies of the original stdin/stdout; the
program's own stdin is /dev/null and its prints go to a per-program buffer
(and C-level logs to stderr), so nothing a program does corrupts the channel.

Between programs: Keras session cleared, seeds reset, modules loaded from the
program's directory forgotten, sys.path / sys.argv restored.

Runs under the interpreter the user chose: Python 3.8 and TF 2.3 compatible.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import random
import runpy
import sys
import time

HERE = os.path.dirname(os.path.realpath(__file__))
PROTOCOL = ("training_case", "attribution_case", "outputs")
TAIL = 4000


class Tail(io.StringIO):
    """Keeps only the last TAIL characters a program printed."""

    def write(self, text):
        super(Tail, self).write(text)
        if self.tell() > 4 * TAIL:
            kept = self.getvalue()[-TAIL:]
            self.seek(0)
            self.truncate()
            super(Tail, self).write(kept)
        return len(text)

    def tail(self):
        return self.getvalue()[-TAIL:]


def open_channel():
    """Private copies of stdin/stdout for the protocol; fd 0 -> /dev/null, fd 1 -> stderr."""
    channel_in = os.fdopen(os.dup(0), "r")
    channel_out = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return channel_in, channel_out


def send(channel, message):
    channel.write(json.dumps(message) + "\n")
    channel.flush()


def import_tensorflow():
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    try:
        import absl.logging
        absl.logging.set_verbosity(absl.logging.ERROR)
    except ImportError:  # absl comes with TF; only a stripped install lacks it
        pass
    return tf


def keras_name(tf):
    """Which Keras ``tf.keras`` is: tf-keras (Keras 2), Keras 3, or TF's own (<= 2.15)."""
    tf.keras.layers  # resolve TF's lazy loader so the module behind it is imported
    if "tf_keras" in sys.modules:
        return "tf-keras %s (Keras 2)" % sys.modules["tf_keras"].__version__
    keras = sys.modules.get("keras")
    version = getattr(keras, "__version__", "")
    if version.startswith("3."):
        return "keras %s (Keras 3)" % version
    return "tf.keras %s (Keras 2)" % getattr(tf.keras, "__version__", "?")


def reset_state(tf):
    """Undo what a previous program may have switched globally."""
    tf.keras.backend.clear_session()
    tf.keras.backend.set_floatx("float32")
    run_eagerly = getattr(tf.config, "run_functions_eagerly", None)  # TF >= 2.3
    if run_eagerly is not None:
        run_eagerly(False)


def reseed(tf, seed):
    random.seed(seed)
    import numpy as np
    np.random.seed(seed)
    tf.random.set_seed(seed)
    set_random_seed = getattr(getattr(tf.keras, "utils", None), "set_random_seed", None)
    if set_random_seed is not None:  # Keras 3 keeps its own seed generator
        set_random_seed(seed)


class Worker(object):
    def __init__(self, tf, probe):
        self.tf = tf
        self.probe = probe

    def run(self, job):
        import tfm_checks as checks

        path = os.path.realpath(job["path"])
        seed = int(job.get("seed", 0))
        directory = os.path.dirname(path)
        saved_path, saved_argv = list(sys.path), list(sys.argv)
        saved_modules = set(sys.modules)
        sys.path.insert(0, directory)
        sys.argv = [path]
        output = Tail()
        started = time.perf_counter()
        reset_state(self.tf)
        reseed(self.tf, seed)
        self.probe.begin()
        outputs = None
        try:
            with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
                if job.get("mode") == "script":
                    results = [self.run_script(path, checks)]
                else:
                    results, outputs = self.run_protocol(path, seed, checks)
        finally:
            sys.path[:] = saved_path
            sys.argv[:] = saved_argv
            for name in set(sys.modules) - saved_modules:
                module_file = getattr(sys.modules[name], "__file__", None) or ""
                if name == "__tfm_program__" or module_file.startswith(directory + os.sep):
                    del sys.modules[name]
        results.append(self.dynamic_result(checks))
        elapsed = time.perf_counter() - started
        self.tf.keras.backend.clear_session()
        return {"id": job["id"], "elapsed": elapsed, "checks": results,
                "outputs": outputs, "output_tail": output.tail()}

    def run_script(self, path, checks):
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as stop:
            if stop.code not in (None, 0):
                return checks.result("run", False, "the script exited with %r" % (stop.code,))
        except Exception as err:  # the program's own failure is the finding
            return checks.result("run", False, "the script raised",
                                 error=checks.describe_error(err, path))
        return checks.result("run", True, "the script ran to the end as __main__")

    def run_protocol(self, path, seed, checks):
        try:
            module = load_module(path)
        except Exception as err:  # an import-time failure fails the whole program
            return [checks.result("run", False, "importing the program raised",
                                  error=checks.describe_error(err, path))], None
        results = [checks.result("run", True, "imported; protocol: " + ", ".join(
            name for name in PROTOCOL if callable(getattr(module, name, None))))]
        tf = self.tf
        planned = []
        if callable(getattr(module, "training_case", None)):
            for name, check in (("gradients", checks.check_gradients),
                                ("training", checks.check_training),
                                ("graph", checks.check_graph)):
                planned.append((name, lambda check=check: check(
                    tf, checks.TrainingCase(tf, module.training_case))))
        if callable(getattr(module, "attribution_case", None)):
            planned.append(("attribution",
                            lambda: checks.check_attribution(module.attribution_case())))
        for name, run in planned:
            reseed(tf, seed)
            try:
                results.append(run())
            except Exception as err:  # a check that cannot complete has failed
                results.append(checks.result(name, False, "raised",
                                             error=checks.describe_error(err, path)))
        outputs = None
        if callable(getattr(module, "outputs", None)):
            reseed(tf, seed)
            try:
                outputs = checks.serialize_outputs(module.outputs())
            except Exception as err:  # reported by the parent's equivalence check
                outputs = {"__error__": checks.describe_error(err, path)}
        return results, outputs

    def dynamic_result(self, checks):
        records = self.probe.records()
        bad = records["none"]
        if bad:
            summary = "; ".join(
                "%s:%d returned None %s (%d call%s)" % (
                    os.path.basename(r["file"]), r["line"],
                    "entirely" if r["entirely"] else
                    "for %d of %d sources" % (len(r["none_sources"]), r["sources"]),
                    r["calls"], "" if r["calls"] == 1 else "s")
                for r in bad)
        else:
            summary = "no tape.gradient call returned None (%d call%s)" % (
                records["calls"], "" if records["calls"] == 1 else "s")
        return checks.result("dynamic", not bad, summary,
                             {"calls": records["calls"], "none_call_sites": len(bad)},
                             {"none_calls": bad})


def load_module(path):
    """Import the program as module ``__tfm_program__`` (its __main__ block does not run)."""
    spec = importlib.util.spec_from_file_location("__tfm_program__", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["__tfm_program__"] = module
    spec.loader.exec_module(module)
    return module


def main():
    channel_in, channel_out = open_channel()
    started = time.perf_counter()
    tf = import_tensorflow()
    import tfm_tape_probe

    probe = tfm_tape_probe.TapeProbe(tf, HERE).install()
    worker = Worker(tf, probe)
    send(channel_out, {"ready": True, "python": sys.executable,
                       "python_version": sys.version.split()[0], "tf": tf.__version__,
                       "keras": keras_name(tf), "import_seconds": time.perf_counter() - started})
    for line in channel_in:
        if line.strip():
            send(channel_out, worker.run(json.loads(line)))


if __name__ == "__main__":
    main()
