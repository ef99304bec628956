"""Helpers for recipes' prechecks, which read the stdlib ``ast`` (CPython's
C parser) to rule a file out before the much slower fissix parse."""

from __future__ import annotations

import ast
from typing import Iterator, Optional


def call_name(node: ast.AST) -> Optional[str]:
    """``zeros`` for ``np.zeros(...)`` or ``zeros(...)``; None if not a call."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def assigned_names(node: ast.AST) -> Iterator[str]:
    """Every plain name an ``=`` / annotated assignment statement binds."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):
                yield sub.id
