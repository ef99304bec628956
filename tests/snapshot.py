"""JSON snapshots under tests/snapshots/: a test compares what it computed
with the stored file; ``UPDATE_SNAPSHOTS=1`` rewrites the files instead (then
review the diff before committing)."""

from __future__ import annotations

import json
import os
from pathlib import Path

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"


def assert_snapshot(name: str, value, missing_ok: bool = False) -> None:
    """``value`` (JSON-serializable) equals tests/snapshots/<name>.json
    (``missing_ok``: no file yet is no failure, for a case not yet recorded)."""
    path = SNAPSHOTS / f"{name}.json"
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if missing_ok and not path.exists():
        return
    assert path.exists(), f"no snapshot {path}: run with UPDATE_SNAPSHOTS=1 and review it"
    assert json.loads(text) == json.loads(path.read_text(encoding="utf-8")), \
        f"differs from {path} (UPDATE_SNAPSHOTS=1 rewrites it; review the diff)"
