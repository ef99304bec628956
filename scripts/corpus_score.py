"""Score the recipes against a labelled corpus (tests/corpus/README.md).

Runs ``python -m migrate check --format json`` over a corpus directory,
matches each finding to the ``# expect: <recipe> <safe|unsafe|report>``
labels (trailing comments, or a sidecar file given with ``--labels``) and
the ``# expect-cause: <cause>`` labels of issue 26 (a label for recipe
``<cause>`` of any kind: the recipe's id is the cause name), and prints
per-recipe precision and recall at the finding level and how often the kind
of fix agrees with the label. With ``--verify`` every SAFE fix is
applied on its own to a copy of its program, and the before and the after
are run by ``python -m migrate verify``; a safe fix whose after does not pass
is counted as failing (``--unsafe``: unsafe fixes too; ``--tf 2.3``: on
that runtime; ``--keras 3``: judged on Keras 3).

A finding matches a label of the same recipe, in the same file (notebook
cell), on a line inside the finding's range. TP = matched findings, FP =
unmatched findings, FN = unmatched labels. A corpus with cause labels also
gets a none-gradient summary: per cause, labels / detected / fixed (the
fix's before fails and its after passes under ``--verify``) / failing safe
fixes, totals as fractions of the labels (every labelled cause is visible in
the source); ``--none-gradient-table`` prints it as the Markdown table of
docs/none-gradient-causes.md.

    python scripts/corpus_score.py                       # tests/corpus
    python scripts/corpus_score.py tests/corpus/seed003 --recipes typed-convert,per-step-tape
    python scripts/corpus_score.py /tmp/realcorpus --labels /tmp/real-labels.txt --json
    python scripts/corpus_score.py --verify              # also run every safe fix
    python scripts/corpus_score.py /tmp/ig/ig-attribution --verify --unsafe --tf 2.3
    python scripts/corpus_score.py tests/corpus/none_gradient --verify --unsafe   # issue 26
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import tokenize
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: the worktree's migrate, not an installed one
    sys.path.insert(0, str(ROOT))

from migrate.engine import apply_edits  # noqa: E402
from migrate.notebook import mask  # noqa: E402
from migrate.registry import UnknownRecipe, resolve  # noqa: E402
from migrate.result import Edit, cell_label, split_label  # noqa: E402

KINDS = ("safe", "unsafe", "report")
ANY_KIND = "any"  # the kind of a cause label: any finding detects it
SEED003_RECIPES = ("typed-convert", "per-step-tape", "scalar-target", "suffix-mixup")
_EXPECT = re.compile(r"#\s*expect:\s*(?P<body>.*)$")
_EXPECT_CAUSE = re.compile(r"#\s*expect-cause:\s*(?P<cause>[a-z][a-z0-9-]*)\s*$")
_SIDECAR = re.compile(r"^(?P<where>.+?):(?P<line>\d+):\s*(?P<body>.+)$")


class CorpusError(ValueError):
    """A malformed label or a missing corpus file; the message names the file (and line)."""


@dataclass(frozen=True)
class Label:
    path: str  # a file, or ``nb.ipynb:cell N`` for a notebook cell
    line: int
    recipe: str
    kind: str  # one of KINDS, or ANY_KIND for a cause label

    @property
    def is_cause(self) -> bool:
        return self.kind == ANY_KIND


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    end_line: int
    recipe: str
    kind: str  # "report" when no fix is offered, else the fix's safety
    message: str
    edits: Tuple[Tuple[int, int, int, int, str], ...] = ()


@dataclass
class RecipeScore:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    kind_agree: int = 0
    false_positives: List[Finding] = field(default_factory=list)
    false_negatives: List[Label] = field(default_factory=list)
    kind_mismatches: List[Tuple[Label, Finding]] = field(default_factory=list)
    matched: List[Tuple[Label, Finding]] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


# --- labels -----------------------------------------------------------------

def parse_label_body(body: str, where: str) -> List[Tuple[str, str]]:
    """``"a safe; b report"`` -> [("a", "safe"), ("b", "report")]."""
    pairs = []
    for part in body.split(";"):
        words = part.split()
        if len(words) != 2 or words[1] not in KINDS:
            raise CorpusError(f"{where}: bad label {part.strip()!r}: expected '<recipe-id> <safe|unsafe|report>'")
        pairs.append((words[0], words[1]))
    return pairs


def labels_in_source(source: str, path: str) -> List[Label]:
    """The ``# expect:`` and ``# expect-cause:`` comments of Python source
    (comments only, not strings)."""
    labels = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type != tokenize.COMMENT:
                continue
            line = tok.start[0]
            match = _EXPECT.search(tok.string)
            if match:
                for recipe, kind in parse_label_body(match["body"], f"{path}:{line}"):
                    labels.append(Label(path, line, recipe, kind))
            elif "expect-cause:" in tok.string:
                cause = _EXPECT_CAUSE.search(tok.string)
                if not cause:
                    raise CorpusError(f"{path}:{line}: bad label {tok.string!r}: expected "
                                      "'# expect-cause: <cause>'")
                labels.append(Label(path, line, cause["cause"], ANY_KIND))
    except (tokenize.TokenError, SyntaxError) as err:
        raise CorpusError(f"{path}: cannot read its labels: {err}") from err
    return labels


def notebook_cells(text: str, path: str) -> List[Tuple[int, str]]:
    """(1-based cell number, Python source with IPython lines masked) of each
    code cell; cells are numbered as the engine numbers them (every cell)."""
    try:
        cells = json.loads(text)["cells"]
    except (ValueError, KeyError, TypeError) as err:
        raise CorpusError(f"{path}: not a notebook: {err}") from err
    found = []
    for number, cell in enumerate(cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        masked = mask(source)
        if masked is not None:
            found.append((number, masked.text))
    return found


def labels_in_file(path: Path, name: str) -> List[Label]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        return [label for number, source in notebook_cells(text, name)
                for label in labels_in_source(source, cell_label(name, number))]
    return labels_in_source(text, name)


def sidecar_labels(text: str, source: str) -> List[Label]:
    """Lines ``path:line: recipe kind[; recipe kind]`` (``#`` comments and blank
    lines ignored); a notebook cell is ``nb.ipynb:cell N:line: ...``."""
    labels = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _SIDECAR.match(line)
        if not match:
            raise CorpusError(f"{source}:{number}: expected 'path:line: recipe kind', got {line!r}")
        for recipe, kind in parse_label_body(match["body"], f"{source}:{number}"):
            labels.append(Label(match["where"], int(match["line"]), recipe, kind))
    return labels


# --- findings ---------------------------------------------------------------

def findings_from_json(document: dict) -> List[Finding]:
    found = []
    for diag in document.get("diagnostics", []):
        fix = diag.get("fix")
        edits = tuple((e["line"], e["column"], e["end_line"], e["end_column"], e["replacement"])
                      for e in (fix or {}).get("edits", []))
        found.append(Finding(diag["path"], diag["line"], diag["end_line"], diag["recipe"],
                             fix["safety"] if fix else "report", diag["message"], edits))
    return found


def _child_env() -> Dict[str, str]:
    """The environment of a ``python -m migrate`` child: this worktree's code first."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))


def run_check(paths: Sequence[Path], recipes: Sequence[str],
              target_index: Optional[int]) -> Tuple[List[Finding], List[str]]:
    """Findings of ``migrate check`` over ``paths`` (absolute), and its errors."""
    command = [sys.executable, "-m", "migrate", "check", "--format", "json", "--no-cache"]
    if recipes:
        command += ["--select", ",".join(recipes)]
    if target_index is not None:
        command += ["--target-index", str(target_index)]
    done = subprocess.run(command + [str(p) for p in paths], capture_output=True, text=True,
                          env=_child_env(), cwd=ROOT)
    try:
        document = json.loads(done.stdout)
    except ValueError:
        raise RuntimeError(f"migrate check gave no JSON (exit {done.returncode}): {done.stderr.strip()[-400:]}")
    return findings_from_json(document), list(document.get("errors", []))


# --- matching ---------------------------------------------------------------

def _normal(path: str) -> str:
    file, cell = split_label(path)
    resolved = str(Path(file).resolve())
    return cell_label(resolved, cell) if cell is not None else resolved


def match(labels: Iterable[Label], findings: Iterable[Finding],
          recipes: Optional[Sequence[str]] = None) -> Dict[str, RecipeScore]:
    """Per-recipe scores. Each finding takes at most one label (the nearest
    to its first line among those inside its range); each label at most one
    finding."""
    wanted = set(recipes) if recipes else None
    labels = [lb for lb in labels if wanted is None or lb.recipe in wanted]
    findings = [f for f in findings if wanted is None or f.recipe in wanted]
    scores: Dict[str, RecipeScore] = {r: RecipeScore() for r in (recipes or ())}
    free: Dict[Tuple[str, str], List[Label]] = {}
    for label in labels:
        free.setdefault((_normal(label.path), label.recipe), []).append(label)
    for finding in sorted(findings, key=lambda f: (f.path, f.line, f.end_line)):
        score = scores.setdefault(finding.recipe, RecipeScore())
        candidates = [lb for lb in free.get((_normal(finding.path), finding.recipe), [])
                      if finding.line <= lb.line <= finding.end_line]
        if not candidates:
            score.fp += 1
            score.false_positives.append(finding)
            continue
        label = min(candidates, key=lambda lb: lb.line - finding.line)
        free[(_normal(finding.path), finding.recipe)].remove(label)
        score.tp += 1
        score.matched.append((label, finding))
        if label.kind in (finding.kind, ANY_KIND):
            score.kind_agree += 1
        else:
            score.kind_mismatches.append((label, finding))
    for (_, recipe), left in free.items():
        score = scores.setdefault(recipe, RecipeScore())
        score.fn += len(left)
        score.false_negatives.extend(left)
    return dict(sorted(scores.items()))


# --- the corpus -------------------------------------------------------------

def corpus_files(root: Path) -> List[Path]:
    if root.is_file():
        return [root.resolve()]
    return sorted(p.resolve() for p in root.rglob("*") if p.suffix in (".py", ".ipynb") and p.is_file()
                  and ".ipynb_checkpoints" not in p.parts)


def corpus_labels(files: Sequence[Path], sidecar: Optional[Path], root: Path) -> List[Label]:
    """Inline labels of every file, plus the sidecar's (paths relative to the
    corpus root, or absolute)."""
    labels = [label for path in files for label in labels_in_file(path, str(path))]
    if sidecar is not None:
        base = root if root.is_dir() else root.parent
        for label in sidecar_labels(sidecar.read_text(encoding="utf-8"), str(sidecar)):
            file, cell = split_label(label.path)
            absolute = (base / file).resolve()
            if absolute not in files:
                raise CorpusError(f"{sidecar}: {label.path}: no such file in the corpus")
            where = cell_label(str(absolute), cell) if cell is not None else str(absolute)
            labels.append(Label(where, label.line, label.recipe, label.kind))
    return labels


# --- verifying safe fixes ---------------------------------------------------

def rewritten(text: str, finding: Finding, notebook: bool) -> Tuple[str, str]:
    """(before, after) programs for one safe fix applied alone. A notebook
    becomes a script of its code cells (IPython lines masked)."""
    edits = [Edit(*e) for e in finding.edits]
    if not notebook:
        return text, apply_edits(text, edits)
    _, fixed_cell = split_label(finding.path)
    cells = notebook_cells(text, finding.path)
    before = "\n".join(source for _, source in cells)
    after = "\n".join(apply_edits(source, edits) if number == fixed_cell else source
                      for number, source in cells)
    return before, after


@dataclass
class VerifiedFix:
    finding: Finding
    before_ok: bool
    after_ok: bool
    after_failures: List[str]


def verify_safe_fixes(findings: Sequence[Finding], timeout: float, runtime: Sequence[str] = (),
                      kinds: Sequence[str] = ("safe",)) -> List[VerifiedFix]:
    """Run before/after of each safe fix (of each fix of ``kinds``) in one
    ``migrate verify`` call; ``runtime``: verify's options (``--tf 2.3``)."""
    safe = [f for f in findings if f.kind in kinds and f.edits]
    if not safe:
        return []
    with tempfile.TemporaryDirectory(prefix="corpus-score-") as tmp:
        pairs = []
        for number, finding in enumerate(safe):
            file, _ = split_label(finding.path)
            before, after = rewritten(Path(file).read_text(encoding="utf-8"), finding, file.endswith(".ipynb"))
            stem = re.sub(r"\W", "_", Path(file).stem)
            # a behaviour-preserving recipe's pair whose before defines outputs() runs as a
            # fixture pair (<recipe>/<stem>.before.py / .after.py): verify compares their outputs
            as_fixture = _behaviour_preserving(finding.recipe) and re.search(r"^def outputs\(", before, re.M)
            pair = []
            for role, text in (("before", before), ("after", after)):
                if as_fixture:
                    target = Path(tmp, finding.recipe, f"{stem}_{number:03d}.{role}.py")
                else:
                    target = Path(tmp, f"{number:03d}_{role}", f"{stem}.py")
                target.parent.mkdir(exist_ok=True)
                target.write_text(text, encoding="utf-8")
                pair.append(target)
            pairs.append(pair)
        report = _run_verify([p for pair in pairs for p in pair], timeout, runtime)
        return [_verified(finding, report.get(str(before)), report.get(str(after)))
                for finding, (before, after) in zip(safe, pairs)]


def _run_verify(paths: Sequence[Path], timeout: float, runtime: Sequence[str] = ()) -> Dict[str, dict]:
    """verify's JSON report per program, by resolved path."""
    command = [sys.executable, "-m", "migrate", "verify", "--format", "json", "--timeout", str(timeout), *runtime]
    done = subprocess.run(command + [str(p) for p in paths], capture_output=True, text=True,
                          env=_child_env(), cwd=ROOT)
    try:
        document = json.loads(done.stdout)
    except ValueError:
        raise RuntimeError(f"migrate verify gave no JSON (exit {done.returncode}): {done.stderr.strip()[-400:]}")
    # `--keras 3` also runs current TF + tf-keras: judge the runtime asked for
    options = dict(zip(runtime[::2], runtime[1::2]))
    wanted = "keras3" if options.get("--keras") == "3" else options.get("--tf", "current")
    return {str(Path(p["path"]).resolve()): p for p in document.get("programs", [])
            if wanted == "all" or p.get("runtime", wanted) == wanted}


def _verified(finding: Finding, before: Optional[dict], after: Optional[dict]) -> VerifiedFix:
    """A fix passes when its after passes every check. A fix of a
    behaviour-preserving recipe (``before_fails`` None: typed-convert) on a
    program that fails for another reason (another labelled bug) passes when
    its after fails no check its before passed: it must change nothing."""
    if after is None:
        return VerifiedFix(finding, bool(before and before.get("ok")), False, ["not run by verify"])
    failed_before = {c["name"] for c in (before or {}).get("checks", []) if not c.get("passed")}
    preserving = _behaviour_preserving(finding.recipe) and bool(before)
    failures = [f"{c['name']}: {c.get('summary') or ''} {c.get('error') or ''}".strip()
                for c in after.get("checks", [])
                if not c.get("passed") and not (preserving and c["name"] in failed_before)]
    if not after.get("ok") and not failures and not preserving:
        failures = ["verify: not ok"]
    return VerifiedFix(finding, bool(before and before.get("ok")), bool(after.get("ok")), failures)


def _behaviour_preserving(recipe: str) -> bool:
    try:
        return resolve([recipe])[0].before_fails is None
    except UnknownRecipe:
        return False


# --- output -----------------------------------------------------------------

def summary(scores: Dict[str, RecipeScore], verified: Optional[List[VerifiedFix]], files: int,
            labels: int, findings: int, errors: List[str]) -> dict:
    recipes = {}
    for recipe, s in scores.items():
        recipes[recipe] = {
            "tp": s.tp, "fp": s.fp, "fn": s.fn,
            "precision": round(s.precision, 4), "recall": round(s.recall, 4),
            "kind_agreement": round(s.kind_agree / s.tp, 4) if s.tp else None,
            "false_positives": [asdict(f) for f in s.false_positives],
            "false_negatives": [asdict(lb) for lb in s.false_negatives],
            "kind_mismatches": [{"label": asdict(lb), "finding": asdict(f)} for lb, f in s.kind_mismatches],
        }
    result = {"files": files, "labels": labels, "findings": findings, "errors": errors, "recipes": recipes}
    if verified is not None:
        result["safe_fixes"] = [
            {"path": v.finding.path, "line": v.finding.line, "recipe": v.finding.recipe, "kind": v.finding.kind,
             "before_ok": v.before_ok, "after_ok": v.after_ok, "failures": v.after_failures}
            for v in verified]
        result["failing_safe_fixes"] = [fix for fix in result["safe_fixes"] if fix["failures"]]
    causes = none_gradient_summary(scores, verified)
    if causes is not None:
        result["none_gradient"] = causes
    for item in result["recipes"].values():
        for finding in item["false_positives"]:
            finding.pop("edits")
        for pair in item["kind_mismatches"]:
            pair["finding"].pop("edits")
    return result


def none_gradient_summary(scores: Dict[str, RecipeScore],
                          verified: Optional[List[VerifiedFix]]) -> Optional[dict]:
    """Issue 26's figures, per cause (a recipe some ``# expect-cause:`` label
    names): labels, detected (a finding on the label), fixed (its fix, under
    ``--verify``, turns the failing program into a passing one), failing safe
    fixes, false alarms (findings on no label); totals as fractions of the
    labels (every labelled cause is visible in the source). None without
    cause labels."""
    outcome = {v.finding: v for v in verified or []}
    causes = {}
    for recipe, s in scores.items():
        labels = [lb for lb, _ in s.matched if lb.is_cause] + [lb for lb in s.false_negatives if lb.is_cause]
        if not labels:
            continue
        hits = [f for lb, f in s.matched if lb.is_cause]
        causes[recipe] = {
            "safety": _safety(recipe), "labels": len(labels), "detected": len(hits),
            "fixed": None if verified is None else sum(
                1 for f in hits if f in outcome and outcome[f].after_ok and not outcome[f].before_ok),
            "failing_safe_fixes": None if verified is None else sum(
                1 for v in verified if v.finding.recipe == recipe and v.finding.kind == "safe" and v.after_failures),
            "false_alarms": s.fp,
            "missed": [f"{lb.path}:{lb.line}" for lb in s.false_negatives if lb.is_cause],
        }
    if not causes:
        return None
    totals = {key: sum(c[key] or 0 for c in causes.values())
              for key in ("labels", "detected", "fixed", "failing_safe_fixes", "false_alarms")}
    totals["detection_rate"] = round(totals["detected"] / totals["labels"], 4)
    totals["fix_rate"] = None if verified is None else round(totals["fixed"] / totals["labels"], 4)
    return {"causes": dict(sorted(causes.items())), "totals": totals}


def _safety(recipe: str) -> Optional[str]:
    """The recipe's declared safety, or None when no recipe has that id (yet)."""
    try:
        return resolve([recipe])[0].safety
    except UnknownRecipe:
        return None


def _cell(value) -> str:
    return "-" if value is None else str(value)


def render_none_gradient(causes: dict) -> List[str]:
    lines = ["none-gradient causes (expect-cause labels):",
             f"{'cause':<24}{'recipe':>8}{'labels':>8}{'detected':>10}{'fixed':>7}{'failing safe':>14}{'FP':>4}"
             f"{'seen':>6}{'named':>7}"]
    for cause, c in causes["causes"].items():
        lines.append(f"{cause:<24}{c['safety'] or 'none':>8}{c['labels']:>8}"
                     f"{c['detected']:>10}{_cell(c['fixed']):>7}{_cell(c['failing_safe_fixes']):>14}"
                     f"{c['false_alarms']:>4}{_cell(c.get('seen')):>6}{_cell(c.get('named')):>7}")
    t = causes["totals"]
    fixed = "" if t["fix_rate"] is None else f", fixed and verified {t['fixed']} ({t['fix_rate']:.0%})" \
        f", failing safe fixes {t['failing_safe_fixes']}"
    named = "" if "named" not in t else f"; verify sees a None gradient for {t['seen']}, names the cause of {t['named']}"
    lines.append(f"total: {t['labels']} labels, detected {t['detected']} ({t['detection_rate']:.0%}){fixed}, "
                 f"false alarms {t['false_alarms']}{named}")
    return lines


NOT_YET = "_(no recipe yet)_"
NOT_RUN = "?"  # a cell the run that wrote the table did not measure


def none_gradient_table(causes: dict) -> str:
    """The Markdown table of docs/none-gradient-causes.md: per cause, the
    recipe and its safety, what verify says on a reproduction, the counts.
    Cells a run did not measure say so, to be refreshed by a later run."""
    rows = ["| cause | recipe | safety | what `verify` says (a reproduction) | labels | detected | "
            "fixed, verified | failing safe fixes | verify sees a None gradient | verify names the cause |",
            "|---|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for cause, c in causes["causes"].items():
        says = c.get("verify_says")
        says = NOT_RUN if "verify_says" not in c else \
            f"`{_table_text(says)}`" if says else "_(no None gradient seen)_"
        rows.append("| " + " | ".join([
            f"`{cause}`", f"`{cause}`" if c["safety"] else NOT_YET, c["safety"] or "-", says,
            str(c["labels"]), str(c["detected"]),
            NOT_RUN if c["fixed"] is None else str(c["fixed"]),
            NOT_RUN if c["failing_safe_fixes"] is None else str(c["failing_safe_fixes"]),
            str(c.get("seen", NOT_RUN)), str(c.get("named", NOT_RUN))]) + " |")
    t = causes["totals"]
    rows.append("| **total** | | | | " + " | ".join([
        str(t["labels"]), f"{t['detected']} ({t['detection_rate']:.0%})",
        NOT_RUN if t["fix_rate"] is None else f"{t['fixed']} ({t['fix_rate']:.0%})",
        NOT_RUN if t["fix_rate"] is None else str(t["failing_safe_fixes"]),
        str(t.get("seen", NOT_RUN)), str(t.get("named", NOT_RUN))]) + " |")
    return "\n".join(rows)


def _table_text(text: str) -> str:
    """A sentence for a Markdown cell (verify names files by their base name)."""
    return text.replace("|", "\\|")


def render(result: dict) -> str:
    lines = [f"{result['files']} files, {result['labels']} labels, {result['findings']} findings",
             f"{'recipe':<24}{'TP':>4}{'FP':>4}{'FN':>4}{'precision':>11}{'recall':>8}{'fix-kind':>10}"]
    for recipe, r in result["recipes"].items():
        kind = "-" if r["kind_agreement"] is None else f"{r['kind_agreement']:.2f}"
        lines.append(f"{recipe:<24}{r['tp']:>4}{r['fp']:>4}{r['fn']:>4}"
                     f"{r['precision']:>11.2f}{r['recall']:>8.2f}{kind:>10}")
    for recipe, r in result["recipes"].items():
        for f in r["false_positives"]:
            lines.append(f"  FP {recipe} {f['path']}:{f['line']} ({f['kind']}): {f['message'][:140]}")
        for lb in r["false_negatives"]:
            lines.append(f"  FN {recipe} {lb['path']}:{lb['line']} (expected {lb['kind']})")
        for pair in r["kind_mismatches"]:
            lb, f = pair["label"], pair["finding"]
            lines.append(f"  kind {recipe} {lb['path']}:{lb['line']}: expected {lb['kind']}, got {f['kind']}")
    for error in result["errors"]:
        lines.append(f"  error: {error}")
    if "none_gradient" in result:
        lines += render_none_gradient(result["none_gradient"])
    if "safe_fixes" in result:
        failing = result["failing_safe_fixes"]
        repaired = sum(1 for fix in result["safe_fixes"] if fix["after_ok"] and not fix["before_ok"])
        lines.append(f"safe fixes verified: {len(result['safe_fixes'])} ({repaired} turned a failing program "
                     f"into a passing one), failing: {len(failing)}")
        for item in failing:
            reasons = "; ".join(item["failures"])[:200]
            lines.append(f"  failing {item['recipe']} {item['path']}:{item['line']}: {reasons}")
    return "\n".join(lines)


def score(root: Path, recipes: Sequence[str] = (), sidecar: Optional[Path] = None, verify: bool = False,
          target_index: Optional[int] = None, timeout: float = 60.0, runtime: Sequence[str] = (),
          kinds: Sequence[str] = ("safe",), diagnose: bool = False) -> dict:
    """Everything ``main`` prints, as a dict (the ``--json`` document).
    ``diagnose``: run verify on every program with a cause label and count
    the labels whose cause its diagnosis of a None gradient names."""
    if not root.exists():
        raise CorpusError(f"{root}: no such file or directory")
    files = corpus_files(root)
    labels = corpus_labels(files, sidecar, root)
    findings, errors = run_check(files, recipes, target_index) if files else ([], [])
    scores = match(labels, findings, recipes)
    verified = verify_safe_fixes(findings, timeout, runtime, kinds) if verify else None
    result = summary(scores, verified, len(files), len(labels), len(findings), errors)
    if diagnose and "none_gradient" in result:
        add_diagnoses(result["none_gradient"], [lb for lb in labels if lb.is_cause], timeout, runtime)
    return result


def add_diagnoses(causes: dict, labels: Sequence[Label], timeout: float, runtime: Sequence[str]) -> None:
    """Per cause: ``seen``, the labels whose program verify sees a None
    gradient in; ``named``, those it diagnoses with that cause at the
    labelled line; ``verify_says``, one such sentence (else the first seen)."""
    programs = sorted({split_label(lb.path)[0] for lb in labels if not split_label(lb.path)[0].endswith(".ipynb")})
    report = _run_verify([Path(p) for p in programs], timeout, runtime) if programs else {}
    for cause in causes["causes"].values():
        cause.update(seen=0, named=0, verify_says=None)
    for label in labels:
        said = report.get(_normal(label.path), {}).get("diagnoses", [])
        entry = causes["causes"][label.recipe]
        entry["seen"] += bool(said)
        if entry["verify_says"] is None and said:
            entry["verify_says"] = said[0]["message"]
        for item in said:
            finding = item.get("finding") or {}
            if item["cause"] == label.recipe and finding["line"] <= label.line <= finding["end_line"]:
                entry["named"] += 1
                entry["verify_says"] = item["message"] if entry["named"] == 1 else entry["verify_says"]
                break
    for key in ("seen", "named"):
        causes["totals"][key] = sum(c[key] for c in causes["causes"].values())


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=ROOT / "tests" / "corpus",
                        help="corpus directory or file (default: tests/corpus)")
    parser.add_argument("--recipes", default="", help="comma-separated recipe ids (default: every recipe)")
    parser.add_argument("--labels", type=Path, help="sidecar labels: lines 'path:line: recipe kind'")
    parser.add_argument("--verify", action="store_true", help="run verify on before/after of each safe fix")
    parser.add_argument("--target-index", type=int, help="passed to check (scalar-target)")
    parser.add_argument("--timeout", type=float, default=60.0, help="verify: seconds per program")
    parser.add_argument("--tf", help="verify: the runtime (verify's --tf: 2.3, current)")
    parser.add_argument("--keras", help="verify: also on this Keras (verify's --keras: 3), and judged there")
    parser.add_argument("--unsafe", action="store_true", help="verify: unsafe fixes too")
    parser.add_argument("--diagnose", action="store_true",
                        help="run verify on every program with a cause label: does it name the cause?")
    parser.add_argument("--none-gradient-table", action="store_true",
                        help="print the none-gradient causes as the Markdown table of docs/none-gradient-causes.md")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    recipes = [r.strip() for r in args.recipes.split(",") if r.strip()]
    try:
        result = score(args.corpus, recipes, args.labels, args.verify, args.target_index, args.timeout,
                       [*(["--tf", args.tf] if args.tf else []), *(["--keras", args.keras] if args.keras else [])],
                       ("safe", "unsafe") if args.unsafe else ("safe",), args.diagnose)
    except (CorpusError, RuntimeError, OSError) as err:
        print(f"corpus_score: {err}", file=sys.stderr)
        return 2
    if args.none_gradient_table:
        if "none_gradient" not in result:
            print(f"corpus_score: {args.corpus}: no '# expect-cause:' labels", file=sys.stderr)
            return 2
        print(none_gradient_table(result["none_gradient"]))
    else:
        print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
