"""Each speed mechanism switched off (migrate/speedups.py, as
benchmarks/bench_mechanisms.py measures it) gives the same answers: a
switch changes how much work is done, never what is found or written."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate import engine, speedups
from migrate.registry import all_recipes

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = [ROOT / "fixtures" / "per-step-tape" / "seed003_churn_ig.before.py",
          *sorted((ROOT / "fixtures").glob("numpy-accumulator/*.before.py"))[:2],
          *sorted((ROOT / "fixtures").glob("typed-convert/*.before.py"))[:2]]


def _answer(path: Path, isolated: bool) -> tuple:
    options = engine.Options(tuple(all_recipes().values()), unsafe_fixes=True, isolated=isolated)
    result = engine.transform(path.read_text(encoding="utf-8"), str(path), options)
    return result.status, result.output, [d.to_dict() for d in result.diagnostics]


@pytest.mark.parametrize("mechanism", speedups.MECHANISMS)
def test_a_mechanism_switched_off_changes_no_answer(mechanism, monkeypatch):
    expected = {(path, isolated): _answer(path, isolated) for path in SAMPLE for isolated in (True, False)}
    assert any(answer[2] for answer in expected.values())
    monkeypatch.setattr(speedups, "_OFF", frozenset({mechanism}))
    assert not speedups.on(mechanism)
    for (path, isolated), answer in expected.items():
        assert _answer(path, isolated) == answer, (path.name, isolated)
