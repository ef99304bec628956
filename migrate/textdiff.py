"""Comparing two versions of a text line by line: the unified diff people
read, and where a line of one is in the other."""

from __future__ import annotations

import difflib
from bisect import bisect_right
from typing import Callable, Optional

from . import linematch


def unified(name: str, old: str, new: str) -> str:
    """`diff -u` of two texts of ``name``, marking a missing final newline as
    git does. Headers are git's ``a/NAME`` and ``b/NAME`` (`git apply`,
    `patch -p1`); an absolute name loses its leading slash there, as in
    `git diff --no-index` (``a/tmp/x.py``: apply it with ``-d /``)."""
    name = name.lstrip("/")
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=f"a/{name}", tofile=f"b/{name}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def line_map(old: str, new: str, *, nearest: bool = True) -> Callable[[int], Optional[int]]:
    """Where a 1-based line of ``old`` is in ``new``. A line a change replaced
    maps to the corresponding line of its replacement (``nearest``) or None."""
    opcodes = linematch.opcodes(old.splitlines(), new.splitlines())  # difflib's, autojunk off
    starts = [code[1] for code in opcodes]

    def mapped(line: int) -> Optional[int]:  # by bisection: a scan per finding was quadratic
        at = bisect_right(starts, line - 1) - 1
        if at >= 0 and line - 1 < opcodes[at][2]:
            tag, i1, i2, j1, j2 = opcodes[at]
            if tag == "equal":
                return j1 + line - i1
            return j1 + min(line - 1 - i1, max(j2 - j1 - 1, 0)) + 1 if nearest else None
        return line if nearest else None

    return mapped
