"""``[tool.tf-migrate]`` from the nearest pyproject.toml; command-line flags win."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import List, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9/3.10
    import tomli as tomllib

KEYS = {"select", "ignore", "exclude", "unsafe-fixes", "target-index"}


class ConfigError(ValueError):
    """A pyproject.toml that cannot be used; the message names file and reason."""


@dataclass(frozen=True)
class Config:
    select: Optional[List[str]] = None
    ignore: List[str] = field(default_factory=list)
    exclude: List[str] = field(default_factory=list)
    unsafe_fixes: bool = False
    target_index: Optional[int] = None  # None: scalar-target picks (an index in scope, else 0)
    source: Optional[Path] = None

    def merged(self, **flags) -> "Config":
        """Flags given on the command line (not None) override the file."""
        return replace(self, **{k: v for k, v in flags.items() if v is not None})


def find_pyproject(start: Path) -> Optional[Path]:
    here = start.resolve()
    here = here if here.is_dir() else here.parent
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load(start: Path) -> Config:
    """The config that applies at ``start`` (a file or directory)."""
    path = find_pyproject(start)
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ConfigError(f"{path}: cannot read config ({err})") from None
    table = data.get("tool", {}).get("tf-migrate", {})
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
