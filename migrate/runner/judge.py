"""From check results to a verdict: a fixture `before` must fail the check its
recipe names, everything judged must pass, and a behaviour-preserving
recipe's before and after must compute the same outputs()."""

from __future__ import annotations

import math
from typing import List, Optional, Tuple

from .report import Check, ProgramReport

# a recipe's before_fails -> the checks whose failure shows that bug
FAILURE_CHECKS = {
    "none-gradient": ("gradients", "dynamic"),
    "graph-error": ("graph",),
    "completeness": ("attribution",),
}
RTOL = 1e-5
ATOL = 1e-6


def judge(report: ProgramReport) -> Tuple[str, bool]:
    """(verdict, ok) for a program whose checks are all in."""
    if report.status != "ran":
        return {"timeout": "timed out", "crashed": "crashed"}.get(report.status, "not run"), False
    failed = [c.name for c in report.checks if not c.passed]
    if report.expected_failure:
        return _judge_expected_failure(report, failed)
    if report.role in ("negative", "original"):
        note = "fails " + ", ".join(failed) if failed else "passes"
        return f"{note} (not judged: {report.role})", True
    if failed:
        return "fail: " + ", ".join(failed), False
    return "pass", True


def _judge_expected_failure(report: ProgramReport, failed: List[str]) -> Tuple[str, bool]:
    wanted = FAILURE_CHECKS.get(report.expected_failure)
    if wanted is None:
        return f"unknown before_fails {report.expected_failure!r}", False
    seen = [c.name for c in report.checks if c.name in wanted and not c.passed
            and (report.expected_failure != "none-gradient" or c.saw_none_gradient())]
    if "api" in failed:
        return "fail: api", False
    if seen:
        return f"expected failure observed ({report.expected_failure}: {', '.join(seen)})", True
    if not failed:
        return f"unexpectedly passed (expected {report.expected_failure})", False
    return (f"failed for another reason: {', '.join(failed)} "
            f"(expected {report.expected_failure}: {' or '.join(wanted)})"), False


def equivalence(before: ProgramReport, after: ProgramReport) -> Check:
    """outputs() of a behaviour-preserving recipe's before and after: same
    names, dtypes, shapes, and values within rtol 1e-5 / atol 1e-6."""
    tolerance = f"rtol {RTOL:g}, atol {ATOL:g}"
    for side in (before, after):
        if side.outputs is None:
            return Check("equivalence", False, f"{side.role} defines no outputs() (or did not run)")
        if "__error__" in side.outputs:
            return Check("equivalence", False, f"outputs() of the {side.role} raised",
                         error=side.outputs["__error__"])
    b, a = before.outputs, after.outputs
    if set(b) != set(a):
        return Check("equivalence", False,
                     f"outputs differ in names: before {sorted(b)}, after {sorted(a)}")
    problems = []
    worst = 0.0
    for name in sorted(b):
        problem, diff = _compare(b[name], a[name])
        worst = max(worst, diff)
        if problem:
            problems.append(f"{name}: {problem}")
    if problems:
        return Check("equivalence", False, "; ".join(problems),
                     {"outputs": len(b), "max_abs_diff": worst})
    return Check("equivalence", True,
                 f"{len(b)} output(s) agree with the before's (dtype, shape, {tolerance})",
                 {"outputs": len(b), "max_abs_diff": worst})


def _compare(before: dict, after: dict) -> Tuple[Optional[str], float]:
    if before["dtype"] != after["dtype"]:
        return f"dtype {before['dtype']} != {after['dtype']}", 0.0
    if before["shape"] != after["shape"]:
        return f"shape {before['shape']} != {after['shape']}", 0.0
    worst = 0.0
    for x, y in zip(before["values"], after["values"]):
        if isinstance(x, (int, float)) and isinstance(y, (int, float)):
            if math.isnan(x) and math.isnan(y):
                continue
            diff = abs(x - y)
            worst = max(worst, diff) if not math.isnan(diff) else math.inf
            if not diff <= ATOL + RTOL * abs(y):
                return f"values differ (max |diff| >= {diff:.3g})", worst
        elif x != y:
            return f"values differ ({x!r} != {y!r})", worst
    return None, worst
