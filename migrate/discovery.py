"""Which files a run looks at: the given files as they are, directories
walked recursively for Python sources and notebooks, honouring what git
ignores (pathspec's patterns; the .gitignore files from the walked folder
up to its repository's top, each relative to its folder, deeper files
first, then the repository's info/exclude and the user's core.excludesFile)
and --exclude globs, never following a symlink out of the given roots or
around a loop (a warning, not an error: the files around it are still
processed). A file is named relative to the working directory when it is
below it, else by its absolute path, whatever spelling its root was given in."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, List, Optional, Sequence, Tuple


SUFFIXES = (".py", ".ipynb")
ALWAYS_SKIPPED = {".git", ".hg", ".svn", "__pycache__", ".tox", ".nox", ".venv", ".mypy_cache",
                  ".pytest_cache", ".hypothesis"}


@dataclass(eq=False, repr=False)
class Discovery:
    files: List[Path] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)  # one-line reasons, a path each
    warnings: List[str] = field(default_factory=list)  # symlinks not followed, a path each


def discover(paths: Sequence[Path], exclude: Iterable[str] = (),
             exclude_of: Optional[Callable[[Path], List[str]]] = None) -> Discovery:
    """Every file to process under ``paths``, sorted per root, no duplicates;
    a walked root skips ``exclude`` and what ``exclude_of`` gives for it (the
    globs of the config that applies there)."""
    found = Discovery()
    exclude = list(exclude)
    seen = set()
    for root in paths:
        shown = str(_shown(root))
        if not root.exists() and not root.is_symlink():
            found.problems.append(f"{shown}: no such file or directory")
            continue
        real_root = _real(root)
        if real_root is None:
            found.problems.append(f"{shown}: symlink loop, not followed")
            continue
        cut = _cut(real_root)

        def show(path: Path) -> Path:  # a path below real_root as output names it
            return Path(shown) if path == real_root else Path(shown, str(path)[cut:])

        if root.is_file():
            candidates: Iterable[Tuple[Path, Path]] = [(real_root, real_root)]
        else:
            excluded = _rules(exclude + (exclude_of(root) if exclude_of else []))
            candidates = _walk(real_root, excluded, found, show)
        for path, key in candidates:
            if key not in seen:
                seen.add(key)
                found.files.append(show(path))
    return found


def _shown(path: Path) -> Path:
    """How output names ``path``: relative to the working directory when it
    is below it (as Ruff does), else absolute (never ``..``: a diff header
    must not climb out of the tree it is applied in)."""
    absolute = os.path.abspath(path)
    cwd = os.getcwd()
    if _inside(Path(absolute), Path(cwd)):
        return Path(os.path.relpath(absolute, cwd))
    return Path(absolute)


def _walk(root: Path, excluded: List[_Rule], found: Discovery,
          show: Callable[[Path], Path]) -> Iterator[Tuple[Path, Path]]:
    """(path, real path) of each file under ``root``, directory by directory
    in sorted order, files before subdirectories (as ``os.walk`` top-down).
    Only a symlink is resolved: a plain entry's real path is its parent's
    plus its name, which keeps a large tree cheap to walk. Each folder
    carries the .gitignore rules of the folders above it. Problems and
    warnings go into ``found``, naming paths as ``show`` does."""
    problems, warnings = found.problems, found.warnings
    repository = _Repository.around(root)
    first = [(_cut(d), rules) for d, rules in repository.gitignores_above(root)]
    visited = set()
    stack = [(root, root, first)]
    while stack:
        here, real, above = stack.pop()
        if real in visited or not _inside(real, root):
            warnings.append(f"{show(here)}: symlink loop, not followed" if real in visited
                            else f"{show(here)}: symlink out of {show(root)}, not followed")
            continue
        visited.add(real)
        try:
            with os.scandir(here) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as err:
            problems.append(f"{show(here)}: cannot list ({err.strerror})")
            continue
        if any(entry.name == ".gitignore" and entry.is_file() for entry in entries):
            own = _read_gitignore(here, problems, show)
            above = [(_cut(here), own)] + above if own else above
        chain = ([(_cut(root), excluded)] if excluded else []) + above + \
            [(_cut(repository.top), rules) for rules in repository.below_gitignores if rules]
        subdirectories = []
        for entry in entries:
            path = here / entry.name
            if _is_dir(entry):
                if entry.name in ALWAYS_SKIPPED or (chain and _ignored(str(path), True, chain)):
                    continue
                target = _real(path) if entry.is_symlink() else real / entry.name
                if target is None:
                    warnings.append(f"{show(path)}: symlink loop, not followed")
                else:
                    subdirectories.append((path, target, above))
                continue
            if not entry.name.endswith(SUFFIXES) or (chain and _ignored(str(path), False, chain)):
                continue
            target = _real(path) if entry.is_symlink() else real / entry.name
            if target is None:
                warnings.append(f"{show(path)}: symlink loop, not followed")
            elif not _inside(target, root):
                warnings.append(f"{show(path)}: symlink out of {show(root)}, not followed")
            else:
                yield path, target
        stack.extend(reversed(subdirectories))


def _is_dir(entry: os.DirEntry) -> bool:
    """A directory, or a symlink to one (followed, then checked against the root)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _read_gitignore(here: Path, problems: List[str], show: Callable[[Path], Path]) -> List[_Rule]:
    """``here/.gitignore``'s rules (none when it cannot be read: a problem)."""
    gitignore = here / ".gitignore"
    try:
        lines = gitignore.read_text(errors="replace").splitlines()
    except OSError as err:
        problems.append(f"{show(gitignore)}: cannot read ({err.strerror})")
        return []
    return _rules(lines)


@dataclass(eq=False, repr=False)
class _Repository:
    """The git work tree a walked folder lies in: its top, and the ignore
    rules git applies below every .gitignore file (info/exclude, then the
    user's core.excludesFile), both relative to the top. Outside a work
    tree the top is the walked folder and there are no such rules."""

    top: Path
    below_gitignores: List[List[_Rule]] = field(default_factory=list)

    @classmethod
    def around(cls, root: Path) -> "_Repository":
        top = next((d for d in (root, *root.parents) if (d / ".git").exists()), None)
        if top is None:
            return cls(root)
        files = [_common_git_dir(top / ".git") / "info" / "exclude", _global_excludes_file(top)]
        return cls(top, [_rules(_lines(f)) for f in files if f is not None])

    def gitignores_above(self, root: Path) -> List[Tuple[Path, List[_Rule]]]:
        """(folder, rules) of the .gitignore files with rules from ``root``'s
        parent up to the top, deepest first."""
        folders = [d for d in root.parents if d == self.top or self.top in d.parents]
        found = [(d, _rules(_lines(d / ".gitignore"))) for d in folders if (d / ".gitignore").is_file()]
        return [(d, rules) for d, rules in found if rules]


def _common_git_dir(dot_git: Path) -> Path:
    """The folder holding info/exclude: ``.git`` itself, or for a linked
    work tree (``.git`` is a file ``gitdir: ...``) its main repository's."""
    if dot_git.is_dir():
        return dot_git
    text = "".join(_lines(dot_git))
    if not text.startswith("gitdir:"):
        return dot_git
    git_dir = (dot_git.parent / text[len("gitdir:"):].strip()).resolve()
    common = "".join(_lines(git_dir / "commondir")).strip()
    return (git_dir / common).resolve() if common else git_dir


def _global_excludes_file(top: Path) -> Optional[Path]:
    """core.excludesFile as git resolves it (set, or its XDG default)."""
    if shutil.which("git"):
        try:
            done = subprocess.run(["git", "config", "--path", "--get", "core.excludesFile"],
                                  cwd=top, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            done = None
        if done is not None and done.returncode == 0:
            value = done.stdout.strip()
            return Path(value) if value else None
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(config) / "git" / "ignore"


def _lines(path: Path) -> List[str]:
    """A small git file's lines; none when it is missing or unreadable (as git)."""
    try:
        return path.read_text(errors="replace").splitlines()
    except OSError:
        return []


def _real(path: Path) -> Optional[Path]:
    """``path`` with every symlink resolved; None for a symlink loop."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):  # RuntimeError: pathlib's "Symlink loop" before 3.13
        return None


def _inside(path: Path, root: Path) -> bool:
    """``path`` is ``root`` or below it (both resolved; compared as text,
    which a walk of thousands of files can afford and ``Path.parents`` not)."""
    inner, outer = str(path), str(root)
    return inner == outer or inner.startswith(outer if outer.endswith(os.sep) else outer + os.sep)


@dataclass(eq=False, repr=False)
class _Rule:
    """One line of a .gitignore file (or one --exclude), applied as git does:
    to the path itself, never to a folder above it (the walk decided those
    when it entered them), and only to folders when it ends with a slash."""

    ignores: bool  # False: a ``!`` negation
    folders_only: bool
    regex: re.Pattern


def _rules(lines: List[str]) -> List[_Rule]:
    """The rules of ignore-file ``lines``, last line first (the last match wins)."""
    if not lines:
        return []
    import pathspec  # only ignore rules need it (~50 ms to import)

    rules = []
    for line in lines:
        text = line if line.endswith("\\ ") else line.rstrip()
        folders_only = text.endswith("/") and not text.startswith("#")
        try:  # `gen/` is `gen` matching only folders
            [pattern] = pathspec.GitIgnoreSpec.from_lines([text[:-1] if folders_only else text]).patterns
        except ValueError:
            continue  # not a pattern (`!`, a lone backslash): git skips the line too
        if pattern.include is not None:
            rules.append(_Rule(pattern.include, folders_only, _itself(pattern.regex)))
    return rules[::-1]


def _itself(regex: re.Pattern) -> re.Pattern:
    """pathspec's regex for a line also matches every path inside a folder
    the line matches, through its one named group (that folder's slash);
    this one refuses such a match, so it matches a path only by itself."""
    if not regex.groupindex:
        return regex
    [mark] = regex.groupindex
    return re.compile(f"(?:{regex.pattern})(?({mark})(?!))")


def _cut(folder: Path) -> int:
    """How many characters of a path below ``folder`` make it relative to it."""
    text = str(folder)
    return len(text) if text.endswith(os.sep) else len(text) + 1


def _ignored(path: str, is_dir: bool, chain: List[Tuple[int, List[_Rule]]]) -> bool:
    """As git decides: --exclude first (as git's command-line patterns),
    then the .gitignore files from the path's own folder up to the
    repository's top, then info/exclude and core.excludesFile: ``chain``,
    each with the length of its folder's prefix (``_cut``). The first with
    a line matching the path decides. A path in an ignored folder is never
    asked about: the walk does not enter it, so no negation can bring it
    back (git's rule)."""
    for cut, rules in chain:
        verdict = _verdict(rules, path[cut:].replace(os.sep, "/"), is_dir)
        if verdict is not None:
            return verdict
    return False


def _verdict(rules: List[_Rule], relative: str, is_dir: bool) -> Optional[bool]:
    """True (ignored) or False (re-included) by the first of ``rules`` that
    matches ``relative``; None when none does."""
    for rule in rules:
        if (is_dir or not rule.folders_only) and rule.regex.search(relative):
            return rule.ignores
    return None
