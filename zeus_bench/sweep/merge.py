"""Merge of power-trace shards (one per sweep cell) into one trace; train-trace shards the same way.

Every shard is read and validated; the merged rows must not repeat a key (the same GPU,
workload, batch size and limit measured twice is refused, naming both shards; for train shards,
the same batch size and run). The kind is the first shard's (``power`` or ``train``). The merged
file's provenance lists each shard with its sha256 and its own provenance, so nothing measured
about a cell (GPU name, driver, software, measuring settings) is lost in the merge.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from zeus_bench.core.errors import ConfigError, TraceFormatError
from zeus_bench.core.faults import fault_point
from zeus_bench.core.fsutil import remove_partial_writes
from zeus_bench.core.provenance import sha256_file
from zeus_bench.store import read_metadata, read_table, validate, write_table

log = logging.getLogger(__name__)

_KEY = ["gpu", "dataset", "network", "optimizer", "batch_size", "power_limit_w"]
_TRAIN_KEY = ["dataset", "network", "optimizer", "batch_size", "run"]


def merge_shards(shards: Sequence[str | Path], out: str | Path) -> pd.DataFrame:
    """Merge power-trace (or train-trace) shards into ``out``; return the merged rows.

    Raises:
        TraceFormatError: a shard is not a valid trace of the first one's kind, or two shards
            hold the same key.
        ConfigError: no shards.
    """
    if not shards:
        raise ConfigError("sweep-merge: no shards given")
    kind = "train" if read_metadata(shards[0]).get("kind") == "train" else "power"
    key = _TRAIN_KEY if kind == "train" else _KEY
    frames: list[pd.DataFrame] = []
    sources: list[dict[str, object]] = []
    metas: list[dict[str, object]] = []
    for path in map(Path, shards):
        df = read_table(path, kind)
        meta = dict(df.attrs.get("zeus_bench", {}))
        metas.append(meta)
        sources.append({"file": path.name, "sha256": sha256_file(path), "provenance": meta})
        frames.append(df.assign(_shard=path.name))
    merged = pd.concat(frames, ignore_index=True)
    dup = merged.duplicated(key, keep=False)
    if dup.any():
        rows = merged[dup].sort_values(key)
        first = rows.iloc[0]
        where = sorted(set(rows.loc[(rows[key] == first[key]).all(axis=1), "_shard"]))
        at = (
            f"run {first['run']}" if kind == "train" else f"at {first['power_limit_w']:g} W on {first['gpu']}"
        )
        raise TraceFormatError(
            f"sweep-merge: {first['dataset']}/{first['network']} batch size {first['batch_size']} "
            f"{at} is in several shards: {', '.join(where)}"
        )
    for stale in remove_partial_writes(out):
        log.warning("removed %s, a partial write of %s left by a killed merge", stale, Path(out).name)
    merged = merged.drop(columns="_shard").sort_values(key, kind="stable").reset_index(drop=True)
    merged = validate(merged, kind, where=str(out))
    complete = all(bool(meta.get("complete", True)) for meta in metas)
    fault_point("merge")
    write_table(
        merged,
        out,
        kind,
        provenance={"source": "zeus-bench sweep-merge", "complete": complete, "shards": sources},
    )
    log.info("merged %d shard(s) into %s (%d rows)", len(sources), out, len(merged))
    return merged
