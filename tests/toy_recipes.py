"""Two tiny recipes for engine and CLI tests, independent of the real ones."""

from __future__ import annotations

from fissix.fixer_util import Name, touch_import

from migrate.recipe import Recipe, propose


def _renamer(old: str, new: str, message: str):
    def modify(node, capture, filename):
        name = capture["name"]
        if propose(name, message):
            name.replace(Name(new, prefix=name.prefix))

    pattern = f"power< name='{old}' trailer< '(' any* ')' > >"
    return lambda q: q.select(pattern).modify(modify)


RENAME = Recipe(id="toy-rename", summary="old_api() becomes new_api()", safety="safe",
                query=_renamer("old_api", "new_api", "old_api is deprecated"), tokens=("old_api",))
RISKY = Recipe(id="toy-risky", summary="risky() becomes safer()", safety="unsafe",
               query=_renamer("risky", "safer", "risky() may change behaviour"), tokens=("risky",))
BROKEN = Recipe(id="toy-broken", summary="emits invalid code", safety="safe",
                query=_renamer("breakme", "def", "breaks the file"), tokens=("breakme",))


def _crash(node, capture, filename):
    raise RuntimeError("boom")


CRASH = Recipe(id="toy-crash", summary="always crashes", safety="safe",
               query=lambda q: q.select("power< name='crashme' any* >").modify(_crash),
               tokens=("crashme",))



def _report(node, capture, filename):
    propose(capture["name"], "legacy_api() has no automatic fix", fixable=False)


REPORT = Recipe(id="toy-report", summary="reports legacy_api() without a fix", safety="safe",
                query=lambda q: q.select("power< name='legacy_api' trailer< '(' any* ')' > >")
                .modify(_report), tokens=("legacy_api",))



def _with_import(node, capture, filename):
    name = capture["name"]
    if propose(name, "make_ones() is numpy.ones()"):
        name.replace(Name("numpy.ones", prefix=name.prefix))
        touch_import(None, "numpy", node)


IMPORT = Recipe(id="toy-import", summary="make_ones() becomes numpy.ones() plus an import",
                safety="safe", query=lambda q: q.select("power< name='make_ones' trailer< '(' ')' > >")
                .modify(_with_import), tokens=("make_ones",))

ALL = {r.id: r for r in (RENAME, RISKY, BROKEN, CRASH, REPORT, IMPORT)}
