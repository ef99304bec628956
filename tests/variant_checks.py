"""The checks every variant family's test makes (tests/variants/): the
shape of the space, a score of the whole space with every recipe, and a
fixed sample verified by running it.
One harness so that a family's test states only its own figures (recipes,
floor, sample, runtimes) and every family is held to the same rules."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Callable, Collection, Iterable, List, Sequence, Tuple

from migrate.engine import Options, transform
from migrate.notebook import transform_notebook
from migrate.registry import all_recipes
from migrate.runner import VerifyOptions, verify
from migrate.runner.runtimes import Runtime

from test_corpus_score import cs
from variants import Program


def check_space(programs: Sequence[Program], size: int, label: str = "# expect:",
                misses_share: Fraction = Fraction(1, 3)) -> None:
    """Assert that the space holds at least ``size`` programs, near-misses at
    least ``misses_share`` of them, and that exactly the bugs carry ``label``."""
    misses = sum(p.near_miss for p in programs)
    assert len(programs) >= size and misses >= misses_share * len(programs), (len(programs), misses)
    labelled = {p.name for p in programs if label in p.source}
    assert labelled == {p.name for p in programs if not p.near_miss}


def run(program: Program) -> Tuple[list, list, str]:
    """(labels, findings, output) of every recipe on one program, unsafe fixes on."""
    path = program.name + program.suffix
    options = Options(tuple(all_recipes().values()), unsafe_fixes=True)
    if program.suffix == ".ipynb":
        result = transform_notebook(program.source, path, options)
        labels = [label for number, source in cs.notebook_cells(program.source, path)
                  for label in cs.labels_in_source(source, cs.cell_label(path, number))]
    else:
        result = transform(program.source, path, options)
        labels = cs.labels_in_source(program.source, path)
    assert not result.errors, (path, result.errors)
    findings = [cs.Finding(d.path, d.line, d.end_line, d.recipe, d.safety if d.fixable else "report", d.message)
                for d in result.diagnostics]
    return labels, findings, result.output


def score_family(programs: Iterable[Program], recipes: Collection[str],
                 floor: float = 0.97) -> List[Tuple[Program, str]]:
    """Assert that every recipe run over ``programs`` finds only ``recipes``'
    findings, each recipe at precision and recall >= ``floor`` with every
    fix kind as labelled, and that near-misses get no finding and stay
    byte-identical; return each program with its fixed text, for a family's
    own further checks."""
    labels, findings, changed, flagged, fixed = [], [], [], [], []
    for program in programs:
        found_labels, found, output = run(program)
        labels += found_labels
        findings += found
        fixed.append((program, output))
        if program.near_miss and output != program.source:
            changed.append(program.name)
        if program.near_miss and found:
            flagged.append(program.name)
    scores = cs.match(labels, findings)
    assert set(scores) == set(recipes), scores.keys()  # no other recipe fires on these programs
    for recipe in recipes:
        score = scores[recipe]
        assert score.precision >= floor and score.recall >= floor, \
            (recipe, score.false_positives[:3], score.false_negatives[:3])
        assert score.kind_agree == score.tp, score.kind_mismatches[:3]
    assert not changed, changed
    assert not flagged, flagged
    return fixed


def verify_sample(sample: Sequence[Program], tmp_path: Path, runtimes: Sequence[Runtime],
                  must_fail: Callable[[Program], bool] = lambda p: not p.near_miss, timeout: int = 120) -> int:
    """Run ``verify`` on each program's fixed text (it must pass on every
    runtime) and on the before of each program ``must_fail`` selects (it
    must fail: a bug), notebooks as their code cells joined; a near-miss is
    byte-identical after the fix, so it runs once, as written. Returns how
    many files ran on each runtime."""
    paths, befores = [], set()
    for program in sample:
        _, _, output = run(program)
        for role, text in (("before", program.source), ("after", output)):
            if role == "before" and not must_fail(program):
                continue
            if program.suffix == ".ipynb":
                text = "\n".join(source for _, source in cs.notebook_cells(text, program.name))
            path = tmp_path / role / f"{program.name}.py"
            path.parent.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
            paths.append(path)
            if role == "before":
                befores.add(str(path))
    report = verify(paths, VerifyOptions(timeout=timeout, runtimes=tuple(runtimes)))
    assert len(report.programs) == len(runtimes) * len(paths)
    for result in report.programs:
        assert result.ok != (str(result.path) in befores), (result.path, result.interpreter, result.message)
    return len(paths)
