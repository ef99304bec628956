"""Which files a run looks at: the given files as they are, directories
walked recursively for Python sources and notebooks, honouring .gitignore
files as git does (pathspec's patterns, each file relative to its folder,
deeper files first) and --exclude globs, never following a symlink out of
the given roots or around a loop."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import pathspec

SUFFIXES = (".py", ".ipynb")
ALWAYS_SKIPPED = {".git", ".hg", ".svn", "__pycache__", ".tox", ".nox", ".venv", ".mypy_cache",
                  ".pytest_cache", ".hypothesis"}


@dataclass
class Discovery:
    files: List[Path] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)  # one-line reasons, a path each


def discover(paths: Sequence[Path], exclude: Iterable[str] = ()) -> Discovery:
    """Every file to process under ``paths``, sorted per root, no duplicates."""
    found = Discovery()
    excluded = pathspec.GitIgnoreSpec.from_lines(list(exclude))
    seen = set()
    for root in paths:
        if not root.exists() and not root.is_symlink():
            found.problems.append(f"{root}: no such file or directory")
            continue
        real_root = _real(root)
        if real_root is None:
            found.problems.append(f"{root}: symlink loop, not followed")
            continue
        if root.is_file():
            candidates: Iterable[Tuple[Path, Path]] = [(root, real_root)]
        else:
            candidates = _walk(real_root, excluded, found.problems)
        for path, key in candidates:
            if key not in seen:
                seen.add(key)
                found.files.append(path)
    return found


def _walk(root: Path, excluded: pathspec.GitIgnoreSpec,
          problems: List[str]) -> Iterator[Tuple[Path, Path]]:
    """(path, real path) of each file under ``root``, directory by directory
    in sorted order, files before subdirectories (as ``os.walk`` top-down).
    Only a symlink is resolved: a plain entry's real path is its parent's
    plus its name, which keeps a large tree cheap to walk."""
    ignores: Dict[Path, pathspec.GitIgnoreSpec] = {}
    visited = set()
    filtering = bool(excluded.patterns)
    stack = [(root, root)]
    while stack:
        here, real = stack.pop()
        if real in visited or not _inside(real, root):
            problems.append(f"{here}: symlink loop, not followed" if real in visited
                            else f"{here}: symlink out of {root}, not followed")
            continue
        visited.add(real)
        try:
            with os.scandir(here) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as err:
            problems.append(f"{err.filename}: cannot list ({err.strerror})")
            continue
        if any(entry.name == ".gitignore" and entry.is_file() for entry in entries):
            filtering = _read_gitignore(here, ignores, problems) or filtering
        subdirectories = []
        for entry in entries:
            path = here / entry.name
            if _is_dir(entry):
                if entry.name in ALWAYS_SKIPPED or (
                        filtering and _ignored(path, True, root, excluded, ignores)):
                    continue
                target = _real(path) if entry.is_symlink() else real / entry.name
                if target is None:
                    problems.append(f"{path}: symlink loop, not followed")
                else:
                    subdirectories.append((path, target))
                continue
            if not entry.name.endswith(SUFFIXES) or (
                    filtering and _ignored(path, False, root, excluded, ignores)):
                continue
            target = _real(path) if entry.is_symlink() else real / entry.name
            if target is None:
                problems.append(f"{path}: symlink loop, not followed")
            elif not _inside(target, root):
                problems.append(f"{path}: symlink out of {root}, not followed")
            else:
                yield path, target
        stack.extend(reversed(subdirectories))


def _is_dir(entry: os.DirEntry) -> bool:
    """A directory, or a symlink to one (followed, then checked against the root)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _read_gitignore(here: Path, ignores: Dict[Path, pathspec.GitIgnoreSpec],
                    problems: List[str]) -> bool:
    """Add ``here/.gitignore``'s spec to ``ignores``; True when it has patterns."""
    gitignore = here / ".gitignore"
    try:
        lines = gitignore.read_text(errors="replace").splitlines()
    except OSError as err:
        problems.append(f"{gitignore}: cannot read ({err.strerror})")
        return False
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    ignores[here] = spec
    return bool(spec.patterns)


def _real(path: Path) -> Optional[Path]:
    """``path`` with every symlink resolved; None for a symlink loop."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):  # RuntimeError: pathlib's "Symlink loop" before 3.13
        return None


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _ignored(path: Path, is_dir: bool, root: Path, excluded: pathspec.GitIgnoreSpec,
             ignores: Dict[Path, pathspec.GitIgnoreSpec]) -> bool:
    """As git decides: --exclude first (as git's command-line patterns),
    then the .gitignore files from the path's own folder up to the root; the
    first of them with a line matching the path decides. A path in an
    ignored folder is never asked about: the walk does not enter it, so no
    negation can bring it back (git's rule)."""
    suffix = "/" if is_dir else ""
    verdict = _verdict(excluded, str(path.relative_to(root)) + suffix)
    for base in path.parents:
        if verdict is not None:
            break
        if base in ignores:
            verdict = _verdict(ignores[base], str(path.relative_to(base)) + suffix)
        if base == root:
            break
    return bool(verdict)


def _verdict(spec: pathspec.GitIgnoreSpec, relative: str) -> Optional[bool]:
    """The last line of one ignore file that matches ``relative`` itself:
    True (ignored), False (a ``!`` negation), None (no line matches).

    Not ``spec.check_file``: that also counts a line matching a folder above
    the path, and ranks folder lines below file lines, which is right for a
    whole path but not here, where every folder above was already decided
    (and found not ignored) when the walk entered it."""
    if spec.check_file(relative).include is None:
        return None  # no line matches at all: the common case, in one match
    for pattern in reversed(spec.patterns):
        found = pattern.match_file(relative) if pattern.include is not None else None
        if found is not None and _matches_itself(found.match, relative):
            return pattern.include
    return None


def _matches_itself(match: re.Match, relative: str) -> bool:
    """False when a pattern matched only a folder above ``relative``: pathspec
    captures that folder's slash in a named group, and more follows it."""
    return all(match.end(group) in (-1, len(relative)) for group in match.groupdict())
