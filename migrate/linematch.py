"""difflib's line opcodes, exactly, without its quadratic walks.

``SequenceMatcher(None, a, b, autojunk=False)`` finds, in each range, the
longest run of lines common to both sides (the first in ``a``, then in
``b``) and recurses left and right of it. Its search visits every
occurrence in ``b`` of every line of ``a``'s range: on a file of repeated
classes (a blank line, ``return x`` a thousand times) that is quadratic per
search and the searches follow one another along the file, so cubic.

Here the same run is found by hashing windows of ``k`` lines (tables of
``b``'s windows by length, see ``_Windows._table``): a range's longest run
is its first window of the greatest length that has a twin in the other
side's range, searched from the bound its parent range implies (a range
right of a run of ``k`` lines has none longer; one left of it none as long),
so a chain of equal runs costs one sweep of the file. Every hit is compared
line by line, so a hash collision costs time, never a different answer.
Texts of mostly unique lines (a few edits in a file) go to difflib itself,
faster there.
"""

from __future__ import annotations

import difflib
from bisect import bisect_left
from collections import Counter
from typing import Dict, List, Optional, Sequence, Tuple

Opcode = Tuple[str, int, int, int, int]

_MOD = (1 << 61) - 1
_BASE = 1_000_003


class _Windows:
    """Polynomial hashes of every window of ``a`` and ``b`` (lines as small ints)."""

    def __init__(self, a: Sequence[str], b: Sequence[str]):
        ids: Dict[str, int] = {}
        self.a, self.b = a, b
        self.hash_a = self._prefixes([ids.setdefault(line, len(ids) + 1) for line in a])
        self.hash_b = self._prefixes([ids.setdefault(line, len(ids) + 1) for line in b])
        self.powers = [1]
        self.tables: Dict[int, Dict[int, List[int]]] = {}

    @staticmethod
    def _prefixes(ids: List[int]) -> List[int]:
        prefix, h = [0], 0
        for value in ids:
            h = (h * _BASE + value) % _MOD
            prefix.append(h)
        return prefix

    def _power(self, k: int) -> int:
        while len(self.powers) <= k:
            self.powers.append(self.powers[-1] * _BASE % _MOD)
        return self.powers[k]

    def _table(self, k: int, blo: int, bhi: int) -> Dict[int, List[int]]:
        """Windows of ``k`` lines of ``b`` (hash -> their starts, ascending)
        that start in ``b[blo:bhi]``, or more: a table of the whole of ``b``
        is kept for its length when the range is most of ``b`` (the ranges
        along a chain of equal runs share it); a small range gets its own,
        or a diff of a few edits would hash all of ``b`` per range."""
        table = self.tables.get(k)
        if table is not None:
            return table
        whole = 2 * (bhi - blo) >= len(self.b)
        first, end = (0, len(self.b)) if whole else (blo, bhi)
        table, h, p = {}, self.hash_b, self._power(k)
        for j in range(first, end - k + 1):
            table.setdefault((h[j + k] - h[j] * p) % _MOD, []).append(j)
        if whole:
            self.tables[k] = table
        return table

    def first(self, alo: int, ahi: int, blo: int, bhi: int, k: int) -> Optional[Tuple[int, int]]:
        """The first (i, j) in the ranges with a[i:i+k] == b[j:j+k]: least i, then least j."""
        table, h, p = self._table(k, blo, bhi), self.hash_a, self._power(k)
        a, b, last = self.a, self.b, bhi - k
        for i in range(alo, ahi - k + 1):
            starts = table.get((h[i + k] - h[i] * p) % _MOD)
            if starts is None:
                continue
            for n in range(bisect_left(starts, blo), len(starts)):
                j = starts[n]
                if j > last:
                    break
                if a[i:i + k] == b[j:j + k]:
                    return i, j
        return None


def _longest(windows: _Windows, alo: int, ahi: int, blo: int, bhi: int,
             bound: int) -> Tuple[int, int, int]:
    """difflib's find_longest_match without junk: the longest common run in
    the ranges (none longer than ``bound``), least i then least j; (alo, blo, 0) if none."""
    top = min(bound, ahi - alo, bhi - blo)
    if top <= 0:
        return alo, blo, 0
    hit = windows.first(alo, ahi, blo, bhi, top)
    if hit is not None:
        return hit[0], hit[1], top
    low, best, high = 0, (alo, blo), top  # a run of `low` lines exists, of `high` none
    while high - low > 1:
        middle = (low + high) // 2
        hit = windows.first(alo, ahi, blo, bhi, middle)
        if hit is None:
            high = middle
        else:
            low, best = middle, hit
    return best[0], best[1], low


def matching_blocks(a: Sequence[str], b: Sequence[str]) -> List[Tuple[int, int, int]]:
    """``SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()``, as tuples."""
    windows = _Windows(a, b)
    found = []
    queue = [(0, len(a), 0, len(b), len(a))]
    while queue:
        alo, ahi, blo, bhi, bound = queue.pop()
        i, j, k = _longest(windows, alo, ahi, blo, bhi, bound)
        if k:
            found.append((i, j, k))
            if alo < i and blo < j:
                queue.append((alo, i, blo, j, k - 1))
            if i + k < ahi and j + k < bhi:
                queue.append((i + k, ahi, j + k, bhi, k))
    found.sort()
    blocks = []
    i1 = j1 = k1 = 0
    for i2, j2, k2 in found:  # adjacent runs are one, as difflib makes them
        if i1 + k1 == i2 and j1 + k1 == j2:
            k1 += k2
        else:
            if k1:
                blocks.append((i1, j1, k1))
            i1, j1, k1 = i2, j2, k2
    if k1:
        blocks.append((i1, j1, k1))
    blocks.append((len(a), len(b), 0))
    return blocks


def opcodes(a: Sequence[str], b: Sequence[str]) -> List[Opcode]:
    """``SequenceMatcher(None, a, b, autojunk=False).get_opcodes()``: difflib's
    own when its first search visits few pairs of equal lines (mostly unique
    lines: a few edits in a file), else from ``matching_blocks``."""
    counts = Counter(b)
    if sum(counts.get(line, 0) for line in a) <= 4 * (len(a) + len(b)):
        return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    return opcodes_of(matching_blocks(a, b))


def opcodes_of(blocks: List[Tuple[int, int, int]]) -> List[Opcode]:
    """difflib's get_opcodes from matching blocks (the last one (len(a), len(b), 0))."""
    i = j = 0
    codes: List[Opcode] = []
    for ai, bj, size in blocks:
        tag = "replace" if i < ai and j < bj else "delete" if i < ai else "insert" if j < bj else ""
        if tag:
            codes.append((tag, i, ai, j, bj))
        i, j = ai + size, bj + size
        if size:
            codes.append(("equal", ai, i, bj, j))
    return codes
