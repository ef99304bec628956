"""A pass after a changed one visits only the changed top-level statements
and what their closure reaches (migrate/incremental.py); answers stay those
of visiting everything."""

from __future__ import annotations

from pathlib import Path

import pytest

from fissix.fixer_util import find_root

from migrate import engine, incremental, toplevel, traversal
from migrate.engine import Options, transform
from migrate.recipe import Recipe, propose
from migrate.registry import all_recipes

from fixture_cases import all_cases

CORPUS = Path(__file__).parent / "corpus"
from toy_recipes import CRASH, RENAME

VISITS: list = []  # ("pass",) at each pass, then the function each call was seen in


def _helper_calls_new_api(node) -> bool:
    """Does the module's ``def helper`` call ``new_api``? (asked of the whole tree)"""
    for candidate in find_root(node).pre_order():
        if candidate.type == traversal.pygram.python_symbols.funcdef and candidate.children[1].value == "helper":
            return any(leaf.value == "new_api" for leaf in candidate.leaves())
    return False


def _seen(node, capture, filename) -> bool:
    top = traversal.top_statement(node)
    symbols = traversal.pygram.python_symbols
    top = top.children[-1] if top.type == symbols.decorated else top
    VISITS.append(top.children[1].value if top.type in (symbols.funcdef, symbols.classdef) else "<module>")
    return True


def _report(node, capture, filename) -> None:
    if capture["name"].value == "helper" and _helper_calls_new_api(node):
        propose(node, "helper() now calls new_api()", fixable=False)


# every call; reports a call of helper() once helper's body calls new_api()
CALLER = Recipe(id="toy-caller", summary="reports calls of a helper calling new_api", safety="safe",
                query=lambda q: q.select("power< name=NAME trailer< '(' any* ')' > >")
                .filter(_seen).modify(_report), tokens=("helper",))

SOURCE = """\
import x


def helper():
    return old_api()


def use():
    return helper()


def unrelated():
    return other()
"""


CONTEXTS: list = []  # each pass's module (top-level statements), None: the whole tree


def _passes(monkeypatch):
    VISITS.clear()
    CONTEXTS.clear()
    run = traversal.run

    def counted(*args, **kwargs):
        VISITS.append(("pass",))
        context = args[6] if len(args) > 6 else None
        CONTEXTS.append(None if context is None else len(context.children))
        return run(*args, **kwargs)

    monkeypatch.setattr(engine.traversal, "run", counted)


def _by_pass() -> list:
    passes = []
    for visit in VISITS:
        if visit == ("pass",):
            passes.append(set())
        else:
            passes[-1].add(visit)
    return passes


def test_a_fix_enabling_a_finding_in_another_statement_is_found_in_the_next_pass(monkeypatch):
    _passes(monkeypatch)
    result = transform(SOURCE, "m.py", Options((RENAME, CALLER)))
    assert result.output == SOURCE.replace("old_api", "new_api")
    found = [(d.recipe, d.line) for d in result.diagnostics]
    assert found == [("toy-rename", 5), ("toy-caller", 9)]
    # the first pass leaves helper's call to toy-rename's rewrite (postponed)
    assert _by_pass() == [{"use", "unrelated"}, {"helper", "use"}]


def test_a_statement_the_changes_do_not_reach_is_not_revisited(monkeypatch):
    """``unrelated`` neither mentions what the changed ``helper`` defines nor
    defines what it mentions: the second pass never calls a filter there."""
    _passes(monkeypatch)
    transform(SOURCE, "m.py", Options((RENAME, CALLER)))
    assert "unrelated" not in _by_pass()[1]


SEEN: list = []  # (the function each call was seen in, the module's functions, unseen names)


def _module_seen(node, capture, filename) -> bool:
    top = traversal.top_statement(node)
    functions = {child.children[1].value for child in top.parent.children
                 if child.type == traversal.pygram.python_symbols.funcdef}
    if top.type == traversal.pygram.python_symbols.funcdef:
        SEEN.append((top.children[1].value, functions, toplevel.unseen().names))
    return True


# every call; records the module it is seen in and what the run does not see
WATCHER = Recipe(id="toy-watcher", summary="records what a pass sees", safety="safe",
                 query=lambda q: q.select("power< name=NAME trailer< '(' any* ')' > >")
                 .filter(_module_seen), tokens=("helper",))


def test_a_restricted_pass_sees_the_closure_and_hands_the_rest_to_unseen():
    """The second pass visits helper and use in a module of them alone:
    unrelated is left out, and what it spells is what the run does not see,
    as for a statement a slice elides."""
    SEEN.clear()
    transform(SOURCE, "m.py", Options((RENAME, WATCHER)))
    second = [seen for seen in SEEN if seen[0] == "helper"][-1]
    assert second[1] == {"helper", "use"}
    assert {"unrelated", "other"} <= second[2] and "use" not in second[2]
    first = [seen for seen in SEEN if seen[0] == "unrelated"][0]
    assert first[1] == {"helper", "use", "unrelated"} and not first[2]


@pytest.mark.parametrize("holder", [
    "class Holder:\n    value = other()\n",  # in its body
    "class Holder(other()):\n    def run(self):\n        return 1\n",  # on its class line
])
def test_code_outside_every_function_is_revisited_after_any_change(monkeypatch, holder):
    """A recipe matching at a class's own code scans the module, which
    changed: that statement is visited again though it names nothing the
    change touched, and that pass sees the whole tree."""
    _passes(monkeypatch)
    source = SOURCE + "\n\n" + holder
    transform(source, "m.py", Options((RENAME, CALLER)))
    assert _by_pass() == [{"use", "unrelated", "Holder"}, {"helper", "use", "Holder"}]
    assert CONTEXTS == [None, None]


INERT_CLASS = """

@register
class Holder(base.Layer, metaclass=base.Meta):
    \"\"\"No pattern matches its own lines.\"\"\"

    def run(self):
        return other()
"""


def test_a_class_with_no_match_outside_its_methods_is_skipped_when_the_change_misses_it(monkeypatch):
    """Its class line, decorator and docstring hold no call: every node a
    recipe visits there is inside a method, which names nothing the change
    touched, so the second pass skips it, in a module of what it visits."""
    _passes(monkeypatch)
    source = SOURCE + INERT_CLASS
    result = transform(source, "m.py", Options((RENAME, CALLER)))
    assert _by_pass() == [{"use", "unrelated", "Holder"}, {"helper", "use"}]
    assert CONTEXTS[0] is None and CONTEXTS[1] is not None
    monkeypatch.setattr(incremental, "to_revisit", lambda *a: None)
    full = transform(source, "m.py", Options((RENAME, CALLER)))
    assert (result.output, result.diagnostics) == (full.output, full.diagnostics)


def test_a_change_inside_a_class_method_is_seen_by_the_next_pass(monkeypatch):
    """The first pass renames in Holder.run and leaves its helper() call to
    the next pass, which visits Holder (with helper, its closure, not the
    whole tree) and finds that helper() now calls new_api()."""
    _passes(monkeypatch)
    source = SOURCE + INERT_CLASS.replace("return other()", "old_api()\n        found = helper()")
    result = transform(source, "m.py", Options((RENAME, CALLER)))
    found = [(d.recipe, d.line) for d in result.diagnostics]
    assert found == [("toy-rename", 5), ("toy-rename", 21), ("toy-caller", 9), ("toy-caller", 22)]
    assert _by_pass() == [{"use", "unrelated"}, {"helper", "use", "Holder"}]
    assert CONTEXTS[1] is not None
    monkeypatch.setattr(incremental, "to_revisit", lambda *a: None)
    full = transform(source, "m.py", Options((RENAME, CALLER)))
    assert (result.output, result.diagnostics) == (full.output, full.diagnostics)


def test_a_change_in_module_code_revisits_everything(monkeypatch):
    _passes(monkeypatch)
    source = SOURCE.replace("import x\n", "import x\ny = old_api(1)\n").replace("return old_api()", "return fine()")
    result = transform(source, "m.py", Options((RENAME, CALLER)))
    assert "y = new_api(1)" in result.output
    assert _by_pass() == [{"helper", "use", "unrelated"}, {"<module>", "helper", "use", "unrelated"}]


def test_a_recipe_that_crashed_runs_everywhere_in_the_next_pass(monkeypatch):
    """Dropped from the first pass, toy-crash meets its node again in the
    second, in a statement no change reaches: reported twice, as when every
    pass visits everything."""
    source = SOURCE.replace("return other()", "return crashme()")
    result = transform(source, "m.py", Options((RENAME, CALLER, CRASH)))
    monkeypatch.setattr(incremental, "to_revisit", lambda *a: None)
    full = transform(source, "m.py", Options((RENAME, CALLER, CRASH)))
    assert result.errors == full.errors == ["recipe toy-crash crashed: RuntimeError: boom"] * 2
    assert (result.output, result.diagnostics) == (full.output, full.diagnostics)


def test_fixtures_and_corpus_give_the_same_answers_as_runs_visiting_everything(monkeypatch):
    """Each fixture's and corpus file's output and findings, with later
    passes restricted and with every pass visiting every statement."""
    options = Options(tuple(all_recipes().values()), unsafe_fixes=True)
    checked = restricted = 0
    files = [case.before for case in all_cases()] + sorted(CORPUS.rglob("*.py"))
    for path in files:
        source = path.read_text()
        with monkeypatch.context() as patch:
            calls = []
            revisit = incremental.to_revisit
            patch.setattr(incremental, "to_revisit", lambda *a: calls.append(revisit(*a)) or calls[-1])
            fast = transform(source, path.name, options)
        with monkeypatch.context() as patch:
            patch.setattr(incremental, "to_revisit", lambda *a: None)
            full = transform(source, path.name, options)
        assert (fast.status, fast.output, fast.diagnostics, fast.errors) == \
            (full.status, full.output, full.diagnostics, full.errors), path
        checked += 1
        restricted += any(c is not None for c in calls)
    assert checked > 100 and restricted > 10
