"""Helpers for the fissix tree, shared by the recipes: nodes.py (names,
calls, displays, statements), scope.py (statements, bindings, fresh names),
edits.py (tree surgery that keeps comments), cache.py (facts computed once
per tree). Semantic questions (imports, reaching definitions, kinds, tapes,
gradient contexts) are the model's (``recipes._model``). Not a recipe (the leading underscore keeps the
registry away)."""

from __future__ import annotations

from fissix.fixer_util import find_root  # noqa: F401
from fissix.pgen2 import token  # noqa: F401
from fissix.pytree import Leaf, Node  # noqa: F401

from recipes._fissix.nodes import (  # noqa: F401 (the package's API)
    call_args, call_parts, code, contains, dotted_name, following_leaf, index_of, is_call,
    is_full_slice, is_name, keyword_arg, last_leaf, literal_elements, name_leaves, name_reads,
    preceding_leaf, shown, sibling, source, split_arguments, start,
    subscript_parts, syms, unparen,
)
from recipes._fissix.scope import (  # noqa: F401 (the package's API)
    COMPOUND, LAYOUT, LOOPS, assigned_name, bindings, blocks, bound_names,
    enclosing, enclosing_function, enclosing_statement, fresh_name,
    is_block, is_sole_statement_on_line, reads,
    scope_names, scope_nodes, scope_of, simple_assignment, single_assignment, statement_of,
    statements,
)
from recipes._fissix.edits import (  # noqa: F401 (the package's API)
    add_import, fill, indent_of, insert_after, insert_before, move_leading_comments,
    move_trailing_comment, occurrences, parse_expression, parse_statement, remove_statement,
    replace_statement, replace_with, statements_from_source, substitute,
)
from recipes._fissix.cache import nodes_of_type, per_tree  # noqa: F401
