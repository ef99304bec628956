"""Fault injection: a killed process, hostile files and directories. Every
problem is one line naming its file, nothing is lost, the batch completes.

Tests run as root here, and chmod does not deny root. So a directory that
refuses writes is made immutable with `chattr +i` (which binds root too);
without chattr (or as a normal user) chmod is used. A directory that refuses
listing cannot be made for root at all: as root, `os.scandir` is made to
fail with EACCES for it, which is exactly what `os.walk` sees for a user.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from migrate import files
from migrate.cache import Cache
from migrate.cli import app
from migrate.engine import Options
from migrate.result import SourceResult, Status

from test_scale import launch, make_tree, wait_for_writes
from toy_recipes import RENAME

runner = CliRunner()
ROOT = os.geteuid() == 0


def test_sigkill_mid_fix_leaves_every_file_old_or_new(tmp_path):
    tree = tmp_path / "tree"
    paths = make_tree(tree, 300, "# module {i}\n" + "x = old_api({i})\n" * 40)
    original = {p: p.read_bytes() for p in paths}
    proc = launch(["fix", "--jobs", "2", "--no-cache", str(tree)], tmp_path, delay=0.002, stall=120)
    wait_for_writes(paths, {p: b.decode() for p, b in original.items()}, 20, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)  # reaps it and closes its pipes
    new = {p: b.replace(b"old_api", b"new_api") for p, b in original.items()}
    states = [p.read_bytes() for p in paths]
    assert all(s in (original[p], new[p]) for p, s in zip(paths, states))
    done = sum(s == new[p] for p, s in zip(paths, states))
    assert 20 <= done < len(paths)
    # at most the renames in flight leave a temp file: never a .py, never discovered
    leftovers = [p for p in tree.rglob("*") if p.is_file() and p not in original]
    assert all(p.name.startswith(".") and p.name.endswith(".tf-migrate") for p in leftovers)
    rerun = launch(["fix", "--jobs", "2", "--no-cache", str(tree)], tmp_path, delay=0)
    rerun.communicate(timeout=120)
    assert rerun.returncode == 0
    assert all(p.read_bytes() == new[p] for p in paths)


def _inode(path) -> tuple:
    info = os.stat(path)
    return info.st_dev, info.st_ino


def _record_fsyncs(monkeypatch) -> list:
    """(device, inode) of everything fsynced through migrate.files."""
    synced = []
    real_fsync = os.fsync

    def fsync(fd):
        info = os.fstat(fd)
        synced.append((info.st_dev, info.st_ino))
        real_fsync(fd)

    monkeypatch.setattr(files.os, "fsync", fsync)
    return synced


def test_a_rewrite_is_fsynced_with_its_folder_and_keeps_its_mode(tmp_path, monkeypatch):
    synced = _record_fsyncs(monkeypatch)
    source_path = tmp_path / "src" / "m.py"
    source_path.parent.mkdir()
    source_path.write_bytes(FIXABLE)
    source_path.chmod(0o751)
    files.write(files.read(source_path), "x = new_api(1)\n")
    assert source_path.read_bytes() == b"x = new_api(1)\n"
    assert source_path.stat().st_mode & 0o7777 == 0o751
    assert synced == [_inode(source_path), _inode(source_path.parent)]


def test_a_failed_rename_keeps_the_old_bytes_and_no_temp_file(tmp_path, monkeypatch):
    source_path = tmp_path / "m.py"
    source_path.write_bytes(FIXABLE)
    source = files.read(source_path)
    cache = Cache(tmp_path / "cache", Options((RENAME,)))
    result = SourceResult("a.py", Status.CHANGED, "old_api()\n", "new_api()\n", [], None, [])

    def replace(src, dst):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(files.os, "replace", replace)
    with pytest.raises(files.WriteRefused, match="m.py: cannot write \\(Input/output error\\)"):
        files.write(source, "x = new_api(1)\n")
    cache.put(Path("a.py"), b"old_api()\n", result)  # a cache never raises: the entry is just not there
    assert source_path.read_bytes() == FIXABLE
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["m.py"]


@contextlib.contextmanager
def writes_denied(directory: Path, monkeypatch):
    """A directory in which creating or renaming files fails, even for root
    (chattr +i; where root cannot, as in a container without
    CAP_LINUX_IMMUTABLE, creating a file there raises what chattr gives)."""
    if ROOT and shutil.which("chattr"):
        done = subprocess.run(["chattr", "+i", str(directory)], capture_output=True)
        if done.returncode == 0:
            try:
                yield "Operation not permitted"
            finally:
                subprocess.run(["chattr", "-i", str(directory)], check=True)
            return
    if ROOT:
        real_mkstemp = files.tempfile.mkstemp

        def mkstemp(*args, dir=None, **kwargs):
            if dir is not None and Path(dir) == directory:
                raise PermissionError(errno.EPERM, "Operation not permitted", os.fsdecode(dir))
            return real_mkstemp(*args, dir=dir, **kwargs)

        monkeypatch.setattr(files.tempfile, "mkstemp", mkstemp)
        yield "Operation not permitted"
        return
    directory.chmod(0o555)
    try:
        yield "Permission denied"
    finally:
        directory.chmod(0o755)


@contextlib.contextmanager
def listing_denied(directory: Path, monkeypatch):
    if not ROOT:
        directory.chmod(0)
        try:
            yield
        finally:
            directory.chmod(0o755)
        return
    real_scandir = os.scandir

    def scandir(path="."):
        if Path(os.fsdecode(path)) == directory:
            raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    yield


FIXABLE = b"x = old_api(1)\n"


def hostile_tree(root: Path) -> dict:
    """name -> bytes; the files that should be fixed have `old_api`."""
    content = {
        "ok.py": FIXABLE,
        "readonly.py": FIXABLE,
        "nul.py": b"x = old_api(1)\0\n",
        "big.py": FIXABLE + b"# padding\n" * (10 * 1024 * 1024 // 10),
        "latin.py": b"# -*- coding: latin-1 -*-\ns = 'caf\xe9'\nold_api()\n",
        "bom.py": b"\xef\xbb\xbfs = 'caf\xc3\xa9'\nold_api()\n",
        "crlf.py": b"a = 1\r\nold_api()\r\n",
        "changed.py": FIXABLE,
        "locked/inner.py": FIXABLE,
        "closed/hidden.py": FIXABLE,
    }
    for name, data in content.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (root / "readonly.py").chmod(0o444)
    (root / "loop_a.py").symlink_to(root / "loop_b.py")
    (root / "loop_b.py").symlink_to(root / "loop_a.py")
    (root / "locked" / "again").symlink_to(root / "locked", target_is_directory=True)
    return content


def test_hostile_tree_every_problem_named_nothing_lost(tmp_path, toy_recipes, monkeypatch):
    root = tmp_path / "tree"
    content = hostile_tree(root)
    real_write = files.write

    def write_after_someone_else(source, text):
        if source.path.name == "changed.py":
            source.path.write_bytes(b"x = old_api(2)  # edited meanwhile\n")
        return real_write(source, text)

    monkeypatch.setattr(files, "write", write_after_someone_else)
    with writes_denied(root / "locked", monkeypatch) as denial, listing_denied(root / "closed", monkeypatch):
        result = runner.invoke(app, ["fix", "--jobs", "2", "--no-cache", str(root)])
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    expected = {
        "readonly.py": "read-only file",
        "nul.py": "contains a NUL byte",
        "big.py": "-byte limit",
        "locked/inner.py": f"cannot write ({denial})",
        "closed": "cannot list (Permission denied)",
        "changed.py": "changed on disk since it was read",
    }
    for name, reason in expected.items():
        [line] = [e for e in errors if e.startswith(f"error: {root / name}:")]
        assert reason in line, line
    assert len(errors) == len(expected), errors
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [f"warning: {root / name}: symlink loop, not followed"  # not errors
                        for name in ("locked/again", "loop_a.py", "loop_b.py")]

    fixed = {"ok.py", "latin.py", "bom.py", "crlf.py"}
    for name, data in content.items():
        now = (root / name).read_bytes()
        if name in fixed:
            assert now == data.replace(b"old_api", b"new_api"), name  # encoding, BOM, CRLF kept
        elif name == "changed.py":
            assert now == b"x = old_api(2)  # edited meanwhile\n"
        else:
            assert now == data, name
    assert not [p for p in root.rglob("*.tf-migrate")]


def test_huge_single_line_and_deep_nesting_do_not_crash(tmp_path, toy_recipes):
    (tmp_path / "wide.py").write_text("x = [" + "old_api(1), " * 3_000 + "]\n")
    deepest = "x = " + "(" * 199 + "old_api()" + ")" * 199 + "\n"  # Python allows 200 levels
    (tmp_path / "deep.py").write_text(deepest)
    too_deep = "x = " + "(" * 2_000 + "old_api()" + ")" * 2_000 + "\n"  # not Python at all
    (tmp_path / "too_deep.py").write_text(too_deep)
    (tmp_path / "ok.py").write_bytes(FIXABLE)
    result = runner.invoke(app, ["fix", "--no-cache", str(tmp_path)])
    assert (tmp_path / "ok.py").read_bytes() == b"x = new_api(1)\n"
    assert (tmp_path / "wide.py").read_text().count("new_api") == 3_000
    assert (tmp_path / "deep.py").read_text() == deepest.replace("old_api", "new_api")
    assert (tmp_path / "too_deep.py").read_text() == too_deep
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert [line.split(": ")[1] for line in errors] == [str(tmp_path / "too_deep.py")], errors
    assert result.exit_code == 2


@pytest.mark.parametrize("source, line", [
    ("with (open('a') as f, open('b') as g):\n    old_api()\n", 1),
    ("with (\n    open('a') as f,\n    open('b') as g,\n):\n    old_api()\n", 2),
])
def test_parenthesized_with_is_named_in_the_reason(tmp_path, toy_recipes, source, line):
    (tmp_path / "ctx.py").write_text(source)
    result = runner.invoke(app, ["check", "--no-cache", str(tmp_path)])
    assert result.exit_code == 2
    assert (f"ctx.py: fissix cannot parse a parenthesized with statement (Python 3.10) "
            f"at line {line}") in result.stderr
