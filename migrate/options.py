"""What a run enables, apart from the engine: the CLI, the batch and the
cache build and read it without loading fissix's parser and the engine,
which a warm run (every result from the cache) never needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Optional, Tuple

from .recipe import Recipe


@dataclass(eq=False, repr=False)
class Options:
    """What a run enables. ``isolated`` leaves the input as it is and gives
    each diagnostic's fix edits relative to the input (what `check --format
    json` and editors need); findings that only appear once other fixes are
    applied are reported with ``after`` and without edits. ``only``, when
    given, names the findings whose fix may be applied, as (path, recipe,
    line, column) of the input text (`fix --interactive` applies one finding
    at a time); every other finding is reported, not applied."""

    recipes: Tuple[Recipe, ...]
    unsafe_fixes: bool = False
    apply: bool = True
    isolated: bool = False
    recipe_options: Tuple[Tuple[str, object], ...] = ()
    only: Optional[FrozenSet[Tuple[str, str, int, int]]] = None
