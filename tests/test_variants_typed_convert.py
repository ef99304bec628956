"""typed-convert on its generated variants (tests/variants/typed_convert.py):
every program scored statically by the engine (no TensorFlow), and a small
fixed-seed sample run through verify, before and after its fix, on current
TF and on the real TF 2.3."""

from __future__ import annotations

import pytest

from migrate.engine import Options, transform
from migrate.registry import resolve
from migrate.runner import VerifyOptions, verify
from migrate.runner.runtimes import current

from tf23_runtime import tf23_runtime
from variant_checks import score_family
from variants import all_programs, sample
from variants import typed_convert

PROGRAMS = list(all_programs(typed_convert))
RECIPES = tuple(resolve(["typed-convert"]))


def _labels(source: str):
    return {(number, line.rsplit("typed-convert ", 1)[1].strip())
            for number, line in enumerate(source.splitlines(), 1) if "# expect: typed-convert" in line}


def test_the_space_is_hundreds_of_programs_a_third_of_them_near_misses():
    misses = sum(p.near_miss for p in PROGRAMS)
    assert len(PROGRAMS) >= 300 and misses * 3 >= len(PROGRAMS)
    assert all(bool(_labels(p.source)) != p.near_miss for p in PROGRAMS)


def test_every_program_is_scored_at_097_and_near_misses_stay_byte_identical():
    score_family(PROGRAMS, {"typed-convert"})


@pytest.mark.tf
def test_a_sample_runs_before_and_after_its_safe_fix_on_current_tf_and_tf23(tmp_path):
    safe = [p for p in PROGRAMS if "typed-convert safe" in p.source]
    chosen = sample(safe, 3, seed=5) + sample([p for p in PROGRAMS if p.near_miss], 1, seed=5)
    paths = []
    for program in chosen:
        fixed = transform(program.source, f"{program.name}.py", Options(RECIPES)).output
        assert (fixed == program.source) == program.near_miss, program.name
        for role, text in (("before", program.source), ("after", fixed)):
            path = tmp_path / role / f"{program.name.replace('-', '_')}.py"
            path.parent.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
            paths.append(path)
    report = verify(paths, VerifyOptions(timeout=60, runtimes=(current(), tf23_runtime())))
    failing = [(p.path, p.interpreter, [c.name for c in p.checks if not c.passed], p.message)
               for p in report.programs if not p.ok]
    assert not failing and len(report.programs) == 2 * len(paths)
