"""Splitting a run across machines: ``--shard K/N`` keeps a stable 1/N of
the discovered files, ``--files-from FILE`` takes the paths from a list.

A file's shard is a hash of its path relative to the root it was found
under (or of the path as given), so the partition does not depend on the
checkout directory, the file order, or on which other files exist: adding
a file never moves another one to a different shard.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import List, Sequence

from .discovery import Discovery

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class BadSelection(ValueError):
    """A --shard or --files-from value that cannot be used; the message says why."""


@dataclass(eq=False, repr=False)
class Shard:
    index: int  # 1-based
    count: int

    @classmethod
    def parse(cls, text: str) -> "Shard":
        match = _SHARD.match(text)
        if not match:
            raise BadSelection(f"--shard {text!r}: expected K/N, e.g. 1/4")
        index, count = int(match.group(1)), int(match.group(2))
        if not 1 <= index <= count:
            raise BadSelection(f"--shard {text!r}: K must be between 1 and N")
        return cls(index, count)

    def owns(self, name: str) -> bool:
        import hashlib  # only a sharded run needs it

        digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def select(self, found: Discovery, roots: Sequence[Path]) -> Discovery:
        """The files (and discovery problems and warnings, by their path) of this shard."""
        absolute = [Path(os.path.abspath(root)) for root in roots if root.is_dir()]

        def mine(path: Path) -> bool:
            return self.owns(stable_name(Path(os.path.abspath(path)), absolute))

        return Discovery(
            [path for path in found.files if mine(path)],
            [problem for problem in found.problems if mine(Path(problem.split(": ", 1)[0]))],
            [warning for warning in found.warnings if mine(Path(warning.split(": ", 1)[0]))],
        )


def stable_name(path: Path, roots: Sequence[Path]) -> str:
    """``path`` relative to the first of ``roots`` holding it, POSIX style."""
    for root in roots:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            continue
    return path.as_posix()


def read_file_list(source: str) -> List[Path]:
    """Paths from a file (``-``: stdin), one per line; blank lines and lines
    starting with ``#`` are skipped."""
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise BadSelection(f"--files-from {source}: cannot read ({err})") from None
    lines = (line.strip() for line in text.splitlines())
    return [Path(line) for line in lines if line and not line.startswith("#")]
