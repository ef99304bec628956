"""`tf-migrate explain ID`: the recipe's docstring (rationale, caveats) and
its first before/after fixture pair as the example, one source of truth: the
repository's fixtures/, which the build copies into the wheel as
migrate/examples/ (see setup.py)."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Optional, Tuple

from rich.console import Console
from rich.syntax import Syntax
from rich.text import Text

from .recipe import Recipe

SHIPPED = Path(__file__).resolve().parent / "examples"  # an installed wheel
FIXTURES = SHIPPED if SHIPPED.is_dir() else Path(__file__).resolve().parent.parent / "fixtures"


def example(recipe: Recipe) -> Optional[Tuple[Path, Path]]:
    """The recipe's seed program pair (a case named ``seed*``) when it has
    one, else its first before/after pair by name."""
    befores = sorted((FIXTURES / recipe.id).glob("*.before.py"),
                     key=lambda p: (not p.name.startswith("seed"), p.name))
    for before in befores:
        after = before.with_name(before.name.replace(".before.py", ".after.py"))
        if after.exists():
            return before, after
    return None


def render(console: Console, recipe: Recipe) -> None:
    console.print(Text.assemble((recipe.id, "bold"), f" ({recipe.safety}): {recipe.summary}"))
    console.print()
    console.print(recipe.doc or "(no documentation)", markup=False, highlight=False)
    pair = example(recipe)
    if pair is None:
        console.print(f"\n(no example found under {FIXTURES / recipe.id})")
        return
    before, after = pair
    diff = "".join(difflib.unified_diff(
        before.read_text().splitlines(keepends=True), after.read_text().splitlines(keepends=True),
        fromfile=f"before: {before.name}", tofile=f"after: {after.name}"))
    console.print(f"\n[bold]Example[/bold] ({recipe.id}/{before.name}):")
    console.print(Syntax(diff, "diff", word_wrap=True))
