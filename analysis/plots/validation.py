"""The validation figure: a measured run's cumulative cost against the simulated band (issue 35)."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from analysis.style import FULL_W, paper_style, series_color


def plot_validation(rec: pd.DataFrame, title: str) -> Figure:
    """Measured cumulative cost per recurrence against the simulated 95 % band and median.

    Args:
        rec: ``validation_recurrences`` rows of one GPU and workload.
        title: The figure's title (it should state the scope: batch size only, current limit).
    """
    r = rec.sort_values("recurrence")
    x = r["recurrence"].to_numpy()
    with paper_style():
        fig = Figure(figsize=(FULL_W, 2.8))
        ax, bx = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
        kj = 1e-3
        ax.fill_between(
            x, r["noise_cum_cost_p2_5"] * kj, r["noise_cum_cost_p97_5"] * kj, color="0.85",
            label="simulated 95 % band, with --noise",
        )  # fmt: skip
        ax.fill_between(
            x, r["sim_cum_cost_p2_5"] * kj, r["sim_cum_cost_p97_5"] * kj, color=series_color(0), alpha=0.35,
            label="simulated 95 % band",
        )  # fmt: skip
        ax.plot(x, r["sim_cum_cost_p50"] * kj, color=series_color(0), lw=1, label="simulated median")
        ax.plot(
            x,
            r["measured_cum_cost"] * kj,
            color=series_color(1),
            marker="o",
            ms=2.5,
            lw=1.2,
            label="measured",
        )
        ax.set_xlabel("recurrence")
        ax.set_ylabel("cumulative cost (kJ)")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", fontsize=6)
        sc = bx.scatter(
            x, r["measured_batch_size"], c=r["choice_share"], cmap="viridis", vmin=0, vmax=1, s=12,
            edgecolors="0.3", linewidths=0.3,
        )  # fmt: skip
        bx.set_yscale("log", base=2)
        bx.set_xlabel("recurrence")
        bx.set_ylabel("measured batch size (first try)")
        bx.grid(alpha=0.3)
        cb = fig.colorbar(sc, ax=bx)
        cb.set_label("share of simulated seeds\nwith the same choice", fontsize=6)
        fig.suptitle(title, fontsize=7)
        fig.set_layout_engine("constrained")
    return fig
