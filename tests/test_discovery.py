"""Which files a directory walk finds, compared with git itself: every case
is a small tree with .gitignore files at several depths, made into a real
git repository, and `discover` must keep exactly the Python files and
notebooks that `git check-ignore` does not report as ignored. Named cases
pin the rules one by one; generated ones mix them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from migrate.discovery import discover
from required import unavailable

if shutil.which("git") is None:
    unavailable("these tests need git")

# name -> {path: .gitignore lines, or None for a source file}
CASES = {
    "nested negation keeps a file the root ignores": {
        ".gitignore": ["gen_*.py"],
        "sub/.gitignore": ["!gen_keep.py"],
        "gen_keep.py": None, "gen_a.py": None, "main.py": None,
        "sub/gen_keep.py": None, "sub/gen_b.py": None, "sub/deeper/gen_keep.py": None,
        "other/gen_keep.py": None,
    },
    "a directory excluded by a parent is never re-included": {
        ".gitignore": ["build/", "data/", "!data/keep.py", "out"],
        "build/.gitignore": ["!x.py"],
        "out/sub/.gitignore": ["!*.py"],
        "build/x.py": None, "data/keep.py": None, "out/sub/y.py": None, "ok.py": None,
    },
    "deeper files override shallower, last line wins within one": {
        ".gitignore": ["*.py", "!main.py"],
        "sub/.gitignore": ["!*.py", "secret.py"],
        "sub/deep/.gitignore": ["gen_*.py", "!gen_ok.py", "gen_ok.py", "!gen_ok.py"],
        "main.py": None, "util.py": None, "sub/util.py": None, "sub/secret.py": None,
        "sub/deep/gen_a.py": None, "sub/deep/gen_ok.py": None, "sub/deep/secret.py": None,
    },
    "anchored and slashed patterns are relative to their .gitignore": {
        "sub/.gitignore": ["/local.py", "x/*.py", "**/tmp/*.py", "a/**/b.py", "doc/**"],
        "local.py": None, "sub/local.py": None, "sub/y/local.py": None,
        "sub/x/a.py": None, "sub/y/x/a.py": None, "sub/x/deep/a.py": None,
        "sub/tmp/t.py": None, "sub/q/tmp/t.py": None, "tmp/t.py": None,
        "sub/a/b.py": None, "sub/a/m/n/b.py": None, "a/b.py": None,
        "sub/doc/d.py": None, "sub/doc/more/d.py": None,
    },
    "allow-list idiom: ignore all, re-include folders and sources": {
        ".gitignore": ["*", "!*/", "!*.py", "!*.ipynb"],
        "sub/.gitignore": ["notes.ipynb"],
        "a.py": None, "nb.ipynb": None, "sub/b.py": None, "sub/notes.ipynb": None,
        "sub/deep/notes.ipynb": None,
    },
    "a folder re-included deeper does not re-include what a shallower file ignores": {
        ".gitignore": ["gen/", "a.py", "vendor*"],
        "sub/.gitignore": ["!gen/", "!vendor_keep/"],
        "gen/x.py": None, "sub/gen/a.py": None, "sub/gen/b.py": None,
        "sub/vendor_keep/v.py": None, "sub/vendor_other/v.py": None, "sub/vendor.py": None,
    },
    "comments, blanks, escapes, trailing spaces, lines that are no pattern": {
        ".gitignore": ["# a comment", "", r"\#hash.py", r"\!bang.py", "spaced.py   ",
                       r"keep\ me.py", "!", "\\", "/"],
        "#hash.py": None, "!bang.py": None, "spaced.py": None, "keep me.py": None,
        "plain.py": None,
    },
    "a directory pattern does not match a file of that name": {
        ".gitignore": ["pkg.py/", "lib/"],
        "sub/.gitignore": ["!lib"],
        "pkg.py": None, "lib/m.py": None, "sub/lib/m.py": None,
    },
}


def make_repo(root: Path, layout: dict) -> None:
    for name, lines in layout.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n" if lines is None else "\n".join(lines) + "\n")
    git(root, "init", "-q")


@pytest.fixture(autouse=True)
def no_user_git_config(tmp_path, monkeypatch):
    """`discover` asks git for core.excludesFile: the user's own must not count."""
    monkeypatch.setenv("HOME", str(tmp_path / ".home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".no-config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def git(root: Path, *args: str, stdin: str = "", global_excludes: bool = False) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1",
           "XDG_CONFIG_HOME": str(root / ".no-config")}
    config = [] if global_excludes else ["-c", "core.excludesFile="]
    return subprocess.run(["git", *config, *args], cwd=root, env=env,
                          input=stdin, capture_output=True, text=True)


def kept_by_git(root: Path, layout: dict, global_excludes: bool = False) -> set:
    sources = sorted(name for name, lines in layout.items() if lines is None)
    done = git(root, "check-ignore", "--stdin", stdin="".join(f"{n}\n" for n in sources),
               global_excludes=global_excludes)
    assert done.returncode in (0, 1), done.stderr  # 1: nothing ignored
    ignored = set(done.stdout.splitlines())
    assert ignored <= set(sources), done.stdout
    return set(sources) - ignored


@pytest.mark.parametrize("layout", CASES.values(), ids=list(CASES))
def test_walk_keeps_what_git_keeps(tmp_path, layout):
    make_repo(tmp_path, layout)
    expected = kept_by_git(tmp_path, layout)
    found = discover([tmp_path])
    assert found.problems == []
    assert {p.relative_to(tmp_path).as_posix() for p in found.files} == expected


PATTERNS = ["*.py", "gen_*.py", "!gen_keep.py", "sub/", "!sub/", "sub", "/a.py", "a.py", "!a.py",
            "k.py", "!*.py", "*", "!*/", "*/", "**/", "!**/", "**", "/*", "!/*.py", "*/*.py",
            "deep/*.py", "**/x.py", "**/deep/**", "deep", "!deep", "/sub/deep/", "!*/deep/",
            "d*/", "!d1/", "sub/*/", "sub/**", "!sub/**", "!sub/k.py", "d1/**/k.py", "[ag]*.py",
            "?.py", "!gen_*"]
FILES = ["a.py", "gen_a.py", "gen_keep.py", "x.py", "k.py", "sub/a.py", "sub/gen_keep.py",
         "sub/k.py", "sub/x.py", "sub/deep/a.py", "sub/deep/x.py", "d1/a.py", "d2/gen_a.py",
         "deep/a.py", "d1/sub/k.py", "d1/sub/deep/gen_keep.py"]
FOLDERS = ["", "sub", "sub/deep", "d1", "deep", "d1/sub"]
GITIGNORES = st.dictionaries(st.sampled_from(FOLDERS),
                             st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=4),
                             min_size=1, max_size=3)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(GITIGNORES)
def test_generated_gitignores_keep_what_git_keeps(tmp_path_factory, gitignores):
    root = tmp_path_factory.mktemp("repo")
    layout = {**{f"{folder}/.gitignore".lstrip("/"): lines for folder, lines in gitignores.items()},
              **dict.fromkeys(FILES)}
    make_repo(root, layout)
    found = discover([root])
    assert {p.relative_to(root).as_posix() for p in found.files} == kept_by_git(root, layout)


def test_the_nested_negation_case_is_what_git_says(tmp_path):
    """The case from the review, spelled out (git's own answer, pinned)."""
    layout = CASES["nested negation keeps a file the root ignores"]
    make_repo(tmp_path, layout)
    assert kept_by_git(tmp_path, layout) == {"main.py", "sub/gen_keep.py",
                                             "sub/deeper/gen_keep.py"}


def test_exclude_wins_over_a_gitignore_negation(tmp_path):
    make_repo(tmp_path, {"sub/.gitignore": ["!*.py"], "sub/a.py": None, "sub/b.py": None})
    found = discover([tmp_path], exclude=["sub/a.py"])
    assert [p.relative_to(tmp_path).as_posix() for p in found.files] == ["sub/b.py"]


LAYERED = {
    ".gitignore": ["build/", "gen_*.py"],
    "src/.gitignore": ["!gen_keep.py"],
    "src/a.py": None, "src/gen_x.py": None, "src/gen_keep.py": None, "src/build/b.py": None,
    "src/scratch.py": None, "src/pkg/local_only.py": None, "src/pkg/c.py": None, "top.py": None,
}


def walked_below(root: Path, folder: str) -> set:
    found = discover([root / folder])
    assert found.problems == []
    return {p.relative_to(root).as_posix() for p in found.files}


def test_a_subfolder_walk_honours_gitignores_above_it_and_info_exclude(tmp_path):
    make_repo(tmp_path, LAYERED)
    (tmp_path / ".git" / "info").mkdir(exist_ok=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("scratch.py\n/src/pkg/local_only.py\n")
    expected = {n for n in kept_by_git(tmp_path, LAYERED) if n.startswith("src/")}
    assert expected == {"src/a.py", "src/gen_keep.py", "src/pkg/c.py"}  # git's own answer
    assert walked_below(tmp_path, "src") == expected


def test_core_excludes_file_from_the_repository_config(tmp_path):
    make_repo(tmp_path, LAYERED)
    excludes = tmp_path / "my-excludes"
    excludes.write_text("c.py\n")
    git(tmp_path, "config", "core.excludesFile", str(excludes), global_excludes=True)
    expected = kept_by_git(tmp_path, LAYERED, global_excludes=True)
    assert "src/pkg/c.py" not in expected and "src/a.py" in expected
    assert walked_below(tmp_path, "") == expected


def test_a_linked_work_tree_reads_its_main_repositorys_info_exclude(tmp_path):
    main = tmp_path / "main"
    make_repo(main, {"keep.py": None})
    git(main, "add", "-A")
    git(main, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    (main / ".git" / "info").mkdir(exist_ok=True)
    (main / ".git" / "info" / "exclude").write_text("scratch.py\n")
    linked = tmp_path / "linked"
    assert git(main, "worktree", "add", "-q", str(linked)).returncode == 0
    (linked / "scratch.py").write_text("x = 1\n")
    assert kept_by_git(linked, {"keep.py": None, "scratch.py": None}) == {"keep.py"}
    assert walked_below(linked, "") == {"keep.py"}
