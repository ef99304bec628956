"""Many files through the engine: read, transform, optionally write, and
summarise. One file's failure is a value in its Outcome; the batch goes on."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, List, Optional

from . import files
from .engine import Options, transform
from .result import SourceResult, Status


@dataclass
class Outcome:
    """One file's fate: its engine result, or why it could not be read/written."""

    path: Path
    result: Optional[SourceResult] = None
    source: Optional[files.SourceFile] = None
    problem: Optional[str] = None  # unreadable, unparsable, crashed, write refused
    written: bool = False

    @property
    def status(self) -> Status:
        if self.result is None:
            return Status.SKIPPED
        return self.result.status

    @property
    def failed(self) -> bool:
        """Could not be processed completely: exit code 2 territory."""
        return self.problem is not None or self.status in (Status.SKIPPED, Status.FAILED)


def process(path: Path, options: Options) -> Outcome:
    """Read and transform one file; never raises."""
    if path.suffix == ".ipynb":
        from .notebook import process as process_notebook  # notebook imports this module
        return process_notebook(path, options)
    try:
        source = files.read(path)
    except files.Unreadable as err:
        return Outcome(path, problem=str(err))
    result = transform(source.text, str(path), options)
    outcome = Outcome(path, result, source)
    if result.status in (Status.SKIPPED, Status.FAILED):
        outcome.problem = f"{path}: {result.reason}"
    return outcome


def write(outcome: Outcome) -> None:
    """Write a changed file atomically; a refusal becomes the outcome's problem."""
    result, source = outcome.result, outcome.source
    if result is None or source is None or not result.changed:
        return
    try:
        files.write(source, result.output)
        outcome.written = True
    except files.WriteRefused as err:
        outcome.problem = str(err)


def run(paths: Iterable[Path], options: Options,
        on_done: Optional[Callable[[Outcome], None]] = None) -> Iterator[Outcome]:
    """Outcomes in the order of ``paths``."""
    for path in paths:
        outcome = process(path, options)
        if on_done:
            on_done(outcome)
        yield outcome


@dataclass
class Summary:
    scanned: int = 0
    changed: int = 0
    skipped: int = 0
    findings: Counter = field(default_factory=Counter)
    problems: List[str] = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        self.scanned += 1
        if outcome.result and outcome.result.changed:
            self.changed += 1
        if outcome.failed:
            self.skipped += 1
            self.problems.append(outcome.problem or f"{outcome.path}: {outcome.status.value}")
        if outcome.result:
            self.findings.update(d.recipe for d in outcome.result.diagnostics)
