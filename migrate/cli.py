"""The `tf-migrate` entry point. A plain `check` (paths and the options in
PLAIN, as an editor runs it on every save) runs migrate/commands.py
directly: Typer, click and rich cost more start-up than a clean file's
whole check. Any other command line, `--help` or a form this parser does
not know goes to the Typer app (migrate/app.py), which gives the same
output for the same arguments (tests/test_plain_check.py). ``app`` and the
app's other names are importable from here, as before."""

from __future__ import annotations

import errno
import gc
import os
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

# option -> (the field it sets, what it takes): "flag" True, "no" False,
# "value" one value (the last given wins), "list" repeatable; as the Typer
# check command declares them (migrate/app.py SHARED, check)
PLAIN: Dict[str, Tuple[str, str]] = {
    "--select": ("select", "list"), "--ignore": ("ignore", "list"), "--exclude": ("exclude", "list"),
    "--unsafe-fixes": ("unsafe_fixes", "flag"), "--no-unsafe-fixes": ("unsafe_fixes", "no"),
    "--stdin-filename": ("stdin_filename", "value"), "--config": ("config", "value"),
    "--isolated": ("isolated", "flag"), "--exit-zero": ("exit_zero", "flag"),
    "--quiet": ("quiet", "flag"), "-q": ("quiet", "flag"), "--output-file": ("output_file", "value"),
    "--no-cache": ("no_cache", "flag"), "--cache-dir": ("cache_dir", "value"),
    "--format": ("format", "value"), "--statistics": ("statistics", "flag"),
}
_PATHS = ("stdin_filename", "config", "output_file", "cache_dir")  # fields Typer gives as Path


def plain_check(argv: List[str]) -> Optional[dict]:
    """The options of ``argv`` when it is ``check`` followed by paths and
    PLAIN options only (``--name value`` or ``--name=value``), else None.
    A value that starts with '-' is left to Typer (click decides whether it
    is one)."""
    if not argv or argv[0] != "check":
        return None
    values: dict = {"paths": [], "format": "text"}
    rest = iter(argv[1:])
    for arg in rest:
        if arg == "-" or not arg.startswith("-"):
            values["paths"].append(Path(arg))
            continue
        name, eq, value = arg.partition("=")
        field, takes = PLAIN.get(name, (None, None))
        if field is None or (eq and takes not in ("value", "list")):
            return None
        if takes in ("flag", "no"):
            values[field] = takes == "flag"
            continue
        if not eq:
            value = next(rest, None)
        if value is None or value.startswith("-"):
            return None
        if field in _PATHS:
            value = Path(value)
        if takes == "list":
            values.setdefault(field, []).append(value)
        else:
            values[field] = value
    values["paths"] = values["paths"] or None
    return values


def main() -> None:
    """The process's command. Its objects are frozen out of the cyclic
    collector's sight as it ends: the collection at the interpreter's exit
    would traverse every one of them (2.4% of a seed-003 check) to free
    memory the exit frees anyway."""
    try:
        _command()
    finally:
        gc.freeze()


def _command() -> None:
    values = plain_check(sys.argv[1:])
    if values is None:
        from .app import app

        app()
        return
    from .commands import Shared, check

    format, statistics = values.pop("format"), values.pop("statistics", False)
    try:
        code = check(Shared(**values), format, False, False, statistics)
    except KeyboardInterrupt:  # as click reports it
        sys.stderr.write("\nAborted!\n")
        code = 1
    except OSError as error:  # a closed pipe, as click: exit 1, nothing more
        if error.errno != errno.EPIPE:
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at the exit's flush
        code = 1
    sys.exit(code)


def __getattr__(name: str):
    """The Typer app's names (``app``, ``SHARED``, ...), loaded on first use;
    not a module's own dunders (the import system asks for ``__path__``)."""
    if name.startswith("__"):
        raise AttributeError(name)
    from . import app

    return getattr(app, name)
