"""The commit in a table's provenance, read from the repository's files as git would report it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from zeus_bench.core import provenance

A, B = "a" * 40, "0123456789abcdef0123456789abcdef01234567"


def _repo(root: Path, head: str) -> Path:
    git = root / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text(head + "\n")
    pkg = root / "src" / "pkg"
    pkg.mkdir(parents=True)
    return pkg


def test_loose_packed_detached_and_worktree_refs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in provenance._GIT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    pkg = _repo(tmp_path / "loose", "ref: refs/heads/main")
    (tmp_path / "loose" / ".git" / "refs" / "heads" / "main").write_text(A + "\n")
    assert provenance._head_from_files(pkg) == A
    pkg = _repo(tmp_path / "packed", "ref: refs/heads/main")
    (tmp_path / "packed" / ".git" / "packed-refs").write_text(
        f"# pack-refs\n{B} refs/heads/other\n{A} refs/heads/main\n"
    )
    assert provenance._head_from_files(pkg) == A
    assert provenance._head_from_files(_repo(tmp_path / "detached", B)) == B
    # a worktree: .git is a pointer to its folder, whose commondir holds the refs
    common = tmp_path / "packed" / ".git"
    wt_git = common / "worktrees" / "wt"
    wt_git.mkdir(parents=True)
    (wt_git / "HEAD").write_text("ref: refs/heads/other\n")
    (wt_git / "commondir").write_text("../..\n")
    wt = tmp_path / "wt"
    (wt / "pkg").mkdir(parents=True)
    (wt / ".git").write_text(f"gitdir: {wt_git}\n")
    assert provenance._head_from_files(wt / "pkg") == B


def test_what_the_files_do_not_tell_is_left_to_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in provenance._GIT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    pkg = _repo(tmp_path / "r", "ref: refs/heads/gone")  # a branch with no commit yet
    assert provenance._head_from_files(pkg) is None
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "r" / ".git"))
    assert provenance._head_from_files(pkg) is None


@pytest.mark.skipif(shutil.which("git") is None, reason="no git")
def test_this_checkout_reads_as_git_reports_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in provenance._GIT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    here = Path(provenance.__file__).resolve().parent
    out = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    assert provenance._head_from_files(here) == out.stdout.strip()
