"""The `tf-migrate verify` command and the `fix --verify` step (registered by
migrate/cli.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import typer
from rich.console import Console

from migrate.cache import default_dir
from migrate.result import Diagnostic

# the runner's own modules are imported when a command runs, not when the
# CLI starts (a warm `check` never runs them)

err = Console(stderr=True, highlight=False, soft_wrap=True)


def verify_command(
    paths: List[Path] = typer.Argument(..., metavar="PATH", show_default=False, hidden=True),
    tf: str = typer.Option(
        "current", "--tf", metavar="2.3|current|all",
        help="'current': this interpreter's TensorFlow with tf-keras (Keras 2). '2.3': the real "
             "TF 2.3 in a cached Python 3.8/3.7 environment, built on first use. 'all': TF 2.3, "
             "current + tf-keras and current + Keras 3, one column each."),
    timeout: float = typer.Option(120.0, metavar="SECONDS", help="Seconds per program (TF import not counted)."),
    keras: str = typer.Option(
        "2", metavar="2|3", help="'2': tf-keras, TF 2.3's tf.keras (TF_USE_LEGACY_KERAS=1). "
                  "'3': run under Keras 3 as well."),
    python: Optional[Path] = typer.Option(
        None, metavar="PYTHON", help="--tf current: the interpreter of the TensorFlow children. --tf 2.3/all: the "
                   "Python 3.8/3.7 to build the TF 2.3 environment from, or one that has TF 2.3."),
    refresh: bool = typer.Option(False, "--refresh", help="Rebuild the cached TF 2.3 environment."),
    cache_dir: Optional[Path] = typer.Option(
        None, "--cache-dir", metavar="DIR",
        help="Cache folder; the TF 2.3 environment lives in its envs/ "
             "(default: $XDG_CACHE_HOME/tf-migrate or ~/.cache/tf-migrate)."),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, metavar="N",
                             help="Workers per runtime running programs side by side."),
    api: Optional[str] = typer.Option(
        None, metavar="VERSION", help="Also check every tf.* name against this TF version's API (e.g. 2.3)."),
    format: str = typer.Option("text", "--format", metavar="[text|json]", help="text or json."),
    seed: int = typer.Option(0, metavar="N", help="Seed for Python, NumPy and TensorFlow."),
) -> None:
    """Run programs in TensorFlow subprocesses and check that they train:
    gradients, graph mode, loss going down, attribution completeness, before/after
    equivalence, and every tape.gradient call that returned None (any script).
    Exit 0: all as expected; 1: a program is not; 2: a runtime or a path is unusable.

    PATH: fixtures, fixture directories or any scripts."""
    if format not in ("text", "json"):
        raise typer.BadParameter("use text or json", param_hint="--format")
    if keras not in ("2", "3"):
        raise typer.BadParameter("use 2 or 3", param_hint="--keras")
    from . import runtimes
    from .render import render, to_json
    from .verification import VerifyOptions, verify

    try:
        chosen = runtimes.select(tf, keras, str(python) if python else None,
                                 cache_dir or default_dir(), refresh, err)
        options = VerifyOptions(timeout=timeout, runtimes=chosen, api=api, seed=seed, jobs=jobs)
    except runtimes.Unavailable as error:
        err.print(f"tf-migrate: {error}", markup=False)
        raise typer.Exit(2) from None
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    report = verify(paths, options)
    for warning in report.warnings:  # as check prints them
        err.print(f"warning: {warning}", markup=False, highlight=False)
    if format == "json":
        typer.echo(to_json(report))
    else:
        render(report, _console(sys.stdout))
    raise typer.Exit(2 if report.problems else 0 if report.ok else 1)


def _console(stream) -> Console:
    # a log (CI) has no terminal width; keep the table readable there
    return Console(file=stream, highlight=False, soft_wrap=True,
                   width=None if stream.isatty() else 140)


def verify_written(files: Sequence[Tuple[Path, str, Sequence[Diagnostic]]], console: Console,
                   cache_dir: Path) -> int:
    """For `fix --verify`: (path rewritten in place, its original text, the
    findings left unfixed in it), run and shown side by side under the real
    TF 2.3 when its environment is cached, else the current TF with tf-keras.
    0 when every rewrite passes, 1 when one fails, 2 when no runtime can run."""
    files = [entry for entry in files if Path(entry[0]).suffix == ".py"]
    if not files:
        return 0
    from . import runtimes
    from .render import render
    from .unfixed import unfixed_on_failures
    from .verification import VerifyOptions, verify_fixed

    runtime = runtimes.tf23_if_ready(cache_dir)
    try:
        if runtime is None:
            runtime = runtimes.checked(runtimes.current())
            console.print("tf-migrate: verified with the current TensorFlow and tf-keras: no TF 2.3 "
                          f"environment in {cache_dir / 'envs'} (`tf-migrate verify --tf 2.3` "
                          "creates it)", markup=False)
        else:
            runtimes.checked(runtime)
    except runtimes.Unavailable as error:
        err.print(f"tf-migrate: --verify: {error}", markup=False)
        return 2
    report = verify_fixed([(path, text) for path, text, _ in files],
                          VerifyOptions(api="2.3", runtimes=(runtime,)))
    render(report, console)
    pending = {str(path): (text, list(diagnostics)) for path, text, diagnostics in files}
    for line in unfixed_on_failures(report, pending):
        console.print(line, markup=False)
    return 0 if report.ok else 1
