"""Inputs some tests need that an install may lack: the TF 2.3 runtime (a
Python 3.8 to build it from), the installed libraries the corpus test sweeps,
git. Without one such a test skips, saying why; with
``TF_MIGRATE_REQUIRE_ALL=1`` (set by .ci/run) it fails instead, so CI cannot
pass with a test that did not run."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

REQUIRE = "TF_MIGRATE_REQUIRE_ALL"


def unavailable(reason: str) -> NoReturn:
    """Skip the test (or the module, called at its top level), or fail under the switch."""
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"{REQUIRE}=1 but {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)
