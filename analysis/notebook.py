"""Helpers of the analysis notebooks (``analysis/notebooks/``): results folder, choices, pickers, figures.

* :func:`results_dir` -- the results folder (``$ZEUS_BENCH_RESULTS`` or this checkout's ``results/``);
* :func:`choose` -- a name checked against its choices (an unknown one is an error naming them);
* :func:`show` -- draw a Figure inline, whatever matplotlib backend the kernel runs;
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

from matplotlib.figure import Figure

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
