"""`verify`: run programs in TensorFlow workers, check them, judge them.

paths -> programs (fixture roles, protocol or script) -> one worker per
(interpreter, Keras version), TF imported once per worker -> checks from the
child, plus the parent's static API check and before/after equivalence ->
verdicts -> Report.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from migrate.discovery import discover
from migrate.registry import all_recipes

from . import api_check
from .diagnosis import diagnose_program
from .judge import equivalence, judge
from .pool import WorkerFailed, run_jobs
from .programs import Program, classify
from .report import Check, Pair, ProgramReport, Report
from .runtimes import Runtime, current


@dataclass(frozen=True)
class VerifyOptions:
    timeout: float = 120.0  # seconds per program, TF import not included
    runtimes: Tuple[Runtime, ...] = (current(),)  # default: this interpreter, TF + tf-keras
    api: Optional[str] = None  # e.g. "2.3": also check names against that TF's API
    seed: int = 0
    startup_timeout: float = 300.0  # a cold TF import can be slow
    jobs: int = 1  # workers per runtime running programs side by side

    def __post_init__(self) -> None:
        if not self.runtimes:
            raise ValueError("no runtime to run the programs under")
        if self.jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {self.jobs}")
        if self.api is not None and self.api not in api_check.SUPPORTED:
            raise ValueError(f"no TF {self.api} symbol list (known: {', '.join(api_check.SUPPORTED)})")


def verify(paths: Sequence[Path], options: VerifyOptions = VerifyOptions()) -> Report:
    """Verify every Python file under ``paths`` (files or directories)."""
    found = discover([Path(p) for p in paths])
    report = Report(problems=list(found.problems), warnings=sorted(found.warnings))
    programs = []
    for path in found.files:
        if path.suffix == ".py":
            programs.append(classify(path))
        else:
            report.skipped.append(f"{path}: verify runs Python files only")
    return _run(programs, options, report, _fixture_pairs(programs))


def verify_rewrite(pairs: Sequence[Tuple[Path, Path]],
                   options: VerifyOptions = VerifyOptions(api="2.3")) -> Report:
    """Run each (original, rewritten) file and report them side by side. The
    rewritten file must pass every check (and the TF API check, 2.3 unless
    ``options.api`` names another); the original is reported, and judged only
    when it is a fixture `before` with an expected failure."""
    programs = []
    for original, rewritten in pairs:
        first = classify(Path(original), role="original")
        second = classify(Path(rewritten), role="rewritten")
        programs += [first, second]
    return _run_pairs(programs, options)


def verify_fixed(files: Sequence[Tuple[Path, str]],
                 options: VerifyOptions = VerifyOptions(api="2.3")) -> Report:
    """For `fix --verify`: each (path, original_text) names a file already
    rewritten in place and the text it had. The original runs from a temporary
    copy but is reported (and, for a fixture, judged) under its real path."""
    with tempfile.TemporaryDirectory(prefix="tf-migrate-originals-") as tmp:
        programs = []
        for index, (path, original_text) in enumerate(files):
            copy = Path(tmp) / str(index) / Path(path).name
            copy.parent.mkdir()
            copy.write_text(original_text, encoding="utf-8")
            identity = classify(Path(path), role="original")
            programs.append(dataclasses.replace(identity, path=copy, mode=classify(copy).mode,
                                                copy_of=Path(path)))
            programs.append(classify(Path(path), role="rewritten"))
        return _run_pairs(programs, options)


def _run_pairs(programs: List[Program], options: VerifyOptions) -> Report:
    """programs = [original, rewritten, original, rewritten, ...]."""
    equivalent = [(i, i + 1) for i in range(0, len(programs), 2)
                  if _preserves_behaviour(programs[i].recipe)]
    report = _run(programs, _with_api(options), Report(), equivalent)
    rows = iter(report.programs)
    for original in rows:
        report.pairs.append(Pair(original, next(rows)))
    return report


def _with_api(options: VerifyOptions) -> VerifyOptions:
    return options if options.api else dataclasses.replace(options, api="2.3")


def _run(programs: List[Program], options: VerifyOptions, report: Report,
         equivalent: List[Tuple[int, int]]) -> Report:
    started = time.perf_counter()
    api_results = {p.path: _api_check(p.path, options.api) for p in programs} if options.api else {}
    for runtime in options.runtimes:
        jobs = [_job(program, options) for program in programs]
        answers, workers = run_jobs(runtime.python, runtime.keras, jobs, options.seed,
                                    options.timeout, options.startup_timeout, options.jobs)
        report.workers.extend(dataclasses.replace(w, runtime=runtime.name) for w in workers)
        reports = [_program_report(program, runtime, answer)
                   for program, answer in zip(programs, answers)]
        for program, program_report in zip(programs, reports):
            if program.path in api_results:
                program_report.checks.append(api_results[program.path])
            program_report.diagnoses = [d.to_dict() for d in diagnose_program(
                program_report, str(program.path), str(program.copy_of or program.path))]
        _add_equivalence(equivalent, reports)
        for program_report in reports:
            program_report.verdict, program_report.ok = judge(program_report)
        report.programs.extend(reports)
    report.runtimes = [(r.name, r.label) for r in options.runtimes]
    report.wall_seconds = time.perf_counter() - started
    return report


def _job(program: Program, options: VerifyOptions) -> dict:
    return {"path": str(program.path.resolve()), "mode": program.mode, "seed": options.seed}


def _program_report(program: Program, runtime: Runtime, answer) -> ProgramReport:
    """A worker's answer (or its WorkerFailed) as the program's report."""
    result = ProgramReport(program.label, program.role, runtime.keras, "ran", program.recipe,
                           program.expected_failure, runtime=runtime.name)
    if isinstance(answer, WorkerFailed):
        result.status, result.message = answer.status, answer.message
        return result
    result.checks = [Check.from_child(c) for c in answer["checks"]]
    if program.copy_of:  # point messages at the real file, not the temporary copy
        copy = str(program.path.resolve())
        for check in result.checks:
            if check.error:
                check.error = check.error.replace(copy, str(program.copy_of))
    result.elapsed = answer["elapsed"]
    result.outputs = answer.get("outputs")
    result.output_tail = answer.get("output_tail", "")
    result.interpreter = answer["python"]
    return result


def _api_check(path: Path, version: str) -> Check:
    try:
        missing = api_check.check_file(path, version)
    except (SyntaxError, UnicodeDecodeError) as err:
        return Check("api", False, f"cannot read the file to check TF {version} names: {err}")
    if not missing:
        return Check("api", True, f"every tf.* name used exists in TF {version}",
                     {"missing": 0})
    shown = ", ".join(f"{m.symbol} (line {m.line})" for m in missing[:5])
    return Check("api", False, f"{len(missing)} name(s) TF {version} lacks: {shown}"
                 + (" ..." if len(missing) > 5 else ""), {"missing": len(missing)},
                 {"missing": [str(m) for m in missing]})


def _fixture_pairs(programs: List[Program]) -> List[Tuple[int, int]]:
    """(before, after) indexes of each behaviour-preserving fixture case in the run."""
    befores = {p.case_key: i for i, p in enumerate(programs) if p.role == "before"}
    return [(befores[p.case_key], j) for j, p in enumerate(programs)
            if p.role == "after" and p.case_key in befores and _preserves_behaviour(p.recipe)]


def _add_equivalence(pairs: List[Tuple[int, int]], reports: List[ProgramReport]) -> None:
    for before, after in pairs:
        if reports[before].status == reports[after].status == "ran":
            reports[after].checks.append(equivalence(reports[before], reports[after]))


def _preserves_behaviour(recipe: Optional[str]) -> bool:
    return recipe is not None and all_recipes()[recipe].before_fails is None
