"""The trace fetch's all-or-nothing rule, pinned before the redesign (traces/fetch.py).

Seen failing against the single-point bug of a download that fails after the first file leaving
that CSV beside an "unavailable" manifest.
"""

from __future__ import annotations

import hashlib
import json
import urllib.error
from pathlib import Path

import pytest

from zeus_bench.core.errors import TraceFormatError
from zeus_bench.traces.fetch import TracesUnavailableError, obtain_zeus_traces, read_manifest

URL = "http://127.0.0.1:9/{commit}/trace/{file}"
COMMIT = "3df2fc42768a05e3bea7defdd55cdd0ea981aa7e"
TRAIN = b"dataset,network,optimizer,batch_size,learning_rate,run,target_metric,target_epoch\n"
POWER = b"gpu,dataset\nv100,x\n"


def _files() -> dict[str, str | None]:
    return {
        "summary_train.csv": hashlib.sha256(TRAIN).hexdigest(),
        "summary_power_v100.csv": hashlib.sha256(POWER).hexdigest(),
    }


def _fails_after_train(url: str) -> bytes:
    if url.endswith("summary_train.csv"):
        return TRAIN
    raise urllib.error.URLError("connection reset by peer")


def test_failure_after_the_first_file_leaves_only_the_unavailable_manifest(tmp_path: Path) -> None:
    out = tmp_path / "zeus"
    result = obtain_zeus_traces(
        _files(), out, url_template=URL, commit=COMMIT, fetch=_fails_after_train, allow_missing=True
    )
    assert result.status == "unavailable" and result.files == {}
    assert sorted(p.name for p in out.iterdir()) == ["MANIFEST.json"]
    manifest = json.loads((out / "MANIFEST.json").read_text())
    assert manifest["status"] == "unavailable" and "summary_power_v100.csv" in manifest["message"]


def test_failure_after_the_first_file_keeps_the_previous_folder(tmp_path: Path) -> None:
    out = tmp_path / "zeus"
    ok = obtain_zeus_traces(
        _files(),
        out,
        url_template=URL,
        commit=COMMIT,
        fetch=lambda u: TRAIN if u.endswith("train.csv") else POWER,
    )
    assert ok.status == "ok" and ok.gpus == ["v100"]
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(TracesUnavailableError, match=r"summary_power_v100\.csv"):
        obtain_zeus_traces(
            _files(), out, url_template=URL, commit=COMMIT, fetch=_fails_after_train, force=True
        )
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["zeus"]  # no staging folder left


def test_read_manifest_reads_what_the_fetch_wrote_and_refuses_the_rest(tmp_path: Path) -> None:
    out = tmp_path / "zeus"
    obtain_zeus_traces(
        _files(),
        out,
        url_template=URL,
        commit=COMMIT,
        fetch=lambda u: TRAIN if u.endswith("train.csv") else POWER,
    )
    manifest = read_manifest(out)
    assert manifest["status"] == "ok" and manifest["gpus"] == ["v100"]
    assert set(manifest["files"]) == {"summary_train.csv", "summary_power_v100.csv"}
    with pytest.raises(
        TraceFormatError, match=r"MANIFEST\.json: no such file \(run 'zeus-bench fetch-traces'\)"
    ):
        read_manifest(tmp_path / "none")
    (out / "MANIFEST.json").write_text("{not json")
    with pytest.raises(TraceFormatError, match="corrupt manifest"):
        read_manifest(out)
    (out / "MANIFEST.json").write_text("[1, 2]")
    with pytest.raises(TraceFormatError, match="corrupt manifest"):
        read_manifest(str(out))
