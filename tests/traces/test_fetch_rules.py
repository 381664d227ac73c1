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


def test_a_source_object_and_its_fields_by_name_fetch_the_same(tmp_path: Path) -> None:
    """``TraceSource`` and the same fields as keywords agree; a keyword overrides; bad fields refused."""
    from zeus_bench.core.errors import ConfigError
    from zeus_bench.traces.fetch import TraceSource

    asked: list[str] = []

    def serve(url: str) -> bytes:
        asked.append(url)
        return TRAIN if url.endswith("train.csv") else POWER

    source = TraceSource(url_template=URL, commit=COMMIT, fetch=serve)
    by_object = obtain_zeus_traces(_files(), tmp_path / "a", source)
    by_name = obtain_zeus_traces(_files(), tmp_path / "b", url_template=URL, commit=COMMIT, fetch=serve)
    assert by_object.to_json() == by_name.to_json() and by_object.gpus == ["v100"]
    assert asked[0] == f"http://127.0.0.1:9/{COMMIT}/trace/summary_train.csv" and len(asked) == 4
    other = obtain_zeus_traces(_files(), tmp_path / "c", source, commit="abc")
    assert other.source == "download:http://127.0.0.1:9/abc/trace/{file}" and asked[-1].startswith(
        "http://127.0.0.1:9/abc/"
    )
    with pytest.raises(ConfigError, match="timeout must be > 0"):
        obtain_zeus_traces(_files(), tmp_path / "d", source, timeout_s=0)
    with pytest.raises(TypeError, match="url"):
        obtain_zeus_traces(_files(), tmp_path / "e", url=URL)
    assert not (tmp_path / "d").exists() and not (tmp_path / "e").exists()
