"""Machine formats of `check --format`: json (ours, schema in
migrate/schemas/check.schema.json), sarif (SARIF 2.1.0, for code-scanning
upload) and github (workflow command annotations).

Positions everywhere are 1-based lines and columns, end exclusive, columns
counted in Unicode code points (SARIF says so with ``columnKind``). A notebook
finding's path is ``nb.ipynb:cell N`` in json; in SARIF and GitHub output the
file is the notebook and the cell and line go into the message, since a cell's
lines are not the file's lines.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict, Iterable, List, Optional

from . import registry
from .batch import Outcome
from .result import split_label
from .output import to_json
from .result import Diagnostic, Edit

NAMES = ("text", "json", "sarif", "github")
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def render(name: str, outcomes: List[Outcome]) -> str:
    """``outcomes`` in the machine format ``name`` (one of NAMES but text)."""
    if name == "json":
        return to_json(outcomes) + "\n"
    if name == "sarif":
        return json.dumps(to_sarif(outcomes), indent=2) + "\n"
    if name == "github":
        return "".join(line + "\n" for line in github_annotations(outcomes))
    raise ValueError(f"unknown format {name!r}")


def statistics_of(name: str, outcomes: List[Outcome]) -> str:
    """`check --statistics`: findings per recipe, with how many have a fix,
    as aligned text lines or (json) a list of objects, by recipe id."""
    counts: Dict[str, List[int]] = {}
    for outcome in outcomes:
        for diag in outcome.result.diagnostics if outcome.result else []:
            count = counts.setdefault(diag.recipe, [0, 0])
            count[0] += 1
            count[1] += diag.fixable
    rows = sorted(counts.items())
    if name == "json":
        return json.dumps([{"recipe": recipe, "count": total, "fixable": fixable}
                           for recipe, (total, fixable) in rows], indent=2) + "\n"
    if name != "text":
        raise ValueError(f"--statistics is text or json, not {name}")
    width = max((len(str(total)) for _, (total, _) in rows), default=1)
    name_width = max((len(recipe) for recipe, _ in rows), default=1)
    return "".join(f"{total:>{width}}  {recipe:<{name_width}}  ({fixable} with a fix)\n"
                   for recipe, (total, fixable) in rows)


def tool_version() -> str:
    from importlib import metadata  # ~15 ms to import: only --version, SARIF and the server ask

    try:
        return metadata.version("tf-migrate")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def _uri(path: str) -> str:
    """A relative URI (forward slashes) when under the working directory."""
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            candidate = candidate.relative_to(Path.cwd())
        except ValueError:
            return candidate.as_uri()
    return candidate.as_posix()


def _region(line: int, column: int, end_line: int, end_column: int) -> dict:
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def _rules(diagnostics: Iterable[Diagnostic]) -> List[dict]:
    known = registry.all_recipes()
    rules = []
    for rule_id in sorted({d.recipe for d in diagnostics}):
        recipe = known.get(rule_id)
        rule = {"id": rule_id, "name": rule_id}
        if recipe is not None:
            rule["shortDescription"] = {"text": recipe.summary}
            rule["properties"] = {"safety": recipe.safety}
            if recipe.doc:
                rule["fullDescription"] = {"text": recipe.doc}
        rules.append(rule)
    return rules


def _sarif_result(diag: Diagnostic, rule_index: Dict[str, int]) -> dict:
    file, cell = split_label(diag.path)
    location: dict = {"artifactLocation": {"uri": _uri(file)}}
    message = diag.message
    if cell is None:
        location["region"] = _region(diag.line, diag.column, diag.end_line, diag.end_column)
    else:
        message = f"cell {cell}, line {diag.line}: {message}"
    result = {
        "ruleId": diag.recipe,
        "ruleIndex": rule_index[diag.recipe],
        "level": "warning",
        "message": {"text": message},
        "locations": [{"physicalLocation": location}],
        "properties": {"safety": diag.safety, "fixable": diag.fixable},
    }
    if diag.fixable and diag.fix and cell is None:
        result["fixes"] = [{
            "description": {"text": f"{diag.safety} fix: {diag.message}"},
            "artifactChanges": [{
                "artifactLocation": {"uri": _uri(file)},
                "replacements": [_replacement(edit) for edit in diag.fix],
            }],
        }]
    return result


def _replacement(edit: Edit) -> dict:
    return {"deletedRegion": _region(edit.line, edit.column, edit.end_line, edit.end_column),
            "insertedContent": {"text": edit.replacement}}


def to_sarif(outcomes: Iterable[Outcome]) -> dict:
    """One SARIF 2.1.0 log with one run; files that could not be processed
    become error notifications of the invocation."""
    diagnostics: List[Diagnostic] = []
    notifications = []
    for outcome in outcomes:
        if outcome.result:
            diagnostics.extend(outcome.result.diagnostics)
        if outcome.problem:
            notifications.append({
                "level": "error",
                "message": {"text": outcome.problem},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": _uri(str(outcome.path))}}}],
            })
    rules = _rules(diagnostics)
    rule_index = {rule["id"]: i for i, rule in enumerate(rules)}
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "tf-migrate", "version": tool_version(), "rules": rules}},
            "invocations": [{"executionSuccessful": not notifications,
                             "toolExecutionNotifications": notifications}],
            "columnKind": "unicodeCodePoints",
            "results": [_sarif_result(d, rule_index) for d in diagnostics],
        }],
    }


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, message: str, **properties: Optional[object]) -> str:
    props = ",".join(f"{key}={_escape_property(str(value))}"
                     for key, value in properties.items() if value is not None)
    return f"::{kind} {props}::{_escape_data(message)}" if props else f"::{kind}::{_escape_data(message)}"


def github_annotations(outcomes: Iterable[Outcome]) -> List[str]:
    """``::warning file=..,line=..,col=..,endLine=..,endColumn=..,title=<recipe>::<message>``
    per finding, ``::error file=..::<reason>`` per file that could not be processed."""
    lines = []
    for outcome in outcomes:
        for diag in outcome.result.diagnostics if outcome.result else []:
            file, cell = split_label(diag.path)
            tag = f"[{diag.safety} fix]" if diag.fixable else "[report only]"
            if cell is None:
                lines.append(_command("warning", f"{diag.message} {tag}", file=_relative(file),
                                      line=diag.line, col=diag.column, endLine=diag.end_line,
                                      endColumn=diag.end_column, title=diag.recipe))
            else:
                lines.append(_command("warning", f"cell {cell}, line {diag.line}: {diag.message} {tag}",
                                      file=_relative(file), title=diag.recipe))
        if outcome.problem:
            lines.append(_command("error", outcome.problem, file=_relative(str(outcome.path)),
                                  title="tf-migrate"))
    return lines


def _relative(path: str) -> str:
    """GitHub resolves annotation files against the workspace (the cwd in a workflow)."""
    relative = os.path.relpath(path) if os.path.isabs(path) else path
    return Path(relative).as_posix() if not relative.startswith("..") else Path(path).as_posix()
