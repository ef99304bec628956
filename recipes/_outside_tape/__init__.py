"""outside-tape's parts, by what they do: statements (where they are, what
they read and bind, whether moving them keeps every value, proposing a
move), minimize (the loss function given to ``minimize``), built (a tensor
made from a weight in ``build()``). Not a recipe (the leading underscore
keeps the registry away)."""
