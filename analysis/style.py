"""One visual style for every figure: colour-blind-safe colours, fixed policy colours, paper sizes.

Policies use the Okabe-Ito palette (safe for the common colour-vision deficiencies) and keep
their colour and marker in every figure. Workloads and GPUs, which never share an axis with
policies in one legend, use Paul Tol's "bright" palette.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import matplotlib as mpl

# Okabe & Ito (2008), "Color Universal Design".
POLICY_COLORS: dict[str, str] = {
    "zeus": "#D55E00",  # vermillion
    "baseline": "#000000",  # black
    "max-batch": "#56B4E9",  # sky blue
    "oracle": "#009E73",  # bluish green
    "grid-search": "#0072B2",  # blue
    "bs-only": "#CC79A7",  # reddish purple
    "pl-only": "#F0E442",  # yellow (bars have dark edges)
}
POLICY_LABELS: dict[str, str] = {
    "zeus": "Zeus",
    "baseline": "Baseline (b0, max limit)",
    "max-batch": "Max batch, max limit",
    "oracle": "Oracle",
    "grid-search": "Grid search",
    "bs-only": "Batch size only",
    "pl-only": "Power limit only",
}
POLICY_ORDER: tuple[str, ...] = tuple(POLICY_COLORS)

# Paul Tol, "bright" qualitative scheme (colour-blind safe).
TOL_BRIGHT: tuple[str, ...] = ("#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB")
WORKLOAD_ORDER: tuple[str, ...] = (
    "cifar100",
    "imagenet",
    "squad",
    "librispeech",
    "movielens-1m",
    "sentiment140",
)

# Width in inches of a two-column (full-width) figure in a two-column paper.
FULL_W = 7.0

RC: dict[str, Any] = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.5,
    "lines.linewidth": 1.2,
    "lines.markersize": 4,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.02,
    "pdf.fonttype": 42,  # embed TrueType: editable text in the PDF
    "figure.constrained_layout.use": True,
}


# GPUs of the published Zeus power traces (several power limits each, real training); any other
# GPU kind was measured by `zeus-bench sweep` (synthetic batches) and is simulated with the epochs
# to the target of the Zeus train trace.
PUBLISHED_GPUS = ("v100", "a40", "p100", "rtx6000")
SWEEP_NOTE = "per-epoch cost measured on synthetic data; epochs from the Zeus train trace"


def gpu_notes(gpu: str, limits: Any = ()) -> list[str]:
    """What a reader must know about a GPU's results: one power limit, and where its costs come from.

    Args:
        gpu: GPU kind (``v100``, ``h200x2``...).
        limits: Power limits (W) present in its data; one distinct value means the batch size
            is the only knob.
    """
    notes = []
    distinct = sorted({float(v) for v in limits})
    if len(distinct) == 1:
        notes.append(f"batch size only, at {distinct[0]:g} W")
    if str(gpu).lower() not in PUBLISHED_GPUS:
        notes.append(SWEEP_NOTE)
    return notes


def gpu_label(gpu: str, limits: Any = ()) -> str:
    """The GPU's name for a title, followed by :func:`gpu_notes` in parentheses when it has any."""
    notes = gpu_notes(gpu, limits)
    return str(gpu).upper() + (f" ({'; '.join(notes)})" if notes else "")


def policy_color(policy: str) -> str:
    """Colour of a policy (grey for unknown ones)."""
    return POLICY_COLORS.get(policy, "#777777")


def policy_label(policy: str) -> str:
    """Legend label of a policy."""
    return POLICY_LABELS.get(policy, policy)


def ordered(values: Any, order: tuple[str, ...]) -> list[str]:
    """Sort ``values`` by ``order``; values not in it follow, alphabetically."""
    vals = sorted({str(v) for v in values})
    rank = {v: i for i, v in enumerate(order)}
    return sorted(vals, key=lambda v: (rank.get(v, len(order)), v))


def series_color(index: int) -> str:
    """Colour of the index-th workload or GPU series."""
    return TOL_BRIGHT[index % len(TOL_BRIGHT)]


@contextmanager
def paper_style() -> Iterator[None]:
    """Context in which figures get the project's style."""
    with mpl.rc_context(RC):  # type: ignore[arg-type]
        yield
