"""What Python code conventionally means, shared by the engine's closure of
top-level statements (migrate/toplevel.py) and the recipes' semantic model
(`recipes._model`), which must agree on it: a restricted pass keeps every
statement the model may read. Here, in the engine, so
that the engine never imports a recipe's internals."""

# The names a snippet pasted without its imports conventionally means.
CONVENTIONAL = {"tf": "tensorflow", "np": "numpy", "keras": "keras",
                "layers": "keras.layers", "pd": "pandas"}

# Methods that change their receiver in place: a mutation, not a rebinding.
MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update",
                      "setdefault", "sort", "reverse", "add", "discard", "fill", "resize",
                      "put", "itemset", "assign", "assign_add", "assign_sub", "popitem"})
