"""Line edits between two versions of a text, and the line map they imply."""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

from .linematch import opcodes
from .result import Edit

Owned = Tuple[Edit, Optional[str]]  # an edit and the recipe that made it (None: several)


_LINE = re.compile(r"[^\n]*\n|[^\n]+$")


def split_lines(text: str) -> List[str]:
    """Lines with their ends, as the tokenizer counts them: only \\n ends one
    (str.splitlines also cuts at \\f, \\x1c or U+2028, and finding lines
    would drift from edit lines)."""
    return _LINE.findall(text)


def line_edits(old: str, new: str) -> List[Edit]:
    """Line-level edits turning ``old`` into ``new`` (1-based, end exclusive).
    One diff of the whole text per changed pass, never per finding; exactly
    difflib's (autojunk off), in time near linear in the lines (linematch)."""
    if old == new:
        return []
    a, b = split_lines(old), split_lines(new)
    edits = []
    for tag, i1, i2, j1, j2 in opcodes(a, b):
        if tag != "equal":
            edits.append(Edit(i1 + 1, 1, i2 + 1, 1, "".join(b[j1:j2])))
    return edits


def pass_edits(old_lines: List[str], spans: Sequence[Tuple[object, int]], root,
               owners: Dict[int, str]) -> Tuple[str, List[Owned]]:
    """The text of ``root`` after a pass, and its edits relative to the
    pass's text (``old_lines``, with line ends), each with its recipe.

    ``spans`` are the module's top-level statements before the pass, each
    with the line its text begins on. A statement no modifier touched is
    copied from the old lines (never stringified again); each run of
    statements one recipe changed, added or removed is diffed alone: a pass
    costs what it changed, and one recipe's edits never merge with another's.
    """
    index = {id(node): k for k, (node, _) in enumerate(spans)}
    bounds = [line for _, line in spans] + [len(old_lines) + 1]
    units = []  # (first old line, end old line, new text or None if untouched, owner)
    done = 0
    for child in root.children:
        k = index.get(id(child))
        if k is None or k < done:  # added (or moved) by a modifier
            units.append((bounds[done], bounds[done], str(child), owners.get(id(child))))
            continue
        units.extend((bounds[r], bounds[r + 1], "", owners.get(id(spans[r][0])))
                     for r in range(done, k))  # removed
        text = str(child) if child.was_changed else None
        units.append((bounds[k], bounds[k + 1], text, owners.get(id(child))))
        done = k + 1
    units.extend((bounds[r], bounds[r + 1], "", owners.get(id(spans[r][0]))) for r in range(done, len(spans)))

    pieces: List[str] = []
    edits: List[Owned] = []
    k = 0
    while k < len(units):
        first, end, text, owner = units[k]
        if text is None:
            pieces.append("".join(old_lines[first - 1:end - 1]))
            k += 1
            continue
        new = [text]
        while k + 1 < len(units) and units[k + 1][2] is not None and units[k + 1][3] == owner:
            k += 1
            end = units[k][1]
            new.append(units[k][2])
        pieces.extend(new)
        for edit in line_edits("".join(old_lines[first - 1:end - 1]), "".join(new)):
            shift = first - 1
            edits.append((Edit(edit.line + shift, 1, edit.end_line + shift, 1, edit.replacement), owner))
        k += 1
    return "".join(pieces), edits


def old_lines(edits: Sequence[Edit], line: int) -> Tuple[int, int]:
    """The lines (first, last) of the old text that ``line`` of the new text
    comes from: the same line shifted past the edits before it, or the lines
    an edit replaced when ``line`` is in that edit's replacement."""
    edit, at = _origin(edits, line)
    return (at, at) if edit is None else (edit.line, max(edit.line, edit.end_line - 1))


def old_line(edits: Sequence[Edit], line: int) -> int:
    """The one line of the old text that ``line`` of the new text stands
    for: inside an edit's replacement, the replaced line at the same offset
    (the last replaced one past their end), so a finding on a loop whose
    line an edit rewrote together with the line above stays on the loop."""
    edit, at = _origin(edits, line)
    return at if edit is None else min(edit.line + at, max(edit.line, edit.end_line - 1))


def _origin(edits: Sequence[Edit], line: int) -> Tuple[Optional[Edit], int]:
    """(the edit whose replacement holds ``line`` of the new text, the
    line's offset into it), or (None, the same line in the old text)."""
    shift = 0
    for edit in edits:  # in order of position, as line_edits makes them
        start = edit.line + shift  # where this edit's replacement starts in the new text
        added = edit.replacement.count("\n")
        if line < start:
            break
        if line < start + added:
            return edit, line - start
        shift += added - (edit.end_line - edit.line)
    return None, line - shift


def apply_edits(source: str, edits: Sequence[Edit]) -> str:
    """Apply non-overlapping line edits (relative to ``source``)."""
    lines = split_lines(source)
    for edit in sorted(edits, key=lambda e: (e.line, e.end_line), reverse=True):
        lines[edit.line - 1:edit.end_line - 1] = [edit.replacement] if edit.replacement else []
    return "".join(lines)
