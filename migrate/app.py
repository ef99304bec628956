"""The `tf-migrate` Typer app: thin commands over migrate/commands.py
(what check, diff and fix do), with Ruff's spellings as aliases (`check
--fix`, `--diff`, `--exit-zero`, ...). Exit codes (EPILOG): 0 nothing to do,
1 findings or pending changes (check, diff), unfixed findings after `fix`
or declined changes, 2 usage error or a file that could not be processed
(after processing all the others). migrate/cli.py runs a plain `check`
without it."""

from __future__ import annotations

import functools
import inspect
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import typer
from rich.console import Console
from rich.text import Text

from . import commands, registry
from .commands import Shared, fail, out
from .runner.command import verify_command

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

        out().print(f"tf-migrate {tool_version()}", markup=False, highlight=False)
        raise typer.Exit()


@app.callback(epilog=EPILOG)
def main_options(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """Find and fix TensorFlow 2.x code whose gradients silently come back None or wrong."""


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
    raise typer.Exit(commands.fix(shared, interactive, format, verify, diff))


@app.command(epilog=EPILOG, short_help="Print the diff `fix` would apply.")
@shared_options()
def diff(shared: Shared) -> None:
    """Print the unified diff `fix` would apply; change nothing."""
    raise typer.Exit(commands.diff(shared))


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
    raise typer.Exit(commands.check(shared, format, fix, diff, statistics))


@app.command("list", short_help="Show every recipe: id, safety, summary.")
def list_recipes() -> None:
    """Show every recipe: id, safety, summary."""
    from rich.table import Table  # with fractions and decimal: ~20 ms a check never needs

    table = Table("id", "safety", "summary", title="tf-migrate recipes")
    for recipe in registry.all_recipes().values():
        table.add_row(recipe.id, recipe.safety, Text(recipe.summary))  # `path[i]` is no markup
    out().print(table)


@app.command(short_help="Show a recipe's rationale and example.")
def explain(recipe_id: str = typer.Argument(..., metavar="ID", help="A recipe id from `tf-migrate list`.")) -> None:
    """Show a recipe's rationale, caveats and before/after example from its fixtures."""
    from .explain import render

    recipe = registry.all_recipes().get(recipe_id)
    if recipe is None:
        raise fail(registry.unknown_id(recipe_id))
    render(Console(highlight=False), recipe)


app.command("verify", short_help="Run programs in TensorFlow and check they train.")(verify_command)


@app.command(short_help="Run the Language Server (stdin/stdout).")
def lsp() -> None:
    """Run the Language Server on stdin/stdout (needs the `lsp` extra, see docs/editors.md)."""
    try:
        from .lsp import serve
    except ModuleNotFoundError as error:
        raise fail(f"the language server needs {error.name}: pip install 'tf-migrate[lsp]'")
    serve()

