"""Obtaining the Zeus traces: local copy, pinned download (file:// URL), sha256 checks, offline."""

from __future__ import annotations

import hashlib
import json
import shutil
import urllib.error
from pathlib import Path

import pytest

from zeus_bench.cli.main import main
from zeus_bench.core.errors import ConfigError, TraceFormatError
from zeus_bench.traces.fetch import TracesUnavailableError, obtain_zeus_traces, parse_file_spec

TRAIN_SHA = "076b35615349ee624403006e5ad67fd9ebda92af690c7750f8bb0c2ab92c0cf4"
V100_SHA = "f0b066dd1a451bd78f730e001ac3a7c411979bc7f0846f12c1a9fb604aa90628"
URL = "https://raw.githubusercontent.com/SymbioticLab/Zeus/{commit}/trace/{file}"
COMMIT = "3df2fc42768a05e3bea7defdd55cdd0ea981aa7e"


@pytest.fixture
def files() -> dict[str, str | None]:
    return {
        "summary_train.csv": TRAIN_SHA,
        "summary_power_v100.csv": V100_SHA,
        "summary_power_p100.csv": None,
    }


def test_config_hashes_match_the_local_copy(zeus_csv_dir):
    import yaml

    cfg = yaml.safe_load((Path(__file__).parents[2] / "config" / "config.yaml").read_text())
    for name, sha in cfg["traces"]["zeus"]["files"].items():
        if sha is not None and (zeus_csv_dir / name).exists():
            assert hashlib.sha256((zeus_csv_dir / name).read_bytes()).hexdigest() == sha


def test_local_copy_is_verified_and_listed(zeus_csv_dir, tmp_path, files):
    result = obtain_zeus_traces(files, tmp_path / "out", local_dir=zeus_csv_dir)
    assert result.status == "ok"
    assert result.gpus == ["v100"]
    assert result.files["summary_train.csv"] == {"sha256": TRAIN_SHA, "verified": True}
    assert result.skipped == {"summary_power_p100.csv": "absent from the local copy"}
    assert (tmp_path / "out" / "summary_power_v100.csv").read_bytes() == (
        zeus_csv_dir / "summary_power_v100.csv"
    ).read_bytes()
    manifest = json.loads((tmp_path / "out" / "MANIFEST.json").read_text())
    assert manifest["gpus"] == ["v100"] and manifest["status"] == "ok"


def test_sha256_mismatch_is_refused(zeus_csv_dir, tmp_path, files):
    local = tmp_path / "local"
    shutil.copytree(zeus_csv_dir, local)
    (local / "summary_power_v100.csv").write_bytes((local / "summary_power_v100.csv").read_bytes() + b"\n")
    with pytest.raises(TraceFormatError, match=r"sha256 mismatch for summary_power_v100\.csv"):
        obtain_zeus_traces(files, tmp_path / "out", local_dir=local)


def test_unverified_file_is_refused_unless_allowed(zeus_csv_dir, tmp_path):
    files = {"summary_train.csv": TRAIN_SHA, "summary_power_v100.csv": None}
    refused = obtain_zeus_traces(files, tmp_path / "a", local_dir=zeus_csv_dir)
    assert refused.gpus == []
    assert "no known sha256" in refused.skipped["summary_power_v100.csv"]
    assert not (tmp_path / "a" / "summary_power_v100.csv").exists()
    allowed = obtain_zeus_traces(files, tmp_path / "b", local_dir=zeus_csv_dir, allow_unverified=True)
    assert allowed.gpus == ["v100"]
    assert allowed.files["summary_power_v100.csv"]["verified"] is False


def test_download_from_pinned_url(zeus_csv_dir, tmp_path, files):
    url = f"file://{zeus_csv_dir}/{{file}}"
    result = obtain_zeus_traces(files, tmp_path / "out", url_template=url, commit=COMMIT)
    assert result.gpus == ["v100"]
    assert result.source == f"download:file://{zeus_csv_dir}/{{file}}"
    assert result.skipped["summary_power_p100.csv"].startswith("no known sha256")


def test_download_checks_sha256(tmp_path, files):
    served = {"summary_train.csv": b"tampered", "summary_power_v100.csv": b"x"}
    with pytest.raises(TraceFormatError, match=r"sha256 mismatch for summary_train\.csv"):
        obtain_zeus_traces(
            files, tmp_path, url_template=URL, commit=COMMIT, fetch=lambda url: served[url.rsplit("/", 1)[1]]
        )


def test_missing_power_file_upstream_is_skipped(zeus_csv_dir, tmp_path):
    files = {"summary_train.csv": TRAIN_SHA, "summary_power_rtx6000.csv": "0" * 64}

    def fetch(url: str) -> bytes:
        if url.endswith("rtx6000.csv"):
            raise urllib.error.HTTPError(url, 404, "Not Found", {}, None)  # type: ignore[arg-type]
        return (zeus_csv_dir / "summary_train.csv").read_bytes()

    result = obtain_zeus_traces(files, tmp_path, url_template=URL, commit=COMMIT, fetch=fetch)
    assert result.skipped == {"summary_power_rtx6000.csv": "not found upstream (HTTP 404)"}
    assert result.gpus == []


def _offline(url: str) -> bytes:
    raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")


def test_offline_without_local_copy_says_how_to_point_at_one(tmp_path, files):
    with pytest.raises(TracesUnavailableError) as err:
        obtain_zeus_traces(files, tmp_path, url_template=URL, commit=COMMIT, fetch=_offline)
    msg = str(err.value)
    assert "offline?" in msg and "ZEUS_TRACE_DIR" in msg and "traces.zeus.local_dir" in msg and COMMIT in msg
    assert "\n" not in msg


def test_offline_allow_missing_writes_unavailable_manifest(tmp_path, files):
    result = obtain_zeus_traces(
        files, tmp_path, url_template=URL, commit=COMMIT, fetch=_offline, allow_missing=True
    )
    manifest = json.loads((tmp_path / "MANIFEST.json").read_text())
    assert result.status == manifest["status"] == "unavailable"
    assert "ZEUS_TRACE_DIR" in manifest["message"]
    assert manifest["gpus"] == []


def test_no_download_and_no_local_copy(tmp_path, files):
    with pytest.raises(TracesUnavailableError, match="no download URL; point at a local copy"):
        obtain_zeus_traces(files, tmp_path, commit=COMMIT)


def test_bad_file_lists_are_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"must include summary_train\.csv"):
        obtain_zeus_traces({"summary_power_v100.csv": None}, tmp_path, local_dir=tmp_path)
    with pytest.raises(ConfigError, match="unknown trace file name"):
        obtain_zeus_traces({"summary_train.csv": None, "evil.sh": None}, tmp_path, local_dir=tmp_path)
    with pytest.raises(ConfigError, match="no such folder"):
        obtain_zeus_traces({"summary_train.csv": None}, tmp_path / "out", local_dir=tmp_path / "nope")


def test_parse_file_spec():
    assert parse_file_spec(f"summary_train.csv={TRAIN_SHA.upper()}") == ("summary_train.csv", TRAIN_SHA)
    assert parse_file_spec("summary_power_p100.csv") == ("summary_power_p100.csv", None)
    with pytest.raises(ConfigError, match="64 hex digits"):
        parse_file_spec("summary_train.csv=abc")
    with pytest.raises(ConfigError, match="bad trace file name"):
        parse_file_spec("../x.csv")


def test_cli_ok_and_errors(zeus_csv_dir, tmp_path, capsys):
    args = [
        "fetch-traces",
        "--out",
        str(tmp_path / "o"),
        "--file",
        f"summary_train.csv={TRAIN_SHA}",
        "--file",
        f"summary_power_v100.csv={V100_SHA}",
    ]
    assert main([*args, "--local-dir", str(zeus_csv_dir), "--import-to", str(tmp_path / "pq")]) == 0
    out = capsys.readouterr().out
    assert f"ok {tmp_path / 'o' / 'summary_train.csv'} sha256 {TRAIN_SHA}" in out
    assert sorted(p.name for p in (tmp_path / "pq").iterdir()) == ["power-v100.parquet", "train.parquet"]
    assert main([*args, "--url", "file:///nonexistent/{file}", "--commit", COMMIT, "--force"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "zeus-bench: error: cannot download summary_train.csv from file:///nonexistent/summary_train.csv: "
    )
    assert "ZEUS_TRACE_DIR" in err and err.count("\n") == 1
    assert (
        main(
            [
                *args,
                "--url",
                "file:///nonexistent/{file}",
                "--allow-missing",
                "--force",
                "--import-to",
                str(tmp_path / "e"),
            ]
        )
        == 0
    )
    assert "Zeus traces unavailable" in capsys.readouterr().err
    assert list((tmp_path / "e").iterdir()) == []
    assert main(["fetch-traces", "--out", str(tmp_path), "--file", "summary_train.csv=zz"]) == 2
    assert "64 hex digits" in capsys.readouterr().err
