"""Mutation testing of the semantic model and the recipes' decisions, with mutmut.

    python scripts/mutation.py recipes/_model/kinds.py [MODULE ...] [--children 1]
    python scripts/mutation.py --report recipes/_model/kinds.py   # the last run's results
    python scripts/mutation.py --recheck recipes/_model/kinds.py  # its survivors, current tests
    python scripts/mutation.py recipes/_model/flow.py --sample 200 --seed 1  # 200 of its mutants
    python scripts/mutation.py --rerun recipes/_model/flow.py     # its survivors, by mutmut again

mutmut 3 (maintained; cosmic-ray needs a session database and a separate
worker per mutant, mutmut forks one pytest per mutant from a warm process)
mutates one module at a time in a scratch copy of the git-tracked files
(``--work``, default /tmp/tf-migrate-mutation/<module>), so the worktree and
its imports are never touched. Each mutant runs only the tests that called
the mutated function while mutmut recorded coverage, taken from the fast
selection ``TESTS`` gives the module (no TensorFlow programs: ``-m "not
tf"``). mutmut is installed into a virtualenv that sees this Python's
packages (``--venv``) when it is not importable. The run is niced: the
machine is shared. ``--recheck`` judges the last run's survivors again
against the current tests (after tests were added) without a new run: each
survivor's diff is applied to a fresh copy of the tracked files and the
module's tests run on it, or only the files named ``--tests`` (new tests:
a survivor already passed the others); ``--rerun`` does the same in mutmut,
much faster (a fork per survivor instead of a pytest), after copying the
current tests into the last run's copy and recording again which tests
reach which function. ``--sample N --seed S`` checks N of a
module's mutants drawn uniformly at random (mutmut alone checks the
least-tested functions first, so a stopped run is not a sample): mutmut
first generates every mutant and records which tests reach which function
(``mutmut run`` with a name that matches nothing stops right there), then
runs only the drawn names.
docs/mutation.md has the scores and the survivors.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parent.parent
MODEL_TESTS = ["tests/model"]
# module -> the fast tests that decide its mutants
TESTS: Dict[str, List[str]] = {
    **{f"recipes/_model/{name}.py": MODEL_TESTS
       for name in ("__init__", "_tree", "contexts", "flow", "gradients", "imports", "kinds",
                    "values")},
    # what a class's construction touches: only unused-model-instance asks
    "recipes/_model/construction.py": [*MODEL_TESTS, "tests/recipes/test_unused_model_instance.py"],
    "migrate/toplevel.py": ["tests/test_toplevel.py", "tests/test_incremental.py"],
    "migrate/cache.py": ["tests/test_scale.py", "tests/test_mutants_engine.py"],
    # shared helpers of some recipes: those recipes' tests
    "recipes/_typed_convert_matrix.py": ["tests/recipes/test_typed_convert_matrix.py",
                                         "tests/recipes/test_typed_convert.py"],
    "recipes/_host_dtypes.py": ["tests/recipes/test_typed_convert_matrix.py", "tests/recipes/test_typed_convert.py",
                                "tests/recipes/test_numpy_accumulator.py"],
    "recipes/_numpy_calls.py": ["tests/recipes/test_numpy_on_loss_path.py", "tests/recipes/test_numpy_accumulator.py"],
}
# a recipe's family of generated programs (tests/test_variants_*.py): its
# fast tests score every program; a helper package is judged by its recipe's
VARIANTS = {
    "scalar_target": "ig_attribution", "suffix_mixup": "ig_attribution",
    "nondifferentiable_op": "nondiff_assign", "assign_in_forward": "nondiff_assign",
    "numpy_accumulator": "numpy_accumulator", "numpy_on_loss_path": "numpy_loss_path",
    "outside_tape": "outside_tape", "per_step_tape": "per_step_tape",
    "typed_convert": "typed_convert", "unwatched_source": "watch", "integer_source": "watch",
    "vectorize_sample_loop": "sample_loops_unused", "unused_model_instance": "sample_loops_unused",
}
HELPERS = {"_numpy_accumulator": "numpy_accumulator", "_integer_source": "integer_source",
           "_outside_tape": "outside_tape", "_functional_update": "assign_in_forward"}
STATUSES = ("killed", "survived", "timeout", "suspicious", "no tests", "skipped",
            "segfault", "check was interrupted by user", "not checked", "caught by type check")


def tests_for(module: str) -> List[str]:
    """A recipe module's own tests (tests/recipes/test_<id>.py), its variant
    family's, the fixtures' (each recipe's before/after pairs) and the
    engine's mutant checks (a helper package's or module's: its recipe's); a
    model or engine module's from ``TESTS``."""
    if module in TESTS:
        return TESTS[module]
    path = Path(module)
    if path.parts[0] == "recipes" and len(path.parts) in (2, 3):
        recipe = HELPERS.get(path.parts[1] if len(path.parts) == 3 else path.stem, path.stem)
        if (ROOT / f"tests/recipes/test_{recipe}.py").exists():
            family = [f"tests/test_variants_{VARIANTS[recipe]}.py"] if recipe in VARIANTS else []
            return [f"tests/recipes/test_{recipe}.py", *family, "tests/test_fixtures.py",
                    "tests/test_mutants_engine.py"]
    raise SystemExit(f"no test selection for {module}: add it to TESTS in {__file__}")


def mutmut_command(venv_dir: Path) -> List[str]:
    """``python -m mutmut`` from this Python when it has mutmut, else from a
    virtualenv (made once) that sees this Python's packages."""
    try:
        import mutmut  # noqa: F401
        return [sys.executable, "-m", "mutmut"]
    except ImportError:
        pass
    python = venv_dir / "bin" / "python"
    if not python.exists():
        venv.create(venv_dir, system_site_packages=True, with_pip=True)
    if subprocess.run([str(python), "-c", "import mutmut"], capture_output=True).returncode:
        subprocess.run([str(python), "-m", "pip", "install", "-q", "mutmut>=3.8"], check=True)
    return [str(python), "-m", "mutmut"]


def prepare(module: str, work: Path) -> None:
    """A fresh copy of the tracked files under ``work`` with mutmut's config."""
    if work.exists():
        shutil.rmtree(work)
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                             capture_output=True).stdout.decode().split("\0")
    for name in filter(None, tracked):
        source = ROOT / name
        if source.is_file():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, work / name)
    package = module.split("/")[0]
    others = sorted({name.split("/")[0] for name in tracked if "/" in name} - {package, "tests"})
    (work / "setup.cfg").write_text(
        "[mutmut]\n"
        f"source_paths = {package}\n"
        f"only_mutate = {module}\n"
        "also_copy =\n" + "".join(f"    {name}\n" for name in others) +
        "pytest_add_cli_args_test_selection =\n" + "".join(f"    {t}\n" for t in tests_for(module)) +
        "pytest_add_cli_args =\n    -m\n    not tf\n    -p\n    no:cacheprovider\n    -q\n")


def run(module: str, work: Path, command: List[str], children: int, names: List[str] = (),
        quiet: bool = False) -> int:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # mutmut puts mutants/ first
    return subprocess.run(["nice", "-n", "19", *command, "run", "--max-children", str(children),
                           *names], cwd=work, env=env, capture_output=quiet).returncode


def sample(module: str, work: Path, command: List[str], size: int, seed: int) -> List[str]:
    """``size`` of the module's mutant names drawn with ``seed``, after a run
    that only generates the mutants and collects which tests reach them: it
    stops at mutmut's check that the name given matches some mutant."""
    run(module, work, command, 1, ["no-such-mutant"], quiet=True)
    meta = work / "mutants" / f"{module}.meta"
    names = sorted(json.loads(meta.read_text())["exit_code_by_key"])
    return sorted(random.Random(seed).sample(names, min(size, len(names))))


def report(module: str, work: Path, command: List[str]) -> dict:
    """Counts per status and each survivor's diff, from the run in ``work``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    listing = subprocess.run([*command, "results", "--all", "true"], cwd=work, env=env,
                             capture_output=True, text=True, check=True).stdout
    counts: Dict[str, int] = {}
    survivors = []
    for line in listing.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if not name:
            continue
        counts[status] = counts.get(status, 0) + 1
        if status in ("survived", "no tests", "suspicious"):
            diff = subprocess.run([*command, "show", name], cwd=work, env=env,
                                  capture_output=True, text=True).stdout
            survivors.append({"name": name, "status": status, "diff": diff})
    total = sum(counts.values()) - counts.get("skipped", 0) - counts.get("not checked", 0)
    killed = counts.get("killed", 0) + counts.get("timeout", 0)
    return {"module": module, "killed": killed, "total": total,
            "score": round(100 * killed / total, 1) if total else None,
            "counts": counts, "survivors": survivors}


def _apply(diff: str, path: Path) -> bool:
    """Apply mutmut's diff of one function to ``path`` by exact text; False
    when it does not match once. A method's diff is dedented by one level
    except for continuation lines, so each line may lack four spaces."""
    hunk = [line for line in diff.splitlines() if line[:1] in (" ", "-", "+")
            and not line.startswith(("---", "+++"))]
    old = [line for line in hunk if line[0] in " -"]
    pattern = "".join(f"(?P<i{n}>(?:    )?)" + re.escape(line[1:]) + "\n" for n, line in enumerate(old))
    text = path.read_text()
    found = list(re.finditer(pattern, text))
    if len(found) != 1:
        return False
    match, n, new = found[0], 0, []  # n: the line of ``old`` reached
    indent = next(match.group(f"i{k}") for k, line in enumerate(old) if line[0] == "-")
    for line in hunk:
        if line[0] == "+":
            new.append(indent + line[1:] + "\n")
            continue
        if line[0] == " ":
            new.append(match.group(f"i{n}") + line[1:] + "\n")
        n += 1
    path.write_text(text[:match.start()] + "".join(new) + text[match.end():])
    return True


def rerun(found: dict, work: Path, command: List[str]) -> dict:
    """``found``'s survivors run again by mutmut in the last run's copy, with
    the worktree's tests as they are on disk copied in and which tests reach
    which function recorded again: one fork per mutant from a warm process."""
    shutil.rmtree(work / "tests")
    shutil.copytree(ROOT / "tests", work / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    (work / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    names = [s["name"] for s in found["survivors"]]
    if names and run(found["module"], work, command, 1, names):
        raise SystemExit(f"mutmut failed on {found['module']} (a failing test stops its stats run)")
    return report(found["module"], work, command)


def recheck(found: dict, work: Path, only: List[str]) -> dict:
    """``found``'s survivors judged again against the current tests."""
    module = found["module"]
    copy = work / "recheck"
    tests = only or tests_for(module)  # the survivors already passed the rest
    still = []
    prepare(module, copy)
    source = (copy / module).read_text()
    for survivor in found["survivors"]:
        (copy / module).write_text(source)
        if not _apply(survivor["diff"], copy / module):
            still.append({**survivor, "status": "not applied"})
            continue
        env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "PYTHONPATH": str(copy)}
        code = subprocess.run(["nice", "-n", "19", sys.executable, "-m", "pytest", "-x", "-q",
                               "-m", "not tf", "-p", "no:cacheprovider", *tests],
                              cwd=copy, env=env, capture_output=True).returncode
        if code in (4, 5):  # pytest's usage error / no test collected: a test file not tracked?
            raise SystemExit(f"pytest found no tests in {tests} (exit {code}): `git add` new test files")
        if code == 0:
            still.append(survivor)
        print(f"{'survived' if code == 0 else 'killed'}: {survivor['name']}", flush=True)
    killed = found["killed"] + len(found["survivors"]) - len(still)
    return {**found, "killed": killed, "survivors": still,
            "score": round(100 * killed / found["total"], 1) if found["total"] else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("modules", nargs="+", help="paths relative to the repository root")
    parser.add_argument("--work", type=Path, default=Path("/tmp/tf-migrate-mutation"))
    parser.add_argument("--venv", type=Path, default=Path("/tmp/tf-migrate-mutation/venv"))
    parser.add_argument("--children", type=int, default=1, help="mutants run at once")
    parser.add_argument("--sample", type=int, help="check only this many mutants per module, "
                        "drawn uniformly at random")
    parser.add_argument("--seed", type=int, default=0, help="the --sample draw's seed")
    parser.add_argument("--report", action="store_true", help="only report the last run")
    parser.add_argument("--recheck", action="store_true",
                        help="judge the last run's survivors again with the current tests")
    parser.add_argument("--rerun", action="store_true",
                        help="run the last run's survivors again in mutmut, with the current tests")
    parser.add_argument("--tests", nargs="*", default=[], help="the only test files --recheck runs")
    parser.add_argument("--json", type=Path, help="also write the reports here")
    parser.add_argument("--survivors", type=Path,
                        help="--recheck these (a --json of an earlier report) instead of asking mutmut")
    args = parser.parse_args()
    command = mutmut_command(args.venv)
    reports = []
    for module in args.modules:
        work = args.work / module.replace("/", "_")
        if not (args.report or args.recheck or args.rerun):
            prepare(module, work)
            names = sample(module, work, command, args.sample, args.seed) if args.sample else []
            run(module, work, command, args.children, names)
        earlier = json.loads(args.survivors.read_text()) if args.survivors else []
        found = next((r for r in earlier if r["module"] == module), None) \
            or report(module, work, command)
        if args.recheck:
            found = recheck(found, work, args.tests)
        if args.rerun:
            found = rerun(found, work, command)
        reports.append(found)
        print(f"{module}: {found['killed']}/{found['total']} killed ({found['score']}%) {found['counts']}")
        for survivor in found["survivors"]:
            print(f"--- {survivor['status']}: {survivor['name']}\n{survivor['diff']}")
    if args.json:
        args.json.write_text(json.dumps(reports, indent=1))


if __name__ == "__main__":
    main()
