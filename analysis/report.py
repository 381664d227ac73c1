"""``python -m analysis.report --out results/report.md ...``: the report of the main workflow.

For each figure: the image, one paragraph saying what it shows, and the key numbers (computed
here from the same results files the figures read), with the paper's numbers beside ours where
the paper gives them. It also says plainly what was skipped and how to get it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from analysis import metrics
from analysis.style import WORKLOAD_ORDER, ordered
from analysis.tables import load_all
from zeus_bench.fsutil import atomic_write_text

# Zeus paper, trace-driven V100 results (eta 0.5, beta 2, seeds 1-10): energy savings of Zeus
# against the baseline (b0 at max. limit), cumulative / last 10 recurrences, percent.
PAPER_V100_ZEUS: dict[str, tuple[float, float]] = {
    "cifar100": (71.6, 74.1),
    "imagenet": (14.6, 19.4),
    "squad": (17.7, 18.9),
    "librispeech": (35.4, 38.5),
    "movielens-1m": (62.5, 65.6),
    "sentiment140": (19.2, 20.9),
}
PAPER_ORACLE_RANGE = "23.8 % (imagenet) to 74.7 % (cifar100)"


def _pct(v: float) -> str:
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.1f} %"


def _md_table(df: pd.DataFrame) -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(str(v) for v in row) + " |")
    return "\n".join(lines)


def _figure(name: str, figures: set[str], alt: str) -> str:
    png = f"figures/{name}.png"
    return (
        f"![{alt}]({png})"
        if any(f.endswith(f"/{name}.png") for f in figures)
        else f"*(figure {name} not drawn)*"
    )


def _own_note(df: pd.DataFrame) -> str:
    """The caveat for GPUs measured by this project (one power limit; the Zeus train trace's epochs)."""
    own = sorted(g for g in df["gpu"].unique() if str(g).startswith("h200"))
    if not own:
        return ""
    return (
        f" Rows for {', '.join(g.upper() for g in own)} combine this project's measurements (time per epoch and "
        "power, at the GPU's current limit only) with the epochs to the target of the Zeus train trace: the batch "
        "size is the only knob there, and the epochs are assumed not to depend on the GPU (as the paper assumes "
        "across its GPUs)."
    )


def _by_workload(df: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted by GPU, then workload in the paper's order."""
    order = ordered(df["workload"].unique(), WORKLOAD_ORDER)
    return (
        df.assign(_w=df["workload"].map({w: i for i, w in enumerate(order)}))
        .sort_values(["gpu", "_w"])
        .drop(columns="_w")
    )


def _little_to_gain(norm: pd.DataFrame) -> str:
    """Jobs where the oracle saves little and Zeus's exploration costs more than it saves."""
    piv = norm.pivot_table(index=["gpu", "workload"], columns="policy", values="energy_saving_pct")
    if not {"zeus", "oracle"} <= set(piv.columns):
        return ""
    jobs = piv[(piv["oracle"] < 5.0) & (piv["zeus"] < 0.0)]
    if jobs.empty:
        return ""
    names = ", ".join(f"{w} ({str(g).upper()})" for g, w in jobs.index)
    return (
        f"Where even the oracle saves under 5 % energy, exploring costs more than it can save and Zeus ends up "
        f"behind the baseline: {names}. "
    )


def _least_energy_limits(prof: pd.DataFrame) -> str:
    """Where, between the lowest and the highest limit, the energy per epoch is least."""
    g = prof.groupby(["gpu", "workload"])
    best = prof.loc[g["energy_per_epoch_j_rel"].idxmin()].set_index(["gpu", "workload"])["power_limit_w"]
    lo, hi = g["power_limit_w"].min(), g["power_limit_w"].max()
    n_lo, n_hi = int((best == lo).sum()), int((best == hi).sum())
    return (
        f"The energy per epoch is least at the lowest limit for {n_lo} of {len(best)} jobs, at the maximum limit "
        f"for {n_hi} and at a limit in between for {len(best) - n_lo - n_hi}."
    )


def _eta_finding(z: pd.DataFrame) -> str:
    """What moving eta from its smallest to its largest value does to Zeus's savings."""
    lo, hi = z["eta"].min(), z["eta"].max()
    a = z[z["eta"] == lo].set_index(["gpu", "workload"])
    b = z[z["eta"] == hi].set_index(["gpu", "workload"])
    de = (b["energy_saving_pct"] - a["energy_saving_pct"]).dropna()
    dt = (b["time_saving_pct"] - a["time_saving_pct"]).dropna()
    return (
        f"From eta {lo:g} to {hi:g}, Zeus's energy saving grows on {int((de > 0.5).sum())} of {len(de)} jobs "
        f"(mean {de.mean():+.1f} points) and its time saving shrinks on {int((dt < -0.5).sum())} "
        f"(mean {dt.mean():+.1f} points): eta moves Zeus along the energy/time frontier."
    )


def _beta_finding(z: pd.DataFrame) -> str:
    """Which beta is best per job, and the worst case."""
    piv = z.pivot_table(index=["gpu", "workload"], columns="beta", values="energy_saving_pct")
    betas = list(piv.columns)
    best = piv.idxmax(axis=1)
    worst_job = piv.min(axis=1).idxmin()
    worst_beta = piv.loc[worst_job].idxmin()
    near_two = int((piv[2.0] >= piv.max(axis=1) - 1.0).sum()) if 2.0 in betas else 0
    label = "off" if math.isinf(worst_beta) else f"{worst_beta:g}"
    return (
        f"The paper's beta 2 is within 1 point of the best tested value on {near_two} of {len(piv)} jobs "
        f"(best values per job: {', '.join(sorted({('off' if math.isinf(v) else f'{v:g}') for v in best}))}). "
        f"The largest loss is {worst_job[1]} on the {str(worst_job[0]).upper()} with beta {label} "
        f"({_pct(piv.loc[worst_job, worst_beta])} energy saving). The extremes are costly for opposite reasons: "
        "without early stopping a try at a batch size that does not converge runs for the full epoch budget, "
        "and with too tight a threshold tries are cut off before they converge, so recurrences need many tries."
    )


class Report:
    """Collects the sections of the report."""

    def __init__(self, args: argparse.Namespace) -> None:
        """Keep the inputs."""
        self.args = args
        self.figures = {str(f) for f in args.figures}
        self.parts: list[str] = []
        self.skipped: list[str] = []

    def add(self, *lines: str) -> None:
        """Append lines."""
        self.parts.extend(lines)

    # -- sections -------------------------------------------------------------------------
    def header(self) -> None:
        """Title, sources and settings."""
        a = self.args
        manifest: dict[str, Any] = (
            json.loads(Path(a.manifest).read_text())
            if a.manifest
            else {"status": "unavailable", "message": "no manifest"}
        )
        self.add("# zeus-bench: reproduction report", "")
        self.add(
            "Generated by `make reproduce` (`python -m analysis.report`) from the results files; every number "
            "below is computed from them. Paper numbers are from Zeus (You, Chung, Chowdhury, NSDI'23), "
            "trace-driven evaluation, V100, eta 0.5, beta 2, seeds 1-10.",
            "",
        )
        if manifest.get("status") == "ok":
            files = ", ".join(
                f"`{n}` ({'sha256 verified' if i['verified'] else 'UNVERIFIED'})"
                for n, i in sorted(manifest["files"].items())
            )
            self.add(f"**Traces.** Zeus traces from {manifest['source']}: {files}.", "")
            for name, why in sorted(manifest.get("skipped", {}).items()):
                self.skipped.append(f"Zeus trace `{name}`: {why}.")
        else:
            self.skipped.append(
                "Every figure and number from the Zeus traces (potential savings, Pareto fronts, simulations): "
                f"{manifest.get('message', 'traces unavailable')}"
            )
        if a.configured_gpus != "all":
            have = set(manifest.get("gpus", []))
            for g in a.configured_gpus.split(","):
                if g and g not in have:
                    self.skipped.append(f"GPU `{g}` is named in the config but has no Zeus power trace.")
        sim = self.sim
        if sim is not None and not sim.empty:
            seeds = sorted(sim["seed"].unique())
            self.add(
                f"**Settings.** eta {sim['eta'].iloc[0]:g}, beta {sim['beta'].iloc[0]:g}, seeds {seeds[0]}-{seeds[-1]} "
                f"({len(seeds)}), policies {', '.join(ordered(sim['policy'].unique(), ()))}; GPUs "
                f"{', '.join(sorted(sim['gpu'].unique()))}.",
            )
        self.add("")

    @property
    def sim(self) -> pd.DataFrame | None:
        """The main simulation rows of every GPU (read once)."""
        if not hasattr(self, "_sim"):
            self._sim = load_all(self.args.sim) if self.args.sim else None
        return self._sim

    def potential(self) -> None:
        """Potential savings."""
        if not self.args.potential:
            return
        pot = load_all(self.args.potential)
        self.add(
            "## 1. Potential energy savings", "", _figure("potential", self.figures, "potential savings"), ""
        )
        ranges = "; ".join(
            f"{str(g).upper()} {_pct(d['min_energy_saving_pct'].min())} "
            f"({d.loc[d['min_energy_saving_pct'].idxmin(), 'workload']}) to {_pct(d['min_energy_saving_pct'].max())} "
            f"({d.loc[d['min_energy_saving_pct'].idxmax(), 'workload']})"
            for g, d in pot.groupby("gpu")
        )
        self.add(
            "The least-energy (batch size, power limit) whose runs all reach the target, against the default batch "
            "size at the maximum power limit (left) and against the largest converging batch size at the maximum "
            f"limit (right). Savings against b0: {ranges}. "
            f"Paper (V100, least-energy configuration): {PAPER_ORACLE_RANGE}. Against max-batch the potential is "
            "smaller where the largest batch size is already near the optimum (movielens-1m)."
            + _own_note(pot),
            "",
        )
        t = pot.assign(
            workload=pd.Categorical(pot["workload"], ordered(pot["workload"], WORKLOAD_ORDER), ordered=True)
        ).sort_values(["gpu", "workload"])
        table = pd.DataFrame(
            {
                "GPU": t["gpu"].str.upper(),
                "workload": t["workload"].astype(str),
                "b0": t["b0"],
                "least-energy (bs, W)": [
                    f"{b}, {p:g}" for b, p in zip(t["min_energy_bs"], t["min_energy_pl_w"], strict=True)
                ],
                "energy saving vs b0": t["min_energy_saving_pct"].map(_pct),
                "time saving vs b0": t["min_energy_time_saving_pct"].map(_pct),
                "energy saving vs max-batch": t["min_energy_saving_vs_maxbatch_pct"].map(_pct),
                "least-cost (bs, W)": [
                    f"{b}, {p:g}" for b, p in zip(t["min_cost_bs"], t["min_cost_pl_w"], strict=True)
                ],
            }
        )
        self.add(_md_table(table), "")

    def pareto(self) -> None:
        """ETA-vs-TTA scatter."""
        sim = self.sim
        if sim is None or not self.args.potential:
            return
        pot = load_all(self.args.potential)
        self.add("## 2. Energy vs. time to accuracy: the Pareto frontier", "")
        settled = metrics.settled(sim)
        for gpu in sorted(sim["gpu"].unique()):
            self.add(_figure(f"pareto-{gpu}", self.figures, f"Pareto {gpu}"), "")
        self.add(
            "Every measured configuration (grey; hollow: some runs miss the target) on log axes, the Pareto frontier of "
            "the feasible ones (blue), the baseline (black square), the least-cost configuration at this eta "
            "(green star) and the configuration Zeus uses most in its last 10 recurrences (vermillion ring). "
            + self._dominated(pot),
            "",
        )
        rows = []
        for p in _by_workload(pot).itertuples(index=False):
            z = settled[(settled["gpu"] == p.gpu) & (settled["workload"] == p.workload)]
            zs = sim[(sim["gpu"] == p.gpu) & (sim["workload"] == p.workload) & (sim["policy"] == "zeus")]
            zeus = "n/a"
            if not z.empty:
                zb, zp = int(z["batch_size"].iloc[0]), float(z["power_limit_w"].iloc[0])
                match = zs[(zs["batch_size"] == zb) & (zs["power_limit_w"] == zp)]
                eta_j = (
                    float(match["expected_energy_j"].iloc[0])
                    if "expected_energy_j" in match and not match.empty
                    else float("nan")
                )
                zeus = f"{zb}, {zp:g} ({_pct(100 * (1 - eta_j / p.baseline_eta_j))} energy vs b0; {z['share'].iloc[0]:.0%} of tries)"
            rows.append(
                {
                    "GPU": str(p.gpu).upper(),
                    "workload": p.workload,
                    "baseline (bs, W)": f"{p.b0}, {self._max_limit(p.gpu, p.workload, p.max_power_w):g}",
                    "optimum (bs, W)": f"{p.min_cost_bs}, {p.min_cost_pl_w:g}",
                    "optimum energy / time saving": f"{_pct(p.min_cost_energy_saving_pct)} / {_pct(p.min_cost_time_saving_pct)}",
                    "Zeus settles at (bs, W)": zeus,
                }
            )
        self.add(_md_table(pd.DataFrame(rows)), "")

    def _max_limit(self, gpu: str, workload: str, default: float) -> float:
        """Largest per-GPU power limit of a job (the potential table's MAXPOWER counts every GPU)."""
        if not self.args.configs:
            return default
        if not hasattr(self, "_configs"):
            self._configs = load_all(self.args.configs)
        c = self._configs[(self._configs["gpu"] == gpu) & (self._configs["workload"] == workload)]
        return float(c["power_limit_w"].max()) if not c.empty else default

    def _dominated(self, pot: pd.DataFrame) -> str:
        """How many baselines some feasible configuration beats in energy without being slower."""
        if not self.args.configs:
            return ""
        configs = load_all(self.args.configs)
        n = 0
        for p in pot.itertuples(index=False):
            c = configs[
                (configs["gpu"] == p.gpu)
                & (configs["workload"] == p.workload)
                & configs["feasible"].astype(bool)
            ]
            if ((c["eta_j"] < p.baseline_eta_j * 0.99) & (c["tta_s"] <= p.baseline_tta_s)).any():
                n += 1
        return (
            f"On {n} of {len(pot)} jobs a configuration uses less energy than the baseline and is no slower; elsewhere "
            "saving energy costs time, and eta sets the exchange rate."
        )

    def _summary(self) -> pd.DataFrame | None:
        if not self.args.summary:
            return None
        return load_all(self.args.summary)

    def policies(self) -> None:
        """Zeus vs baselines and grid search."""
        sim = self.sim
        if sim is None:
            return
        self.add("## 3. Zeus against the baselines and grid search", "")
        for gpu in sorted(sim["gpu"].unique()):
            self.add(_figure(f"policies-{gpu}", self.figures, f"policies {gpu}"), "")
        cum = metrics.normalised(sim, "baseline")
        last = metrics.normalised(sim, "baseline", last=10)
        mb = metrics.normalised(sim, "max-batch") if "max-batch" in set(sim["policy"]) else None
        z = _by_workload(cum[cum["policy"] == "zeus"])
        self.add(
            "Cumulative energy and time over all recurrences, relative to the max-batch baseline (left) and to b0 at "
            "the maximum limit (right); bars are means over seeds, error bars one standard deviation. Below, Zeus's "
            "energy savings against the baseline, over all recurrences and over the last 10, next to the paper's. "
            "Mean over workloads: "
            + "; ".join(
                f"{str(g).upper()} {_pct(d['energy_saving_pct'].mean())} energy, {_pct(d['time_saving_pct'].mean())} time"
                for g, d in z.groupby("gpu")
            )
            + ". "
            + _little_to_gain(cum)
            + _own_note(z),
            "",
        )
        rows = []
        key = ["gpu", "workload"]
        lz = last[last["policy"] == "zeus"].set_index(key)
        gs = cum[cum["policy"] == "grid-search"].set_index(key)
        mz = mb[mb["policy"] == "zeus"].set_index(key) if mb is not None else None
        for r in z.itertuples(index=False):
            k = (r.gpu, r.workload)
            paper = PAPER_V100_ZEUS.get(r.workload) if r.gpu == "v100" else None
            rows.append(
                {
                    "GPU": str(r.gpu).upper(),
                    "workload": r.workload,
                    "Zeus energy saving (all / last 10)": f"{_pct(r.energy_saving_pct)} / {_pct(lz.at[k, 'energy_saving_pct'] if k in lz.index else float('nan'))}",
                    "paper (V100)": f"{paper[0]:.1f} / {paper[1]:.1f} %" if paper else "",
                    "Zeus time saving": _pct(r.time_saving_pct),
                    "Zeus energy saving vs max-batch": _pct(mz.at[k, "energy_saving_pct"])
                    if mz is not None and k in mz.index
                    else "n/a",
                    "grid search energy saving": _pct(gs.at[k, "energy_saving_pct"])
                    if k in gs.index
                    else "n/a",
                }
            )
        self.add(_md_table(pd.DataFrame(rows)), "")

    def ablation(self) -> None:
        """Knob ablation."""
        sim = self.sim
        if sim is None or not {"bs-only", "pl-only"} <= set(sim["policy"]):
            return
        self.add("## 4. Knob ablation", "")
        for gpu in sorted(sim["gpu"].unique()):
            self.add(_figure(f"ablation-{gpu}", self.figures, f"ablation {gpu}"), "")
        norm = metrics.normalised(sim, "baseline")
        piv = norm.pivot_table(index=["gpu", "workload"], columns="policy", values="energy_saving_pct")
        both_best = int((piv["zeus"] >= piv[["bs-only", "pl-only"]].max(axis=1) - 1.0).sum())
        self.add(
            "Energy and time of optimising the batch size only (at the maximum limit), the power limit only (at b0) "
            f"and both (Zeus), relative to the baseline. Tuning both is within 1 point of the best single knob or "
            f"better on {both_best} of {len(piv)} jobs.",
            "",
        )
        table = _by_workload(piv[["bs-only", "pl-only", "zeus"]].map(_pct).reset_index())
        table.columns = ["GPU", "workload", "batch size only", "power limit only", "both (Zeus)"]
        table["GPU"] = table["GPU"].str.upper()
        self.add("Energy savings vs. the baseline, all recurrences:", "", _md_table(table), "")

    def convergence(self) -> None:
        """Convergence and regret."""
        sim = self.sim
        if sim is None or "oracle" not in set(sim["policy"]):
            return
        self.add("## 5. Convergence and regret", "")
        for gpu in sorted(sim["gpu"].unique()):
            self.add(_figure(f"convergence-{gpu}", self.figures, f"convergence {gpu}"), "")
            self.add(_figure(f"regret-{gpu}", self.figures, f"regret {gpu}"), "")
        conv = metrics.convergence(sim)
        final = conv.loc[conv.groupby(["gpu", "workload", "policy"])["recurrence"].idxmax()]
        piv = final.pivot_table(index=["gpu", "workload"], columns="policy", values="regret_mean")
        summary = self._summary()
        settle = None
        if summary is not None and "settle_recurrence_mean" in summary:
            settle = summary[summary["policy"] == "zeus"].set_index(["gpu", "workload"])[
                "settle_recurrence_mean"
            ]
        ratio = (piv["grid-search"] / piv["zeus"]).replace([float("inf")], float("nan")).dropna()
        self.add(
            "Cost of each recurrence relative to the oracle's expected cost (log scale; mean over seeds, band the "
            "range over seeds) for Zeus and grid search, the oracle as a dashed line at 1, and the cumulative regret "
            "(cost above the oracle's, summed over recurrences). Zeus's regret grows while it prunes and explores and "
            "flattens as it settles; grid search pays for trying every configuration"
            + (
                f": its final regret exceeds Zeus's on {int((ratio > 1).sum())} of {len(ratio)} jobs "
                f"(grid search / Zeus from {ratio.min():.1f} to {ratio.max():.1f})."
                if len(ratio)
                else "."
            )
            + " The settling recurrence below is the first from which every try uses Zeus's final configuration "
            "(Thompson sampling keeps re-checking close arms, so it comes late even when the cost is already near "
            "the oracle's).",
            "",
        )
        rows = []
        for (gpu, w), r in piv.iterrows():
            rows.append(
                {
                    "GPU": str(gpu).upper(),
                    "workload": w,
                    "final regret Zeus (J)": f"{r.get('zeus', float('nan')):.3g}",
                    "final regret grid search (J)": f"{r.get('grid-search', float('nan')):.3g}",
                    "Zeus settles at recurrence (mean)": f"{settle.get((gpu, w), float('nan')):.1f}"
                    if settle is not None
                    else "n/a",
                }
            )
        self.add(_md_table(pd.DataFrame(rows)), "")

    def _sweep(self, paths: list[Path], name: str, title: str, param: str, text: str, finding: Any) -> None:
        if not paths:
            return
        norm = metrics.normalised(load_all(paths), "baseline")
        z = norm[norm["policy"] == "zeus"]
        self.add(f"## {title}", "")
        for gpu in sorted(z["gpu"].unique()):
            self.add(_figure(f"{name}-{gpu}", self.figures, f"{name} {gpu}"), "")
        self.add(text + " " + finding(z), "")
        table = z.pivot_table(
            index=["gpu", "workload"], columns=param, values=["energy_saving_pct", "time_saving_pct"]
        )
        rows = []
        for (gpu, w), r in table.iterrows():
            row = {"GPU": str(gpu).upper(), "workload": w}
            for v in sorted(z[param].unique()):
                label = "off" if math.isinf(v) else f"{v:g}"
                row[f"{param} {label}: energy / time"] = (
                    f"{_pct(r[('energy_saving_pct', v)])} / {_pct(r[('time_saving_pct', v)])}"
                )
            rows.append(row)
        self.add("Zeus's savings vs. the baseline (all recurrences):", "", _md_table(pd.DataFrame(rows)), "")

    def sweeps(self) -> None:
        """Eta and beta."""
        self._sweep(
            self.args.eta_sim,
            "eta",
            "6. The energy/time trade-off as eta varies",
            "eta",
            "Zeus's cumulative energy and time relative to the baseline for eta from 0 (optimise time only) to 1 "
            "(energy only).",
            _eta_finding,
        )
        self._sweep(
            self.args.beta_sim,
            "beta",
            "7. Sensitivity to beta (early stopping)",
            "beta",
            "Zeus's cumulative energy and time relative to the baseline for several early-stopping thresholds beta "
            "(a try stops once its cost exceeds beta times the best recurrence cost so far; off: never).",
            _beta_finding,
        )

    def power_profiles(self) -> None:
        """Power-limit profiles."""
        if not self.args.configs or not self.args.potential:
            return
        pot = load_all(self.args.potential).rename(columns={"b0": "batch_size"})
        configs = load_all(self.args.configs)
        n_limits = configs.groupby("gpu")["power_limit_w"].nunique()
        configs = configs[configs["gpu"].isin(n_limits[n_limits > 1].index)]
        if configs.empty:
            return
        prof = metrics.power_profile(configs, pot)
        self.add("## 8. Power limit profiles", "")
        for gpu in sorted(prof["gpu"].unique()):
            self.add(_figure(f"power-profiles-{gpu}", self.figures, f"power profiles {gpu}"), "")
        low = prof.loc[prof.groupby(["gpu", "workload"])["power_limit_w"].idxmin()]
        best = prof.loc[prof.groupby(["gpu", "workload"])["energy_per_epoch_j_rel"].idxmin()].set_index(
            ["gpu", "workload"]
        )
        per_gpu = []
        for gpu, g in low.groupby("gpu"):
            saves = int((g["energy_per_epoch_j_rel"] < 1).sum())
            per_gpu.append(
                f"on the {str(gpu).upper()} at {g['power_limit_w'].min():g} W, power is {g['avg_power_w_rel'].min():.2f}-"
                f"{g['avg_power_w_rel'].max():.2f}x and throughput {g['epochs_per_hour_rel'].min():.2f}-"
                f"{g['epochs_per_hour_rel'].max():.2f}x of their values at the maximum limit, and the energy per epoch "
                f"is lower than at the maximum limit for {saves} of {len(g)} workloads"
            )
        self.add(
            "Average power, throughput and energy per epoch at b0 against the power limit, relative to the maximum "
            "limit. Time and power are not proportional: "
            + "; ".join(per_gpu)
            + f". {_least_energy_limits(prof)} The JIT profiler picks, per batch size, the limit of least "
            "eta-weighted cost; with eta < 1 the time term pulls that choice towards higher limits. Below: the lowest limit, and the limit of "
            "least energy per epoch.",
            "",
        )
        low = low.assign(
            best_limit=[
                best.at[(g, w), "power_limit_w"] for g, w in zip(low["gpu"], low["workload"], strict=True)
            ],
            best_rel=[
                best.at[(g, w), "energy_per_epoch_j_rel"]
                for g, w in zip(low["gpu"], low["workload"], strict=True)
            ],
        )
        table = pd.DataFrame(
            {
                "GPU": low["gpu"].str.upper(),
                "workload": low["workload"],
                "limit (W)": low["power_limit_w"].map(lambda v: f"{v:g}"),
                "power": low["avg_power_w_rel"].map(lambda v: f"{v:.2f}x"),
                "throughput": low["epochs_per_hour_rel"].map(lambda v: f"{v:.2f}x"),
                "energy per epoch": low["energy_per_epoch_j_rel"].map(lambda v: f"{v:.2f}x"),
                "least energy per epoch at (W)": [
                    f"{v:g} ({r:.2f}x)" for v, r in zip(low["best_limit"], low["best_rel"], strict=True)
                ],
            }
        )
        self.add(_md_table(table), "")

    def own(self) -> None:
        """The project's own measurements."""
        self.add("## 9. H200 measurements (this project)", "")
        if not self.args.own:
            self.skipped.append(
                "H200 figure: no committed sweep traces under `results/traces/h200/` (run the sweep workflow, "
                "`workflows/rules/sweep.smk`, on a GPU)."
            )
            self.add("Skipped: no H200 sweep traces are committed yet.", "")
            return
        per = metrics.per_sample(load_all(self.args.own))
        if per.empty:
            self.skipped.append("H200 figure: the committed power traces have no throughput (samples_per_s).")
            return
        self.add(_figure("h200", self.figures, "H200"), "")
        limits = ", ".join(sorted({f"{v:g} W" for v in per["power_limit_w"]}))
        best = per.loc[per.groupby(["gpu", "workload"])["energy_per_sample_j"].idxmin()]
        largest = per.groupby(["gpu", "workload"])["batch_size"].max()
        at_max = int(
            sum(
                b == largest[(g, w)]
                for g, w, b in zip(best["gpu"], best["workload"], best["batch_size"], strict=True)
            )
        )
        self.add(
            f"Energy per sample and throughput against the batch size, measured on lent H200s at their current power "
            f"limit only ({limits}; observe mode: the lender does not allow changing it), so there is no power-limit "
            f"axis; where the Zeus train trace is available, sections 1-7 evaluate these GPUs with the batch size as "
            f"the only knob. `h200x2` is data-parallel training on two GPUs. Larger batches raise "
            f"throughput and lower the energy per sample: the least energy per sample is at the largest batch size "
            f"measured for {at_max} of {len(best)} series. Energy per sample ignores statistical efficiency: the "
            "epochs needed to reach the target grow with the batch size, which is why the least-energy configurations "
            "of the V100 and A40 traces (section 1) are not the largest batches.",
            "",
        )
        table = pd.DataFrame(
            {
                "GPU": best["gpu"],
                "workload": best["workload"],
                "batch sizes measured": [
                    f"{len(set(per.loc[(per['gpu'] == g) & (per['workload'] == w), 'batch_size']))} "
                    f"({per.loc[(per['gpu'] == g) & (per['workload'] == w), 'batch_size'].min()}-"
                    f"{per.loc[(per['gpu'] == g) & (per['workload'] == w), 'batch_size'].max()})"
                    for g, w in zip(best["gpu"], best["workload"], strict=True)
                ],
                "least energy per sample at bs": best["batch_size"],
                "energy per sample (J)": best["energy_per_sample_j"].map(lambda v: f"{v:.3g}"),
                "throughput (samples/s)": best["samples_per_s"].map(lambda v: f"{v:.4g}"),
            }
        )
        self.add(_md_table(table), "")

    def skipped_section(self) -> None:
        """What was not done and how to get it."""
        self.add("## What was skipped", "")
        if not self.skipped:
            self.add("Nothing.", "")
            return
        self.add(*[f"- {s}" for s in self.skipped], "")

    def render(self) -> str:
        """Build every section."""
        self.header()
        for section in (
            self.potential,
            self.pareto,
            self.policies,
            self.ablation,
            self.convergence,
            self.sweeps,
            self.power_profiles,
            self.own,
        ):
            section()
        self.skipped_section()
        return "\n".join(self.parts).rstrip() + "\n"


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m analysis.report``."""
    p = argparse.ArgumentParser(prog="python -m analysis.report", description=__doc__)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--manifest", type=Path, default=None, help="MANIFEST.json of zeus-bench fetch-traces")
    p.add_argument("--configured-gpus", default="all")
    for name in ("potential", "summary", "sim", "eta-sim", "beta-sim", "configs", "own", "figures"):
        p.add_argument(f"--{name}", type=Path, nargs="*", default=[])
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Write the report."""
    args = build_parser().parse_args(argv)
    atomic_write_text(args.out, Report(args).render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
