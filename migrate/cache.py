"""A content-addressed cache of engine results, so re-checking an unchanged
tree costs a hash and a small read per file instead of a parse.

The key covers everything the result depends on: the file's bytes and path,
the enabled recipes (ids, order, and the source of every module that defines
or helps them, so editing a recipe invalidates), the run's options, and the
versions of the tool, fissix, Bowler and Python. A result is a pure function
of that key, so CHANGED results are cached too: the cache replaces only the
engine call, never the write (`batch` writes whatever result it has, cached
or fresh). FAILED results are not cached (a crash may be transient, e.g.
memory). Entries are JSON (never pickle: a cache directory must not be a way
to run code), written atomically but not fsynced; an unreadable or corrupt
entry (e.g. one emptied by a power cut) is a miss.

Most files of a tree are clean (unchanged, no finding) and their results
are all alike, so their keys go to one list per run key instead of a file
each: one line per key, added by one small O_APPEND write (concurrent runs
do not interleave it). Creating 586 entry files cost a cold run of tf_keras
~0.3 s of system time, and a warm run now reads one list instead of 586
files. A line cut short by a crash is not a key: it matches nothing.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Iterable, Optional, Set

from . import __version__
from .options import Options
from .files import atomic_write
from .result import Diagnostic, Edit, SourceResult, Status

FORMAT = 2
CACHED = (Status.UNCHANGED, Status.CHANGED, Status.SKIPPED)


def default_dir() -> Path:
    """``$XDG_CACHE_HOME/tf-migrate``, else ``~/.cache/tf-migrate``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tf-migrate"


class Cache:
    """Engine results by content hash under ``directory``; never raises on I/O."""

    def __init__(self, directory: Path, options: Options) -> None:
        self.directory = Path(directory) / f"v{FORMAT}"
        self.run_key = _run_key(options)
        run = _sha256(self.run_key.encode()).hexdigest()[:16]
        self.clean_list = self.directory / f"clean-{run}.keys"
        self._clean: Optional[Set[str]] = None  # read on first use
        self.hits = 0
        self.misses = 0

    def key(self, path: Path, raw: bytes) -> str:
        digest = _sha256(self.run_key.encode())
        digest.update(str(path).encode("utf-8", "surrogateescape") + b"\0")
        digest.update(raw)
        return digest.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key[2:]}.json"

    def get(self, path: Path, raw: bytes, source: str) -> Optional[SourceResult]:
        """The stored result for this exact input, or None (missing or corrupt)."""
        key = self.key(path, raw)
        if key in self._clean_keys():
            self.hits += 1
            return SourceResult(str(path), Status.UNCHANGED, source, source)
        try:
            data = json.loads(self._entry(key).read_text(encoding="utf-8"))
            result = _result_from(data, str(path), source)
        except (OSError, ValueError, KeyError, TypeError):
            self.misses += 1
            return None
        self.hits += 1
        return result

    def put(self, path: Path, raw: bytes, result: SourceResult) -> None:
        """Store ``result`` atomically; silently does nothing when it cannot."""
        if result.status not in CACHED:
            return
        key = self.key(path, raw)
        if _clean(result):
            self._add_clean(key)
            return
        entry = self._entry(key)
        data = json.dumps(_result_to(result), separators=(",", ":")).encode("utf-8")
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            # not durable: an entry cut short by a power cut is not JSON, hence a miss,
            # while an fsync per entry made a cold run of 586 files 4 s slower
            atomic_write(entry, data, durable=False)
        except OSError:
            pass

    def _clean_keys(self) -> Set[str]:
        if self._clean is None:
            try:
                # a line cut short by a crash (or two such merged) is no key: it never matches
                self._clean = set(self.clean_list.read_text(encoding="ascii", errors="replace").split("\n"))
            except OSError:
                self._clean = set()
        return self._clean

    def _add_clean(self, key: str) -> None:
        try:
            self.clean_list.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.clean_list, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, f"{key}\n".encode("ascii"))
            finally:
                os.close(fd)
        except OSError:
            pass


def _clean(result: SourceResult) -> bool:
    """Unchanged with nothing to say: every such result is alike."""
    return (result.status is Status.UNCHANGED and result.output == result.source
            and not result.diagnostics and not result.reason and not result.errors)


def _result_to(result: SourceResult) -> dict:
    return {
        "status": result.status.value,
        "output": None if result.output == result.source else result.output,
        "diagnostics": [asdict(d) for d in result.diagnostics],
        "reason": result.reason,
        "errors": list(result.errors),
    }


def _result_from(data: dict, path: str, source: str) -> SourceResult:
    diagnostics = []
    for raw in data["diagnostics"]:
        fix = raw.pop("fix")
        raw["path"] = path
        diagnostics.append(Diagnostic(**raw, fix=None if fix is None else [Edit(**e) for e in fix]))
    output = data["output"]
    if output is not None and not isinstance(output, str):
        raise TypeError("output is not text")
    return SourceResult(path, Status(data["status"]), source, source if output is None else output,
                        diagnostics, data["reason"], list(data["errors"]))


def _run_key(options: Options) -> str:
    """Everything but the file that a result depends on, as one string."""
    parts = [
        f"format={FORMAT}",
        f"tf-migrate={__version__}",
        f"fissix={_version('fissix')}",
        f"bowler={_version('bowler')}",
        f"python={sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}",
        f"recipes={','.join(r.id for r in options.recipes)}",
        f"unsafe={options.unsafe_fixes} apply={options.apply} isolated={options.isolated}",
        f"options={sorted((k, repr(v)) for k, v in options.recipe_options)!r}",
        f"only={None if options.only is None else sorted(options.only)!r}",
    ]
    for source in sorted(_code_files(options)):
        parts.append(f"{source}={_file_hash(source)}")
    return "\n".join(parts)


def _code_files(options: Options) -> Iterable[str]:
    """Source files whose edit can change a result: every module of this
    package (the engine and what it calls: incremental passes,
    edits...), every module of the recipes package and its helper
    subpackages (the semantic model too) and each recipe's own module."""
    files = {str(p) for p in Path(__file__).resolve().parent.glob("*.py")}
    recipes_pkg = sys.modules.get("recipes")
    for folder in getattr(recipes_pkg, "__path__", []):
        files.update(str(p) for p in Path(folder).rglob("*.py"))
    for recipe in options.recipes:
        module = sys.modules.get(getattr(recipe.query, "__module__", ""))
        if getattr(module, "__file__", None):
            files.add(str(Path(module.__file__).resolve()))
    return files


def _file_hash(path: str) -> str:
    try:
        return _sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def _sha256(data: bytes):
    """hashlib's sha256, imported when a cache is used (OpenSSL's bindings are
    a noticeable part of a `check --no-cache` start-up)."""
    import hashlib

    return hashlib.sha256(data)


def _version(dist: str) -> str:
    """``dist``'s version from the name of the ``.dist-info`` folder beside
    its package, found without importing it; importlib.metadata (~15 ms to
    import, a scan of sys.path) only when that folder is not there."""
    spec = importlib.util.find_spec(dist)
    if spec is not None and spec.origin:
        for info in sorted(Path(spec.origin).parent.parent.glob(f"{dist}-*.dist-info")):
            return info.name[len(dist) + 1:-len(".dist-info")]
    from importlib import metadata
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"
