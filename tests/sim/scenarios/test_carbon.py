"""The carbon term: a carbon-intensity series, each try's ``co2_g``, and the cost that prices it.

No well-kept PyPI package ships a carbon-intensity *time series* for offline use (codecarbon ships
yearly means per country; Electricity Maps, WattTime and gridstatus are clients of online APIs), so
the series here are small synthetic ones, written by hand.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from zeus_bench.cli.main import main
from zeus_bench.core.cost import J_PER_KWH, Cost, emissions_g
from zeus_bench.core.errors import ConfigError, TraceFormatError
from zeus_bench.sim import grid
from zeus_bench.sim.scenarios.carbon import CarbonTerm, read_carbon
from zeus_bench.store import as_frame, read_table
from zeus_bench.traces.jobs import JobTrace
from zeus_bench.traces.workloads import WorkloadSpec

# Two batch sizes at one limit (200 W, MAXPOWER 200 W), one training path each of 4 epochs:
# 16 is fast and hungry (1 s at 200 W an epoch: 800 J and 4 s to the target), 32 slow and frugal
# (2 s at 50 W: 400 J and 8 s). At eta 0.5: 16 costs 0.5 x 800 + 0.5 x 200 x 4 = 800 J, 32 costs
# 0.5 x 400 + 0.5 x 200 x 8 = 1000 J. At 400 g/kWh 16 emits 800 / 3.6e6 x 400 = 0.0889 g and 32
# 0.0444 g; a price of 9000 J/g adds 800 and 400 J: 16 then costs 1600 J and 32 1400 J.
PRICE = 9000.0


def frugal_job() -> JobTrace:
    spec = WorkloadSpec(
        id="frugal", dataset="toy", network="net", optimizer="sgd", target_metric=0.5, metric="accuracy",
        metric_direction="max", max_epochs=10, default_batch_size=16,
    )  # fmt: skip
    return JobTrace(
        workload=spec,
        gpu="toygpu",
        b0=16,
        batch_sizes=np.array([16, 32], dtype=np.int64),
        power_limits=np.array([200.0]),
        time_per_epoch_s=np.array([[1.0], [2.0]]),
        avg_power_w=np.array([[200.0], [50.0]]),
        target_epochs=(np.array([4.0]), np.array([4.0])),
        max_power_w=200.0,
        max_power_by_bs_w=np.full(2, 200.0),
    )


def series(tmp_path: Path, rows: str, name: str = "carbon.csv") -> Path:
    path = tmp_path / name
    path.write_text("time_s,intensity_g_per_kwh\n" + rows)
    return path


def priced(path: Path, price: float = 0.0, eta: float = 0.5) -> Cost:
    """The cost with the carbon term of the series at ``path``."""
    return Cost(eta, (CarbonTerm(read_carbon(path), price),))


def runs(job: JobTrace, policy: str, cost: Cost, n: int, period_s: float) -> pd.DataFrame:
    task = grid.Task(job, cost, policy, (2.0,), (1, 2, 3), n, 0, period_s=period_s)
    return pd.concat([as_frame(t) for t in grid.iter_task_tables(task)], ignore_index=True)


def test_the_cost_prices_emissions_only_with_a_price(tmp_path: Path) -> None:
    path = series(tmp_path, "0,400\n100,400\n")
    at = np.array([0.0])
    energy, time = np.array([800.0]), np.array([4.0])
    assert priced(path).zeus_cost(energy, time, 200.0, at).tolist() == [800.0]  # no price: nothing added
    assert (
        Cost(0.5, (CarbonTerm(read_carbon(path), PRICE),)).zeus_cost(800.0, 4.0, 200.0) == 800.0
    )  # no place
    co2 = emissions_g(800.0, 400.0)
    assert co2 == pytest.approx(800.0 / 3.6e6 * 400.0) and J_PER_KWH == 3.6e6
    assert priced(path, PRICE).zeus_cost(energy, time, 200.0, at) == pytest.approx([1600.0])
    assert priced(path, PRICE).zeus_cost(np.array([400.0]), np.array([8.0]), 200.0, at) == pytest.approx(
        [1400.0]
    )
    assert priced(path, PRICE).term_cost(energy, time, at) == pytest.approx([PRICE * co2])
    with pytest.raises(ConfigError, match="carbon price"):
        priced(path, -1.0)
    with pytest.raises(ConfigError, match="eta"):
        priced(path, eta=1.5)


def test_co2_of_a_try_by_hand(tmp_path: Path) -> None:
    """The baseline runs b0 (16) every recurrence: 800 J a try; recurrences a day apart on a two-step series."""
    path = series(tmp_path, "0,100\n86400,500\n")
    df = runs(frugal_job(), "baseline", priced(path), 2, 86400.0)
    assert df["energy_j"].tolist() == [800.0] * 6
    by_rec = df.groupby("recurrence")["co2_g"].unique()
    assert by_rec[1].tolist() == [800.0 / 3.6e6 * 100.0]  # 0.0222 g at 100 g/kWh
    assert by_rec[2].tolist() == [800.0 / 3.6e6 * 500.0]  # 0.1111 g at 500 g/kWh
    assert (df["cost"] == 800.0).all()  # no price: the paper's cost, to the bit
    # Half a day apart the second recurrence still falls in the first step.
    df = runs(frugal_job(), "baseline", priced(path), 3, 43200.0)
    assert df.groupby("recurrence")["co2_g"].first().tolist() == pytest.approx(
        [800 / 3.6e6 * 100, 800 / 3.6e6 * 100, 800 / 3.6e6 * 500]
    )
    with pytest.raises(
        ConfigError, match=r"carbon.csv: the series ends 86400 s .* recurrence 4 falls 129600 s"
    ):
        runs(frugal_job(), "baseline", priced(path), 4, 43200.0)


def test_a_carbon_price_flips_the_bandit_to_the_frugal_batch_size(tmp_path: Path) -> None:
    """Zeus learns 16 (800 J < 1000 J) without a price, 32 (1400 J < 1600 J) with one."""
    path = series(tmp_path, "0,400\n100,400\n")
    n = 30

    def last_choices(cost: Cost) -> pd.DataFrame:
        df = runs(frugal_job(), "zeus", cost, n, 1.0)
        return df[df["recurrence"] > n - 10]

    free = last_choices(priced(path))
    paid = last_choices(priced(path, PRICE))
    assert (free["batch_size"] == 16).all()
    assert (paid["batch_size"] == 32).all()
    # What the policy observed: the try's cost with its emissions' price.
    assert paid["cost"].to_numpy() == pytest.approx(np.full(len(paid), 1400.0))
    assert paid["co2_g"].to_numpy() == pytest.approx(np.full(len(paid), 400 / 3.6e6 * 400))
    assert paid["expected_cost"].to_numpy() == pytest.approx(np.full(len(paid), 1400.0))
    assert free["expected_cost"].to_numpy() == pytest.approx(np.full(len(free), 800.0))


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("", "no rows"),
        ("0,100\n10,abc\n", "column 'intensity_g_per_kwh' row 1: not a number"),
        ("0,100\n10,-5\n", "intensity_g_per_kwh"),
        ("0,100\n10,200\n5,300\n", "column 'time_s' row 2: 5 is not after the previous row's 10"),
        ("0,100\n0,200\n", "time_s"),
    ],
)
def test_bad_series_one_line_naming_the_file(tmp_path: Path, rows: str, message: str) -> None:
    path = series(tmp_path, rows)
    with pytest.raises(TraceFormatError, match=message) as err:
        read_carbon(path)
    assert str(err.value).startswith(str(path)) and "\n" not in str(err.value)


def test_missing_column_is_named(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text("time,g\n0,100\n")
    with pytest.raises(TraceFormatError, match="missing column"):
        read_carbon(path)


def test_cli_writes_co2_and_refuses_bad_input(
    tiny_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["simulate", "--traces", str(tiny_traces), "--gpu", "v100", "--policies", "zeus,baseline"]
    base += ["--seeds", "1-2", "--recurrences", "6"]
    plain, carbon, priced = (tmp_path / f"{n}.parquet" for n in ("plain", "carbon", "priced"))
    path = series(tmp_path, "0,300\n3600,600\n")
    assert main([*base, "--out", str(plain)]) == 0
    with_series = ["--carbon-intensity", str(path), "--recurrence-period-s", "600"]
    assert main([*base, *with_series, "--out", str(carbon)]) == 0
    assert main([*base, *with_series, "--carbon-price", "5000", "--out", str(priced)]) == 0
    a, b, c = (read_table(p, "runs") for p in (plain, carbon, priced))
    assert a["co2_g"].isna().all()
    # Without a price the series changes nothing but co2_g.
    pd.testing.assert_frame_equal(a.drop(columns="co2_g"), b.drop(columns="co2_g"))
    assert b["co2_g"].to_numpy() == pytest.approx(b["energy_j"].to_numpy() / 3.6e6 * 300.0)
    ran = c[c["ran"]]
    by_hand = 0.5 * ran["energy_j"] + 0.5 * ran["max_power_w"] * ran["time_s"] + 5000.0 * ran["co2_g"]
    assert ran["cost"].to_numpy() == pytest.approx(by_hand.to_numpy(), rel=1e-12)
    assert (ran["co2_g"] > 0).all()

    bad = series(tmp_path, "0,300\n5,x\n", "bad.csv")
    capsys.readouterr()
    assert main([*base, "--carbon-intensity", str(bad), "--out", str(tmp_path / "x.parquet")]) == 2
    err = capsys.readouterr().err.strip()
    assert "bad.csv: column 'intensity_g_per_kwh' row 1" in err and "\n" not in err
    assert not (tmp_path / "x.parquet").exists()
    assert main([*base, "--carbon-price", "5", "--out", str(tmp_path / "y.parquet")]) == 2
    assert "--carbon-price needs --carbon-intensity" in capsys.readouterr().err
    assert main([*base, "--recurrence-period-s", "5", "--out", str(tmp_path / "y.parquet")]) == 2
    assert "no term given is placed in time (terms: carbon)" in capsys.readouterr().err
    assert not (tmp_path / "y.parquet").exists()
    short = ["--carbon-intensity", str(path), "--recurrence-period-s", "3600"]
    assert main([*base, *short, "--out", str(tmp_path / "z.parquet")]) == 2
    assert "recurrence 3 falls 7200 s after it" in capsys.readouterr().err


def test_arrivals_place_each_submission_at_its_start(
    tiny_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Submissions at 100 and 5000 s (the table's earliest at the series' start): 300, then 700 g/kWh."""
    arrivals = tmp_path / "arrivals.csv"
    arrivals.write_text(
        "group,start_time,end_time,workload,runtime_ratio\n"
        "g1,100.0,2000.0,squad,1.0\ng1,5000.0,7000.0,squad,1.0\n"
    )
    path = series(tmp_path, "0,300\n3600,700\n7200,700\n")
    out = tmp_path / "runs.parquet"
    args = ["simulate", "--traces", str(tiny_traces), "--gpu", "v100", "--policies", "zeus", "--seeds", "1"]
    args += ["--arrivals", str(arrivals), "--carbon-intensity", str(path)]
    assert main([*args, "--out", str(out)]) == 0
    df = read_table(out, "runs")
    intensity = df["recurrence"].map({1: 300.0, 2: 700.0})
    assert df["co2_g"].to_numpy() == pytest.approx((df["energy_j"] / 3.6e6 * intensity).to_numpy())
    capsys.readouterr()
    assert main([*args, "--carbon-price", "5", "--out", str(tmp_path / "priced.parquet")]) == 2
    assert "a price on co2_g applies to plain recurring jobs" in capsys.readouterr().err
    late = series(tmp_path, "0,300\n1000,700\n", "late.csv")
    args[-1] = str(late)
    assert main([*args, "--out", str(tmp_path / "late.parquet")]) == 2
    assert (
        "late.csv: the series ends 1000 s after its first time, but submission 2 falls 4900 s after it (a longer series)"
        in (capsys.readouterr().err)
    )
