"""The `tf-migrate verify` command (registered by migrate/cli.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import typer
from rich.console import Console

from .render import render, to_json
from .verify import VerifyOptions, verify, verify_fixed


def verify_command(
    paths: List[Path] = typer.Argument(..., help="Fixtures, fixture directories or any scripts."),
    timeout: float = typer.Option(120.0, help="Seconds per program (TF import not counted)."),
    keras: str = typer.Option(
        "2", help="'2': tf-keras, TF 2.3's tf.keras (TF_USE_LEGACY_KERAS=1). "
                  "'3': run under Keras 3 as well."),
    python: Optional[Path] = typer.Option(
        None, help="Interpreter for the TensorFlow children (e.g. a Python 3.8 + TF 2.3 env)."),
    api: Optional[str] = typer.Option(
        None, help="Also check every tf.* name against this TF version's API (e.g. 2.3)."),
    format: str = typer.Option("text", "--format", help="text or json."),
    seed: int = typer.Option(0, help="Seed for Python, NumPy and TensorFlow."),
) -> None:
    """Run programs in TensorFlow subprocesses and check that they train:
    gradients, graph mode, loss going down, attribution completeness, before/after
    equivalence, and every tape.gradient call that returned None (any script)."""
    if format not in ("text", "json"):
        raise typer.BadParameter("use text or json", param_hint="--format")
    if keras not in ("2", "3"):
        raise typer.BadParameter("use 2 or 3", param_hint="--keras")
    try:
        options = VerifyOptions(timeout=timeout, keras=("2",) if keras == "2" else ("2", "3"),
                                python=str(python) if python else None, api=api, seed=seed)
    except ValueError as err:
        raise typer.BadParameter(str(err)) from None
    report = verify(paths, options)
    if format == "json":
        typer.echo(to_json(report))
    else:
        # a log (CI) has no terminal width; keep the table readable there
        width = None if sys.stdout.isatty() else 140
        render(report, Console(highlight=False, soft_wrap=True, width=width))
    raise typer.Exit(0 if report.ok else 1)


def verify_written(files: Sequence[Tuple[Path, str]], console: Console) -> bool:
    """For `fix --verify`: (path rewritten in place, its original text) pairs,
    run and shown side by side; True when every rewrite passes."""
    files = [(path, text) for path, text in files if Path(path).suffix == ".py"]
    if not files:
        return True
    report = verify_fixed(files)
    render(report, console)
    return report.ok
