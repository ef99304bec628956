"""The real TF 2.3 runtime for tests, built once per session in the user's
(CI's) tool cache, as `verify --tf 2.3` would.

Where no Python 3.8/3.7 can be found (or pip cannot install TF 2.3) the
tests that need it skip with the reason; with ``TF_MIGRATE_REQUIRE_ALL=1``
(set by .ci/run) they fail instead, so CI cannot pass without running them
(tests/required.py).

The first build takes minutes: its progress lines go to the terminal as they
come, past pytest's capture (``CAPTURE``, set by conftest.py).
"""

from __future__ import annotations

from contextlib import nullcontext
from functools import lru_cache
from pathlib import Path
from typing import Any, Union

from rich.console import Console

from migrate.cache import default_dir
from migrate.runner.runtimes import Runtime, Unavailable, tf23
from required import unavailable

# read at collection, before conftest.py points XDG_CACHE_HOME at a per-test folder
CACHE = default_dir()
CAPTURE: Any = None  # pytest's capture manager


@lru_cache(maxsize=None)
def _built() -> Union[Runtime, str]:
    shown = CAPTURE.global_and_fixture_disabled() if CAPTURE is not None else nullcontext()
    try:
        with shown:
            return tf23(None, CACHE, False, Console(stderr=True))
    except Unavailable as error:
        return str(error)


def tf23_runtime() -> Runtime:
    """The TF 2.3 runtime, or skip (fail under TF_MIGRATE_REQUIRE_ALL=1)."""
    runtime = _built()
    if isinstance(runtime, Runtime):
        return runtime
    unavailable(f"TF 2.3 runtime unavailable: {runtime}")


def tf23_cache_dir() -> Path:
    """The cache folder whose envs/ holds the TF 2.3 environment (built)."""
    tf23_runtime()
    return CACHE
