"""Helpers for recipes' prechecks, which read the stdlib ``ast`` (CPython's
C parser) to rule a file out before the much slower fissix parse."""

from __future__ import annotations

import ast
from typing import Iterator, Optional

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


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


def scopes(tree: ast.Module) -> Iterator[ast.AST]:
    """The module and every function in it."""
    yield tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def own_statements(scope: ast.AST) -> Iterator[ast.stmt]:
    """The statements of ``scope`` itself, through compound statements but
    not into nested functions or classes."""
    stack = list(scope.body)
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, _NESTED):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(getattr(stmt, field, None) or [])
