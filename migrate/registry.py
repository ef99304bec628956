"""Recipe discovery: every module in the `recipes` package that defines
``RECIPE`` is a recipe, so adding one touches one file plus its fixtures."""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import pkgutil
from functools import lru_cache
from typing import Dict, Iterable, List, Optional

import recipes as _recipes_pkg

from .recipe import Recipe


@lru_cache(maxsize=1)
def all_recipes() -> Dict[str, Recipe]:
    """id -> Recipe, sorted by id; the module docstring becomes ``doc``."""
    found: Dict[str, Recipe] = {}
    for info in pkgutil.iter_modules(_recipes_pkg.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"recipes.{info.name}")
        recipe = getattr(module, "RECIPE", None)
        if not isinstance(recipe, Recipe):
            continue
        if recipe.id in found:
            raise ValueError(f"two recipes share the id {recipe.id!r}")
        found[recipe.id] = dataclasses.replace(recipe, doc=(module.__doc__ or "").strip())
    return dict(sorted(found.items()))


class UnknownRecipe(ValueError):
    """A --select/--ignore/explain id that names no recipe."""


def resolve(select: Optional[Iterable[str]], ignore: Iterable[str] = ()) -> List[Recipe]:
    """The enabled recipes in run order; unknown ids raise UnknownRecipe."""
    known = all_recipes()
    wanted = list(select) if select else list(known)
    unknown = sorted((set(wanted) | set(ignore)) - set(known))
    if unknown:
        raise UnknownRecipe("; ".join(unknown_id(name) for name in unknown))
    skip = set(ignore)
    return [known[i] for i in known if i in wanted and i not in skip]


def unknown_id(name: str) -> str:
    """Why ``name`` is not a recipe id, with the closest ids when some are close."""
    ids = list(all_recipes())
    close = difflib.get_close_matches(name, ids, n=3, cutoff=0.8)
    close += [i for i in ids if name and i.startswith(name) and i not in close]
    hint = f"did you mean {' or '.join(close)}?" if close else "see `tf-migrate list`"
    return f"unknown recipe id {name!r} ({hint})"
