"""Figure across GPU generations: energy per sample and time per epoch against batch size.

:func:`generation_table` puts the published Zeus power traces (V100, A40) at each GPU's maximum
power limit beside the project's own sweeps (the H200), each row labelled with the software that
produced it; :func:`plot_generations` draws it, one column per workload. Both are pure: frames
in, frame or Figure out, no file I/O.

Energy per sample = average power x time per epoch / samples per epoch. The Zeus traces give
time per epoch only, so the samples per epoch of each workload are taken from the project's own
sweep rows (``time_per_epoch_s x samples_per_s``, the epoch the sweep extrapolated to); a
workload without own sweep rows has no energy per sample here.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.artist import Artist
from matplotlib.figure import Figure

from analysis.h200 import _log_ticks
from analysis.style import FULL_W, WORKLOAD_ORDER, ordered, paper_style, series_color

ZEUS_SOFTWARE = "Zeus trace: original scripts, real data"
OWN_SOFTWARE = {
    "v2": "zeus-bench: bf16 (DeepSpeech2 fp32), channels-last, fused optimisers, synthetic data",
    "v1": "zeus-bench v1 workloads, one 5 s window",
}


def at_max_limit(power: pd.DataFrame) -> pd.DataFrame:
    """Rows of ``power`` at each GPU kind's maximum traced power limit."""
    top = power.groupby("gpu")["power_limit_w"].transform("max")
    return power[power["power_limit_w"] == top]


def samples_per_epoch(own: pd.DataFrame) -> pd.Series:
    """Samples per epoch of each dataset, from sweep rows (``time_per_epoch_s x samples_per_s``).

    Raises:
        ValueError: a dataset's rows disagree by more than 0.1 % (not one epoch definition).
    """
    rows = own.dropna(subset=["samples_per_s"])
    n = rows["time_per_epoch_s"] * rows["samples_per_s"]
    per = n.groupby(rows["dataset"])
    spread = (per.max() - per.min()) / per.median()
    if (spread > 1e-3).any():
        bad = spread[spread > 1e-3].index[0]
        raise ValueError(f"sweep rows of {bad} imply different samples per epoch")
    return per.median()


def generation_table(zeus: pd.DataFrame, own: pd.DataFrame) -> pd.DataFrame:
    """Zeus traces at their maximum limit and the project's sweeps, with energy per sample and a label.

    Args:
        zeus: Published Zeus power traces (``power`` schema; several limits per batch size);
            only rows of a (dataset, optimizer) that ``own`` has are kept.
        own: The project's own sweeps (``power`` schema with ``samples_per_s``; observe mode).

    Returns:
        Columns ``gpu``, ``dataset``, ``network``, ``batch_size``, ``power_limit_w``,
        ``time_per_epoch_s``, ``avg_power_w``, ``energy_per_sample_j``, ``source`` (``zeus``
        or ``zeus-bench``) and ``series`` (the legend label: GPU, limit, software).
    """
    n = samples_per_epoch(own)
    # The Zeus traces hold some workloads with several optimisers: keep the one the sweeps used.
    pairs = set(zip(own["dataset"], own["optimizer"], strict=True))
    zeus = zeus[[(d, o) in pairs for d, o in zip(zeus["dataset"], zeus["optimizer"], strict=True)]]
    z = at_max_limit(zeus).assign(source="zeus")
    z = z.assign(
        series=[
            f"{g.upper()} {p:g} W ({ZEUS_SOFTWARE})"
            for g, p in zip(z["gpu"], z["power_limit_w"], strict=True)
        ]
    )
    windows = own["num_windows"] if "num_windows" in own else pd.Series(1, index=own.index)
    version = ["v2" if w > 1 else "v1" for w in windows.fillna(1)]
    o = own.assign(source="zeus-bench")
    o = o.assign(
        series=[
            f"{g.upper()} {p:g} W ({OWN_SOFTWARE[v]})"
            for g, p, v in zip(o["gpu"], o["power_limit_w"], version, strict=True)
        ]
    )
    cols = ["gpu", "dataset", "network", "batch_size", "power_limit_w", "time_per_epoch_s", "avg_power_w"]
    table = pd.concat([z[[*cols, "source", "series"]], o[[*cols, "source", "series"]]], ignore_index=True)
    table["energy_per_sample_j"] = table["avg_power_w"] * table["time_per_epoch_s"] / table["dataset"].map(n)
    return table.sort_values(["source", "series", "dataset", "batch_size"], kind="stable").reset_index(
        drop=True
    )


def plot_generations(table: pd.DataFrame, title: str | None = None) -> Figure:
    """Energy per sample (top) and time per epoch (bottom) against batch size, one column per workload.

    Args:
        table: As :func:`generation_table` returns; one line per ``series``.
        title: Figure title (default: says what is side by side and that nothing is combined).

    Returns:
        The figure (2 rows x workloads), a shared legend of the series below.
    """
    workloads = ordered(table["dataset"].unique(), WORKLOAD_ORDER)
    series = list(dict.fromkeys(table.sort_values(["source", "series"])["series"]))
    with paper_style():
        fig = Figure(figsize=(FULL_W * max(1.0, len(workloads) / 4), 3.9), layout="constrained")
        axes = fig.subplots(2, len(workloads), squeeze=False)
        for col, workload in enumerate(workloads):
            rows = table[table["dataset"] == workload]
            top, bottom = axes[0][col], axes[1][col]
            for i, name in enumerate(series):
                s = rows[rows["series"] == name].sort_values("batch_size")
                if s.empty:
                    continue
                style = {
                    "color": series_color(i),
                    "marker": "o" if s["source"].iloc[0] == "zeus-bench" else "s",
                    "markersize": 2.5,
                    "linewidth": 1,
                    "label": name,
                }
                e = s.dropna(subset=["energy_per_sample_j"])
                if not e.empty:
                    top.plot(e["batch_size"], e["energy_per_sample_j"], **style)
                bottom.plot(s["batch_size"], s["time_per_epoch_s"], **style)
            top.set_title(f"{workload}\n{rows['network'].iloc[0]}", fontsize=7)
            for ax in (top, bottom):
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                if ax.has_data():
                    _log_ticks(ax)
                ax.grid(True, which="major", linewidth=0.3, alpha=0.5)
            bottom.set_xlabel("batch size")
        axes[0][0].set_ylabel("energy per sample (J)")
        axes[1][0].set_ylabel("time per epoch (s)")
        handles: dict[str, Artist] = {}
        for ax in axes[1]:
            for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
                handles.setdefault(label, h)
        fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncol=1, fontsize=6)
        fig.suptitle(
            title
            or "GPU generations side by side, each at its maximum power limit (measured traces, not combined)",
            fontsize=8,
        )
    return fig
