"""`tf-migrate explain ID`: the recipe's docstring (rationale, caveats) and
an example from its fixtures, one source of truth: the repository's
fixtures/, which the build copies into the wheel as migrate/examples/ (see
setup.py). A fixture's after is what every recipe together makes of its
before; the example is instead the recipe run alone over the before, so it
shows that recipe's change and no other's."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Optional, Tuple

from rich.console import Console
from rich.syntax import Syntax
from rich.text import Text

from .options import Options
from .recipe import Recipe

SHIPPED = Path(__file__).resolve().parent / "examples"  # an installed wheel
FIXTURES = SHIPPED if SHIPPED.is_dir() else Path(__file__).resolve().parent.parent / "fixtures"


def example(recipe: Recipe) -> Optional[Tuple[Path, str]]:
    """The recipe's first fixture before (a ``seed*`` case first, then by
    name) that the recipe alone changes, with the diff of that change; for
    a recipe that only reports, its first pair's hand-made way out."""
    from .engine import transform  # the parser: only an example needs it

    befores = sorted((FIXTURES / recipe.id).glob("*.before.py"),
                     key=lambda p: (not p.name.startswith("seed"), p.name))
    alone = Options((recipe,), unsafe_fixes=True)
    for before in befores:
        text = before.read_text(encoding="utf-8")
        after = transform(text, str(before), alone).output
        if after != text:
            return before, "".join(difflib.unified_diff(
                text.splitlines(keepends=True), after.splitlines(keepends=True),
                fromfile=f"before: {before.name}", tofile=f"after: {recipe.id} alone"))
    for before in befores:  # a report-only pair: the after is the way out, written by hand
        after = before.with_name(before.name.replace(".before.py", ".after.py"))
        if after.exists():
            return before, "".join(difflib.unified_diff(
                before.read_text(encoding="utf-8").splitlines(keepends=True),
                after.read_text(encoding="utf-8").splitlines(keepends=True),
                fromfile=f"before: {before.name} (reported)", tofile=f"after: {after.name} (the way out, by hand)"))
    return None


def render(console: Console, recipe: Recipe) -> None:
    """Rich text on a terminal; plain text (no colour, no padding, no
    wrapping: code stays as it is) when ``console`` writes to a pipe or file."""
    plain = not console.is_terminal
    heading = f"{recipe.id} ({recipe.safety}): {recipe.summary}"
    pair = example(recipe)
    if plain:
        write = console.file.write
        write(f"{heading}\n\n{recipe.doc or '(no documentation)'}\n")
        if pair is None:
            write(f"\n(no example found under {FIXTURES / recipe.id})\n")
        else:
            write(f"\nExample ({recipe.id}/{pair[0].name}):\n{pair[1]}")
        return
    console.print(Text.assemble((recipe.id, "bold"), f" ({recipe.safety}): {recipe.summary}"))
    console.print()
    console.print(recipe.doc or "(no documentation)", markup=False, highlight=False)
    if pair is None:
        console.print(f"\n(no example found under {FIXTURES / recipe.id})", markup=False)
        return
    console.print(Text.assemble("\n", ("Example", "bold"), f" ({recipe.id}/{pair[0].name}):"))
    console.print(Syntax(pair[1], "diff", word_wrap=True))
