"""Batches at scale: the process pool, the result cache, --shard and
--files-from (toy recipes; timing lives in benchmarks/, never here)."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from migrate import batch, cache as cache_mod
from migrate.cache import Cache
from migrate.cli import app
from migrate.discovery import discover
from migrate.engine import Options
from migrate.recipe import Recipe, propose
from migrate.result import Status
from migrate.shard import BadSelection, Shard

from toy_recipes import RENAME, RISKY

runner = CliRunner()
TESTS = Path(__file__).resolve().parent


def make_tree(root: Path, count: int, body: str = "x = old_api({i})\n") -> list:
    paths = []
    for i in range(count):
        path = root / f"pkg{i % 4}" / f"m{i:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body.format(i=i))
        paths.append(path)
    return sorted(paths)


def summary(outcome: batch.Outcome):
    result = outcome.result
    return (outcome.path, outcome.problem, result and result.status, result and result.output,
            result and [(d.recipe, d.line, d.applied) for d in result.diagnostics])


# --- the pool -----------------------------------------------------------------------------

def _slow_modify(node, capture, filename):
    time.sleep(0.02 if filename.endswith(("0.py", "5.py")) else 0)
    if propose(capture["name"], "slow"):
        capture["name"].value = "new_api"


SLOW = Recipe(id="toy-slow", summary="renames slowly on some files", safety="safe",
              query=lambda q: q.select("power< name='old_api' trailer< '(' any* ')' > >")
              .modify(_slow_modify), tokens=("old_api",))


def test_pool_returns_outcomes_in_input_order_and_same_results(tmp_path):
    paths = make_tree(tmp_path, 40)
    paths.insert(7, tmp_path / "missing.py")
    (tmp_path / "broken.py").write_text("def f(:\n    old_api()\n")
    paths.insert(3, tmp_path / "broken.py")
    options = Options((SLOW, RISKY))
    serial = [summary(o) for o in batch.run(paths, options, jobs=1)]
    pooled = [summary(o) for o in batch.run(paths, options, jobs=2)]
    assert [s[0] for s in pooled] == paths
    assert pooled == serial
    problems = {s[0].name: s[1] for s in pooled if s[1]}
    assert set(problems) == {"missing.py", "broken.py"}
    assert "missing.py: cannot read" in problems["missing.py"]
    assert "broken.py: syntax error at line 1" in problems["broken.py"]


def test_each_worker_compiles_the_recipes_once(tmp_path):
    log = tmp_path / "compiles.log"

    def query(q):
        with open(log, "a") as handle:
            handle.write(f"{os.getpid()}\n")
        return q.select("power< name='old_api' trailer< '(' any* ')' > >").modify(_slow_modify)

    counted = Recipe(id="toy-counted-compile", summary="logs each compile", safety="safe",
                     query=query, tokens=("old_api",))
    paths = make_tree(tmp_path / "tree", 30)
    outcomes = list(batch.run(paths, Options((counted,)), jobs=2))
    assert all(o.status is Status.CHANGED for o in outcomes)
    pids = log.read_text().split()
    assert pids and len(pids) == len(set(pids)) <= 2  # once per worker, at most two workers
    assert str(os.getpid()) not in pids  # the work happened in the workers


def test_worker_death_is_reported_for_that_file_and_the_batch_goes_on(tmp_path):
    def die(node, capture, filename):
        if filename.endswith("m003.py"):
            os._exit(9)  # what a segfault in native code looks like to the pool

    killer = Recipe(id="toy-killer", summary="kills its worker on one file", safety="safe",
                    query=lambda q: q.select("power< name='old_api' any* >").modify(die),
                    tokens=("old_api",))
    paths = make_tree(tmp_path, 12)
    outcomes = list(batch.run(paths, Options((killer, RENAME)), jobs=2))
    assert [o.path for o in outcomes] == paths
    [dead] = [o for o in outcomes if o.problem]
    assert dead.path.name == "m003.py" and "worker process died while processing it" in dead.problem
    assert all(o.status is Status.CHANGED for o in outcomes if o is not dead)



_TASK_LOG = None  # the log file, set by the test below (the forked workers inherit it)
_REAL_WORK = batch._work


def _logged_work(paths):
    """batch._work, logging each task's files (module level: the pool pickles it)."""
    with open(_TASK_LOG, "a") as handle:
        handle.write(" ".join(path.name for path in paths) + "\n")
    return _REAL_WORK(paths)


def test_workers_take_several_files_per_task_and_one_bad_result_stays_that_files(tmp_path, monkeypatch):
    """Files go to the workers a few at a time; a result that cannot come
    back (here: unpicklable) is the failure of its own file only: the other
    files of its task are asked for again, one by one, and come back whole."""
    real_process = batch.process

    def process(path, options):
        outcome = real_process(path, options)
        if path.name == "m005.py":
            outcome.problem = lambda: None  # cannot be pickled
        return outcome

    monkeypatch.setitem(globals(), "_TASK_LOG", tmp_path / "tasks.log")
    monkeypatch.setattr(batch, "_work", _logged_work)
    monkeypatch.setattr(batch, "process", process)  # inherited by the forked workers
    paths = make_tree(tmp_path / "tree", 40)
    outcomes = list(batch.run(paths, Options((RENAME,)), jobs=2))
    assert [o.path for o in outcomes] == paths
    [bad] = [o for o in outcomes if o.problem]
    assert bad.path.name == "m005.py" and "internal error in a worker" in bad.problem
    assert all(o.status is Status.CHANGED for o in outcomes if o is not bad)
    tasks = [line.split() for line in _TASK_LOG.read_text().splitlines()]
    [first] = [task for task in tasks if "m005.py" in task and len(task) > 1]
    assert sorted(name for task in tasks if len(task) > 1 for name in task) == sorted(p.name for p in paths)
    assert sorted(task[0] for task in tasks if len(task) == 1) == sorted(first)  # each asked for alone


# --- Ctrl-C -------------------------------------------------------------------------------

LAUNCHER = textwrap.dedent("""
    import signal, sys, time
    # Ctrl-C as a terminal's foreground job gets it: a test session started
    # in the background (`cmd &` in a script) hands SIGINT down ignored
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.path.insert(0, {tests!r})
    from migrate import registry
    from migrate.recipe import Recipe, propose
    import toy_recipes

    def modify(node, capture, filename):
        time.sleep({delay} if "pkg0" in filename else {rest})
        if propose(capture["name"], "slow rename"):
            capture["name"].value = "new_api"

    slow = Recipe(id="toy-slow", summary="slow", safety="safe", tokens=("old_api",),
                  query=lambda q: q.select("power< name='old_api' trailer< '(' any* ')' > >").modify(modify))
    registry.all_recipes = lambda: {{"toy-slow": slow}}
    from migrate.cli import main
    sys.argv = ["tf-migrate"] + sys.argv[1:]
    main()
""")


def launch(args, tmp_path, delay=0.05, stall=None, **kwargs):
    """`tf-migrate ARGS` with a recipe that takes ``delay`` per file, or
    ``stall`` seconds for files outside pkg0 (the first written): such a
    batch cannot end before a test interrupts it, however slow the machine."""
    script = tmp_path / "launch_slow.py"
    script.write_text(LAUNCHER.format(tests=str(TESTS), delay=delay, rest=delay if stall is None else stall))
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    return subprocess.Popen([sys.executable, str(script), *args], env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def wait_for_writes(paths, original, at_least, proc, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if sum(p.read_text() != original[p] for p in paths) >= at_least:
            return
        time.sleep(0.01)
    raise AssertionError(f"no progress: {proc.poll()} {proc.stderr.read() if proc.poll() is not None else ''}")


def assert_old_or_new(paths, original):
    for path in paths:
        text = path.read_text()
        assert text in (original[path], original[path].replace("old_api", "new_api")), path
    leftovers = [p for p in paths[0].parent.parent.rglob("*") if p.name.endswith(".tf-migrate")]
    return leftovers


def test_ctrl_c_stops_workers_and_exits_130(tmp_path):
    paths = make_tree(tmp_path / "tree", 200)
    original = {p: p.read_text() for p in paths}
    proc = launch(["fix", "--jobs", "2", str(tmp_path / "tree")], tmp_path, stall=120)
    wait_for_writes(paths, original, 10, proc)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal does: the whole process group
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)  # no worker survived its parent
    assert assert_old_or_new(paths, original) == []  # no half-written file, no temp file
    assert sum(p.read_text() != original[p] for p in paths) < len(paths)  # it did stop early


# --- the cache ----------------------------------------------------------------------------

def test_warm_run_uses_cache_and_equals_cold(tmp_path):
    paths = make_tree(tmp_path / "tree", 12, "x = old_api({i})\ny = risky()\n")
    options = Options((RENAME, RISKY), isolated=True)
    cold_cache = Cache(tmp_path / "c", options)
    cold = [summary(o) for o in batch.run(paths, options, jobs=2, cache=cold_cache)]
    warm_cache = Cache(tmp_path / "c", options)
    warm = [summary(o) for o in batch.run(paths, options, jobs=2, cache=warm_cache)]
    assert warm == cold
    assert (cold_cache.hits, warm_cache.hits, warm_cache.misses) == (0, 12, 0)


def test_a_cached_change_is_still_written(tmp_path, monkeypatch):
    [path] = make_tree(tmp_path / "tree", 1)
    options = Options((RENAME,))
    dry = list(batch.run([path], options, cache=Cache(tmp_path / "c", options)))  # like `diff`
    assert dry[0].status is Status.CHANGED and path.read_text() == "x = old_api(0)\n"

    def no_engine(*args):
        raise AssertionError("the engine ran although the result was cached")

    monkeypatch.setattr(batch, "engine_for", lambda path: no_engine)
    for outcome in batch.run([path], options, cache=Cache(tmp_path / "c", options)):
        batch.write(outcome)
        assert outcome.written
    assert path.read_text() == "x = new_api(0)\n"


def test_a_check_served_by_the_cache_never_loads_the_parser(tmp_path):
    """A warm run costs imports and hashes only: the engine (fissix's
    parser, the fix loop) is loaded on the first cache miss, not before; nor
    are pydantic (Typer 0.29 builds adapters with it), importlib.metadata or
    the process pool's modules, ~0.1 s of every editor request between them."""
    make_tree(tmp_path / "tree", 3, body="import numpy as np\nx = np.zeros({i})\n")
    heavy = ["migrate.engine", "pydantic", "importlib.metadata", "multiprocessing"]
    probe = ("import atexit, sys\n"
             f"atexit.register(lambda: print('loaded:', [m for m in {heavy!r} if m in sys.modules], "
             "file=sys.stderr))\n"
             "from migrate.cli import main\nmain()\n")
    argv = [sys.executable, "-c", probe, "check", str(tmp_path / "tree"), "--cache-dir", str(tmp_path / "c")]
    runs = [subprocess.run(argv, capture_output=True, text=True, timeout=120) for _ in range(2)]
    assert [run.returncode for run in runs] == [0, 0], runs[0].stderr
    cold, warm = (run.stderr.strip().splitlines()[-1] for run in runs)
    assert "'migrate.engine'" in cold and warm == "loaded: []"


def test_key_covers_content_path_options_and_recipe_source(tmp_path):
    module = tmp_path / "edited_recipe.py"
    module.write_text(textwrap.dedent("""
        from migrate.recipe import Recipe
        RECIPE = Recipe(id="toy-edited", summary="s", safety="safe", query=lambda q: q)
    """))
    spec = importlib.util.spec_from_file_location("edited_recipe", module)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules["edited_recipe"] = loaded
    spec.loader.exec_module(loaded)
    try:
        options = Options((loaded.RECIPE, RENAME))
        base = Cache(tmp_path, options)
        key = base.key(Path("a.py"), b"x")
        assert key == Cache(tmp_path, options).key(Path("a.py"), b"x")
        assert key != base.key(Path("b.py"), b"x")
        assert key != base.key(Path("a.py"), b"y")
        for other in (Options((loaded.RECIPE, RENAME), unsafe_fixes=True),
                      Options((loaded.RECIPE, RENAME), isolated=True),
                      Options((loaded.RECIPE,)),
                      Options((loaded.RECIPE, RENAME), recipe_options=(("target_index", 1),)),
                      Options((loaded.RECIPE, RENAME), only=frozenset({("a.py", "toy", 1, 0)}))):
            assert Cache(tmp_path, other).key(Path("a.py"), b"x") != key
        module.write_text(module.read_text() + "# edited\n")
        assert Cache(tmp_path, options).key(Path("a.py"), b"x") != key
    finally:
        del sys.modules["edited_recipe"]


def test_key_covers_every_module_a_result_depends_on():
    """The semantic model and the fissix helpers live in subpackages of
    recipes/, the traversal, top-level closure, incremental passes and edit mapping in
    migrate/: editing any of them must invalidate the cache."""
    import recipes

    files = {Path(f) for f in cache_mod._code_files(Options((RENAME,)))}
    package = Path(recipes.__file__).parent
    assert set(package.rglob("*.py")) <= files
    assert set(Path(cache_mod.__file__).resolve().parent.glob("*.py")) <= files
    assert {p.name for p in files if p.parent.name == "migrate"} >= {
        "engine.py", "toplevel.py", "incremental.py", "reparse.py", "traversal.py", "edits.py"}


def test_key_names_the_installed_fissix_and_bowler():
    """Read from their .dist-info folders without importlib.metadata: the
    same versions it reports."""
    from importlib import metadata

    for dist in ("fissix", "bowler"):
        assert cache_mod._version(dist) == metadata.version(dist)
    assert cache_mod._version("no_such_distribution_here") == "unknown"


def test_corrupt_entries_are_misses(tmp_path):
    paths = make_tree(tmp_path / "tree", 6)
    options = Options((RENAME,), isolated=True)
    first = [summary(o) for o in batch.run(paths, options, cache=Cache(tmp_path / "c", options))]
    entries = sorted((tmp_path / "c").rglob("*.json"))
    assert len(entries) == 6 and all(json.loads(e.read_text()) for e in entries)
    garbage = [b"", b"{not json", b'{"status": "changed"}', b'{"status": "bogus", "output": null, '
               b'"diagnostics": [], "reason": null, "errors": []}', b"\xff\xfe", b"[]"]
    for entry, junk in zip(entries, garbage):
        entry.write_bytes(junk)
    again = Cache(tmp_path / "c", options)
    assert [summary(o) for o in batch.run(paths, options, cache=again)] == first
    assert again.misses == 6


def test_clean_results_share_one_key_list(tmp_path):
    """A file with nothing to say costs a line of one list, not a file of
    its own; a file with a finding keeps its JSON entry; both are hits."""
    clean = make_tree(tmp_path / "tree" / "clean", 5, "x = fine({i})\n")
    flagged = make_tree(tmp_path / "tree" / "flagged", 2)
    paths = clean + flagged
    options = Options((RENAME,), isolated=True)
    cold = [summary(o) for o in batch.run(paths, options, jobs=2, cache=Cache(tmp_path / "c", options))]
    assert len(list((tmp_path / "c").rglob("*.json"))) == 2
    [keys] = (tmp_path / "c").rglob("clean-*.keys")
    assert len(keys.read_text().splitlines()) == 5
    warm_cache = Cache(tmp_path / "c", options)
    assert [summary(o) for o in batch.run(paths, options, cache=warm_cache)] == cold
    assert (warm_cache.hits, warm_cache.misses) == (7, 0)
    other = Options((RENAME, RISKY), isolated=True)  # another run key: another list, all misses
    assert Cache(tmp_path / "c", other).get(clean[0], clean[0].read_bytes(), "") is None


def test_a_torn_key_list_line_is_a_miss(tmp_path):
    """A crash can cut the last line of the list short and the next run
    appends after it: neither the cut key nor the merged line is a hit."""
    paths = make_tree(tmp_path / "tree", 3, "x = fine({i})\n")
    options = Options((RENAME,), isolated=True)
    first = [summary(o) for o in batch.run(paths, options, cache=Cache(tmp_path / "c", options))]
    [keys] = (tmp_path / "c").rglob("clean-*.keys")
    lines = keys.read_text().splitlines()
    keys.write_text(lines[0] + "\n" + lines[1][:40] + lines[2] + "\n" + "zz" * 32 + "\n")
    again = Cache(tmp_path / "c", options)
    assert [summary(o) for o in batch.run(paths, options, cache=again)] == first
    assert (again.hits, again.misses) == (1, 2)


def test_failures_are_not_cached(tmp_path):
    from toy_recipes import CRASH

    path = tmp_path / "c.py"
    path.write_text("crashme(1)\n")
    options = Options((CRASH,))
    store = Cache(tmp_path / "c", options)
    [outcome] = batch.run([path], options, cache=store)
    assert outcome.status is Status.FAILED
    assert not [p for p in (tmp_path / "c").rglob("*") if p.is_file()]


def test_unwritable_cache_dir_is_ignored(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    [path] = make_tree(tmp_path / "tree", 1)
    options = Options((RENAME,))
    [outcome] = batch.run([path], options, cache=Cache(blocker, options))
    assert outcome.status is Status.CHANGED and outcome.problem is None


def test_cli_cache_location_flags(tmp_path, toy_recipes, monkeypatch):
    make_tree(tmp_path / "tree", 3)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    runner.invoke(app, ["check", str(tmp_path / "tree")])
    assert len(list((tmp_path / "xdg" / "tf-migrate").rglob("*.json"))) == 3
    runner.invoke(app, ["check", "--cache-dir", str(tmp_path / "mine"), str(tmp_path / "tree")])
    assert len(list((tmp_path / "mine").rglob("*.json"))) == 3
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_mod.default_dir() == tmp_path / "home" / ".cache" / "tf-migrate"
    runner.invoke(app, ["check", "--no-cache", str(tmp_path / "tree")])
    assert not (tmp_path / "home").exists()


# --- --shard and --files-from -------------------------------------------------------------

def json_paths(result) -> set:
    return {d["path"] for d in json.loads(result.stdout)["diagnostics"]}


def test_shards_partition_the_files(tmp_path, toy_recipes):
    paths = make_tree(tmp_path / "tree", 60)
    shards = [json_paths(runner.invoke(app, ["check", "--format", "json", "--shard", f"{k}/3",
                                              str(tmp_path / "tree")])) for k in (1, 2, 3)]
    assert set().union(*shards) == {str(p) for p in paths}
    assert sum(map(len, shards)) == len(paths)
    assert all(len(s) > 5 for s in shards)  # a hash partition, not all in one


def test_shard_of_a_file_does_not_depend_on_checkout_or_neighbours(tmp_path):
    make_tree(tmp_path / "a", 30)
    make_tree(tmp_path / "elsewhere" / "b", 40)
    shard = Shard.parse("2/5")

    def names(root):
        found = shard.select(discover([root]), [root])
        return {p.relative_to(root).as_posix() for p in found.files}

    first, second = names(tmp_path / "a"), names(tmp_path / "elsewhere" / "b")
    assert first and first == {n for n in second if int(n.split("m")[-1][:3]) < 30}


@pytest.mark.parametrize("text", ["0/3", "4/3", "1", "a/b", "1/0"])
def test_bad_shard_is_a_usage_error(tmp_path, toy_recipes, text):
    with pytest.raises(BadSelection):
        Shard.parse(text)
    result = runner.invoke(app, ["check", "--shard", text, str(tmp_path)])
    assert result.exit_code == 2 and "--shard" in result.stderr


def test_files_from_a_file_and_from_stdin(tmp_path, toy_recipes):
    paths = make_tree(tmp_path / "tree", 5)
    listing = tmp_path / "list.txt"
    listing.write_text(f"{paths[0]}\n\n# a comment\n{paths[3]}\n")
    result = runner.invoke(app, ["check", "--format", "json", "--files-from", str(listing)])
    assert json_paths(result) == {str(paths[0]), str(paths[3])}
    result = runner.invoke(app, ["check", "--format", "json", "--files-from", "-"],
                           input=f"{paths[1]}\n")
    assert json_paths(result) == {str(paths[1])}
    result = runner.invoke(app, ["fix", "--files-from", str(listing), str(paths[2])])
    assert [p.read_text().startswith("x = new_api") for p in paths] == [True, False, True, True, False]


def test_files_from_problems_are_usage_errors(tmp_path, toy_recipes):
    result = runner.invoke(app, ["check", "--files-from", str(tmp_path / "nope.txt")])
    assert result.exit_code == 2 and "nope.txt: cannot read" in result.stderr
    (tmp_path / "empty.txt").write_text("")
    result = runner.invoke(app, ["check", "--files-from", str(tmp_path / "empty.txt")])
    assert result.exit_code == 2 and "no paths given" in result.stderr
