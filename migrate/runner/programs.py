"""What a path is to the runner: a fixture `before` (expected to fail the way
its recipe says), an `after`, a negative, or any other program; and whether it
follows the fixture protocol or is run as a plain script."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from migrate.registry import all_recipes

PROTOCOL = ("training_case", "attribution_case", "outputs")


@dataclass(frozen=True)
class Program:
    path: Path
    role: str  # before | after | negative | original | rewritten | program
    mode: str  # protocol | script
    recipe: Optional[str] = None
    expected_failure: Optional[str] = None  # the recipe's before_fails, for a `before`
    copy_of: Optional[Path] = None  # ``path`` is a temporary copy of this file's old text

    @property
    def label(self) -> str:
        return f"{self.copy_of} ({self.role})" if self.copy_of else str(self.path)

    @property
    def case_key(self) -> Optional[str]:
        """recipe/case of a fixture file, shared by its before and after."""
        if not self.recipe:
            return None
        for suffix in (".before.py", ".after.py"):
            if self.path.name.endswith(suffix):
                return f"{self.recipe}/{self.path.name[: -len(suffix)]}"
        return None


def follows_protocol(path: Path) -> bool:
    """A module-level def of training_case, attribution_case or outputs; a file
    that does not parse runs as a script (the child reports the error)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(node, ast.FunctionDef) and node.name in PROTOCOL for node in tree.body)


def fixture_recipe(path: Path) -> Optional[str]:
    """The recipe id of fixtures/<recipe>/<case>.before.py|.after.py, else None."""
    if path.name.endswith((".before.py", ".after.py")) and path.parent.name in all_recipes():
        return path.parent.name
    return None


def classify(path: Path, role: Optional[str] = None) -> Program:
    """``role`` forces original/rewritten (a rewrite's pair); fixtures are
    recognised by their place and name, everything else is a `program`."""
    mode = "protocol" if follows_protocol(path) else "script"
    recipe = fixture_recipe(path)
    if recipe is None:
        return Program(path, role or "program", mode)
    expected = all_recipes()[recipe].before_fails
    if path.name.endswith(".after.py"):
        return Program(path, role or "after", mode, recipe)
    has_after = path.with_name(path.name[: -len(".before.py")] + ".after.py").exists()
    fixture_role = "before" if has_after else "negative"
    role = role or fixture_role
    judged = fixture_role == "before" and role in ("before", "original")
    return Program(path, role, mode, recipe, expected if judged else None)
