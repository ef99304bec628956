"""The speed mechanisms, each switchable off to measure what it saves
(docs/benchmarks.md, "Every speed mechanism earns its place"):
``TF_MIGRATE_WITHOUT=reparse,incremental`` runs without those two. Read once,
here. No answer depends on it: each mechanism's tests compare its answers
with those of the plain way (tests/test_prefilter.py, test_fastparse.py,
test_reparse.py, test_incremental.py)."""

from __future__ import annotations

import os

MECHANISMS = ("incremental", "reparse", "fastparse", "prechecks")

_OFF = frozenset(name.strip() for name in os.environ.get("TF_MIGRATE_WITHOUT", "").split(",")
                 if name.strip())


def on(mechanism: str) -> bool:
    """Is ``mechanism`` (one of MECHANISMS) in use in this process?"""
    return mechanism not in _OFF
