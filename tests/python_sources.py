"""Valid Python from hypothesmith for the fuzz tests, without the warnings
hypothesmith makes itself: it compiles what it writes, and CPython warns about
some of it (``'str' object is not callable; perhaps you missed a comma?`` for
``'a'()``); libcst, which it imports, uses a deprecated mypy_extensions name.
Silenced where they arise (the draw, the import), so that a warning the code
under test gives still shows."""

from __future__ import annotations

import warnings

from hypothesis import strategies as st

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", "mypy_extensions.TypedDict is deprecated", DeprecationWarning)
    import hypothesmith


def quietly(strategy: st.SearchStrategy) -> st.SearchStrategy:
    """``strategy``, with the SyntaxWarnings of compiling its examples silenced."""
    @st.composite
    def drawn(draw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            return draw(strategy)

    return drawn()


PYTHON = quietly(hypothesmith.from_grammar() | hypothesmith.from_node())
