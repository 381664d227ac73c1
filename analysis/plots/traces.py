"""Figures of the traces themselves: potential savings, the energy/time Pareto front, power-limit profiles.

Each takes the DataFrame :mod:`analysis.metrics` builds and returns a Figure; no file I/O.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from analysis.plots.common import (
    MARKER_STYLE,
    BarSeries,
    gpu_names,
    grouped_bars,
    log_scale,
    new_figure,
    panel_grid,
    suptitle,
    titled,
    workload_order,
)
from analysis.style import (
    FULL_W,
    gpu_label,
    gpu_notes,
    paper_style,
    series_color,
)


def plot_potential(potential: pd.DataFrame) -> Figure:
    """Potential energy savings of the least-energy configuration, per workload and GPU.

    Args:
        potential: Rows of ``zeus-bench potential`` (gpu, workload, min_energy_saving_pct,
            min_energy_saving_vs_maxbatch_pct), any number of GPUs.
    """
    with paper_style():
        fig, (left, right) = new_figure(FULL_W, 2.4, ncols=2)
        workloads = workload_order(potential)
        gpus = sorted(potential["gpu"].unique())
        colors = [series_color(i) for i in range(len(gpus))]
        labels = [g.upper() for g in gpus]
        bars = BarSeries("gpu", gpus, colors, labels)
        grouped_bars(left, potential, workloads, bars, "min_energy_saving_pct")
        grouped_bars(right, potential, workloads, bars, "min_energy_saving_vs_maxbatch_pct")
        left.set_title("vs. default batch size b0 at max. power limit")
        right.set_title("vs. largest converging batch size at max. power limit")
        for ax in (left, right):
            ax.set_ylabel("Energy-to-accuracy saving (%)")
            ax.yaxis.set_major_formatter(PercentFormatter(decimals=0))
            ax.axhline(0, color="black", linewidth=0.6)
        handles, labels = left.get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside right center", title="GPU")
        measured = [g.upper() for g in gpus if gpu_notes(g)]
        title = f"Potential energy savings of the least-energy configuration, {gpu_names(potential, None)}"
        if measured:  # GPUs measured by zeus-bench sweep: say what their numbers rest on
            title += f"\n({', '.join(measured)}: {'; '.join(gpu_notes(measured[0]))})"
        suptitle(fig, title)
    return fig


def _pareto_panel(ax: Axes, c: pd.DataFrame, marks: pd.DataFrame) -> None:
    """One workload's panel: its configurations (converging or not), the frontier and the markers.

    ``c``: the workload's ``pareto --all`` rows; ``marks``: its marker rows (baseline, oracle, zeus).
    """
    ok = c["feasible"].astype(bool)
    ax.scatter(
        c.loc[ok, "tta_s"] / 3600,
        c.loc[ok, "eta_j"] / 1e6,
        s=6,
        color="#999999",
        alpha=0.7,
        linewidths=0,
        label="Configuration (all runs converge)",
    )
    ax.scatter(
        c.loc[~ok, "tta_s"] / 3600,
        c.loc[~ok, "eta_j"] / 1e6,
        s=6,
        facecolors="none",
        edgecolors="#BBBBBB",
        linewidths=0.5,
        label="Some runs miss the target",
    )
    front = c[c["on_frontier"].astype(bool)].sort_values("tta_s")
    ax.plot(
        front["tta_s"] / 3600,
        front["eta_j"] / 1e6,
        "-",
        color="#4477AA",
        linewidth=1.0,
        label="Pareto frontier",
    )
    _draw_markers(ax, marks)


def _draw_markers(ax: Axes, marks: pd.DataFrame) -> None:
    """The baseline, oracle and zeus markers of one panel (zeus as a ring over what it hides)."""
    for kind, style in MARKER_STYLE.items():
        m = marks[marks["marker"] == kind]
        if m.empty:
            continue
        if kind == "zeus":  # a ring, so that an optimum underneath stays visible
            ax.scatter(
                m["tta_s"] / 3600,
                m["eta_j"] / 1e6,
                marker="o",
                s=70,
                facecolors="none",
                edgecolors=style["color"],
                linewidths=1.4,
                zorder=7,
                label=style["label"],
            )
        else:
            ax.scatter(
                m["tta_s"] / 3600,
                m["eta_j"] / 1e6,
                marker=style["marker"],
                color=style["color"],
                s=60 if kind == "oracle" else 30,
                edgecolors="white",
                linewidths=0.5,
                zorder=6,
                label=style["label"],
            )


def plot_pareto(configs: pd.DataFrame, marks: pd.DataFrame, gpu: str) -> Figure:
    """ETA-vs-TTA scatter of every configuration with the Pareto frontier, one panel per workload.

    Args:
        configs: ``zeus-bench pareto --all`` rows (gpu, workload, batch_size, eta_j, tta_s,
            feasible, on_frontier) of one or more jobs.
        marks: :func:`analysis.metrics.markers` rows (baseline, oracle, zeus).
        gpu: GPU to draw.
    """
    configs = configs[configs["gpu"] == gpu]
    marks = marks[marks["gpu"] == gpu]
    workloads = workload_order(configs)
    one_limit = configs["power_limit_w"].nunique() == 1
    with paper_style():
        fig, axes = panel_grid(len(workloads), height=2.1)
        for ax, w in zip(axes, workloads, strict=True):
            _pareto_panel(ax, configs[configs["workload"] == w], marks[marks["workload"] == w])
            log_scale(ax)
            ax.set_title(w)
            ax.set_xlabel("Time to accuracy (h, log)")
            ax.set_ylabel("Energy to accuracy (MJ, log)")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=3)
        what = "batch size" if one_limit else "(batch size, power limit)"
        suptitle(
            fig,
            titled(f"Energy vs. time to accuracy of every {what}", gpu_label(gpu, configs["power_limit_w"])),
        )
    return fig


def plot_power_profiles(profile: pd.DataFrame, gpu: str) -> Figure:
    """Average power, throughput and energy per epoch against the power limit, per workload.

    Args:
        profile: :func:`analysis.metrics.power_profile` rows.
        gpu: GPU to draw.
    """
    profile = profile[profile["gpu"] == gpu]
    workloads = workload_order(profile)
    lines = (
        ("avg_power_w_rel", "Average power", "#4477AA", "-"),
        ("epochs_per_hour_rel", "Throughput (epochs/h)", "#EE6677", "--"),
        ("energy_per_epoch_j_rel", "Energy per epoch", "#228833", "-."),
    )
    with paper_style():
        fig, axes = panel_grid(len(workloads), height=1.9)
        for ax, w in zip(axes, workloads, strict=True):
            s = profile[profile["workload"] == w].sort_values("power_limit_w")
            for col, label, color, ls in lines:
                ax.plot(s["power_limit_w"], s[col], ls, color=color, marker="o", markersize=2.5, label=label)
            ax.axhline(1.0, color="black", linewidth=0.5)
            ax.set_title(f"{w} (batch size {int(s['batch_size'].iloc[0])})" if not s.empty else w)
            ax.set_xlabel("Power limit (W)")
            ax.set_ylabel("Relative to max. limit")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=3)
        fig.suptitle(
            f"Power limit profiles, {gpu.upper()}: throughput and power do not fall in proportion", fontsize=9
        )
    return fig
