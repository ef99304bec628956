"""The one door from the model to the project's fissix tree helpers.

The model imports tree helpers only from here, so when the helper modules
are consolidated or renamed, this file is the only one that changes.
"""

from fissix import pygram
from fissix.pgen2 import token

try:  # the consolidated helper package (branch i11-engine), once merged
    from recipes._fissix import literal_elements, split_arguments, statements, unparen
except ImportError:  # the two modules it replaces; delete this branch after that merge
    from recipes._ast import split_arguments
    from recipes._scope import literal_elements, statements, unparen

syms = pygram.python_symbols

__all__ = ["literal_elements", "split_arguments", "statements", "syms", "token", "unparen"]
