"""The download path for real: trace files served by a local HTTP server on 127.0.0.1.

``zeus-bench fetch-traces`` and the workflow's fetch step are run against the server: a good
download, a checksum mismatch, a 404, a refused connection and a timeout. Every failure is one
line naming the file and its URL, exit status 2, and nothing is left behind: no output folder
and never a replaced report.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from trace_server import TraceServer, refused_port, serve_traces
from workflow_helpers import REPO, make_workdir

from zeus_bench.cli.main import main

TRAIN_SHA = "076b35615349ee624403006e5ad67fd9ebda92af690c7750f8bb0c2ab92c0cf4"
V100_SHA = "f0b066dd1a451bd78f730e001ac3a7c411979bc7f0846f12c1a9fb604aa90628"
FILES = [f"summary_train.csv={TRAIN_SHA}", f"summary_power_v100.csv={V100_SHA}"]


@pytest.fixture
def server(zeus_csv_dir: Path) -> Iterator[TraceServer]:
    with serve_traces(zeus_csv_dir) as srv:
        yield srv


def _fetch(out: Path, url: str, *extra: str) -> int:
    args = ["fetch-traces", "--out", str(out), "--url", url, "--commit", "0" * 40, "--timeout", "1"]
    for spec in FILES:
        args += ["--file", spec]
    return main([*args, *extra])


def test_cli_downloads_and_verifies(server, tmp_path, capsys):
    assert _fetch(tmp_path / "csv", server.base, "--import-to", str(tmp_path / "pq")) == 0
    out = capsys.readouterr().out
    assert f"ok {tmp_path / 'csv' / 'summary_train.csv'} sha256 {TRAIN_SHA}" in out
    assert server.requests == ["summary_train.csv", "summary_power_v100.csv"]
    manifest = json.loads((tmp_path / "csv" / "MANIFEST.json").read_text())
    assert manifest["status"] == "ok" and manifest["gpus"] == ["v100"]
    assert manifest["source"] == f"download:{server.base}/{{file}}"
    assert sorted(p.name for p in (tmp_path / "pq").iterdir()) == ["power-v100.parquet", "train.parquet"]
    assert not list(tmp_path.glob(".*"))  # no staging folder left


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("corrupt", "sha256 mismatch for summary_power_v100.csv: expected " + V100_SHA),
        ("404", "HTTP 404 Not Found"),
        ("slow", "timed out (no answer from the server)"),
    ],
)
def test_cli_failure_is_one_line_and_leaves_nothing(server, tmp_path, capsys, mode, reason):
    server.modes["summary_power_v100.csv" if mode == "corrupt" else "summary_train.csv"] = mode
    status = _fetch(tmp_path / "a" / "csv", server.base, "--import-to", str(tmp_path / "a" / "pq"))
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("zeus-bench: error: ")
    assert reason in err
    name = "summary_power_v100.csv" if mode == "corrupt" else "summary_train.csv"
    assert name in err and server.url(name) in err
    assert list(tmp_path.iterdir()) == []  # not even the parent folder


def test_cli_connection_refused(tmp_path, capsys):
    base = f"http://127.0.0.1:{refused_port()}"
    assert _fetch(tmp_path / "csv", base) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"cannot download summary_train.csv from {base}/summary_train.csv: connection refused" in err
    assert not (tmp_path / "csv").exists()


def test_cli_failure_keeps_a_previous_download(server, tmp_path, capsys):
    assert _fetch(tmp_path / "csv", server.base) == 0
    before = (tmp_path / "csv" / "MANIFEST.json").read_text()
    server.modes["summary_train.csv"] = "404"
    assert _fetch(tmp_path / "csv", server.base) == 2
    assert (tmp_path / "csv" / "MANIFEST.json").read_text() == before
    assert sorted(p.name for p in (tmp_path / "csv").iterdir()) == [
        "MANIFEST.json",
        "summary_power_v100.csv",
        "summary_train.csv",
    ]


# The workflow's own fetch step (the `zeus_traces` checkpoint), pointed at the server by ZEUS_TRACE_URL.

COMMITTED_REPORT = "committed report: must survive\n"


def _workdir(tmp_path: Path, url: str) -> tuple:
    wd = make_workdir(
        tmp_path,
        {"traces": {"zeus": {"timeout_s": 1}}, "figures": {"formats": ["png"], "dpi": 50}},
        env_extra={"ZEUS_TRACE_URL": url},
    )
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "report.md").write_text(COMMITTED_REPORT)
    return wd


def test_workflow_fetch_downloads_from_the_configured_url(server, tmp_path):
    wd = _workdir(tmp_path, server.base)
    wd.snakemake("data/traces/zeus-csv")
    manifest = json.loads((tmp_path / "data" / "traces" / "zeus-csv" / "MANIFEST.json").read_text())
    assert manifest["status"] == "ok" and manifest["source"] == f"download:{server.base}/{{file}}"
    assert {"v100", "a40"} <= set(manifest["gpus"])
    assert (tmp_path / "data" / "traces" / "zeus" / "train.parquet").is_file()
    assert "summary_train.csv" in server.requests


@pytest.mark.parametrize("mode", ["corrupt", "404", "slow", "refused"])
def test_workflow_fetch_failure_stops_cleanly(zeus_csv_dir, tmp_path, mode):
    with serve_traces(zeus_csv_dir) as srv:
        base = f"http://127.0.0.1:{refused_port()}" if mode == "refused" else srv.base
        srv.modes["summary_train.csv"] = mode
        wd = _workdir(tmp_path, base)
        out = wd.snakemake(check=False)
    assert out.returncode != 0
    log = (tmp_path / "logs" / "zeus_traces.log").read_text().splitlines()
    assert len(log) == 1 and log[0].startswith("zeus-bench: error: ")
    assert f"summary_train.csv from {base}/summary_train.csv" in log[0] or (
        mode == "corrupt" and f"{base}/summary_train.csv: sha256 mismatch for summary_train.csv" in log[0]
    )
    assert log[0] in out.stdout + out.stderr  # shown on the console, not only in the log
    assert not (tmp_path / "data" / "traces" / "zeus-csv").exists()
    assert not (tmp_path / "data" / "traces" / "zeus").exists()
    assert (tmp_path / "results" / "report.md").read_text() == COMMITTED_REPORT
    assert not (tmp_path / "results" / "report-partial.md").exists()


def test_config_url_and_env_override(tmp_path):
    from zeus_bench.traces.fetch import file_url, url_template_from

    assert url_template_from("https://x/{commit}/{file}", {}) == "https://x/{commit}/{file}"
    assert (
        url_template_from("https://x/{commit}/{file}", {"ZEUS_TRACE_URL": "http://m/t/"})
        == "http://m/t/{file}"
    )
    assert (
        file_url("https://x/{commit}/t/{file}", "abc", "summary_train.csv")
        == "https://x/abc/t/summary_train.csv"
    )
    assert "ZEUS_TRACE_URL" in (REPO / "config" / "config.yaml").read_text()


def test_make_shows_install_progress_and_reproduce_fits_a_terminal():
    makefile = (REPO / "Makefile").read_text()
    flags = next(line for line in makefile.splitlines() if line.startswith("PIP_FLAGS"))
    assert "-q" not in flags.split() and "--progress-bar on" in flags
    assert "--printshellcmds" not in makefile  # command lines are thousands of characters long
    profile = (REPO / "profiles" / "default" / "config.yaml").read_text()
    assert "quiet:\n  - rules" in profile


def test_missing_local_copy_leaves_no_folder(tmp_path, capsys):
    args = ["fetch-traces", "--out", str(tmp_path / "a" / "csv"), "--file", f"summary_train.csv={TRAIN_SHA}"]
    assert (
        main([*args, "--local-dir", str(tmp_path / "nope"), "--import-to", str(tmp_path / "a" / "pq")]) == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{tmp_path / 'nope'}: no such folder" in err
    assert list(tmp_path.iterdir()) == []
