"""Does the simulator predict a measured run? The comparison of ``workflows/validate.smk`` (issue 35).

Inputs: the measured online run (``validation_online``), the simulator's replay of the measured
traces (``runs``, policy ``zeus``, many seeds), the same replay with ``--noise`` at the measured
run-to-run level, and the repeated power points (``power`` shards). Outputs: the run-to-run noise
(``validation_noise``), the per-recurrence comparison (``validation_recurrences``) and the
findings (``validation_findings``), each a pure function of frames here; the CLI
(``zeus-bench validate``) only reads and writes. Everything here is the batch-size side only, at
the GPU's current power limit (observe mode): :data:`~zeus_bench.studies.validation_schema.SCOPE`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from zeus_bench.core.errors import ConfigError
from zeus_bench.studies.validation_schema import SCOPE

#: The simulator's bound on ``--noise`` (relative standard deviation).
MAX_NOISE = 0.1
#: The recurrences at which the percentile is reported (and N, the last).
CHECKPOINTS = (10, 20)
#: Findings the report does not list as bullets (stated elsewhere in it, or a plain count).
UNLISTED = ("noise_level", "repeat_percentile_at_N_max", "recurrences")
#: The band the measurement is checked against: the central 95 % of the simulated seeds.
BAND = (2.5, 97.5)


def noise_table(repeats: pd.DataFrame, gpu: str, workload: str) -> pd.DataFrame:
    """Run-to-run spread per batch size of a power trace's repeated points (``validation_noise`` rows).

    Args:
        repeats: Power-trace rows, several per batch size (the sweep's point and its repeats).
        gpu: The ``gpu`` column of the result.
        workload: Its ``workload`` column.

    Raises:
        ConfigError: no batch size measured at least twice.
    """
    rows = []
    for bs, g in repeats.groupby("batch_size", sort=True):
        if len(g) < 2:
            continue
        t, p = g["time_per_epoch_s"].to_numpy(float), g["avg_power_w"].to_numpy(float)
        rows.append(
            {
                "gpu": gpu,
                "workload": workload,
                "batch_size": int(bs),  # type: ignore[call-overload]
                "repeats": len(g),
                "time_per_epoch_mean_s": float(t.mean()),
                "time_per_epoch_rel_std": float(t.std(ddof=1) / t.mean()),
                "avg_power_mean_w": float(p.mean()),
                "avg_power_rel_std": float(p.std(ddof=1) / p.mean()),
            }
        )
    if not rows:
        raise ConfigError("validate noise: no batch size was measured twice (repeat some power points)")
    out = pd.DataFrame(rows)
    out["noise_level"] = noise_level(out)
    return out


def noise_level(noise: pd.DataFrame) -> float:
    """The pooled run-to-run level: root mean square of both relative spreads over batch sizes, at most 0.1."""
    spreads = np.concatenate([noise["time_per_epoch_rel_std"], noise["avg_power_rel_std"]]).astype(float)
    return float(min(MAX_NOISE, np.sqrt(np.mean(spreads**2))))


def measured_by_recurrence(measured: pd.DataFrame) -> pd.DataFrame:
    """Per recurrence: the first try's batch size and the summed energy, time and cost of all tries."""
    m = measured.sort_values(["recurrence", "attempt"])
    per = m.groupby("recurrence", sort=True).agg(
        batch_size=("batch_size", "first"),
        energy_j=("energy_j", "sum"),
        time_s=("time_s", "sum"),
        cost=("cost", "sum"),
    )
    expected = np.arange(1, len(per) + 1)
    if not np.array_equal(per.index.to_numpy(), expected):
        raise ConfigError("validate compare: the measured run's recurrences are not 1..N without gaps")
    return per


def simulated_by_recurrence(
    runs: pd.DataFrame, recurrences: int
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Per (recurrence, seed) of a ``runs`` table: cumulative cost, energy and time, and the first choice.

    Returns:
        Three frames indexed by recurrence 1..``recurrences``, one column per seed: cumulative
        cost, cumulative energy and cumulative time; and a fourth with the first try's batch size
        (as the second item, a frame of choices). Precisely: ``(cum_cost, cum_energy_time, choices)``
        where ``cum_energy_time`` has a two-level column index (``energy_j``/``time_s``, seed).

    Raises:
        ConfigError: the table holds more than one policy, eta or beta, or fewer recurrences.
    """
    for col in ("policy", "eta", "beta", "workload", "gpu"):
        if runs[col].nunique() != 1:
            raise ConfigError(f"validate compare: the simulated runs hold several values of {col!r}")
    r = runs[runs["recurrence"] <= recurrences]
    if r["recurrence"].max() < recurrences:
        raise ConfigError(
            f"validate compare: the simulation has {int(r['recurrence'].max())} recurrences, the measurement {recurrences}"
        )
    ran = r[r["ran"]]
    sums = ran.groupby(["recurrence", "seed"])[["cost", "energy_j", "time_s"]].sum()
    full = pd.MultiIndex.from_product(
        [range(1, recurrences + 1), sorted(r["seed"].unique())], names=["recurrence", "seed"]
    )
    sums = sums.reindex(full, fill_value=0.0)
    cum = sums.groupby(level="seed").cumsum()
    cost = cum["cost"].unstack("seed")
    energy_time = cum[["energy_j", "time_s"]].unstack("seed")
    first = (
        ran.sort_values(["seed", "recurrence", "attempt"])
        .groupby(["recurrence", "seed"])["batch_size"]
        .first()
    )
    choices = first.unstack("seed").reindex(range(1, recurrences + 1))
    return cost, energy_time, choices


def mid_rank_percentile(sample: np.ndarray, value: float) -> float:
    """Percentile (0-100) of ``value`` among ``sample``: ties count half (mid-rank)."""
    sample = np.asarray(sample, dtype=float)
    below = np.count_nonzero(sample < value)
    ties = np.count_nonzero(sample == value)
    return float(100.0 * (below + 0.5 * ties) / len(sample))


def recurrence_table(
    measured: pd.DataFrame, sim: pd.DataFrame, sim_noise: pd.DataFrame, gpu: str, workload: str
) -> pd.DataFrame:
    """The ``validation_recurrences`` rows: the measured run against the simulated distribution."""
    per = measured_by_recurrence(measured)
    n = len(per)
    cost, et, choices = simulated_by_recurrence(sim, n)
    noise_cost, _, _ = simulated_by_recurrence(sim_noise, n)
    m_cost = per["cost"].cumsum()
    lo, hi = BAND
    rows = []
    for r in range(1, n + 1):
        c, nc = cost.loc[r].to_numpy(float), noise_cost.loc[r].to_numpy(float)
        picks = choices.loc[r].dropna().to_numpy(float)
        bs = int(per.loc[r, "batch_size"])
        rows.append(
            {
                "gpu": gpu,
                "workload": workload,
                "recurrence": r,
                "measured_batch_size": bs,
                "measured_cum_energy_j": float(per["energy_j"].iloc[:r].sum()),
                "measured_cum_time_s": float(per["time_s"].iloc[:r].sum()),
                "measured_cum_cost": float(m_cost.loc[r]),
                "sim_cum_cost_p2_5": float(np.percentile(c, lo)),
                "sim_cum_cost_p50": float(np.percentile(c, 50)),
                "sim_cum_cost_p97_5": float(np.percentile(c, hi)),
                "sim_cum_energy_p50": float(np.percentile(et["energy_j"].loc[r].to_numpy(float), 50)),
                "sim_cum_time_p50": float(np.percentile(et["time_s"].loc[r].to_numpy(float), 50)),
                "noise_cum_cost_p2_5": float(np.percentile(nc, lo)),
                "noise_cum_cost_p97_5": float(np.percentile(nc, hi)),
                "percentile": mid_rank_percentile(c, float(m_cost.loc[r])),
                "choice_share": float(np.mean(picks == bs)) if len(picks) else 0.0,
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Finding:
    """One computed finding: an id, its value and the sentence the report prints."""

    finding: str
    value: float
    text: str


def findings(
    recurrences: pd.DataFrame,
    level: float,
    checkpoints: Sequence[int] = CHECKPOINTS,
    measured: pd.DataFrame | None = None,
) -> list[Finding]:
    """The validation's findings from the ``validation_recurrences`` rows and the noise level used.

    - ``percentile_at_<r>`` for each checkpoint within N and ``percentile_at_N``;
    - ``choice_among_share``: share of recurrences whose measured choice some simulated seed made;
    - ``in_band_at_N`` (1/0): the measured cumulative cost at N inside the simulated 95 % band;
    - ``diff_from_median_pct``: the measured cumulative cost at N against the simulated median, %;
    - ``noise_covers_at_N`` (1/0): inside the band of the replay with ``--noise`` at ``level``;
    - ``noise_widens_to_cover`` (1/0): outside without noise, inside with it;
    - ``noise_level``: the ``--noise`` used; ``recurrences``: N;
    - with ``measured`` (the online run's tries), where the gap to the simulated median comes from
      (:func:`gap_findings`).
    """
    rec = recurrences.sort_values("recurrence").set_index("recurrence")
    n = int(rec.index.max())
    gap = [] if measured is None else gap_findings(rec, measured, checkpoints)
    count = Finding("recurrences", float(n), f"N = {n} recurrences measured.")
    return [count, *_trajectory_findings(rec, n, checkpoints), *_band_findings(rec.loc[n], n, level), *gap]


def gap_at_n(rec: pd.DataFrame) -> float:
    """Measured minus simulated median cumulative cost at N (``validation_recurrences`` rows in order)."""
    return float(rec["measured_cum_cost"].iloc[-1] - rec["sim_cum_cost_p50"].iloc[-1])


def gap_findings(rec: pd.DataFrame, measured: pd.DataFrame, checkpoints: Sequence[int]) -> list[Finding]:
    """Where the measured run's gap to the simulated median at N comes from.

    - ``gap_share_at_<r>``: the share of the gap at N (measured minus simulated median cumulative
      cost) already there at the first checkpoint ``r`` before N (the recurrences where the
      optimizer still explores come first);
    - ``early_stop_last_epoch_j`` and ``early_stop_share_of_gap``: the online optimizer stops an
      early-stopped try *after* the epoch whose cost passes beta x the best cost, the replay stops
      *before* it (its budget is ``floor(beta x best / epoch cost)`` epochs): the measured
      early-stopped tries' last epochs, each costed as its try's cost over its epochs (an estimate:
      epochs of one try taken as equal), and their share of the gap.

    ``rec``: the ``validation_recurrences`` rows indexed by recurrence; ``measured``: the
    ``validation_online`` rows. Nothing is returned when the gap at N is zero.
    """
    n = int(rec.index.max())
    gap_n = gap_at_n(rec)
    if gap_n == 0.0:
        return []
    out: list[Finding] = []
    early = [c for c in checkpoints if c < n][:1]
    for r in early:
        share = float(rec.loc[r, "measured_cum_cost"] - rec.loc[r, "sim_cum_cost_p50"]) / gap_n
        out.append(
            Finding(
                f"gap_share_at_{r}",
                share,
                f"{100 * share:.0f} % of the gap at N ({gap_n:+.4g} J, measured minus simulated median) was "
                f"already there at recurrence {r}: "
                + (
                    "most of it comes from the first recurrences."
                    if share > 0.5
                    else "most of it comes later."
                ),
            )
        )
    stopped = measured[measured["early_stopped"].astype(bool)]
    last = float((stopped["cost"] / stopped["epochs"].clip(lower=1)).sum())
    out.append(
        Finding(
            "early_stop_last_epoch_j",
            last,
            f"The online optimizer stops an early-stopped try after the epoch whose cost passes beta x the "
            f"best cost; the replay stops before that epoch. The measured run's {len(stopped)} early-stopped "
            f"tries spent about {last:.4g} J of cost on those last epochs (estimate: a try's epochs taken as equal).",
        )
    )
    share = last / gap_n
    out.append(
        Finding(
            "early_stop_share_of_gap",
            share,
            f"That is {100 * share:.0f} % of the gap at N (measured minus simulated median).",
        )
    )
    return out


def trace_cost_findings(
    measured: pd.DataFrame, power: pd.DataFrame, eta: float, gap_n: float
) -> list[Finding]:
    """How much of the gap the run's own time and power make: its tries costed by the power trace.

    Each measured try (same batch size, same epochs) is costed as the replay costs an epoch: the
    power trace's time per epoch and average power at that batch size and the try's limit, times its
    epochs (:meth:`~zeus_bench.core.cost.Cost.zeus_cost`, the try's MAXPOWER). The difference to the
    measured cost is what the run spent beyond the trace on the very same tries (per-try work, and
    epochs slower or dearer than the sweep measured them):

    - ``trace_costed_j``: the measured tries costed by the trace;
    - ``time_power_share_of_gap``: (measured - trace-costed) over the gap at N.

    Raises:
        ConfigError: a measured (batch size, limit) the power trace does not hold.
    """
    from zeus_bench.core.cost import Cost

    trace = power.set_index(["batch_size", "power_limit_w"])[["time_per_epoch_s", "avg_power_w"]]
    keys = pd.MultiIndex.from_arrays([measured["batch_size"], measured["power_limit_w"].astype(float)])
    missing = keys[~keys.isin(trace.index)]
    if len(missing):
        bs, limit = missing[0]
        raise ConfigError(f"validate compare: the power trace has no row at batch size {bs}, {limit:g} W")
    rows = trace.loc[keys]
    epochs = measured["epochs"].to_numpy(float)
    time_s = rows["time_per_epoch_s"].to_numpy(float) * epochs
    energy_j = rows["avg_power_w"].to_numpy(float) * time_s
    costed = float(Cost(eta).zeus_cost(energy_j, time_s, measured["max_power_w"].to_numpy(float)).sum())
    share = (float(measured["cost"].sum()) - costed) / gap_n
    return [
        Finding(
            "trace_costed_j",
            costed,
            f"The measured run's tries costed by the power trace (same batch sizes and epochs) come to "
            f"{costed:.4g} J against {float(measured['cost'].sum()):.4g} J measured.",
        ),
        Finding(
            "time_power_share_of_gap",
            share,
            f"What the run spent beyond the trace on those same tries (per-try work, epochs slower or dearer "
            f"than the sweep measured) is {100 * share:.0f} % of the gap at N; the rest ({100 * (1 - share):.0f} %) "
            "is in the tries themselves (choices, epochs to the target, the early-stopped tries' extra epochs) "
            "against the simulated seeds'.",
        ),
    ]


def repeat_findings(
    repeats: Sequence[pd.DataFrame], primary: pd.DataFrame, sim: pd.DataFrame
) -> list[Finding]:
    """The online run measured again (other optimizer seeds): where each lands, and the measured spread.

    - ``repeat_runs``: how many repeats;
    - ``repeat_percentile_at_N_min`` / ``_max``: their percentiles at N among the simulated seeds;
    - ``measured_runs_spread_pct``: (largest - smallest) / mean cumulative cost at N over all the
      measured runs (the primary and the repeats), %.

    Raises:
        ConfigError: a repeat has another number of recurrences than the primary run.
    """
    n = len(measured_by_recurrence(primary))
    totals = [float(measured_by_recurrence(primary)["cost"].sum())]
    for k, rep in enumerate(repeats, start=1):
        per = measured_by_recurrence(rep)
        if len(per) != n:
            raise ConfigError(
                f"validate compare: repeat {k} has {len(per)} recurrences, the measured run {n}"
            )
        totals.append(float(per["cost"].sum()))
    cost, _, _ = simulated_by_recurrence(sim, n)
    at_n = cost.loc[n].to_numpy(float)
    pct = [mid_rank_percentile(at_n, t) for t in totals[1:]]
    spread = 100.0 * (max(totals) - min(totals)) / float(np.mean(totals))
    return [
        Finding(
            "repeat_runs",
            float(len(repeats)),
            f"The online run was measured {len(repeats)} more time(s) (other optimizer seeds).",
        ),
        Finding(
            "repeat_percentile_at_N_min",
            min(pct),
            f"The repeats end at percentiles {', '.join(f'{p:.1f}' for p in pct)} of the simulated seeds at N = {n} ({SCOPE}).",
        ),
        Finding("repeat_percentile_at_N_max", max(pct), f"Largest repeat percentile at N: {max(pct):.1f}."),
        Finding(
            "measured_runs_spread_pct",
            spread,
            f"The {len(totals)} measured runs' cumulative costs at N ({', '.join(f'{t:.4g}' for t in totals)} J) "
            f"spread by {spread:.1f} % of their mean.",
        ),
    ]


def _trajectory_findings(rec: pd.DataFrame, n: int, checkpoints: Sequence[int]) -> list[Finding]:
    """``percentile_at_<r>`` at each checkpoint before N and at N, and ``choice_among_share``.

    ``rec``: the ``validation_recurrences`` rows indexed by recurrence (1 to ``n``).
    """
    out: list[Finding] = []
    for r in [*(c for c in checkpoints if c < n), n]:
        p = float(rec.loc[r, "percentile"])
        name = "N" if r == n else str(r)
        out.append(
            Finding(
                f"percentile_at_{name}",
                p,
                f"At recurrence {r}{' (N)' if r == n else ''}, the measured cumulative cost lies at the "
                f"{p:.1f}th percentile of the simulated seeds ({SCOPE}).",
            )
        )
    share = float(np.mean(rec["choice_share"] > 0))
    out.append(
        Finding(
            "choice_among_share",
            share,
            f"In {100 * share:.0f} % of the {n} recurrences the measured batch size was among the simulated "
            f"seeds' choices at that recurrence ({SCOPE}).",
        )
    )
    return out


def _band_findings(last: pd.Series, n: int, level: float) -> list[Finding]:
    """The findings at recurrence N: the measured cumulative cost against the simulated band and median.

    ``last`` is N's ``validation_recurrences`` row; the band is read without and with noise at ``level``.
    """
    out: list[Finding] = []
    m = float(last["measured_cum_cost"])
    inside = bool(last["sim_cum_cost_p2_5"] <= m <= last["sim_cum_cost_p97_5"])
    diff = 100.0 * (m / float(last["sim_cum_cost_p50"]) - 1.0)
    out.append(
        Finding(
            "in_band_at_N",
            float(inside),
            f"At recurrence N = {n} the measured cumulative cost ({m:.4g} J) lies "
            f"{'inside' if inside else 'outside'} the simulated 95 % band "
            f"[{last['sim_cum_cost_p2_5']:.4g}, {last['sim_cum_cost_p97_5']:.4g}] J ({SCOPE}).",
        )
    )
    out.append(
        Finding(
            "diff_from_median_pct",
            diff,
            f"It is {abs(diff):.1f} % {'above' if diff >= 0 else 'below'} the simulated median "
            f"({last['sim_cum_cost_p50']:.4g} J).",
        )
    )
    covers = bool(last["noise_cum_cost_p2_5"] <= m <= last["noise_cum_cost_p97_5"])
    out.append(
        Finding(
            "noise_covers_at_N",
            float(covers),
            f"With `--noise {level:.3g}` (the measured run-to-run level) the simulated 95 % band at N is "
            f"[{last['noise_cum_cost_p2_5']:.4g}, {last['noise_cum_cost_p97_5']:.4g}] J: it "
            f"{'covers' if covers else 'does not cover'} the measurement.",
        )
    )
    widens = (not inside) and covers
    out.append(
        Finding(
            "noise_widens_to_cover",
            float(widens),
            "The noise widens the band enough to cover a measurement the noiseless band missed."
            if widens
            else (
                "The noiseless band already covers the measurement."
                if inside
                else "Even with the noise, the band misses the measurement: the difference is not run-to-run noise."
            ),
        )
    )
    out.append(
        Finding("noise_level", level, f"Run-to-run noise used: {level:.3g} (relative standard deviation).")
    )
    return out


def findings_table(found: Sequence[Finding], gpu: str, workload: str) -> pd.DataFrame:
    """The ``validation_findings`` rows of ``found``."""
    return pd.DataFrame(
        [
            {"gpu": gpu, "workload": workload, "finding": f.finding, "value": f.value, "text": f.text}
            for f in found
        ]
    )


def render_report(
    found: Sequence[Finding], recurrences: pd.DataFrame, noise: pd.DataFrame, measured: pd.DataFrame
) -> str:
    """The validation's Markdown section: the scope, the findings, the noise and the figure."""
    gpu, workload = str(measured["gpu"].iloc[0]), str(measured["workload"].iloc[0])
    n = int(recurrences["recurrence"].max())
    tries = len(measured)
    lines = [
        f"# Does the simulator predict a measured run? ({workload} on {gpu})",
        "",
        f"**Scope: {SCOPE}.** The job's traces were measured on the GPU through the sweep (train trace: "
        "epochs to the target per batch size and seed; power trace: time per epoch and average power per "
        "batch size at the current limit), replayed by `zeus-bench simulate` (policy zeus, many seeds), "
        f"and compared with the online optimizer (`zeus_bench.online`) running the job for N = {n} "
        f"recurrences ({tries} tries) on the same GPU. Labels: *measured* (the online run), *simulated* "
        "(the replay of the measured traces).",
        "",
        "## Findings (computed)",
        "",
        *(f"- {f.text}" for f in found if f.finding not in UNLISTED),
        "",
        "## Run-to-run noise (measured)",
        "",
        "| batch size | repeats | time per epoch (s) | rel. std | average power (W) | rel. std |",
        "|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {r.batch_size} | {r.repeats} | {r.time_per_epoch_mean_s:.4g} | {r.time_per_epoch_rel_std:.3%} "
            f"| {r.avg_power_mean_w:.4g} | {r.avg_power_rel_std:.3%} |"
            for r in noise.itertuples()
        ),
        "",
        next(f.text for f in found if f.finding == "noise_level"),
        "",
        f"![measured cumulative cost against the simulated band](validation.png) (`validation.png`: {SCOPE})",
        "",
    ]
    return "\n".join(lines)
