"""typed-convert never turns working code into code that raises: every
typed-convert fixture is rewritten by the engine (unsafe fixes on) and both
versions run in a TensorFlow subprocess; their outputs() must agree in names,
dtypes and values."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from migrate.engine import Options, transform
from migrate.registry import resolve

from fixture_cases import all_cases

CASES = [c for c in all_cases() if c.recipe == "typed-convert"]
# under xdist (--dist loadgroup) one worker runs this file, making `runs` (one TF child) once
pytestmark = pytest.mark.xdist_group("typed-convert-runtime")

_CHILD = r"""
import importlib.util, json, sys
import numpy as np
answers = {}
for path in sys.argv[1:]:
    spec = importlib.util.spec_from_file_location("program", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        answers[path] = {name: [np.asarray(value).dtype.name, np.asarray(value).tolist()]
                         for name, value in module.outputs().items()}
    except Exception as err:  # report which program raised, and why
        answers[path] = {"__error__": type(err).__name__ + ": " + str(err)}
print(json.dumps(answers))
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """path -> outputs of every before and of its rewrite, from one TF child."""
    folder = tmp_path_factory.mktemp("typed_convert")
    programs = {}
    for case in CASES:
        source = case.before.read_text()
        result = transform(source, str(case.before),
                           Options(tuple(resolve(["typed-convert"])), unsafe_fixes=True))
        rewritten = folder / f"{case.name}.rewritten.py"
        rewritten.write_text(result.output)
        programs[case.name] = (str(case.before), str(rewritten))
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="-1")
    paths = [p for pair in programs.values() for p in pair]
    done = subprocess.run([sys.executable, "-c", _CHILD, *paths], capture_output=True, text=True,
                          env=env, timeout=600, check=True)
    answers = json.loads(done.stdout.strip().splitlines()[-1])
    return {name: (answers[before], answers[after]) for name, (before, after) in programs.items()}


@pytest.mark.tf
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rewrite_computes_the_same_outputs(case, runs):
    before, after = runs[case.name]
    assert "__error__" not in before, before
    assert "__error__" not in after, after
    assert sorted(before) == sorted(after)
    for name in before:
        (dtype_before, value_before), (dtype_after, value_after) = before[name], after[name]
        assert dtype_before == dtype_after, name
        assert np.array_equal(np.array(value_before), np.array(value_after)), name
