"""The text prefilter: a file is parsed for a recipe only when its text can
contain one of the recipe's ``tokens``.

Sound by construction: a recipe matches leaves of the fissix tree, and every
leaf's text is in the source verbatim; only what lies *between* leaves can
differ from how a token is written. So a token is cut into its lexical
pieces (``tape.watch(`` -> ``tape`` ``.`` ``watch`` ``(``) and the pieces may
be separated by anything Python allows there: spaces, newlines, backslash
continuations and comments (``tape . watch (``, ``np.\\`` + newline +
``zeros``). Cheap: a one-piece token is a plain substring test, and the
regular expression for the others runs only when the longest piece of one of
them occurs in the text.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Sequence, Tuple

_PIECE = re.compile(r"\w+|[^\w\s]")
# what may stand between two tokens (or two pieces of a dotted name); each alternative starts with its own
# character and a comment must end its line, so matching never backtracks
GAP = r"(?:[ \t\f\r\n]|\\\r?\n|#[^\n]*\n)"
_compiled = lru_cache(maxsize=None)(re.compile)  # a pattern is compiled once, when first searched


def pieces(token: str) -> Tuple[str, ...]:
    return tuple(_PIECE.findall(token))


@lru_cache(maxsize=None)
def matcher(tokens: Tuple[str, ...]) -> Callable[[str], bool]:
    """A predicate: does a source text contain any of ``tokens``? An empty
    tuple means the recipe has no prefilter: every text matches."""
    if not tokens:
        return lambda source: True
    cut = [pieces(token) for token in tokens if pieces(token)]
    words = tuple(parts[0] for parts in cut if len(parts) == 1)  # nothing can come between
    # each spread token's own pattern, compiled and searched when its longest
    # piece is in the text: it starts with a literal, which the search skips
    # to (an alternation of them is tried at every character)
    spread = [(max(parts, key=len), _token_pattern(parts)) for parts in cut if len(parts) > 1]

    def match(source: str) -> bool:
        if any(word in source for word in words):
            return True
        return any(anchor in source and _compiled(pattern).search(source) is not None
                   for anchor, pattern in spread)

    return match


def _token_pattern(parts: Sequence[str]) -> str:
    out = [re.escape(parts[0])]
    for before, after in zip(parts, parts[1:]):
        words = before[-1:].isalnum() or before[-1:] == "_"
        words = words and (after[:1].isalnum() or after[:1] == "_")
        out.append(f"{GAP}+" if words else f"{GAP}*")  # two words need a gap
        out.append(re.escape(after))
    return "(?:" + "".join(out) + ")"
