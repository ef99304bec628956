"""The `tf-migrate` command line: thin Typer commands over discovery, batch,
engine and output, with Ruff's spellings as aliases (`check --fix`,
`--diff`, `--exit-zero`, ...). Exit codes (EPILOG): 0 nothing to do, 1
findings or pending changes (check, diff), unfixed findings after `fix` or
declined changes, 2 usage error or a file that could not be processed
(after processing all the others)."""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, TextIO, Tuple

import typer
from rich.console import Console
from rich.text import Text

from . import batch, config, files, output, registry
from .cache import default_dir as default_cache_dir
from .discovery import discover
from .options import Options
from .result import Status
from .runner.command import verify_command, verify_written
from .shard import BadSelection, Shard, read_file_list
from .suppressions import unknown_suppressions

EPILOG = """\b
Exit codes:
  0  nothing to do (or --exit-zero)
  1  findings (check), changes pending (diff), findings left after fix,
     changes declined (fix -i)
  2  usage or config error, or a file that could not be processed
     (every other file is still processed)

\b
Suppress a finding with a comment on the line it is reported at:
  y = f(x)  # tf-migrate: ignore[scalar-target,typed-convert]
  y = f(x)  # tf-migrate: ignore    (every recipe)
"""
HELP_WIDTH = 80  # help is written for an 80-column terminal; wider ones get no more

app = typer.Typer(
    name="tf-migrate",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # click's help wraps to the terminal; rich's tables cut words at 80 columns
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": HELP_WIDTH},
)
err = Console(stderr=True, highlight=False, soft_wrap=True)
out = Console(highlight=False, soft_wrap=True)

# hidden: Typer would list it with its Python type; its help goes into the command's text
PATHS = typer.Argument(None, metavar="[PATH]...", show_default=False, hidden=True)
PATHS_HELP = ("\n\nPATH: files or directories (recursively, minus .gitignore'd and --exclude'd "
              "paths); '-' reads source from stdin; none: '.' (or only --files-from's).")
SHARED: Dict[str, Tuple[object, object]] = {
    # the options fix, diff and check share: name -> (type, typer.Option)
    "select": (Optional[List[str]], typer.Option(
        None, "--select", metavar="ID[,ID...]", help="Only these recipe ids (comma-separated or repeated).")),
    "ignore": (Optional[List[str]], typer.Option(
        None, "--ignore", metavar="ID[,ID...]", help="Skip these recipe ids.")),
    "exclude": (Optional[List[str]], typer.Option(
        None, "--exclude", metavar="GLOB", help="Paths to skip (gitignore syntax; repeatable).")),
    "unsafe_fixes": (Optional[bool], typer.Option(
        None, "--unsafe-fixes/--no-unsafe-fixes", help="Also apply unsafe fixes.")),
    "target_index": (Optional[int], typer.Option(
        None, "--target-index", metavar="N", help="Output index used by scalar-target (default: a class index in scope, else 0).")),
    "stdin_filename": (Optional[Path], typer.Option(
        None, "--stdin-filename", metavar="PATH",
        help="Path the stdin buffer belongs to (config, messages).")),
    "jobs": (Optional[int], typer.Option(
        None, "--jobs", "-j", min=1, metavar="N", help="Worker processes (default: one per core).")),
    "shard": (Optional[str], typer.Option(
        None, "--shard", metavar="K/N", help="Only the K-th of N stable shards of the files (split a CI run).")),
    "files_from": (Optional[str], typer.Option(
        None, "--files-from", metavar="FILE",
        help="Also process the paths listed in FILE, one per line ('-': stdin).")),
    "config": (Optional[Path], typer.Option(
        None, "--config", metavar="FILE",
        help="Take the settings of every file from FILE (a pyproject.toml's [tool.tf-migrate], "
             "or a TOML file of those keys), not from the nearest pyproject.toml.")),
    "isolated": (bool, typer.Option(False, "--isolated", help="Read no configuration file.")),
    "exit_zero": (bool, typer.Option(
        False, "--exit-zero", help="Exit 0 even with findings or changes left (2 still means an error).")),
    "quiet": (bool, typer.Option(
        False, "--quiet", "-q", help="Print findings (or the diff) and errors, no summary.")),
    "output_file": (Optional[Path], typer.Option(
        None, "--output-file", "-o", metavar="FILE", help="Write the report to FILE, not stdout.")),
    "no_cache": (bool, typer.Option(False, "--no-cache", help="Neither read nor write the result cache.")),
    "cache_dir": (Optional[Path], typer.Option(
        None, "--cache-dir", metavar="DIR",
        help="Result cache directory (default: $XDG_CACHE_HOME/tf-migrate or ~/.cache/tf-migrate).")),
}


@dataclass(frozen=True)
class Shared:
    """The values of the shared options, as one command received them."""

    paths: Optional[List[Path]] = None
    select: Optional[List[str]] = None
    ignore: Optional[List[str]] = None
    exclude: Optional[List[str]] = None
    unsafe_fixes: Optional[bool] = None
    target_index: Optional[int] = None
    stdin_filename: Optional[Path] = None
    jobs: Optional[int] = None
    shard: Optional[str] = None
    files_from: Optional[str] = None
    config: Optional[Path] = None
    isolated: bool = False
    exit_zero: bool = False
    quiet: bool = False
    output_file: Optional[Path] = None
    no_cache: bool = False
    cache_dir: Optional[Path] = None


def shared_options() -> Callable:
    """Give a command the PATH arguments and the SHARED options ahead of its
    own; it receives them as its first parameter, a Shared."""
    def decorate(command: Callable) -> Callable:
        own = list(inspect.signature(command, eval_str=True).parameters.values())[1:]
        params = [inspect.Parameter("paths", inspect.Parameter.KEYWORD_ONLY, default=PATHS,
                                    annotation=Optional[List[Path]])]
        params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option,
                                     annotation=kind)
                   for name, (kind, option) in SHARED.items()]
        params += [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own]

        @functools.wraps(command)
        def run(**values):
            mine = {name: values.pop(name) for name in ("paths", *SHARED) if name in values}
            return command(Shared(**mine), **values)

        run.__doc__ = (command.__doc__ or "") + PATHS_HELP
        run.__signature__ = inspect.Signature(params)
        run.__annotations__ = {p.name: p.annotation for p in params}
        del run.__wrapped__  # Typer must read the signature above, not the command's
        return run
    return decorate


def _version(value: bool) -> None:
    if value:
        from .formats import tool_version

        out.print(f"tf-migrate {tool_version()}", markup=False, highlight=False)
        raise typer.Exit()


@app.callback(epilog=EPILOG)
def main_options(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """Find and fix TensorFlow 2.x code whose gradients silently come back None or wrong."""


def _split(values: Optional[List[str]]) -> Optional[List[str]]:
    if not values:
        return None
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def _fail(message: str) -> "typer.Exit":
    err.print(f"tf-migrate: {message}", markup=False, highlight=False)
    return typer.Exit(2)


@dataclass
class Run:
    """What the command line and the config files together ask for: the
    flags, and per file the config that applies there (``settings``)."""

    paths: List[Path]
    shared: Shared
    lookup: config.Lookup
    stdin_name: Optional[Path]
    scaling: batch.Scaling = batch.Scaling()
    unsafe: Optional[bool] = None  # overrides flags and files (check reports every fix)
    checking: bool = False  # Options.isolated: each fix relative to the input
    _settings: Dict[Optional[Path], Tuple[config.Config, Options]] = field(default_factory=dict)

    @property
    def reads_stdin(self) -> bool:
        return [str(p) for p in self.paths] == ["-"]

    def settings(self, where: Path, *, file: bool = False) -> Tuple[config.Config, Options]:
        """The config at ``where`` (a folder, or a ``file``) with the flags
        merged in, and the Options it asks for; one pair per config file."""
        found = self.lookup.of_file(where) if file else self.lookup.at(where)
        if found.source not in self._settings:
            shared = self.shared
            conf = found.merged(select=_split(shared.select), ignore=_split(shared.ignore),
                                exclude=(found.exclude + _split(shared.exclude)) if shared.exclude else None,
                                unsafe_fixes=shared.unsafe_fixes if self.unsafe is None else self.unsafe,
                                target_index=shared.target_index)
            try:
                registry.resolve(found.select, found.ignore)  # the file's own ids, named with the file
            except registry.UnknownRecipe as error:
                raise _fail(f"{found.source}: [tool.tf-migrate] {error}")
            try:
                recipes = registry.resolve(conf.select, conf.ignore)
            except registry.UnknownRecipe as error:
                raise _fail(str(error))
            options = Options(tuple(recipes), unsafe_fixes=conf.unsafe_fixes, isolated=self.checking,
                              recipe_options=(("target_index", conf.target_index),))
            self._settings[found.source] = conf, options
        return self._settings[found.source]

    @property
    def anchor(self) -> Path:
        """Where the config of stdin, and the run's first usage error, is looked up."""
        anchor = self.stdin_name or (self.paths[0] if not self.reads_stdin else Path.cwd())
        return anchor if anchor.exists() else anchor.parent if anchor.parent.exists() else Path.cwd()


def _prepare(shared: Shared, *, unsafe: Optional[bool] = None, checking: bool = False) -> Run:
    """The Run the shared options and the config files ask for (flags win);
    ``unsafe``, when given, overrides both (check reports every fix). No
    path (and no --files-from) means the working directory, as in Ruff."""
    try:
        shard = Shard.parse(shared.shard) if shared.shard else None
        paths = list(shared.paths or []) + (read_file_list(shared.files_from) if shared.files_from else [])
    except BadSelection as error:
        raise _fail(str(error))
    scaling = batch.Scaling(shared.jobs or batch.default_jobs(), shard, shared.files_from,
                            None if shared.no_cache else (shared.cache_dir or default_cache_dir()))
    if not paths and not shared.files_from:
        paths = [Path(".")]
    if not paths:
        raise _fail(f"no paths given: {shared.files_from} lists none")
    if "-" in [str(p) for p in paths] and len(paths) > 1:
        raise _fail("'-' (stdin) cannot be combined with other paths")
    try:
        lookup = config.Lookup(shared.config, shared.isolated)
        run = Run(paths, shared, lookup, shared.stdin_filename, scaling, unsafe, checking)
        run.settings(run.anchor)  # a usage error (unknown id, bad file) before any work
    except config.ConfigError as error:
        raise _fail(str(error))
    return run


def _outcomes(run: Run) -> Iterator[batch.Outcome]:
    """Each file's outcome, each file run with the options of its config;
    discovery's warnings (symlinks not followed) go to stderr first."""
    try:
        found = discover(run.paths, exclude_of=lambda root: run.settings(root)[0].exclude)
        if run.scaling.shard:
            found = run.scaling.shard.select(found, run.paths)
        groups: Dict[int, Tuple[Options, List[Path]]] = {}
        for path in found.files:
            options = run.settings(path, file=True)[1]
            groups.setdefault(id(options), (options, []))[1].append(path)
    except config.ConfigError as error:
        raise _fail(str(error))
    for warning in sorted(found.warnings):
        err.print(f"warning: {warning}", markup=False, highlight=False)
    for problem in found.problems:
        yield batch.Outcome(Path(problem.split(":", 1)[0]), problem=problem)
    jobs = run.scaling.jobs
    if not (err.is_terminal and len(found.files) > 1):
        for options, paths in groups.values():
            yield from batch.run(paths, options, jobs=jobs, cache=run.scaling.cache(options))
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn  # a terminal only

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task("tf-migrate", total=len(found.files))
        for options, paths in groups.values():
            yield from batch.run(paths, options, lambda _: progress.advance(task),
                                 jobs=jobs, cache=run.scaling.cache(options))


def _stdin_outcome(run: Run) -> batch.Outcome:
    name = run.stdin_name or Path("<stdin>")
    raw = sys.stdin.buffer.read()
    try:
        source = files.text_of(name, raw)
    except files.Unreadable as error:
        # keep the bytes (no text): `fix -` echoes them, so an editor filter never empties a buffer
        undecoded = files.SourceFile(name, raw, "", "", False, "\n", 0o644, 0)
        return batch.Outcome(name, source=undecoded, problem=str(error))
    result = batch.engine_for(name)(source.text, str(name), run.settings(run.anchor)[1])
    outcome = batch.Outcome(name, result, source)
    if result.status in (Status.SKIPPED, Status.FAILED):
        outcome.problem = f"{name}: {result.reason}"
    return outcome


def _exit_code(outcomes: List[batch.Outcome], pending: bool, exit_zero: bool = False) -> int:
    if any(o.failed for o in outcomes):
        return 2
    return 1 if pending and not exit_zero else 0


@contextlib.contextmanager
def _report(shared: Shared, default: TextIO) -> Iterator[TextIO]:
    """Where the report goes: --output-file (its folder made), else ``default``."""
    if shared.output_file is None:
        yield default
        return
    try:
        shared.output_file.parent.mkdir(parents=True, exist_ok=True)
        stream = open(shared.output_file, "w", encoding="utf-8")
    except OSError as error:
        raise _fail(f"{shared.output_file}: cannot write ({error.strerror})")
    with stream:
        yield stream


def _warn_unknown_suppressions(outcomes: List[batch.Outcome]) -> None:
    """Each unknown id in a suppression comment, at its line of the file as
    it is on disk (of the cell, in a notebook); a file that could not be
    processed has none."""
    for outcome in outcomes:
        if outcome.failed or outcome.source is None or outcome.result is None:
            continue
        text = outcome.result.output if outcome.written else outcome.source.text
        if "tf-migrate:" not in text:
            continue
        for label, unit in batch.units_of(outcome.path, text).items():
            for warning in unknown_suppressions(label, unit):
                err.print(f"warning: {warning}", markup=False, highlight=False)


def _formats(format: str, names: Tuple[str, ...]) -> None:
    if format not in names:
        raise _fail(f"unknown --format {format!r} (choose {', '.join(names)})")


@app.command(epilog=EPILOG, short_help="Rewrite files in place with the fixes.")
@shared_options()
def fix(
    shared: Shared,
    interactive: bool = typer.Option(False, "--interactive", "-i",
                                     help="Review each finding's fix (y/n/a/d/r/q/?; answers from stdin)."),
    format: str = typer.Option("text", "--format", metavar="[text|json]",
                               help="How to report the findings left (json: lines of the written "
                                    "file and of the original)."),
    verify: bool = typer.Option(False, "--verify",
                                help="Then run each rewritten .py file and its original in TensorFlow "
                                     "(the cached TF 2.3 of `verify --tf 2.3`, else the current "
                                     "TF with tf-keras); exit 1 if a rewrite fails."),
    diff: bool = typer.Option(False, "--diff", help="Print the diff instead of writing (as `diff`)."),
) -> None:
    """Rewrite files in place with the safe fixes (and unsafe ones with --unsafe-fixes)."""
    _formats(format, ("text", "json"))
    if diff:
        _alone("--diff", interactive=interactive, verify=verify, format=format != "text")
        raise typer.Exit(_diff(shared))
    raise typer.Exit(_fix(shared, interactive, format, verify))


@app.command(epilog=EPILOG, short_help="Print the diff `fix` would apply.")
@shared_options()
def diff(shared: Shared) -> None:
    """Print the unified diff `fix` would apply; change nothing."""
    raise typer.Exit(_diff(shared))


@app.command(epilog=EPILOG, short_help="Report findings and the fix each offers.")
@shared_options()
def check(
    shared: Shared,
    format: str = typer.Option("text", "--format", metavar="[text|json|sarif|github]",
                               help="Output format (see docs/editors.md)."),
    fix: bool = typer.Option(False, "--fix", help="Apply the fixes (as `fix`)."),
    diff: bool = typer.Option(False, "--diff", help="Print the diff of the fixes, change nothing (as `diff`)."),
    statistics: bool = typer.Option(False, "--statistics",
                                    help="Print the number of findings per recipe, not the findings."),
) -> None:
    """Report findings with the fix each one offers (safe or unsafe); change nothing unless --fix."""
    from .formats import NAMES

    _formats(format, NAMES)
    if diff:
        _alone("--diff", format=format != "text", statistics=statistics)
        raise typer.Exit(_diff(shared))
    if statistics:
        _formats(format, ("text", "json"))
    if fix:
        _formats(format, ("text", "json"))
        _alone("--fix", statistics=statistics)
        raise typer.Exit(_fix(shared, False, format, False))
    raise typer.Exit(_check(shared, format, statistics))


def _alone(flag: str, **others: bool) -> None:
    """Refuse ``flag`` with any of ``others`` that was given."""
    given = [f"--{name}" for name, value in others.items() if value]
    if given:
        raise _fail(f"{flag} does not combine with {', '.join(given)}")


def _fix(shared: Shared, interactive: bool, format: str, verify: bool) -> int:
    run = _prepare(shared)
    if interactive:
        if run.reads_stdin:
            raise _fail("--interactive reads answers from stdin, so it cannot read source from '-'")
        from .interactive import command

        try:
            return command(run.paths, lambda root: run.settings(root)[0].exclude,
                           lambda path: run.settings(path, file=True)[1], out, err)
        except config.ConfigError as error:
            raise _fail(str(error))
    if run.reads_stdin:
        outcome = _stdin_outcome(run)
        text = outcome.result.output if outcome.result else None
        if outcome.source is not None:
            sys.stdout.buffer.write(outcome.source.encode(text) if text is not None else outcome.source.raw)
            outcome.written = text is not None  # the buffer filter's output is what it writes
        outcomes = [outcome]
    else:
        outcomes = []
        for outcome in _outcomes(run):
            batch.write(outcome)
            outcomes.append(outcome)
    outcomes = output.in_order(outcomes)
    _warn_unknown_suppressions(outcomes)
    options = {id(o): (run.settings(run.anchor) if run.reads_stdin else run.settings(o.path, file=True))[1]
               for o in outcomes}
    left = {id(o): output.left_in_order(batch.left_after_fix(o, options[id(o)], with_fixes=format == "json"))
            for o in outcomes}
    with _report(shared, sys.stderr if run.reads_stdin else sys.stdout) as report:
        if format == "json":  # the whole report, errors included: one JSON document
            report.write(output.fix_json(outcomes, left) + "\n")
        else:
            for outcome in outcomes:
                report.writelines(output.finding_line(item.diagnostic) + "\n" for item in left[id(outcome)])
    if format != "json":
        output.print_summary(err, _summary(outcomes), "written", sum(o.written for o in outcomes),
                             quiet=shared.quiet)
        if not shared.quiet:
            unsafe = all(options[id(o)].unsafe_fixes for o in outcomes)
            err.print(output.fix_counts(outcomes, left, unsafe), markup=False, highlight=False)
    code = _exit_code(outcomes, any(left.values()), shared.exit_zero)
    if verify and not run.reads_stdin:
        written = [(o.path, o.result.source, o.result.pending) for o in outcomes if o.written]
        code = max(code, verify_written(written, out, shared.cache_dir or default_cache_dir()))
    return code


def _diff(shared: Shared) -> int:
    run = _prepare(shared)
    outcomes = output.in_order([_stdin_outcome(run)] if run.reads_stdin else _outcomes(run))
    _warn_unknown_suppressions(outcomes)
    with _report(shared, sys.stdout) as report:
        report.writelines(output.unified_diff(outcome) for outcome in outcomes)
    summary = _summary(outcomes)
    output.print_summary(err, summary, "would change", summary.changed, quiet=shared.quiet)
    return _exit_code(outcomes, any(o.result and o.result.changed for o in outcomes), shared.exit_zero)


def _check(shared: Shared, format: str, statistics: bool) -> int:
    from .formats import render, statistics_of

    run = _prepare(shared, unsafe=True, checking=True)
    outcomes = output.in_order([_stdin_outcome(run)] if run.reads_stdin else _outcomes(run))
    _warn_unknown_suppressions(outcomes)
    with _report(shared, sys.stdout) as report:
        if statistics:
            report.write(statistics_of(format, outcomes))
        elif format != "text":
            report.write(render(format, outcomes))
        else:
            report.writelines(output.finding_line(diag) + "\n" for outcome in outcomes
                              for diag in (outcome.result.diagnostics if outcome.result else []))
    if format == "text":
        summary = _summary(outcomes)
        output.print_summary(err, summary, "with findings", summary.flagged,
                             quiet=shared.quiet or statistics)
    findings = any(o.result and o.result.diagnostics for o in outcomes)
    return _exit_code(outcomes, findings, shared.exit_zero)


def _summary(outcomes: List[batch.Outcome]) -> batch.Summary:
    summary = batch.Summary()
    for outcome in outcomes:
        summary.add(outcome)
    return summary


@app.command("list", short_help="Show every recipe: id, safety, summary.")
def list_recipes() -> None:
    """Show every recipe: id, safety, summary."""
    from rich.table import Table  # with fractions and decimal: ~20 ms a check never needs

    table = Table("id", "safety", "summary", title="tf-migrate recipes")
    for recipe in registry.all_recipes().values():
        table.add_row(recipe.id, recipe.safety, Text(recipe.summary))  # `path[i]` is no markup
    out.print(table)


@app.command(short_help="Show a recipe's rationale and example.")
def explain(recipe_id: str = typer.Argument(..., metavar="ID", help="A recipe id from `tf-migrate list`.")) -> None:
    """Show a recipe's rationale, caveats and before/after example from its fixtures."""
    from .explain import render

    recipe = registry.all_recipes().get(recipe_id)
    if recipe is None:
        raise _fail(registry.unknown_id(recipe_id))
    render(Console(highlight=False), recipe)


app.command("verify", short_help="Run programs in TensorFlow and check they train.")(verify_command)


@app.command(short_help="Run the Language Server (stdin/stdout).")
def lsp() -> None:
    """Run the Language Server on stdin/stdout (needs the `lsp` extra, see docs/editors.md)."""
    try:
        from .lsp import serve
    except ModuleNotFoundError as error:
        raise _fail(f"the language server needs {error.name}: pip install 'tf-migrate[lsp]'")
    serve()


def main() -> None:
    app()
