import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest
from hypothesis import HealthCheck, settings

# time limits flake on a loaded machine (two xdist workers, other jobs):
# timing is benchmarks/' business, so no deadline and no too_slow check here
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")


def pytest_configure(config):
    """The TF 2.3 build's progress is shown live (tests/tf23_runtime.py)."""
    import tf23_runtime

    tf23_runtime.CAPTURE = config.pluginmanager.getplugin("capturemanager")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """On an xdist worker, TensorFlow tests first (a stable sort): xdist sends
    the xdist_group groups first, then single tests in this order, so the slow
    ones start early and the quick ones fill the end instead of one worker
    finishing a TF test while the other idles. Not in one process, where the
    order keeps a module's tests together (its module fixtures built once)."""
    if hasattr(config, "workerinput"):
        items.sort(key=lambda item: item.get_closest_marker("tf") is None)


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
