"""Warnings for ``# tf-migrate: ignore[...]`` comments naming no recipe: a
misspelt id suppresses nothing, silently, so the run says so (file, line,
the closest ids)."""

from __future__ import annotations

from typing import List

from . import registry
from .edits import split_lines
from .recipe import SUPPRESSION


def unknown_suppressions(path: str, text: str) -> List[str]:
    """``path:line: unknown recipe id 'x' (did you mean y?) in a suppression
    comment``, one per unknown id, in line order (``path``: a file, or a
    notebook cell's label)."""
    if "tf-migrate:" not in text:
        return []
    known = registry.all_recipes()
    warnings = []
    for number, line in enumerate(split_lines(text), 1):
        match = SUPPRESSION.search(line) if "tf-migrate:" in line else None
        ids = match.group("ids") if match else None
        for name in (i.strip() for i in (ids or "").split(",")):
            if name and name not in known:
                warnings.append(f"{path}:{number}: {registry.unknown_id(name)} in a "
                                f"`# tf-migrate: ignore[...]` comment")
    return warnings
