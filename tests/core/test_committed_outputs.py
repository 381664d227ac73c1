"""Committed outputs are the same wherever they were made: no path of a machine in them."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[2]
#: Text outputs committed under these folders (code and scripts may name example paths).
OUTPUT_DIRS = ("results", "benchmarks/golden", "benchmarks/device")
TEXT_SUFFIXES = {".md", ".txt", ".log", ".json", ".csv"}
MACHINE_PATH = re.compile(r"(?<![\w$.])/(?:work|tmp|root|home|Users|mnt|scratch)/")


def _outputs(suffixes: set[str]) -> list[Path]:
    return sorted(
        p for d in OUTPUT_DIRS for p in (REPO / d).rglob("*") if p.is_file() and p.suffix in suffixes
    )


def test_the_pattern_finds_machine_paths_and_spares_placeholders():
    assert MACHINE_PATH.search("wrote /tmp/zb/shards/a.parquet")
    assert MACHINE_PATH.search("--out /root/out")
    assert not MACHINE_PATH.search("--work $WORK --state-dir $STATE_DIR/online, /path/to/traces")


def test_no_committed_text_output_names_a_machine_path():
    files = _outputs(TEXT_SUFFIXES)
    assert files, "no committed outputs found"
    found = [
        f"{p.relative_to(REPO)}:{n}: {line.strip()[:80]}"
        for p in files
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
        if MACHINE_PATH.search(line)
    ]
    assert not found, "\n".join(found)


def test_no_committed_parquet_metadata_names_a_machine_path():
    for p in _outputs({".parquet"}):
        meta = pq.read_schema(p).metadata or {}
        text = b" ".join(meta.values()).decode(errors="replace")
        assert not MACHINE_PATH.search(text), p.relative_to(REPO)
