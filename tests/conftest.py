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


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """CLI runs cache results under $XDG_CACHE_HOME: never the user's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
