"""The Alibaba job groups: git blob SHA-1 verification, fetch from a local server, import to an arrival table."""

from __future__ import annotations

import json
import lzma
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from alibaba_helpers import synthetic_alibaba_csv, write_synthetic_alibaba
from trace_server import serve_traces

from zeus_bench.cli.main import main
from zeus_bench.traces.alibaba_fetch import git_blob_sha1, git_blob_sha1_file

PINNED = "c30bfb7215fb474872a629139537efe063d4f74f"


def test_blob_sha1_is_gits_object_id(tmp_path):
    path = write_synthetic_alibaba(tmp_path)
    if shutil.which("git"):
        out = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True)
        assert git_blob_sha1_file(path) == out.stdout.strip()
    assert git_blob_sha1(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # git's empty blob
    assert git_blob_sha1(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


@pytest.fixture
def served(tmp_path):
    root = tmp_path / "srv"
    path = write_synthetic_alibaba(root)
    with serve_traces(root) as srv:
        yield srv, git_blob_sha1_file(path)


def _fetch(out: Path, base: str, sha1: str, *extra: str) -> int:
    return main(
        [
            "traces",
            "fetch-alibaba",
            "--out",
            str(out),
            "--blob-sha1",
            sha1,
            "--url",
            base,
            "--commit",
            "0" * 40,
            "--timeout",
            "1",
            *extra,
        ]
    )


def test_fetch_verifies_records_sha256_and_imports(served, tmp_path, capsys):
    srv, sha1 = served
    out = tmp_path / "a" / "alibaba"
    assert _fetch(out, srv.base, sha1, "--import-to", str(out / "arrivals.parquet")) == 0
    manifest = json.loads((out / "MANIFEST.json").read_text())
    assert manifest["status"] == "ok" and manifest["git_blob_sha1"] == sha1
    import hashlib

    assert manifest["sha256"] == hashlib.sha256((out / "alibaba_groups.csv.xz").read_bytes()).hexdigest()
    assert manifest["source"] == f"download:{srv.base}/alibaba_groups.csv.xz"
    table = pd.read_parquet(out / "arrivals.parquet")
    assert list(table.columns) == ["group", "start_time", "end_time", "workload", "runtime_ratio"]
    assert set(table["workload"]) == {
        "cifar100",
        "imagenet",
        "squad",
        "librispeech",
        "movielens-1m",
        "sentiment140",
    }
    assert f"git blob {sha1} sha256 {manifest['sha256']}" in capsys.readouterr().out


@pytest.mark.parametrize("mode", ["corrupt", "pinned"])
def test_wrong_hash_is_one_line_and_leaves_nothing(served, tmp_path, capsys, mode):
    srv, sha1 = served
    if mode == "corrupt":
        srv.modes["alibaba_groups.csv.xz"] = "corrupt"
    else:
        sha1 = PINNED  # the real file's id: the synthetic file is not it
    status = _fetch(
        tmp_path / "a" / "alibaba", srv.base, sha1, "--import-to", str(tmp_path / "a" / "x.parquet")
    )
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and err.startswith("zeus-bench: error: ")
    assert (
        f"{srv.base}/alibaba_groups.csv.xz: git blob SHA-1 mismatch for alibaba_groups.csv.xz: expected {sha1}"
        in err
    )
    assert list(tmp_path.iterdir()) == ["srv"] or sorted(p.name for p in tmp_path.iterdir()) == ["srv"]


def test_absent_upstream_or_locally_is_recorded_not_an_error(served, tmp_path, capsys):
    srv, sha1 = served
    srv.modes["alibaba_groups.csv.xz"] = "404"
    assert _fetch(tmp_path / "a", srv.base, sha1) == 0
    manifest = json.loads((tmp_path / "a" / "MANIFEST.json").read_text())
    assert manifest["status"] == "absent" and "HTTP 404" in manifest["reason"]
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["MANIFEST.json"]
    (tmp_path / "local").mkdir()
    assert (
        main(
            [
                "traces",
                "fetch-alibaba",
                "--out",
                str(tmp_path / "b"),
                "--blob-sha1",
                sha1,
                "--local-dir",
                str(tmp_path / "local"),
            ]
        )
        == 0
    )
    reason = json.loads((tmp_path / "b" / "MANIFEST.json").read_text())["reason"]
    assert reason == "alibaba_groups.csv.xz is absent from the local copy of the Zeus traces"
    assert main(["traces", "fetch-alibaba", "--out", str(tmp_path / "c"), "--blob-sha1", "xyz"]) == 2
    assert "git blob SHA-1 must be 40 hex digits" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


def _import(tmp_path: Path, text: str | bytes, name: str = "g.csv") -> tuple[int, Path]:
    src = tmp_path / name
    src.write_bytes(text if isinstance(text, bytes) else text.encode())
    out = tmp_path / "out" / "arrivals.parquet"
    return main(["traces", "import-alibaba", str(src), "--out", str(out)]), out


def test_import_plain_and_xz_give_the_same_table(tmp_path):
    text = synthetic_alibaba_csv(groups_per_workload=1, seed=4)
    status, out = _import(tmp_path, text)
    assert status == 0
    plain = pd.read_parquet(out)
    status, out = _import(tmp_path, lzma.compress(text.encode()), "g.csv.xz")
    assert status == 0
    pd.testing.assert_frame_equal(plain, pd.read_parquet(out))
    src = pd.read_csv(tmp_path / "g.csv")
    assert len(plain) == len(src) and plain["runtime_ratio"].sum() == pytest.approx(
        src["runtime_ratio"].sum()
    )
    # dataset became workload, rows sorted by group then start
    assert (plain.groupby("group")["start_time"].apply(lambda s: s.is_monotonic_increasing)).all()


HEAD = "group,start_time,end_time,dataset,runtime_ratio\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("group,start_time,end_time,runtime_ratio\na,0,1,1\n", "missing column(s) dataset"),
        (HEAD + "a,0,1,cifar101,1\n", "column 'dataset': unknown workload(s) cifar101"),
        (HEAD + "a,0,1,cifar100,0\n", "'runtime_ratio' row 0: 0 is outside (0, 1e+06]"),
        (HEAD + "a,5,1,cifar100,1\n", "end_time must be after start_time"),
        (HEAD + "a,x,1,cifar100,1\n", "column 'start_time' row 0: not a finite number"),
        (HEAD + "a,0,1,cifar100,1\na,2,3,squad,1\n", "group 'a' has more than one workload"),
        (HEAD + "a,0,1,cifar100,1,7\n", "g.csv"),
    ],
)
def test_import_refuses_bad_tables_in_one_line(tmp_path, capsys, text, message):
    status, _ = _import(tmp_path, text)
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and message in err and "g.csv" in err
    assert not (tmp_path / "out").exists()


def test_import_refuses_a_truncated_xz(tmp_path, capsys):
    data = lzma.compress(synthetic_alibaba_csv().encode())
    status, _ = _import(tmp_path, data[: len(data) // 2], "g.csv.xz")
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "not a readable Alibaba group table" in err
    assert not (tmp_path / "out").exists()
