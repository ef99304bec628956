"""migrate.linematch gives exactly difflib's opcodes (autojunk off), and
line_edits exactly the edits the difflib computation gave: on random texts,
on texts of a few repeated lines (where difflib meets the most ties), and on
texts of repeated blocks edited in place, as a fix of many findings makes them."""

from __future__ import annotations

import difflib

from hypothesis import given, settings, strategies as st

from migrate.edits import line_edits, split_lines
from migrate.linematch import matching_blocks, opcodes, opcodes_of
from migrate.result import Edit
from migrate.textdiff import line_map


def difflib_opcodes(a, b):
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def hashed_opcodes(a, b):
    """linematch's own search, whichever path opcodes() takes for these texts."""
    return opcodes_of(matching_blocks(a, b))


def difflib_line_edits(old: str, new: str):
    """line_edits as it was computed before linematch."""
    if old == new:
        return []
    a, b = split_lines(old), split_lines(new)
    return [Edit(i1 + 1, 1, i2 + 1, 1, "".join(b[j1:j2]))
            for tag, i1, i2, j1, j2 in difflib_opcodes(a, b) if tag != "equal"]


few_lines = st.lists(st.sampled_from(["", "x\n", "return x\n", "y = 1\n", "pass\n"]), max_size=40)
any_lines = st.lists(st.text(alphabet="ab \n", max_size=6), max_size=30)


@settings(max_examples=400, deadline=None)
@given(few_lines, few_lines)
def test_repetitive_lines_give_difflibs_opcodes(a, b):
    assert hashed_opcodes(a, b) == opcodes(a, b) == difflib_opcodes(a, b)


@settings(max_examples=200, deadline=None)
@given(any_lines, any_lines)
def test_random_lines_give_difflibs_opcodes(a, b):
    assert hashed_opcodes(a, b) == opcodes(a, b) == difflib_opcodes(a, b)


@st.composite
def edited_copies(draw):
    """A block of lines repeated (numbered or not), and a copy with some lines replaced,
    dropped or added: the shape of a file of many similar classes before and after a fix."""
    block = draw(st.lists(st.sampled_from(["", "def f{n}(x):\n", "    y = x\n", "    return y\n",
                                           "    pass\n"]), min_size=1, max_size=8))
    copies = draw(st.integers(1, 12))
    old = [line.format(n=n) for n in range(copies) for line in block]
    new = list(old)
    for _ in range(draw(st.integers(0, 12))):
        at = draw(st.integers(0, len(new)))
        cut = draw(st.integers(0, 2))
        new[at:at + cut] = draw(st.lists(st.sampled_from(["    y = t(x)\n", "", "    return y\n"]),
                                         max_size=2))
    return old, new


@settings(max_examples=200, deadline=None)
@given(edited_copies())
def test_edited_repeated_blocks_give_difflibs_opcodes_and_edits(texts):
    old, new = texts
    assert hashed_opcodes(old, new) == opcodes(old, new) == difflib_opcodes(old, new)
    assert line_edits("".join(old), "".join(new)) == difflib_line_edits("".join(old), "".join(new))


def test_a_file_of_many_edited_classes_gives_difflibs_edits():
    block = "class C{n}:\n    def call(self, x):\n        h = zeros()\n        return h\n\n"
    old = "".join(block.format(n=n) for n in range(120))
    new = old.replace("        h = zeros()\n", "        h = ta()\n        h = h.stack()\n")
    edits = line_edits(old, new)
    assert len(edits) == 120
    assert edits == difflib_line_edits(old, new)


def scanned_line_map(old: str, new: str, nearest: bool):
    """textdiff.line_map as it was: difflib's opcodes, scanned per line."""
    codes = difflib_opcodes(old.splitlines(), new.splitlines())

    def mapped(line):
        for tag, i1, i2, j1, j2 in codes:
            if i1 <= line - 1 < i2:
                if tag == "equal":
                    return j1 + line - i1
                return j1 + min(line - 1 - i1, max(j2 - j1 - 1, 0)) + 1 if nearest else None
        return line if nearest else None

    return mapped


@settings(max_examples=200, deadline=None)
@given(edited_copies(), st.booleans())
def test_line_map_maps_every_line_as_the_scan_of_difflibs_opcodes(texts, nearest):
    old, new = "".join(texts[0]), "".join(texts[1])
    fast, plain = line_map(old, new, nearest=nearest), scanned_line_map(old, new, nearest)
    lines = range(0, old.count("\n") + 3)
    assert [fast(n) for n in lines] == [plain(n) for n in lines]
