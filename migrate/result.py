"""What the engine returns: values, never exceptions (cf. LibCST's
TransformSuccess / TransformFailure / TransformSkip)."""

from __future__ import annotations

import enum
import re
from dataclasses import asdict, dataclass, field
from typing import List, Optional, Tuple


class Status(str, enum.Enum):
    UNCHANGED = "unchanged"
    CHANGED = "changed"
    SKIPPED = "skipped"  # could not be processed as Python (parse, encoding)
    FAILED = "failed"  # a recipe crashed or produced broken code


@dataclass(frozen=True)
class Edit:
    """Replace [line:column, end_line:end_column) of the input (1-based,
    end exclusive) by ``replacement``."""

    line: int
    column: int
    end_line: int
    end_column: int
    replacement: str


@dataclass
class Diagnostic:
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    recipe: str
    message: str
    safety: str
    fixable: bool
    applied: bool
    fix: Optional[List[Edit]] = None
    # recipes whose fixes must be applied before this finding appears (a
    # follow-on of the fixpoint); None for a finding of the text as given
    after: Optional[List[str]] = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class SourceResult:
    """The engine's answer for one source text."""

    path: str
    status: Status
    source: str
    output: str
    diagnostics: List[Diagnostic] = field(default_factory=list)
    reason: Optional[str] = None  # why skipped / failed
    errors: List[str] = field(default_factory=list)  # recipe crashes, discarded rewrites

    @property
    def changed(self) -> bool:
        return self.output != self.source

    @property
    def pending(self) -> List[Diagnostic]:
        """Findings the run did not fix (unsafe without --unsafe-fixes, report-only)."""
        return [d for d in self.diagnostics if not d.applied]


def cell_label(notebook: str, cell: int) -> str:
    """The path a finding in a notebook's cell carries: ``nb.ipynb:cell 3``."""
    return f"{notebook}:cell {cell}"


def split_label(path: str) -> Tuple[str, Optional[int]]:
    """``nb.ipynb:cell 3`` -> ("nb.ipynb", 3); any other path -> (path, None)."""
    match = re.match(r"^(.*\.ipynb):cell (\d+)$", path)
    return (match.group(1), int(match.group(2))) if match else (path, None)
