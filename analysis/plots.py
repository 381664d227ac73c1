"""Plot functions: each takes the DataFrame :mod:`analysis.metrics` builds and returns a Figure.

No file I/O and no aggregation here; the caller saves the figure. Every axis names its quantity
and unit, policies keep their colours (:mod:`analysis.style`), and the sizes are those a
two-column paper prints (:data:`analysis.style.FULL_W` wide).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import EngFormatter, LogFormatter, PercentFormatter

from analysis.style import (
    FULL_W,
    POLICY_ORDER,
    WORKLOAD_ORDER,
    gpu_label,
    gpu_notes,
    ordered,
    paper_style,
    policy_color,
    policy_label,
    series_color,
)

MARKER_STYLE: dict[str, dict[str, str]] = {
    "baseline": {"marker": "s", "color": policy_color("baseline"), "label": "Baseline (b0, max limit)"},
    "oracle": {"marker": "*", "color": policy_color("oracle"), "label": "Optimum (least cost)"},
    "zeus": {"marker": "o", "color": policy_color("zeus"), "label": "Where Zeus settles"},
}


def _grid(n: int, ncols: int = 3, height: float = 2.0, width: float = FULL_W) -> tuple[Figure, list[Axes]]:
    nrows = max(1, math.ceil(n / ncols))
    fig = Figure(figsize=(width, height * nrows), layout="constrained")
    axes = list(fig.subplots(nrows, ncols, squeeze=False).ravel())
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


class _PlainLogFormatter(LogFormatter):
    """Log-axis labels as plain numbers (0.05, 2, 300) instead of 5e-02."""

    def __call__(self, x: float, pos: int | None = None) -> str:
        """Keep LogFormatter's choice of which ticks get a label; print those plainly."""
        return f"{x:g}" if super().__call__(x, pos) else ""


def _log_scale(ax: Axes, which: str = "xy") -> None:
    """Log-scale the given axes with plain-number labels (matplotlib thins the minor ones by span)."""
    for name in which:
        axis = ax.xaxis if name == "x" else ax.yaxis
        (ax.set_xscale if name == "x" else ax.set_yscale)("log")
        axis.set_major_formatter(_PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(1.0, 0.4)))
        axis.set_minor_formatter(_PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(1.0, 0.4)))


def _gpus(df: pd.DataFrame, label: str | None) -> str:
    """The GPU(s) a figure shows, for its title: ``label`` if given, else the upper-case kinds."""
    return label if label else ", ".join(str(g).upper() for g in sorted(df["gpu"].unique()))


def _suptitle(fig: Figure, text: str) -> None:
    """The figure's title; a second line (a GPU's notes) gets the figure that much taller."""
    lines = text.count("\n") + 1
    if lines > 1:
        fig.set_figheight(fig.get_figheight() + 0.18 * (lines - 1))
    fig.suptitle(text, fontsize=9)


def _titled(what: str, gpus: str, how: str = "") -> str:
    """``what, GPU (how)``, and the GPU's notes (:func:`analysis.style.gpu_notes`) on a second line."""
    name, _, notes = gpus.partition(" (")
    first = f"{what}, {name}" + (f" ({how})" if how else "")
    return first + (f"\n({notes}" if notes else "")


def _figure(width: float, height: float, ncols: int = 1) -> tuple[Figure, list[Axes]]:
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, list(fig.subplots(1, ncols, squeeze=False).ravel())


def _workloads(df: pd.DataFrame) -> list[str]:
    return ordered(df["workload"].unique(), WORKLOAD_ORDER)


def _grouped_bars(
    ax: Axes,
    df: pd.DataFrame,
    groups: Sequence[str],
    series: Sequence[str],
    series_col: str,
    value: str,
    err: str | None = None,
    colors: Sequence[str] | None = None,
    labels: Sequence[str] | None = None,
) -> None:
    """Bars of ``value`` for each group (x, workloads) and series (colours)."""
    width = 0.8 / max(1, len(series))
    x = np.arange(len(groups))
    for i, s in enumerate(series):
        sub = df[df[series_col] == s].set_index("workload")
        vals = [float(sub.at[g, value]) if g in sub.index else np.nan for g in groups]
        errs = [float(sub.at[g, err]) if err and g in sub.index else 0.0 for g in groups] if err else None
        ax.bar(
            x + (i - (len(series) - 1) / 2) * width,
            vals,
            width * 0.95,
            yerr=errs,
            color=colors[i] if colors else series_color(i),
            label=labels[i] if labels else s,
            error_kw={"elinewidth": 0.6, "capsize": 1.5},
            edgecolor="white",
            linewidth=0.3,
        )
    ax.set_xticks(x, groups, rotation=25, ha="right")
    ax.set_xlabel("Workload")
    ax.grid(axis="x", visible=False)


def plot_potential(potential: pd.DataFrame) -> Figure:
    """Potential energy savings of the least-energy configuration, per workload and GPU.

    Args:
        potential: Rows of ``zeus-bench potential`` (gpu, workload, min_energy_saving_pct,
            min_energy_saving_vs_maxbatch_pct), any number of GPUs.
    """
    with paper_style():
        fig, (left, right) = _figure(FULL_W, 2.4, ncols=2)
        workloads = _workloads(potential)
        gpus = sorted(potential["gpu"].unique())
        colors = [series_color(i) for i in range(len(gpus))]
        labels = [g.upper() for g in gpus]
        _grouped_bars(
            left, potential, workloads, gpus, "gpu", "min_energy_saving_pct", colors=colors, labels=labels
        )
        _grouped_bars(
            right,
            potential,
            workloads,
            gpus,
            "gpu",
            "min_energy_saving_vs_maxbatch_pct",
            colors=colors,
            labels=labels,
        )
        left.set_title("vs. default batch size b0 at max. power limit")
        right.set_title("vs. largest converging batch size at max. power limit")
        for ax in (left, right):
            ax.set_ylabel("Energy-to-accuracy saving (%)")
            ax.yaxis.set_major_formatter(PercentFormatter(decimals=0))
            ax.axhline(0, color="black", linewidth=0.6)
        handles, labels = left.get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside right center", title="GPU")
        measured = [g.upper() for g in gpus if gpu_notes(g)]
        title = f"Potential energy savings of the least-energy configuration, {_gpus(potential, None)}"
        if measured:  # GPUs measured by zeus-bench sweep: say what their numbers rest on
            title += f"\n({', '.join(measured)}: {'; '.join(gpu_notes(measured[0]))})"
        _suptitle(fig, title)
    return fig


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
    workloads = _workloads(configs)
    one_limit = configs["power_limit_w"].nunique() == 1
    with paper_style():
        fig, axes = _grid(len(workloads), height=2.1)
        for ax, w in zip(axes, workloads, strict=True):
            c = configs[configs["workload"] == w]
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
            for kind, style in MARKER_STYLE.items():
                m = marks[(marks["workload"] == w) & (marks["marker"] == kind)]
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
            _log_scale(ax)
            ax.set_title(w)
            ax.set_xlabel("Time to accuracy (h, log)")
            ax.set_ylabel("Energy to accuracy (MJ, log)")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=3)
        what = "batch size" if one_limit else "(batch size, power limit)"
        _suptitle(
            fig,
            _titled(f"Energy vs. time to accuracy of every {what}", gpu_label(gpu, configs["power_limit_w"])),
        )
    return fig


def _policy_bars(ax: Axes, norm: pd.DataFrame, policies: Sequence[str], metric: str) -> None:
    groups = _workloads(norm)
    pols = [p for p in policies if p in set(norm["policy"])]
    _grouped_bars(
        ax,
        norm,
        groups,
        pols,
        "policy",
        f"{metric}_ratio_mean",
        f"{metric}_ratio_std",
        colors=[policy_color(p) for p in pols],
        labels=[policy_label(p) for p in pols],
    )
    ax.axhline(1.0, color="black", linewidth=0.6)


def plot_policies(
    norm_maxbatch: pd.DataFrame,
    norm_baseline: pd.DataFrame,
    policies: Sequence[str],
    label: str | None = None,
) -> Figure:
    """Cumulative energy and time of each policy, normalised to max-batch and to b0 at max limit.

    Args:
        norm_maxbatch: :func:`analysis.metrics.normalised` rows with reference ``max-batch``.
        norm_baseline: The same with reference ``baseline``.
        policies: Policies to show, in order.
        label: The GPU for the title (:func:`analysis.style.gpu_label`); default its kind.
    """
    with paper_style():
        fig = Figure(figsize=(FULL_W, 4.4), layout="constrained")
        axes = fig.subplots(2, 2, squeeze=False)
        refs = ((norm_maxbatch, "max. batch size at max. limit"), (norm_baseline, "b0 at max. limit"))
        for col, (norm, ref) in enumerate(refs):
            for row, metric in enumerate(("energy", "time")):
                ax = axes[row][col]
                _policy_bars(ax, norm, policies, metric)
                ax.set_ylabel(f"Cumulative {metric}\n(× reference)")
                if row == 0:
                    ax.set_title(f"Reference: {ref}")
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=min(5, len(labels)))
        _suptitle(
            fig,
            _titled(
                "Policies over all recurrences",
                _gpus(norm_baseline, label),
                "mean over seeds, error bars: one std.",
            ),
        )
    return fig


def plot_ablation(
    norm: pd.DataFrame,
    policies: Sequence[str] = ("bs-only", "pl-only", "zeus"),
    label: str | None = None,
    one_limit: bool = False,
) -> Figure:
    """Knob ablation: batch size only, power limit only and both, relative to the baseline.

    Args:
        norm: :func:`analysis.metrics.normalised` rows (reference ``baseline``).
        policies: Policies to show, in order.
        label: The GPU for the title (:func:`analysis.style.gpu_label`); default its kind.
        one_limit: The GPU's traces hold one power limit: the power-limit-only policy has nothing
            to tune, so its bars are left out and marked n/a.
    """
    if one_limit:
        policies = [p for p in policies if p != "pl-only"]
    with paper_style():
        fig, axes = _figure(FULL_W, 2.5, ncols=2)
        for ax, metric in zip(axes, ("energy", "time"), strict=True):
            _policy_bars(ax, norm, policies, metric)
            ax.set_ylabel(f"Cumulative {metric}\n(× b0 at max. limit)")
        handles, labels = axes[0].get_legend_handles_labels()
        if one_limit:
            labels = [*labels, f"{policy_label('pl-only')}: n/a (one power limit)"]
            handles = [*handles, Line2D([], [], linestyle="none")]
        fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
        knobs = "batch size (the only knob here)" if one_limit else "batch size, power limit or both"
        _suptitle(fig, _titled(f"Which knob saves what: {knobs}", _gpus(norm, label)))
    return fig


def _band_panels(
    conv: pd.DataFrame, value: str, ylabel: str, title: str, relative: bool, label: str | None = None
) -> Figure:
    """One panel per workload: a line per policy (mean over seeds) and a band (min to max).

    With ``relative``, values are divided by the oracle's expected cost, drawn on a log axis with
    the oracle as a dashed line at 1.
    """
    workloads = _workloads(conv)
    with paper_style():
        fig, axes = _grid(len(workloads), height=1.9)
        for ax, w in zip(axes, workloads, strict=True):
            c = conv[conv["workload"] == w]
            for p in ordered(c["policy"].unique(), POLICY_ORDER):
                s = c[c["policy"] == p].sort_values("recurrence")
                scale = s["oracle_cost"] if relative else 1.0
                color = policy_color(p)
                ax.plot(
                    s["recurrence"],
                    s[f"{value}_mean"] / scale,
                    color=color,
                    label=policy_label(p),
                    linewidth=1.0,
                )
                ax.fill_between(
                    s["recurrence"],
                    s[f"{value}_lo"] / scale,
                    s[f"{value}_hi"] / scale,
                    color=color,
                    alpha=0.2,
                    linewidth=0,
                )
            if relative:
                ax.axhline(
                    1.0,
                    color=policy_color("oracle"),
                    linestyle="--",
                    linewidth=1.0,
                    label=policy_label("oracle"),
                )
                _log_scale(ax, "y")
            else:
                ax.yaxis.set_major_formatter(EngFormatter(unit="J"))
            ax.set_title(w)
            ax.set_xlabel("Recurrence")
            ax.set_ylabel(ylabel)
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
        _suptitle(fig, _titled(title, _gpus(conv, label), "mean over seeds; band: range over seeds"))
    return fig


def plot_convergence(conv: pd.DataFrame, label: str | None = None) -> Figure:
    """Cost per recurrence of Zeus and grid search, relative to the oracle, with a band over seeds.

    Args:
        conv: :func:`analysis.metrics.convergence` rows of one GPU, eta and beta.
        label: The GPU for the title (:func:`analysis.style.gpu_label`); default its kind.
    """
    return _band_panels(
        conv,
        "cost",
        "Cost per recurrence\n(× oracle, log)",
        "Convergence: cost per recurrence relative to the oracle's expected cost",
        relative=True,
        label=label,
    )


def plot_regret(conv: pd.DataFrame, label: str | None = None) -> Figure:
    """Cumulative regret against the oracle's expected cost, with a band over seeds."""
    return _band_panels(
        conv,
        "regret",
        "Cumulative regret",
        "Cumulative regret vs. the oracle's expected cost",
        relative=False,
        label=label,
    )


def _sweep_lines(
    norm: pd.DataFrame, x: str, xlabel: str, title: str, categorical: bool = False, label: str | None = None
) -> Figure:
    workloads = _workloads(norm)
    with paper_style():
        fig, axes = _figure(FULL_W, 2.5, ncols=2)
        xs = sorted(norm[x].unique())
        pos = {v: i for i, v in enumerate(xs)}
        for ax, (metric, what) in zip(axes, (("energy", "energy"), ("time", "time")), strict=True):
            for i, w in enumerate(workloads):
                s = norm[norm["workload"] == w].sort_values(x)
                xv = s[x].map(pos) if categorical else s[x]
                ax.errorbar(
                    xv,
                    s[f"{metric}_ratio_mean"],
                    yerr=s[f"{metric}_ratio_std"],
                    color=series_color(i),
                    marker="o",
                    markersize=3,
                    capsize=1.5,
                    elinewidth=0.6,
                    label=w,
                )
            ax.axhline(1.0, color="black", linewidth=0.6)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(f"Cumulative {what} of Zeus\n(× b0 at max. limit, log)")
            _log_scale(ax, "y")
            if categorical:
                ax.set_xticks(range(len(xs)), ["off" if math.isinf(v) else f"{v:g}" for v in xs])
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
        _suptitle(fig, _titled(title, _gpus(norm, label), "mean over seeds, error bars: one std."))
    return fig


def plot_eta(norm: pd.DataFrame, label: str | None = None) -> Figure:
    """Zeus's energy and time (relative to the baseline) as eta goes from 0 (time) to 1 (energy).

    Args:
        norm: :func:`analysis.metrics.normalised` rows of Zeus, one GPU, several eta.
        label: The GPU for the title (:func:`analysis.style.gpu_label`); default its kind.
    """
    return _sweep_lines(
        norm, "eta", "η (weight of energy in the cost)", "Energy/time of Zeus as η varies", label=label
    )


def plot_beta(norm: pd.DataFrame, label: str | None = None) -> Figure:
    """Zeus's energy and time (relative to the baseline) for several early-stopping thresholds."""
    return _sweep_lines(
        norm,
        "beta",
        "β (early-stopping threshold; off: never stop early)",
        "Sensitivity of Zeus to β",
        categorical=True,
        label=label,
    )


def plot_power_profiles(profile: pd.DataFrame, gpu: str) -> Figure:
    """Average power, throughput and energy per epoch against the power limit, per workload.

    Args:
        profile: :func:`analysis.metrics.power_profile` rows.
        gpu: GPU to draw.
    """
    profile = profile[profile["gpu"] == gpu]
    workloads = _workloads(profile)
    lines = (
        ("avg_power_w_rel", "Average power", "#4477AA", "-"),
        ("epochs_per_hour_rel", "Throughput (epochs/h)", "#EE6677", "--"),
        ("energy_per_epoch_j_rel", "Energy per epoch", "#228833", "-."),
    )
    with paper_style():
        fig, axes = _grid(len(workloads), height=1.9)
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


_METADATA: dict[str, dict[str, str | None]] = {
    "pdf": {"CreationDate": None, "Creator": "zeus-bench"},
    "png": {"Software": "zeus-bench"},
    "svg": {"Date": None, "Creator": "zeus-bench"},
}


#: Font tables a PDF viewer never reads: glyph substitution and positioning (OpenType layout,
#: legacy kerning). matplotlib lays text out itself (kerning included) and writes each glyph by its
#: index with its position, so an embedded TrueType (Type 42) font needs only the outlines and
#: metrics. Leaving these out of the subset changes no glyph or position in the PDF, makes each
#: embedded font about 20 % smaller, and subsets it about 3x faster (no closure over their lookups).
PDF_FONT_DROP_TABLES: tuple[str, ...] = ("GSUB", "GPOS", "GDEF", "kern")


def _lean_subset(original: Any, drop: Sequence[str]) -> Any:
    """A ``get_glyphs_subset`` for matplotlib's PDF backend that leaves out the ``drop`` tables.

    ``original`` is matplotlib's: it runs with fontTools' ``Options`` made to drop those tables too,
    so every other choice (the tables matplotlib drops itself, glyph names, face index) stays
    matplotlib's own.
    """
    import functools

    from fontTools import subset

    @functools.wraps(original)
    def get_glyphs_subset(fontfile: Any, glyphs: Any) -> Any:
        base = subset.Options

        class Options(base):  # type: ignore[misc, valid-type]
            def __init__(self, **kwargs: Any) -> None:
                super().__init__(**kwargs)
                tables: list[str] = list(self.drop_tables)  # type: ignore[has-type]
                self.drop_tables = [*tables, *(t for t in drop if t not in tables)]

        subset.Options = Options
        try:
            return original(fontfile, glyphs)
        finally:
            subset.Options = base

    return get_glyphs_subset


@contextmanager
def lean_pdf_fonts(drop: Sequence[str] | None = None) -> Iterator[None]:
    """While active, PDF font subsets leave out the ``drop`` tables (None: :data:`PDF_FONT_DROP_TABLES`).

    Fonts stay embedded as TrueType (``pdf.fonttype`` 42, never Type 3). A matplotlib without the
    subsetting hook this relies on is left as it is (the PDFs are then only larger and slower).
    """
    from matplotlib.backends import _backend_pdf_ps

    original = getattr(_backend_pdf_ps, "get_glyphs_subset", None)
    drop = PDF_FONT_DROP_TABLES if drop is None else drop
    if original is None or not drop:
        yield
        return
    _backend_pdf_ps.get_glyphs_subset = _lean_subset(original, drop)
    try:
        yield
    finally:
        _backend_pdf_ps.get_glyphs_subset = original


def save(fig: Figure, stem: str, formats: Sequence[str], dpi: int) -> list[str]:
    """Write ``fig`` as ``stem.<format>`` for each format, without volatile metadata; return paths.

    The layout and the tight bounding box are computed once (the layout engine run as a draw
    would run it first, without the draw itself); each format then costs one render only
    (``savefig`` with ``bbox_inches="tight"`` and a layout engine would lay the figure out again
    and draw it twice per format). The figure keeps that layout afterwards: its layout engine is
    removed and its dpi set to ``dpi``.
    """
    from contextlib import AbstractContextManager

    import matplotlib as mpl

    from analysis.stable_output import stable_pdf_numbers
    from zeus_bench.fsutil import atomic_path

    with paper_style():
        fig.dpi = dpi  # lay the text out at the resolution it is rendered at
        engine = fig.get_layout_engine()
        if engine is not None and fig.axes:
            engine.execute(fig)  # what a draw would do first; the bounding box needs no draw
        else:
            fig.draw_without_rendering()
        bbox = fig.get_tightbbox().padded(mpl.rcParams["savefig.pad_inches"])

    # Keep the positions just computed: no layout engine at all (even a placeholder one would make
    # savefig draw the figure once more before rendering it, and savefig restores the engine by
    # rcParams, hence the rc_context around it too).
    def no_layout() -> AbstractContextManager[None]:
        return mpl.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False})

    with no_layout():
        fig.set_layout_engine(None)
    paths = []
    for fmt in formats:
        path = f"{stem}.{fmt}"
        meta = _METADATA.get(fmt, {})
        with paper_style(), no_layout(), lean_pdf_fonts(), stable_pdf_numbers(), atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt, dpi=dpi, metadata=meta, bbox_inches=bbox)
        paths.append(path)
    return paths
