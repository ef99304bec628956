import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest


@pytest.fixture
def toy_recipes(monkeypatch):
    """Replace the shipped recipes by the toy ones for engine/CLI tests."""
    from migrate import registry
    from toy_recipes import ALL

    monkeypatch.setattr(registry, "all_recipes", lambda: dict(ALL))
    return ALL
