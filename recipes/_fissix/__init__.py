"""Helpers for the fissix tree, shared by the recipes: nodes.py (names,
calls, displays, statements), scope.py (imports, bindings, reaching values,
tapes), edits.py (tree surgery that keeps comments), cache.py (facts
computed once per tree). Not a recipe (the leading underscore keeps the
registry away)."""
