"""What `verify` returns: plain values the command renders as a table or JSON."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import List, Optional, Tuple


# LookupError is what TensorFlow raises for "No gradient defined for operation"; Keras
# wraps it as "LookupError: Exception encountered when calling layer ..." (the message elided)
NO_GRADIENT = re.compile(r"No gradients provided for any variable|No gradient defined for operation|^LookupError\b")


@dataclass
class Check:
    """One named check of one program, with the numbers behind its verdict."""

    name: str  # run, gradients, training, graph, attribution, equivalence, dynamic, api
    passed: bool
    summary: str
    numbers: dict = field(default_factory=dict)
    details: dict = field(default_factory=dict)
    error: Optional[str] = None

    def saw_none_gradient(self) -> bool:
        """The check failed on a None gradient: a gradient call of the program that
        returned None, a variable without gradient, or an optimizer's "No gradients
        provided" (not any exception: a program that raises elsewhere shows no bug)."""
        return not self.passed and bool(self.details.get("none_calls") or self.details.get("none_variables")
                                        or NO_GRADIENT.search(self.error or ""))

    @classmethod
    def from_child(cls, data: dict) -> "Check":
        return cls(data["name"], bool(data["passed"]), data["summary"], data.get("numbers") or {},
                   data.get("details") or {}, data.get("error"))


@dataclass
class ProgramReport:
    path: str
    role: str  # before | after | negative | original | rewritten | program
    keras: str  # "2" or "3"
    status: str  # ran | timeout | crashed | not-run
    recipe: Optional[str] = None
    expected_failure: Optional[str] = None  # the recipe's before_fails
    checks: List[Check] = field(default_factory=list)
    verdict: str = ""
    ok: bool = False
    elapsed: Optional[float] = None  # seconds the child spent on the program
    interpreter: Optional[str] = None
    message: Optional[str] = None  # why it timed out / crashed / did not run
    output_tail: str = ""
    outputs: Optional[dict] = None  # the program's outputs(), for equivalence
    runtime: str = "current"  # which Runtime ran it: "2.3", "current", "keras3"
    # each None gradient it saw, with its cause (diagnosis.py: Diagnosis.to_dict)
    diagnoses: List[dict] = field(default_factory=list)

    def check(self, name: str) -> Optional[Check]:
        return next((c for c in self.checks if c.name == name), None)

    def to_dict(self) -> dict:
        data = asdict(self)
        data.pop("outputs")
        return data


@dataclass
class WorkerInfo:
    """What a started child said about itself (which interpreter ran the programs)."""

    python: str
    python_version: str
    tf: str
    keras: str
    import_seconds: float
    keras_option: str
    runtime: str = ""


@dataclass
class Pair:
    """An original and its rewrite, reported side by side (`fix --verify`)."""

    original: ProgramReport
    rewritten: ProgramReport


@dataclass
class Report:
    programs: List[ProgramReport] = field(default_factory=list)
    pairs: List[Pair] = field(default_factory=list)
    workers: List[WorkerInfo] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)  # paths that could not be run at all
    skipped: List[str] = field(default_factory=list)  # files verify does not run (notebooks)
    warnings: List[str] = field(default_factory=list)  # discovery's: symlinks not followed
    wall_seconds: float = 0.0
    runtimes: List[Tuple[str, str]] = field(default_factory=list)  # (name, label), in run order

    @property
    def ok(self) -> bool:
        return not self.problems and all(p.ok for p in self.programs)

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "programs": [p.to_dict() for p in self.programs],
            "pairs": [{"original": p.original.path, "rewritten": p.rewritten.path}
                      for p in self.pairs],
            "workers": [asdict(w) for w in self.workers],
            "problems": self.problems,
            "skipped": self.skipped,
            "runtimes": [{"name": name, "label": label} for name, label in self.runtimes],
            "wall_seconds": self.wall_seconds,
        }
