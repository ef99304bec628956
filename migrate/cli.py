"""The `tf-migrate` command line: thin Typer commands over discovery, batch,
engine and output. Exit codes: 0 nothing to do, 1 findings or pending
changes (check, diff) or unfixed findings after `fix`, 2 usage error or a
file that could not be processed (after processing all the others)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, List, Optional

import typer
from rich.console import Console
from rich.table import Table

from . import batch, config, files, output, registry
from .cache import default_dir as default_cache_dir
from .discovery import discover
from .engine import Options, transform
from .result import Status
from .runner.command import verify_command, verify_written
from .shard import BadSelection, Shard, read_file_list

app = typer.Typer(
    name="tf-migrate",
    help="Find and fix TensorFlow 2.x code whose gradients silently come back None or wrong.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True, highlight=False, soft_wrap=True)
out = Console(highlight=False, soft_wrap=True)

SELECT = typer.Option(None, "--select", help="Only these recipe ids (comma-separated or repeated).")
IGNORE = typer.Option(None, "--ignore", help="Skip these recipe ids.")
EXCLUDE = typer.Option(None, "--exclude", help="Glob(s) of paths to skip (gitignore syntax).")
UNSAFE = typer.Option(None, "--unsafe-fixes/--no-unsafe-fixes", help="Also apply unsafe fixes.")
TARGET = typer.Option(None, "--target-index", help="Output index used by scalar-target (default: a class index in scope, else 0).")
STDIN_NAME = typer.Option(None, "--stdin-filename", help="Path the stdin buffer belongs to (config, messages).")
TARGETS = typer.Argument(None, show_default=False,
                         help="Files or directories; '-' reads source from stdin; none with --files-from.")
JOBS = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: one per core).")
SHARD = typer.Option(None, "--shard", metavar="K/N",
                     help="Only the K-th of N stable shards of the files (split a CI run).")
FILES_FROM = typer.Option(None, "--files-from", metavar="FILE",
                          help="Also process the paths listed in FILE, one per line ('-': stdin).")
NO_CACHE = typer.Option(False, "--no-cache", help="Neither read nor write the result cache.")
CACHE_DIR = typer.Option(None, "--cache-dir",
                         help="Result cache directory (default: $XDG_CACHE_HOME/tf-migrate or ~/.cache/tf-migrate).")


def _split(values: Optional[List[str]]) -> Optional[List[str]]:
    if not values:
        return None
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def _fail(message: str) -> "typer.Exit":
    err.print(f"tf-migrate: {message}", markup=False, highlight=False)
    return typer.Exit(2)


@dataclass
class Run:
    """What the command line and the config file together ask for."""

    paths: List[Path]
    conf: config.Config
    options: Options
    stdin_name: Optional[Path]
    scaling: batch.Scaling = batch.Scaling()

    @property
    def reads_stdin(self) -> bool:
        return [str(p) for p in self.paths] == ["-"]


def _scaling(jobs, shard, files_from, no_cache, cache_dir) -> batch.Scaling:
    try:
        parsed = Shard.parse(shard) if shard else None
    except BadSelection as error:
        raise _fail(str(error))
    return batch.Scaling(jobs or batch.default_jobs(), parsed, files_from,
                         None if no_cache else (cache_dir or default_cache_dir()))


def _prepare(paths: Optional[List[Path]], select, ignore, exclude, unsafe, target_index,
             stdin_filename, *, apply: bool = True, isolated: bool = False,
             scaling: batch.Scaling = batch.Scaling()) -> Run:
    try:
        paths = list(paths or []) + (read_file_list(scaling.files_from) if scaling.files_from else [])
    except BadSelection as error:
        raise _fail(str(error))
    if not paths:
        raise _fail("no paths given: pass files or directories, '-' for stdin, or --files-from FILE")
    if "-" in [str(p) for p in paths] and len(paths) > 1:
        raise _fail("'-' (stdin) cannot be combined with other paths")
    anchor = stdin_filename or (paths[0] if str(paths[0]) != "-" else Path.cwd())
    try:
        conf = config.load(anchor if anchor.exists() else anchor.parent if anchor.parent.exists() else Path.cwd())
        conf = conf.merged(select=_split(select), ignore=_split(ignore),
                           exclude=(conf.exclude + _split(exclude)) if exclude else None,
                           unsafe_fixes=unsafe, target_index=target_index)
        recipes = registry.resolve(conf.select, conf.ignore)
    except (config.ConfigError, registry.UnknownRecipe) as error:
        raise _fail(str(error))
    options = Options(tuple(recipes), unsafe_fixes=conf.unsafe_fixes, apply=apply,
                      isolated=isolated, recipe_options=(("target_index", conf.target_index),))
    return Run(paths, conf, options, stdin_filename, scaling)


def _outcomes(run: Run) -> Iterator[batch.Outcome]:
    found = discover(run.paths, run.conf.exclude)
    if run.scaling.shard:
        found = run.scaling.shard.select(found, run.paths)
    jobs, cache = run.scaling.jobs, run.scaling.cache(run.options)
    for problem in found.problems:
        yield batch.Outcome(Path(problem.split(":", 1)[0]), problem=problem)
    if not (err.is_terminal and len(found.files) > 1):
        yield from batch.run(found.files, run.options, jobs=jobs, cache=cache)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn  # a terminal only

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task("tf-migrate", total=len(found.files))
        yield from batch.run(found.files, run.options, lambda _: progress.advance(task),
                             jobs=jobs, cache=cache)


def _stdin_outcome(run: Run) -> batch.Outcome:
    name = run.stdin_name or Path("<stdin>")
    raw = sys.stdin.buffer.read()
    try:
        source = files.text_of(name, raw)
    except files.Unreadable as error:
        # keep the bytes (no text): `fix -` echoes them, so an editor filter never empties a buffer
        undecoded = files.SourceFile(name, raw, "", "", False, "\n", 0o644, 0)
        return batch.Outcome(name, source=undecoded, problem=str(error))
    if name.suffix == ".ipynb":
        from .notebook import transform_notebook

        result = transform_notebook(source.text, str(name), run.options)
    else:
        result = transform(source.text, str(name), run.options)
    outcome = batch.Outcome(name, result, source)
    if result.status in (Status.SKIPPED, Status.FAILED):
        outcome.problem = f"{name}: {result.reason}"
    return outcome


def _exit_code(outcomes: List[batch.Outcome], pending: bool) -> int:
    if any(o.failed for o in outcomes):
        return 2
    return 1 if pending else 0


@app.command()
def fix(
    paths: Optional[List[Path]] = TARGETS,
    select: Optional[List[str]] = SELECT,
    ignore: Optional[List[str]] = IGNORE,
    exclude: Optional[List[str]] = EXCLUDE,
    unsafe_fixes: Optional[bool] = UNSAFE,
    target_index: Optional[int] = TARGET,
    stdin_filename: Optional[Path] = STDIN_NAME,
    jobs: Optional[int] = JOBS,
    shard: Optional[str] = SHARD,
    files_from: Optional[str] = FILES_FROM,
    no_cache: bool = NO_CACHE,
    cache_dir: Optional[Path] = CACHE_DIR,
    interactive: bool = typer.Option(False, "--interactive", "-i",
                                     help="Review each change (y/n/a/d/r/q/?; answers from stdin)."),
    verify: bool = typer.Option(False, "--verify",
                                help="Then run each rewritten .py file and its original in TensorFlow "
                                     "(see `verify`); exit 1 if a rewrite fails."),
) -> None:
    """Rewrite files in place with the safe fixes (and unsafe ones with --unsafe-fixes)."""
    run = _prepare(paths, select, ignore, exclude, unsafe_fixes, target_index, stdin_filename,
                   scaling=_scaling(jobs, shard, files_from, no_cache, cache_dir))
    if interactive:
        if run.reads_stdin:
            raise _fail("--interactive reads answers from stdin, so it cannot read source from '-'")
        from .interactive import command

        raise typer.Exit(command(run.paths, run.conf.exclude, run.options, out, err))
    if run.reads_stdin:
        outcome = _stdin_outcome(run)
        text = outcome.result.output if outcome.result else None
        if outcome.source is not None:
            sys.stdout.buffer.write(outcome.source.encode(text) if text is not None else outcome.source.raw)
        _report_findings(err, [outcome], only_pending=True)
        if outcome.problem:
            err.print(f"error: {outcome.problem}", markup=False, highlight=False)
        raise typer.Exit(_exit_code([outcome], bool(outcome.result and outcome.result.pending)))
    summary, outcomes = batch.Summary(), []
    for outcome in _outcomes(run):
        batch.write(outcome)
        summary.add(outcome)
        outcomes.append(outcome)
    _report_findings(out, outcomes, only_pending=True)
    output.print_summary(err, summary, "fixed", summary.changed)
    pending = any(o.result and o.result.pending for o in outcomes)
    code = _exit_code(outcomes, pending)
    if verify and not verify_written([(o.path, o.result.source) for o in outcomes if o.written], out):
        code = max(code, 1)
    raise typer.Exit(code)


@app.command()
def diff(
    paths: Optional[List[Path]] = TARGETS,
    select: Optional[List[str]] = SELECT,
    ignore: Optional[List[str]] = IGNORE,
    exclude: Optional[List[str]] = EXCLUDE,
    unsafe_fixes: Optional[bool] = UNSAFE,
    target_index: Optional[int] = TARGET,
    stdin_filename: Optional[Path] = STDIN_NAME,
    jobs: Optional[int] = JOBS,
    shard: Optional[str] = SHARD,
    files_from: Optional[str] = FILES_FROM,
    no_cache: bool = NO_CACHE,
    cache_dir: Optional[Path] = CACHE_DIR,
) -> None:
    """Print the unified diff `fix` would apply; change nothing."""
    run = _prepare(paths, select, ignore, exclude, unsafe_fixes, target_index, stdin_filename,
                   scaling=_scaling(jobs, shard, files_from, no_cache, cache_dir))
    outcomes = [_stdin_outcome(run)] if run.reads_stdin else []
    summary = batch.Summary()
    for outcome in outcomes or _outcomes(run):
        text = output.unified_diff(outcome)
        if text:
            sys.stdout.write(text)
        summary.add(outcome)
        if not run.reads_stdin:
            outcomes.append(outcome)
    output.print_summary(err, summary, "would change", summary.changed)
    raise typer.Exit(_exit_code(outcomes, any(o.result and o.result.changed for o in outcomes)))


@app.command()
def check(
    paths: Optional[List[Path]] = TARGETS,
    select: Optional[List[str]] = SELECT,
    ignore: Optional[List[str]] = IGNORE,
    exclude: Optional[List[str]] = EXCLUDE,
    target_index: Optional[int] = TARGET,
    stdin_filename: Optional[Path] = STDIN_NAME,
    jobs: Optional[int] = JOBS,
    shard: Optional[str] = SHARD,
    files_from: Optional[str] = FILES_FROM,
    no_cache: bool = NO_CACHE,
    cache_dir: Optional[Path] = CACHE_DIR,
    format: str = typer.Option("text", "--format",
                               help="text | json | sarif | github (see docs/editors.md)"),
) -> None:
    """Report findings with the fix each one offers; change nothing."""
    from .formats import NAMES, render

    if format not in NAMES:
        raise _fail(f"unknown --format {format!r} (choose {', '.join(NAMES)})")
    run = _prepare(paths, select, ignore, exclude, True, target_index, stdin_filename,
                   isolated=True, scaling=_scaling(jobs, shard, files_from, no_cache, cache_dir))
    outcomes = [_stdin_outcome(run)] if run.reads_stdin else list(_outcomes(run))
    if format != "text":
        sys.stdout.write(render(format, outcomes))
    else:
        _report_findings(out, outcomes, only_pending=False)
        summary = batch.Summary()
        for outcome in outcomes:
            summary.add(outcome)
        output.print_summary(err, summary, "with findings", summary.flagged)
    findings = any(o.result and o.result.diagnostics for o in outcomes)
    raise typer.Exit(_exit_code(outcomes, findings))


def _report_findings(console: Console, outcomes, only_pending: bool) -> None:
    for outcome in outcomes:
        if outcome.result is None:
            continue
        diags = outcome.result.pending if only_pending else outcome.result.diagnostics
        for diag in diags:
            console.print(output.finding_line(diag), markup=False, highlight=False)


@app.command("list")
def list_recipes() -> None:
    """Show every recipe: id, safety, summary."""
    table = Table("id", "safety", "summary", title="tf-migrate recipes")
    for recipe in registry.all_recipes().values():
        table.add_row(recipe.id, recipe.safety, recipe.summary)
    out.print(table)


@app.command()
def explain(recipe_id: str = typer.Argument(..., help="A recipe id from `tf-migrate list`.")) -> None:
    """Show a recipe's rationale, caveats and before/after example from its fixtures."""
    from .explain import render

    recipe = registry.all_recipes().get(recipe_id)
    if recipe is None:
        raise _fail(f"unknown recipe id {recipe_id!r} (see `tf-migrate list`)")
    render(Console(highlight=False), recipe)


app.command("verify")(verify_command)


@app.command()
def lsp() -> None:
    """Run the Language Server on stdin/stdout (needs the `lsp` extra, see docs/editors.md)."""
    try:
        from .lsp import serve
    except ModuleNotFoundError as error:
        raise _fail(f"the language server needs {error.name}: pip install 'tf-migrate[lsp]'")
    serve()


def main() -> None:
    app()
