"""Report sections on the simulated policies: savings, ablation, convergence and regret, the eta and beta sweeps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from analysis import metrics
from analysis.report.findings.simulation import (
    ablation_both,
    beta_effect,
    eta_effect,
    failed_recurrences,
    grid_vs_zeus_regret,
    little_to_gain,
    regret_shape,
    zeus_vs_baseline,
)
from analysis.report.render import Page, by_workload, figure_link
from analysis.report.text import (
    ORIGINAL_LABEL,
    SIMULATED_NOTE,
    beta_text,
    gpu_name,
    md_table,
    pct,
    pct_pair,
)
from analysis.tables import load_all
from zeus_bench.sim.metrics import RUN


class PolicySections(Page):
    """Sections 3 to 7."""

    def policies(self) -> None:
        """Zeus vs baselines and grid search."""
        summary = self.summary
        if summary is None:
            return
        self.add("## 3. Zeus against the baselines and grid search", "")
        for gpu in sorted(summary["gpu"].unique()):
            self.add(figure_link(f"policies-{gpu}", self.figures, f"policies {gpu}"), "")
        self.caveats(summary["gpu"].unique())
        self.say(
            zeus_vs_baseline(summary),
            little_to_gain(summary),
            failed_recurrences(summary),
            before=SIMULATED_NOTE + " "
            "Cumulative energy and time over all recurrences, relative to the max-batch baseline (left) and to "
            "b0 at the maximum limit (right); bars are means over seeds, error bars one standard deviation.",
        )
        s = by_workload(summary).set_index(["gpu", "workload", "policy"])
        refs = self.references
        orig = refs[(refs["source"] == ORIGINAL_LABEL) & refs["baseline"].isin(["b0", "baseline"])]
        orig = orig.set_index(["gpu", "workload", "metric"])["value_pct"]
        rows = []
        for g, w in dict.fromkeys((g, w) for g, w, _ in s.index):
            if (g, w, "zeus") not in s.index:
                continue
            z = s.loc[(g, w, "zeus")]

            def ref(metric: str, key: tuple[Any, Any] = (g, w)) -> str:
                k = (*key, metric)
                return f"{orig.loc[k]:.1f}" if k in orig.index else "n/a"

            gs = s.loc[(g, w, "grid-search")] if (g, w, "grid-search") in s.index else None
            rows.append(
                {
                    "GPU": gpu_name(g),
                    "workload": w,
                    "Zeus energy saving (all / last 10)": f"{pct(z['energy_savings_vs_baseline_cum_pct_mean'])} / "
                    f"{pct(z['energy_savings_vs_baseline_last10_pct_mean'])}",
                    f"{ORIGINAL_LABEL} (all / last 10)": pct_pair(
                        ref("energy_savings_cum"), ref("energy_savings_last10")
                    ),
                    "Zeus time saving": pct(z["time_savings_vs_baseline_cum_pct_mean"]),
                    "Zeus energy saving vs max-batch": pct(z["energy_savings_vs_max_batch_cum_pct_mean"]),
                    "Zeus cost / baseline's": f"{z['cost_ratio_vs_baseline_cum_mean']:.2f}",
                    "grid search energy saving": pct(gs["energy_savings_vs_baseline_cum_pct_mean"])
                    if gs is not None
                    else "n/a",
                }
            )
        self.add(md_table(pd.DataFrame(rows)), "")

    def ablation(self) -> None:
        """Knob ablation."""
        summary = self.summary
        if summary is None or not {"bs-only", "pl-only"} <= set(summary["policy"]):
            return
        self.add("## 4. Knob ablation", "")
        for gpu in sorted(summary["gpu"].unique()):
            self.add(figure_link(f"ablation-{gpu}", self.figures, f"ablation {gpu}"), "")
        self.caveats(summary["gpu"].unique())
        one = self.one_limit()
        self.say(
            ablation_both(summary, one),
            before=SIMULATED_NOTE + " "
            "Energy and time of optimising the batch size only (at the maximum limit), the power limit only "
            "(at b0) and both (Zeus), relative to the baseline.",
        )
        col = "energy_savings_vs_baseline_cum_pct_mean"
        piv = summary.pivot_table(index=["gpu", "workload"], columns="policy", values=col)
        table = by_workload(piv[["bs-only", "pl-only", "zeus"]].map(pct).reset_index())
        table.loc[table["gpu"].isin(one), "pl-only"] = "n/a (one limit)"
        table.columns = ["GPU", "workload", "batch size only", "power limit only", "both (Zeus)"]
        table["GPU"] = table["GPU"].str.upper()
        self.add("Energy savings vs. the baseline, all recurrences:", "", md_table(table), "")

    def convergence(self) -> None:
        """Convergence and regret."""
        sim, summary = self.sim, self.summary
        if sim is None or summary is None or "oracle" not in set(sim["policy"].unique()):
            return
        self.add("## 5. Convergence and regret", "")
        for gpu in sorted(sim["gpu"].unique()):
            self.add(figure_link(f"convergence-{gpu}", self.figures, f"convergence {gpu}"), "")
            self.add(figure_link(f"regret-{gpu}", self.figures, f"regret {gpu}"), "")
        self.caveats(sim["gpu"].unique())
        self.say(
            regret_shape(metrics.convergence(sim)),
            grid_vs_zeus_regret(summary),
            before=SIMULATED_NOTE + " "
            "Cost of each recurrence relative to the oracle's expected cost (log scale; mean over seeds, band "
            "the range over seeds) for Zeus and grid search, the oracle as a dashed line at 1, and the cumulative "
            "regret (cost above the oracle's, summed over recurrences; a failed recurrence counts with its fallback "
            "to the baseline).",
            after="The settling recurrence below is the first from which every try uses Zeus's final configuration.",
        )
        s = summary.set_index(["gpu", "workload", "policy"])
        rows = []
        for g, w in sorted({(g, w) for g, w, _ in s.index}):
            z = s.loc[(g, w, "zeus")] if (g, w, "zeus") in s.index else None
            gs = s.loc[(g, w, "grid-search")] if (g, w, "grid-search") in s.index else None
            rows.append(
                {
                    "GPU": gpu_name(g),
                    "workload": w,
                    "final regret Zeus (J)": f"{z['regret_vs_oracle_cost_j_mean']:.3g}"
                    if z is not None
                    else "n/a",
                    "Zeus regret (% of oracle)": pct(z["regret_vs_oracle_cum_pct_mean"])
                    if z is not None
                    else "n/a",
                    "final regret grid search (J)": f"{gs['regret_vs_oracle_cost_j_mean']:.3g}"
                    if gs is not None
                    else "n/a",
                    "Zeus settles at recurrence (mean)": f"{z['settle_recurrence_mean']:.1f}"
                    if z is not None
                    else "n/a",
                }
            )
        self.add(md_table(pd.DataFrame(rows)), "")

    def _sweep(self, paths: list[Path], name: str, title: str, param: str, text: str, finding: Any) -> None:
        if not paths:
            return
        # Runs tables or their summaries (one file per GPU): in summarize's row order either way.
        summary = metrics.summary_of(load_all(paths)).sort_values(RUN, kind="stable", ignore_index=True)
        norm = metrics.normalised(summary, "baseline")
        z = norm[norm["policy"] == "zeus"]
        self.add(f"## {title}", "")
        for gpu in sorted(z["gpu"].unique()):
            self.add(figure_link(f"{name}-{gpu}", self.figures, f"{name} {gpu}"), "")
        self.caveats(z["gpu"].unique())
        self.say(finding(z), before=text)
        table = z.pivot_table(
            index=["gpu", "workload"], columns=param, values=["energy_saving_pct", "time_saving_pct"]
        )
        rows = []
        for (gpu, w), r in table.iterrows():
            row = {"GPU": gpu_name(gpu), "workload": w}
            for v in sorted(z[param].unique()):
                row[f"{param} {beta_text(v)}: energy / time"] = (
                    f"{pct(r[('energy_saving_pct', v)])} / {pct(r[('time_saving_pct', v)])}"
                )
            rows.append(row)
        self.add("Zeus's savings vs. the baseline (all recurrences):", "", md_table(pd.DataFrame(rows)), "")

    def sweeps(self) -> None:
        """Eta and beta."""
        self._sweep(
            self.args.eta_sim,
            "eta",
            "6. The energy/time trade-off as eta varies",
            "eta",
            SIMULATED_NOTE + " "
            "Zeus's cumulative energy and time relative to the baseline for eta from 0 (optimise time only) to 1 "
            "(energy only).",
            eta_effect,
        )
        self._sweep(
            self.args.beta_sim,
            "beta",
            "7. Sensitivity to beta (early stopping)",
            "beta",
            SIMULATED_NOTE + " "
            "Zeus's cumulative energy and time relative to the baseline for several early-stopping thresholds beta "
            "(a try stops once its cost exceeds beta times the best recurrence cost so far; off: never).",
            beta_effect,
        )
