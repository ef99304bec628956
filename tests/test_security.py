"""The engine never imports or executes user code, never follows a symlink
out of the given roots, and writes nowhere but the files it rewrites and its
cache. Checked from the inside: the CLI runs in a subprocess under a
`sys.addaudithook` hook (inherited by the forked workers) that logs every
import, exec, file opened for writing, rename, mkdir, chmod and removal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path


from fixture_cases import all_cases

AUDITED = textwrap.dedent("""
    import json, os, sys
    LOG = open({log!r}, "a", buffering=1)
    WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def where(value):
        if isinstance(value, int):
            return None  # an fd: its open was logged already
        return os.path.abspath(os.fsdecode(value))

    def hook(event, args):
        if event == "open":
            path, mode, flags = args
            writes = (mode and any(c in mode for c in "wax+")) or (not mode and flags & WRITE_FLAGS)
            if writes and where(path):
                LOG.write(json.dumps(["write", where(path)]) + "\\n")
        elif event in ("os.rename", "os.mkdir", "os.chmod", "os.remove", "os.rmdir", "shutil.rmtree"):
            for arg in args[:2] if event == "os.rename" else args[:1]:
                if not isinstance(arg, int) and arg is not None:
                    LOG.write(json.dumps([event, where(arg)]) + "\\n")
        elif event == "import":
            LOG.write(json.dumps(["import", args[0], args[1] and str(args[1])]) + "\\n")
        elif event == "exec":
            LOG.write(json.dumps(["exec", getattr(args[0], "co_filename", "?")]) + "\\n")

    sys.addaudithook(hook)
    from migrate.cli import main
    sys.argv = ["tf-migrate"] + sys.argv[1:]
    main()
""")

SIDE_EFFECT = "import os\nopen({marker!r}, 'w').write('executed')\nos.system('touch {marker}.sh')\n"


def audited_run(args, tmp_path, cwd):
    log = tmp_path / "audit.jsonl"
    script = tmp_path / "audited_cli.py"
    script.write_text(AUDITED.format(log=str(log)))
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "xdg"),
               TMPDIR=str(tmp_path / "tmpdir"))
    (tmp_path / "tmpdir").mkdir(exist_ok=True)
    done = subprocess.run([sys.executable, "-I", "-B", str(script), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    events = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return done, events


def hostile_tree(root: Path, marker: Path) -> dict:
    """A tree whose modules would leave ``marker`` behind if imported or run,
    shadowing names the tool itself imports, plus real fixture programs."""
    root.mkdir(parents=True)
    for name in ("typer.py", "bowler.py", "fissix.py", "numpy.py", "tensorflow.py", "recipes.py",
                 "migrate.py", "sitecustomize.py", "conftest.py", "setup.py", "__main__.py"):
        (root / name).write_text(SIDE_EFFECT.format(marker=str(marker)))
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text(SIDE_EFFECT.format(marker=str(marker)))
    (root / "pyproject.toml").write_text("[build-system]\nrequires = []\n")
    rewritten = {}
    for case in [c for c in all_cases() if c.after and not c.report_only][:4]:
        target = root / f"{case.recipe.replace('-', '_')}_{case.name}.py"
        target.write_text(SIDE_EFFECT.format(marker=str(marker)) + case.before.read_text())
        rewritten[target] = case
    return rewritten


def test_user_code_is_never_imported_or_run_and_writes_stay_in_place(tmp_path):
    marker = tmp_path / "EXECUTED"
    root = tmp_path / "project"
    rewritten = hostile_tree(root, marker)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    done, events = audited_run(["fix", "--unsafe-fixes", "--jobs", "2", "."], tmp_path, cwd=root)
    assert done.returncode in (0, 1), done.stderr
    assert not marker.exists() and not Path(f"{marker}.sh").exists()

    imported_from_tree = [e for e in events if e[0] == "import" and e[2] and e[2].startswith(str(root))]
    assert imported_from_tree == []
    executed_from_tree = [e for e in events if e[0] == "exec" and e[1].startswith(str(root))]
    assert executed_from_tree == []

    cache = tmp_path / "xdg" / "tf-migrate"
    grammar_cache = tmp_path / "xdg" / "fissix"  # fissix pickles its grammar tables there once
    changed = {p for p in before if p.read_bytes() != before[p]}
    assert {p for p in changed} <= set(rewritten)
    if rewritten:
        assert changed, "the fixture programs were not rewritten"
    # the hook saw the run: its own imports and the atomic renames of the rewrites
    assert any(e[0] == "import" and e[1] == "migrate.engine" for e in events)
    assert {Path(e[1]) for e in events if e[0] == "os.rename"} >= changed
    for event, path in ((e[0], Path(e[1])) for e in events if e[0] not in ("import", "exec")):
        next_to_rewritten = path.parent in {p.parent for p in changed} and (
            path in changed or path.name.endswith(".tf-migrate"))
        in_caches = any(c == path or c in path.parents for c in (cache, grammar_cache))
        in_caches |= event == "os.mkdir" and path == tmp_path / "xdg"  # their parent
        assert next_to_rewritten or in_caches, (event, path)
    created = {p for p in tmp_path.rglob("*") if p.is_file()} - set(before)
    assert {p for p in created if cache not in p.parents and grammar_cache not in p.parents} <= \
        {tmp_path / "audit.jsonl", tmp_path / "audited_cli.py"}


def test_symlinks_out_of_the_roots_are_never_followed(tmp_path):
    case = next(c for c in all_cases() if c.after and not c.report_only)  # one the tool rewrites
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.py"
    victim.write_bytes(case.before.read_bytes())  # a program `fix` rewrites where it may
    root = tmp_path / "root"
    root.mkdir()
    (root / "dir_link").symlink_to(outside, target_is_directory=True)
    (root / "file_link.py").symlink_to(victim)
    (root / "inner.py").write_bytes(case.before.read_bytes())
    (root / "inner_link.py").symlink_to(root / "inner.py")
    done, events = audited_run(["fix", "--unsafe-fixes", "--no-cache", str(root)], tmp_path, cwd=tmp_path)
    assert (root / "inner.py").read_bytes() != case.before.read_bytes(), done.stderr  # in the root: fixed
    assert victim.read_bytes() == case.before.read_bytes()  # the same program outside: untouched
    assert "root/dir_link: symlink out of" in done.stderr  # named relative to the working directory
    assert "root/file_link.py: symlink out of" in done.stderr
    touched = [e for e in events if e[0] in ("write", "os.rename") and str(outside) in e[1]]
    assert touched == []
    assert (root / "inner_link.py").is_symlink()


def test_fix_through_an_in_tree_symlink_keeps_the_link(tmp_path, toy_recipes):
    from typer.testing import CliRunner

    from migrate.cli import app

    (tmp_path / "real.py").write_text("old_api()\n")
    (tmp_path / "a_link.py").symlink_to(tmp_path / "real.py")  # sorts before its target
    result = CliRunner().invoke(app, ["fix", "--no-cache", str(tmp_path)])
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "a_link.py").is_symlink()
    assert (tmp_path / "real.py").read_text() == "new_api()\n"
