"""The fixture pairs under fixtures/<recipe>/, shared by every test that
parametrizes over them (one source of truth, as in Fixit's VALID/INVALID)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


@dataclass(frozen=True)
class Case:
    recipe: str
    name: str
    before: Path
    after: Optional[Path]  # None: a negative, must stay unchanged

    @property
    def id(self) -> str:
        return f"{self.recipe}/{self.name}"


def all_cases() -> List[Case]:
    cases = []
    for before in sorted(FIXTURES.glob("*/*.before.py")):
        name = before.name[: -len(".before.py")]
        after = before.with_name(f"{name}.after.py")
        cases.append(Case(before.parent.name, name, before, after if after.exists() else None))
    return cases
