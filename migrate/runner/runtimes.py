"""The TensorFlow runtimes `verify` runs programs under, and the checks that
an interpreter can be one, made before any worker starts so that a missing
package is one clear line instead of a traceback per program.

- ``current``: this interpreter (or ``--python``) with the current TF and
  tf-keras, Keras 2 semantics (``TF_USE_LEGACY_KERAS=1``);
- ``keras3``: the same TF with Keras 3;
- ``2.3``: the real TF 2.3 in a cached Python 3.8/3.7 environment
  (environments.py), or an interpreter given by ``--python`` that has it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Tuple

from rich.console import Console

from .environments import Unavailable, ensure, find_base_python, ready

PROBE_SCRIPT = Path(__file__).resolve().parent / "child" / "tfm_probe.py"
CHOICES = ("2.3", "current", "all")
RUNNER_EXTRA = "pip install 'tf-migrate[runner]'"


@dataclass(frozen=True)
class Runtime:
    """Where the workers run: an interpreter and the Keras the child selects."""

    name: str  # "2.3" | "current" | "keras3"
    label: str  # the report's column header
    python: str
    keras: str  # "2": Keras 2 (tf-keras, or TF 2.3's own tf.keras); "3": Keras 3


def current(python: Optional[str] = None, keras: str = "2") -> Runtime:
    """The current TF under ``python`` (default: this interpreter), unchecked."""
    if keras == "3":
        return Runtime("keras3", "current TF + Keras 3", python or sys.executable, "3")
    return Runtime("current", "current TF + tf-keras", python or sys.executable, "2")


def probe(python: str) -> dict:
    """{"python", "version": [3, 8, 18], "modules": {name: version or None}}."""
    if not Path(python).exists():
        raise Unavailable(f"--python {python}: no such file")
    try:
        done = subprocess.run([python, str(PROBE_SCRIPT)], capture_output=True, text=True,
                              timeout=60, check=False)
    except OSError as err:
        raise Unavailable(f"--python {python}: cannot run it ({err.strerror or err})") from None
    except subprocess.TimeoutExpired:
        raise Unavailable(f"--python {python}: did not answer within 60 s") from None
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise Unavailable(f"--python {python}: not a Python 3 interpreter ({last})") from None


def checked(runtime: Runtime) -> Runtime:
    """``runtime`` when its interpreter has what the child needs, else Unavailable
    naming the interpreter and the package to install there."""
    found = probe(runtime.python)["modules"]
    python = runtime.python
    if not found["tensorflow"]:
        hint = ("pip install tensorflow-cpu==2.3.0 'protobuf<3.21'" if runtime.name == "2.3"
                else f"{python} -m {RUNNER_EXTRA}")
        raise Unavailable(f"{python} has no TensorFlow (package 'tensorflow'): {hint}")
    if not found["numpy"]:
        raise Unavailable(f"{python} has no NumPy (package 'numpy'): {python} -m pip install numpy")
    if runtime.name == "current" and _major_minor(found["tensorflow"]) >= (2, 16) \
            and not found["tf_keras"]:
        raise Unavailable(f"{python} has TensorFlow {found['tensorflow']} but no tf-keras "
                          f"(Keras 2): {python} -m pip install tf-keras")
    if runtime.name == "keras3" and not (found["keras"] or "").startswith("3"):
        raise Unavailable(f"{python} has no Keras 3 (package 'keras'): "
                          f"{python} -m pip install 'keras>=3'")
    return runtime


def tf23(python: Optional[str], cache_dir: Path, refresh: bool, console: Console) -> Runtime:
    """The real TF 2.3: ``python`` itself when it already has TF 2.3, else a
    cached environment made from it (or from the first Python 3.8/3.7 found)."""
    if python:
        info = probe(python)
        if (info["modules"]["tensorflow"] or "").startswith("2.3."):
            return checked(Runtime("2.3", "TF 2.3", python, "2"))
    base = find_base_python(python)
    env_python = ensure(base, cache_dir, refresh, console)
    return checked(Runtime("2.3", "TF 2.3", str(env_python), "2"))


def tf23_if_ready(cache_dir: Path) -> Optional[Runtime]:
    """The cached TF 2.3 environment when one was built before, else None
    (`fix --verify` does not build it: that is `verify --tf 2.3`'s job)."""
    try:
        base = find_base_python(None)
    except Unavailable:
        return None
    env_python = ready(base, cache_dir)
    return Runtime("2.3", "TF 2.3", str(env_python), "2") if env_python else None


def select(tf: str, keras: str, python: Optional[str], cache_dir: Path, refresh: bool,
           console: Console) -> Tuple[Runtime, ...]:
    """The runtimes ``verify --tf TF --keras KERAS`` asks for, each checked."""
    if tf not in CHOICES:
        raise Unavailable(f"--tf {tf}: use one of {', '.join(CHOICES)}")
    if tf == "2.3":
        if keras == "3":
            raise Unavailable("--keras 3 with --tf 2.3: TF 2.3 has only its own tf.keras (Keras 2)")
        return (tf23(python, cache_dir, refresh, console),)
    if tf == "all":
        return (tf23(python, cache_dir, refresh, console), checked(current(None, "2")),
                checked(current(None, "3")))
    keras_versions = ("2",) if keras == "2" else ("2", "3")
    return tuple(checked(current(python, k)) for k in keras_versions)


def _major_minor(version: str) -> Tuple[int, ...]:
    try:
        return tuple(int(part) for part in version.split(".")[:2])
    except ValueError:
        return (0, 0)

