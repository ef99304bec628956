"""The one door from the model to the project's fissix tree helpers.

The model imports tree helpers only from here, so when the helper modules
are consolidated or renamed, this file is the only one that changes.
"""

from fissix import pygram
from fissix.pgen2 import token

from recipes._fissix import (call_args, call_parts, index_of, literal_elements, not_an_attribute, split_arguments,
                             statements, unparen)

syms = pygram.python_symbols

__all__ = ["call_args", "call_parts", "index_of", "literal_elements", "not_an_attribute", "split_arguments",
           "statements", "syms", "token", "unparen"]
