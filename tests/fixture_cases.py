"""The fixture pairs under fixtures/<recipe>/, shared by every test that
parametrizes over them (one source of truth, as in Fixit's VALID/INVALID)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
# A before whose after needs more than its folder's recipe (a seed program
# with several bugs) names them all in a comment among its first lines.
_HEADER = re.compile(r"^#\s*tf-migrate fixture:\s*recipes\s*=\s*(?P<ids>.+)$", re.M)
# A report-only recipe's pair: the before is reported and left as it is, the
# after is the way out its finding names, written by hand.
_REPORT_ONLY = re.compile(r"^#\s*tf-migrate fixture:\s*report-only\s*$", re.M)


@dataclass(frozen=True)
class Case:
    recipe: str
    name: str
    before: Path
    after: Optional[Path]  # None: a negative, must stay unchanged

    @property
    def id(self) -> str:
        return f"{self.recipe}/{self.name}"

    @property
    def recipes(self) -> Tuple[str, ...]:
        """The recipes the golden test applies: the folder's, plus any the
        before's header names (``# tf-migrate fixture: recipes = a, b``)."""
        head = "\n".join(self.before.read_text().splitlines()[:10])
        match = _HEADER.search(head)
        named = [i.strip() for i in match.group("ids").split(",")] if match else []
        return tuple(dict.fromkeys([self.recipe, *named]))

    @property
    def report_only(self) -> bool:
        """``# tf-migrate fixture: report-only`` among the before's first
        lines: the engine reports the before and leaves it unchanged; the
        after is the hand-made way out, which must train."""
        return bool(_REPORT_ONLY.search("\n".join(self.before.read_text().splitlines()[:10])))


def all_cases() -> List[Case]:
    cases = []
    for before in sorted(FIXTURES.glob("*/*.before.py")):
        name = before.name[: -len(".before.py")]
        after = before.with_name(f"{name}.after.py")
        cases.append(Case(before.parent.name, name, before, after if after.exists() else None))
    return cases


def top_level_chunks(path: Path) -> List[str]:
    """The top-level statements of a fixture program, each with its comments."""
    source = path.read_text()
    lines = source.splitlines(keepends=True)
    starts = [node.lineno - 1 for node in ast.parse(source).body]
    if not starts:
        return []
    starts[0] = 0
    return ["".join(lines[a:b]) for a, b in zip(starts, starts[1:] + [len(lines)])]
