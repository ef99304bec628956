"""``[tool.tf-migrate]`` as Ruff finds its settings: each file gets the
nearest pyproject.toml above it that has the table (one without it is
passed over), unless ``--config FILE`` names the file or ``--isolated``
reads none; command-line flags win over the file."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Optional

KEYS = {"select", "ignore", "exclude", "unsafe-fixes", "target-index"}


class ConfigError(ValueError):
    """A pyproject.toml that cannot be used; the message names file and reason."""


@dataclass(eq=False, repr=False)
class Config:
    select: Optional[List[str]] = None
    ignore: List[str] = field(default_factory=list)
    exclude: List[str] = field(default_factory=list)
    unsafe_fixes: bool = False
    target_index: Optional[int] = None  # None: scalar-target picks (an index in scope, else 0)
    source: Optional[Path] = None

    def merged(self, **flags) -> "Config":
        """Flags given on the command line (not None) override the file; a
        ``select`` flag also takes the ids it names out of the file's ignore."""
        given = {k: v for k, v in flags.items() if v is not None}
        if "select" in given and "ignore" not in given:
            given["ignore"] = [i for i in self.ignore if i not in given["select"]]
        return replace(self, **given)


class Lookup:
    """The config of each file of one run, each pyproject.toml read once:
    the nearest one above the file with the table (going up its absolute
    path as spelt, symlinks not resolved), ``explicit`` (``--config``) for
    every file, or none (``isolated``). A long-lived caller (the
    language server) makes a new one per request, so edits are seen."""

    def __init__(self, explicit: Optional[Path] = None, isolated: bool = False) -> None:
        self.explicit = load_file(explicit) if explicit is not None else None
        self.isolated = isolated
        self._folders: Dict[Path, Config] = {}

    def at(self, start: Path) -> Config:
        """The config that applies at ``start`` (a file or directory)."""
        absolute = Path(os.path.abspath(start))
        return self._of(absolute if absolute.is_dir() else absolute.parent)

    def of_file(self, path: Path) -> Config:
        """The config of a file (known not to be a folder: no stat)."""
        return self._of(Path(os.path.abspath(path.parent)))

    def _of(self, folder: Path) -> Config:
        if self.explicit is not None:
            return self.explicit
        return Config() if self.isolated else self._of_folder(folder)

    def _of_folder(self, folder: Path) -> Config:
        if folder not in self._folders:
            candidate = folder / "pyproject.toml"
            table = _table(_toml(candidate), "tool", "tf-migrate") if candidate.is_file() else None
            self._folders[folder] = (_config(candidate, table) if table is not None
                                     else Config() if folder.parent == folder
                                     else self._of_folder(folder.parent))
        return self._folders[folder]


def load(start: Path) -> Config:
    """The config that applies at ``start`` (a file or directory)."""
    return Lookup().at(start)


def load_file(path: Path) -> Config:
    """``--config FILE``: its ``[tool.tf-migrate]`` table, or (a file of
    tf-migrate's settings only) its top-level keys."""
    if not path.is_file():
        raise ConfigError(f"{path}: --config file not found")
    data = _toml(path)
    table = _table(data, "tool", "tf-migrate")
    return _config(path, data if table is None else table)


def _toml(path: Path) -> dict:
    """The TOML file's data; its parser is loaded here, when a pyproject.toml
    is found (a file outside any project never needs it)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.9/3.10
        import tomli as tomllib
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ConfigError(f"{path}: cannot read config ({err})") from None


def _table(data: dict, *keys: str) -> Optional[dict]:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else None


def _config(path: Path, table: dict) -> Config:
    where = f"{path}: [tool.tf-migrate]"
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise ConfigError(f"{where} unknown key(s): {', '.join(unknown)} "
                          f"(known: {', '.join(sorted(KEYS))})")
    return Config(
        select=_strings(table, "select", where) if "select" in table else None,
        ignore=_strings(table, "ignore", where),
        exclude=_strings(table, "exclude", where),
        unsafe_fixes=_typed(table, "unsafe-fixes", bool, False, "true or false", where),
        target_index=(_typed(table, "target-index", int, 0, "an integer", where)
                      if "target-index" in table else None),
        source=path,
    )


def _strings(table: dict, key: str, where: str) -> List[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} {key} must be a list of strings, not {value!r}")
    return value


def _typed(table: dict, key: str, kind: type, default, expected: str, where: str):
    value = table.get(key, default)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ConfigError(f"{where} {key} must be {expected}, not {value!r}")
    return value
