"""The simulator's pandas-free path: trace columns, jobs built from them, runs written from columns.

Each piece is compared with the pandas computation it replaces (the same values, bit for bit),
and ``zeus-bench simulate`` is checked not to import pandas at all.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.helpers.tiny_traces import write_tiny_traces
from zeus_bench.core.errors import TraceFormatError
from zeus_bench.store import ColumnTable, TableWriter, read_columns, read_table
from zeus_bench.traces._columns import group_mean as _group_mean
from zeus_bench.traces._columns import inner_join
from zeus_bench.traces._columns import series_mean as _mean
from zeus_bench.traces.jobs import TraceSet, build_job

REPO = Path(__file__).resolve().parents[2]


def _same_job(a: object, b: object) -> None:
    for f in dataclasses.fields(a):  # type: ignore[arg-type]
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), f.name
        elif isinstance(x, tuple):
            assert [v.tobytes() for v in x] == [v.tobytes() for v in y], f.name
        else:
            assert x == y, f.name


def _check_traces(folder: Path) -> None:
    ts = TraceSet(folder)
    for gpu in ts.gpus:
        joined = ts.joined(gpu)  # pandas merge
        columns = ts._joined_columns(gpu)
        for name in columns:
            ours, theirs = columns[name], joined[name]
            if ours.dtype == object:
                assert ours.tolist() == [None if pd.isna(v) else v for v in theirs.tolist()], name
            else:
                assert ours.tobytes() == theirs.to_numpy(dtype=ours.dtype, na_value=np.nan).tobytes(), name
        for workload in ts.workload_ids(gpu):
            _same_job(ts.job(gpu, workload), build_job(joined, ts.power(gpu), ts.workloads[workload], gpu))


def test_jobs_from_columns_equal_jobs_from_frames(tmp_path: Path) -> None:
    _check_traces(write_tiny_traces(tmp_path / "traces"))


def test_published_jobs_from_columns_equal_jobs_from_frames(zeus_traces: Path) -> None:
    _check_traces(zeus_traces)


def test_inner_join_keeps_pandas_merge_order() -> None:
    rng = np.random.default_rng(5)
    for _ in range(20):
        left = pd.DataFrame(
            {"k1": rng.choice(["a", "b", "c"], 40), "k2": rng.integers(0, 4, 40), "x": rng.normal(size=40)}
        )
        right = pd.DataFrame(
            {"k1": rng.choice(["a", "b", "d"], 30), "k2": rng.integers(0, 4, 30), "y": rng.normal(size=30)}
        )
        expected = left.merge(right, on=["k1", "k2"], how="inner")
        ours = inner_join(
            {c: left[c].to_numpy() for c in left}, {c: right[c].to_numpy() for c in right}, ("k1", "k2")
        )
        for c in expected.columns:
            assert ours[c].tolist() == expected[c].tolist(), c


def test_means_are_pandas_means() -> None:
    rng = np.random.default_rng(9)
    codes = rng.integers(0, 7, 5000)
    values = rng.lognormal(3.0, 2.0, 5000) * np.where(rng.random(5000) < 0.5, 1.0, 1e-9)
    values[::97] = np.nan
    uniq, means = _group_mean(codes, values)
    expected = pd.DataFrame({"g": codes, "v": values}).groupby("g", sort=True)["v"].mean()
    assert uniq.tolist() == expected.index.tolist()
    assert means.tobytes() == expected.to_numpy().tobytes()
    for k in range(7):
        assert _mean(values[codes == k]) == pd.Series(values[codes == k]).mean()


def test_read_columns_equal_read_table(tmp_path: Path) -> None:
    folder = write_tiny_traces(tmp_path / "traces")
    for path, kind in ((folder / "train.parquet", "train"), (folder / "power-v100.parquet", "power")):
        frame = read_table(path, kind)
        columns = read_columns(path, kind, list(frame.columns))
        for name, values in columns.items():
            expected = frame[name]
            if values.dtype == object:
                assert values.tolist() == [None if pd.isna(v) else v for v in expected.tolist()], name
            else:
                theirs = expected.to_numpy(dtype=values.dtype, na_value=np.nan)
                assert values.tobytes() == theirs.tobytes(), name
    with pytest.raises(TraceFormatError, match="unknown column"):
        read_columns(folder / "train.parquet", "train", ["no_such_column"])
    with pytest.raises(TraceFormatError, match="is a 'train' table"):
        read_columns(folder / "train.parquet", "power", ["gpu"])


def _runs_columns(n: int) -> dict[str, object]:
    return {
        "gpu": "v100", "workload": "squad", "policy": "zeus", "seed": np.repeat([1, 2], n // 2),
        "eta": 0.5, "beta": 2.0, "recurrence": np.tile(np.arange(1, n // 2 + 1), 2),
        "attempt": np.ones(n, dtype=np.int64), "batch_size": np.full(n, 32), "power_limit_w": np.full(n, 250.0),
        "epochs": np.linspace(1.0, 9.0, n), "energy_j": np.linspace(1.0, 2.0, n), "time_s": np.full(n, 3.0),
        "cost": np.full(n, 4.0), "reached": np.arange(n) % 2 == 0, "profiled": np.zeros(n, dtype=bool),
        "ran": np.ones(n, dtype=bool), "expected_energy_j": np.full(n, np.nan), "expected_time_s": np.full(n, 1.0),
        "expected_cost": np.full(n, 1.0), "window": 0, "num_gpus": 1, "max_power_w": 250.0,
    }  # fmt: skip


def test_column_tables_write_what_frames_write(tmp_path: Path) -> None:
    columns = _runs_columns(10)
    frame = pd.DataFrame({k: v if isinstance(v, np.ndarray) else [v] * 10 for k, v in columns.items()})
    for suffix in (".parquet", ".csv"):
        with TableWriter(tmp_path / f"a{suffix}", "runs") as out:
            out.write(ColumnTable(10, columns))
            out.write(
                ColumnTable(0, {k: v[:0] if isinstance(v, np.ndarray) else v for k, v in columns.items()})
            )
        with TableWriter(tmp_path / f"b{suffix}", "runs") as out:
            out.write(frame)
        if suffix == ".csv":
            assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()
        else:
            assert read_table(tmp_path / "a.parquet", "runs").equals(
                read_table(tmp_path / "b.parquet", "runs")
            )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"seed": np.ones(10, dtype=np.int64), "recurrence": np.ones(10, dtype=np.int64)}, "duplicate rows"),
        ({"epochs": np.full(10, -1.0)}, "must be >= 0"),
        ({"recurrence": np.full(10, 1.5)}, "must be an integer"),
        ({"reached": np.ones(10)}, "must be boolean"),
        ({"gpu": None}, "missing value"),
        ({"cost": np.ones(3)}, "has 3 rows"),
        ({"bogus": np.ones(10)}, "unknown column"),
    ],
)
def test_column_tables_are_validated(tmp_path: Path, change: dict[str, object], message: str) -> None:
    columns = {**_runs_columns(10), **change}
    with pytest.raises(TraceFormatError, match=message), TableWriter(tmp_path / "r.parquet", "runs") as out:
        out.write(ColumnTable(10, columns))
    assert not (tmp_path / "r.parquet").exists()


@pytest.mark.parametrize("entry", ["main", "run"])
@pytest.mark.parametrize("blas_threads", [None, "2"])
def test_simulate_does_not_import_pandas(tmp_path: Path, blas_threads: str | None, entry: str) -> None:
    """Nor start BLAS threads or Arrow's CPU pool (one thread), unless the user's environment asks for more.

    ``run`` is the console script's entry (``zeus-bench``): it must leave the choice to ``main``
    before anything imports numpy (its exit helper's module does).
    """
    folder = write_tiny_traces(tmp_path / "traces")
    argv = (
        f"['-q', 'simulate', '--traces', {str(folder)!r}, '--gpu', 'v100', '--policies', 'zeus', "
        f"'--seeds', '1-3', '--out', {str(tmp_path / 'runs.parquet')!r}]"
    )
    call = (
        f"from zeus_bench.cli.main import main\nstatus = main({argv})\n"
        if entry == "main"
        else f"from zeus_bench.cli.main import run\nsys.argv = ['zeus-bench', *{argv}]\n"
        "try:\n    run()\nexcept SystemExit as exc:\n    status = exc.code\n"
    )
    code = (
        f"import os, sys\n{call}"
        "assert status == 0, status\nassert 'pandas' not in sys.modules, 'pandas was imported'\n"
        f"assert os.environ['OPENBLAS_NUM_THREADS'] == {blas_threads or '1'!r}\n"
        f"import pyarrow\nassert pyarrow.cpu_count() == {int(blas_threads or 1)}, pyarrow.cpu_count()\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    if blas_threads is not None:
        env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = blas_threads
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, env=env)
    assert len(read_table(tmp_path / "runs.parquet", "runs")) > 0


def test_other_commands_keep_blas_threads() -> None:
    code = (
        "import os\nfrom zeus_bench.cli.main import main\nmain(['--version'])\n"
        "assert 'OPENBLAS_NUM_THREADS' not in os.environ and 'OMP_NUM_THREADS' not in os.environ\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, env=env, capture_output=True)
