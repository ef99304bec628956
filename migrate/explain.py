"""`tf-migrate explain ID`: the recipe's docstring (rationale, caveats) and
its first before/after fixture pair as the example, one source of truth."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Optional, Tuple

from rich.console import Console
from rich.markdown import Markdown
from rich.syntax import Syntax

from .recipe import Recipe

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def example(recipe: Recipe) -> Optional[Tuple[Path, Path]]:
    """The recipe's first before/after pair (sorted by case name)."""
    for before in sorted((FIXTURES / recipe.id).glob("*.before.py")):
        after = before.with_name(before.name.replace(".before.py", ".after.py"))
        if after.exists():
            return before, after
    return None


def render(console: Console, recipe: Recipe) -> None:
    console.print(f"[bold]{recipe.id}[/bold] ({recipe.safety}): {recipe.summary}")
    console.print()
    console.print(Markdown(recipe.doc or "(no documentation)"))
    pair = example(recipe)
    if pair is None:
        console.print(f"\n(no fixtures found under {FIXTURES / recipe.id})")
        return
    before, after = pair
    diff = "".join(difflib.unified_diff(
        before.read_text().splitlines(keepends=True), after.read_text().splitlines(keepends=True),
        fromfile=f"before: {before.name}", tofile=f"after: {after.name}"))
    console.print(f"\n[bold]Example[/bold] (fixtures/{recipe.id}/{before.name}):")
    console.print(Syntax(diff, "diff", word_wrap=True))
