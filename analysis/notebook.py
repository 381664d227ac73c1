"""Helpers of the analysis notebooks (``analysis/notebooks/``): results folder, choices, pickers, figures.

* :func:`results_dir` -- the results folder (``$ZEUS_BENCH_RESULTS`` or this checkout's ``results/``);
* :func:`choose` -- a name checked against its choices (an unknown one is an error naming them);
* :func:`show` -- draw a Figure inline, whatever matplotlib backend the kernel runs;
* :func:`show_file` -- display a committed PNG figure inline (``results/figures/``);
* :func:`not_here` -- the one line saying which derived file a fresh clone lacks and what writes it;
* :func:`named_points` -- the four configurations of one ``results/potential/<gpu>.csv`` row;
* :func:`pickers` -- ipywidgets drop-downs and a slider that redraw a view; without ipywidgets, or
  with ``ZEUS_BENCH_WIDGETS=0`` (headless runs, the tests), the view is drawn once with the
  defaults and a line says how to get the pickers.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from zeus_bench.traces.potential import saving_pct

ROOT = Path(__file__).resolve().parents[1]
WIDGETS_ENV = "ZEUS_BENCH_WIDGETS"


def results_dir() -> Path:
    """The results folder: ``$ZEUS_BENCH_RESULTS`` if set, else ``results/`` of this checkout."""
    path = Path(os.environ.get("ZEUS_BENCH_RESULTS") or ROOT / "results")
    if not path.is_dir():
        raise FileNotFoundError(
            f"{path}: no results folder (run `make reproduce`, or set ZEUS_BENCH_RESULTS)"
        )
    return path


def choose(what: str, name: str, choices: Sequence[str]) -> str:
    """Return ``name`` if it is one of ``choices``.

    Raises:
        ValueError: an unknown name; the message lists the choices (never a silent fallback).
    """
    if not choices:
        raise ValueError(f"no {what} to choose from in {results_dir()} (run `make reproduce`)")
    if name not in choices:
        raise ValueError(f"unknown {what} {name!r}; choices: {', '.join(choices)}")
    return name


def show(fig: Figure, dpi: int = 110) -> None:
    """Display ``fig`` inline as a PNG (the plot functions build Figures outside pyplot)."""
    from IPython.display import Image, display

    from analysis.style import paper_style

    buf = io.BytesIO()
    with paper_style():
        fig.savefig(buf, format="png", dpi=dpi)
    display(Image(data=buf.getvalue()))


def show_file(path: Path) -> None:
    """Display the PNG file ``path`` inline, or say in one line that it is missing."""
    from IPython.display import Image, display

    if not path.is_file():
        print(f"{path}: no such figure (run `make reproduce`)")
        return
    display(Image(filename=str(path)))


def not_here(path: Path, instead: str) -> str:
    """The line shown when a results file derived from the Zeus traces is absent (a fresh clone).

    Such files (``results/configs/``, ``results/sim/``) are never committed; ``make reproduce``
    writes them from the traces it downloads.
    """
    return (
        f"{path} is not in this checkout (derived from the Zeus traces, never committed; "
        f"`make reproduce` writes it): showing {instead}"
    )


#: The configurations of a ``results/potential`` row: name -> (batch size, power limit, ETA, TTA)
#: columns; ``None`` for the power limit means the GPU's maximum (``max_power_w``).
_POINTS: dict[str, tuple[str, str | None, str, str]] = {
    "baseline": ("b0", None, "baseline_eta_j", "baseline_tta_s"),
    "max-batch": ("maxbatch_bs", None, "maxbatch_eta_j", "maxbatch_tta_s"),
    "min-energy": ("min_energy_bs", "min_energy_pl_w", "min_energy_eta_j", "min_energy_tta_s"),
    "min-cost": ("min_cost_bs", "min_cost_pl_w", "min_cost_eta_j", "min_cost_tta_s"),
}


def named_points(potential: pd.DataFrame, workload: str) -> pd.DataFrame:
    """The baseline, max-batch, minimum-energy and minimum-cost configurations of one workload.

    Args:
        potential: A ``results/potential/<gpu>.csv`` table (one row per workload).
        workload: The workload whose row to show.

    Returns:
        One row per configuration: ``point, batch_size, power_limit_w, eta_j, tta_s`` and the
        energy and time saved against the baseline in %.
    """
    row = potential.loc[potential["workload"] == workload].iloc[0]
    rows = []
    for name, (bs, pl, eta, tta) in _POINTS.items():
        rows.append(
            {
                "point": name,
                "batch_size": int(row[bs]),
                "power_limit_w": float(row[pl] if pl else row["max_power_w"]),
                "eta_j": float(row[eta]),
                "tta_s": float(row[tta]),
                "energy_saving_pct": saving_pct(float(row[eta]), float(row["baseline_eta_j"])),
                "time_saving_pct": saving_pct(float(row[tta]), float(row["baseline_tta_s"])),
            }
        )
    return pd.DataFrame(rows)


def widgets_enabled() -> bool:
    """Whether to offer ipywidgets pickers: installed, and not turned off by ``ZEUS_BENCH_WIDGETS=0``."""
    if os.environ.get(WIDGETS_ENV, "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


def pickers(view: Callable[..., None], **options: Any) -> None:
    """Call ``view(**defaults)`` now, with pickers that call it again when a choice changes.

    Each keyword is a picker: ``(choices, default)`` for a drop-down, ``(low, high, step, default)``
    for a slider of floats.
    """
    defaults = {k: spec[-1] for k, spec in options.items()}
    if not widgets_enabled():
        print(
            "(pickers off: pip install -e '.[notebooks]' for ipywidgets, and unset ZEUS_BENCH_WIDGETS=0; "
            "or edit the defaults in the cell above)"
        )
        view(**defaults)
        return
    import ipywidgets as w
    from IPython.display import display

    controls: dict[str, Any] = {}
    for key, spec in options.items():
        if len(spec) == 2:
            controls[key] = w.Dropdown(options=list(spec[0]), value=spec[1], description=key)
        else:
            low, high, step, value = spec
            controls[key] = w.FloatSlider(min=low, max=high, step=step, value=value, description=key)
    out = w.Output()

    def redraw(_: object = None) -> None:
        out.clear_output(wait=True)
        with out:
            view(**{k: c.value for k, c in controls.items()})

    for control in controls.values():
        control.observe(redraw, names="value")
    display(w.HBox(list(controls.values())), out)
    redraw()
