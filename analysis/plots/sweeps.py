"""Figures of the project's own measured sweeps, alone and beside the published Zeus traces.

:func:`plot_sweep` takes a ``power`` trace (one or several GPU kinds, e.g. ``h200`` and the DDP
``h200x2``) and returns a Figure with one column per workload: energy per sample (J) on top and
throughput (samples/s) below, both against the batch size on log axes (was ``analysis.h200``).

:func:`generation_table` puts the published Zeus power traces (V100, A40) at each GPU's maximum
power limit beside the project's own sweeps (the H200), each row labelled with the software that
produced it; :func:`plot_generations` draws it, one column per workload (was
``analysis.generations``). All are pure: frames in, frame or Figure out, no file I/O.

Energy per sample = average power x time per epoch / samples per epoch. The Zeus traces give
time per epoch only, so the samples per epoch of each workload are taken from the project's own
sweep rows (``time_per_epoch_s x samples_per_s``, the epoch the sweep extrapolated to); a
workload without own sweep rows has no energy per sample here.
"""

from __future__ import annotations

import math

import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from analysis.style import FULL_W, WORKLOAD_ORDER, ordered, paper_style, series_color


def _log_ticks(ax: Axes) -> None:
    """Plain labels on a log y axis: at 1, 2 and 5 per decade on short axes, decades on long ones.

    matplotlib's default minor labels crowd axes that span less than a decade.
    """
    lo, hi = ax.get_ylim()
    decades = math.log10(hi / lo) if lo > 0 else math.inf
    subs = (1.0, 2.0, 5.0) if decades <= 2.5 else (1.0,)
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs, numticks=12))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def plot_sweep(df: pd.DataFrame, title: str | None = None) -> Figure:
    """Energy per sample and throughput against batch size, one column per workload (dataset).

    Args:
        df: Rows of a ``power`` trace with ``samples_per_s`` (a sweep); several limits per batch
            size become separate lines, several GPU kinds separate series.
        title: Figure title.

    Returns:
        The figure (2 rows x number of workloads).
    """
    data = df.dropna(subset=["samples_per_s"]).assign(
        j_per_sample=lambda d: d["avg_power_w"] / d["samples_per_s"]
    )
    workloads = ordered(data["dataset"].unique(), WORKLOAD_ORDER)
    series = sorted({(str(g), float(p)) for g, p in zip(data["gpu"], data["power_limit_w"], strict=True)})
    with paper_style():
        fig = Figure(figsize=(FULL_W * max(1.0, len(workloads) / 4), 3.4), layout="constrained")
        axes = fig.subplots(2, len(workloads), squeeze=False)
        for col, workload in enumerate(workloads):
            rows = data[data["dataset"] == workload]
            top, bottom = axes[0][col], axes[1][col]
            for i, (gpu, limit) in enumerate(series):
                s = rows[(rows["gpu"] == gpu) & (rows["power_limit_w"] == limit)].sort_values("batch_size")
                if s.empty:
                    continue
                n = int(s["num_gpus"].fillna(1).max()) if "num_gpus" in s else 1
                label = f"{gpu} ({n} GPU{'s' if n > 1 else ''}, {limit:g} W)"
                style = {
                    "color": series_color(i),
                    "marker": "o",
                    "markersize": 2.5,
                    "linewidth": 1,
                    "label": label,
                }
                top.plot(s["batch_size"], s["j_per_sample"], **style)
                bottom.plot(s["batch_size"], s["samples_per_s"], **style)
            network = rows["network"].iloc[0]
            top.set_title(f"{workload}\n{network}", fontsize=7)
            for ax in (top, bottom):
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                _log_ticks(ax)
                ax.grid(True, which="major", linewidth=0.3, alpha=0.5)
            bottom.set_xlabel("batch size")
        axes[0][0].set_ylabel("energy per sample (J)")
        axes[1][0].set_ylabel("throughput (samples/s)")
        handles, labels = axes[0][0].get_legend_handles_labels()
        for ax in axes[0][1:]:
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        fig.legend(handles, labels, loc="outside lower center", ncols=max(1, len(labels)), fontsize=7)
        if title:
            fig.suptitle(title, fontsize=8)
    return fig


def _fmt(value: float) -> str:
    """Four significant digits, thousands separated from 1,000 up."""
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def markdown_table(df: pd.DataFrame) -> str:
    """The README's table of a v2 sweep: one row per point, with 95 % half-widths and the CI flag.

    Args:
        df: Rows of a ``power`` trace of schema version 2 (``num_windows``, the ``*_ci_*`` columns
            and ``ci_met``), one GPU kind.

    Returns:
        A Markdown table, workloads in the project's order and batch sizes ascending;
        ``J/sample`` is ``avg_power_w / samples_per_s``.
    """
    head = (
        "| workload | network | batch size | samples/s | W (± 95 %) | J/sample (± 95 %) "
        "| time/epoch (s, ± 95 %) | windows | measured (s) | CI < 1 % |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
    )
    lines = [head]
    for workload in ordered(df["dataset"].unique(), WORKLOAD_ORDER):
        for r in df[df["dataset"] == workload].sort_values("batch_size").itertuples():
            jps = r.avg_power_w / r.samples_per_s
            met = "yes" if bool(r.ci_met) else "**no (flagged)**"
            lines.append(
                f"| {workload} | {r.network} | {r.batch_size} | {_fmt(r.samples_per_s)} "
                f"| {r.avg_power_w:.1f} ± {r.avg_power_ci_w:.1f} "
                f"| {_fmt(jps)} ± {100 * r.energy_per_sample_ci_rel:.1f} % "
                f"| {_fmt(r.time_per_epoch_s)} ± {_fmt(r.time_per_epoch_ci_s)} | {r.num_windows} "
                f"| {r.measured_s:.1f} | {met} |"
            )
    return "\n".join(lines)


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
