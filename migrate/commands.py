"""What `check`, `diff` and `fix` do with their options, without Typer or
rich at import: the Typer commands (migrate/app.py) and the plain `check`
path of migrate/cli.py both run these, so a command line gives the same
output either way. A usage error prints its message and raises
SystemExit(2), which Typer lets through as it is."""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, TextIO, Tuple

from . import batch, config, files, output, registry
from .cache import default_dir as default_cache_dir
from .discovery import discover
from .options import Options
from .result import Status
from .shard import BadSelection, Shard, read_file_list
from .suppressions import unknown_suppressions

if TYPE_CHECKING:
    from rich.console import Console


def err() -> "Console":
    """stderr's rich console, made when first printed to: a `check` that
    prints only findings and the count of files never imports rich."""
    return _console(True)


def out() -> "Console":
    """stdout's rich console (`fix --verify`, the review's questions)."""
    return _console(False)


@lru_cache(maxsize=None)
def _console(stderr: bool) -> "Console":
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def say(message: str) -> None:
    """``message`` on stderr, as it is (no markup, no highlighting)."""
    err().print(message, markup=False, highlight=False)


@dataclass(eq=False, repr=False)
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



def _split(values: Optional[List[str]]) -> Optional[List[str]]:
    if not values:
        return None
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def fail(message: str) -> SystemExit:
    """A usage error: printed now, exit 2 when raised."""
    say(f"tf-migrate: {message}")
    return SystemExit(2)


@dataclass(eq=False, repr=False)
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
                raise fail(f"{found.source}: [tool.tf-migrate] {error}")
            try:
                recipes = registry.resolve(conf.select, conf.ignore)
            except registry.UnknownRecipe as error:
                raise fail(str(error))
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
        raise fail(str(error))
    scaling = batch.Scaling(shared.jobs or batch.default_jobs(), shard, shared.files_from,
                            None if shared.no_cache else (shared.cache_dir or default_cache_dir()))
    if not paths and not shared.files_from:
        paths = [Path(".")]
    if not paths:
        raise fail(f"no paths given: {shared.files_from} lists none")
    if "-" in [str(p) for p in paths] and len(paths) > 1:
        raise fail("'-' (stdin) cannot be combined with other paths")
    try:
        lookup = config.Lookup(shared.config, shared.isolated)
        run = Run(paths, shared, lookup, shared.stdin_filename, scaling, unsafe, checking)
        run.settings(run.anchor)  # a usage error (unknown id, bad file) before any work
    except config.ConfigError as error:
        raise fail(str(error))
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
        raise fail(str(error))
    for warning in sorted(found.warnings):
        say(f"warning: {warning}")
    for problem in found.problems:
        yield batch.Outcome(Path(problem.split(":", 1)[0]), problem=problem)
    jobs = run.scaling.jobs
    if not (len(found.files) > 1 and err().is_terminal):
        for options, paths in groups.values():
            yield from batch.run(paths, options, jobs=jobs, cache=run.scaling.cache(options))
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn  # a terminal only

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err(), transient=True) as progress:
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
        raise fail(f"{shared.output_file}: cannot write ({error.strerror})")
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
                say(f"warning: {warning}")


def _formats(format: str, names: Tuple[str, ...]) -> None:
    if format not in names:
        raise fail(f"unknown --format {format!r} (choose {', '.join(names)})")


def check(shared: Shared, format: str, fix: bool, diff: bool, statistics: bool) -> int:
    """`check`: findings with the fix each offers; with --fix, --diff as those commands."""
    from .formats import NAMES

    _formats(format, NAMES)
    if diff:
        _alone("--diff", format=format != "text", statistics=statistics)
        return _diff(shared)
    if statistics:
        _formats(format, ("text", "json"))
    if fix:
        _formats(format, ("text", "json"))
        _alone("--fix", statistics=statistics)
        return _fix(shared, False, format, False)
    return _check(shared, format, statistics)


def fix(shared: Shared, interactive: bool, format: str, verify: bool, diff: bool) -> int:
    """`fix`: rewrite in place; with --diff as `diff`."""
    _formats(format, ("text", "json"))
    if diff:
        _alone("--diff", interactive=interactive, verify=verify, format=format != "text")
        return _diff(shared)
    return _fix(shared, interactive, format, verify)


def diff(shared: Shared) -> int:
    """`diff`: the unified diff `fix` would apply."""
    return _diff(shared)


def _alone(flag: str, **others: bool) -> None:
    """Refuse ``flag`` with any of ``others`` that was given."""
    given = [f"--{name}" for name, value in others.items() if value]
    if given:
        raise fail(f"{flag} does not combine with {', '.join(given)}")


def _fix(shared: Shared, interactive: bool, format: str, verify: bool) -> int:
    run = _prepare(shared)
    if interactive:
        if run.reads_stdin:
            raise fail("--interactive reads answers from stdin, so it cannot read source from '-'")
        from .interactive import command

        try:
            return command(run.paths, lambda root: run.settings(root)[0].exclude,
                           lambda path: run.settings(path, file=True)[1], out(), err())
        except config.ConfigError as error:
            raise fail(str(error))
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
            say(output.fix_counts(outcomes, left, unsafe))
    code = _exit_code(outcomes, any(left.values()), shared.exit_zero)
    if verify and not run.reads_stdin:
        written = [(o.path, o.result.source, o.result.pending) for o in outcomes if o.written]
        from .runner.command import verify_written

        code = max(code, verify_written(written, out(), shared.cache_dir or default_cache_dir()))
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


