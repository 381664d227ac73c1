"""Plot functions: the data each figure shows (not pixels), labels, colours and overlaps."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from fake_results import make_sim
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from analysis import metrics, plots
from analysis.style import POLICY_COLORS, gpu_label


def _visible_axes(fig: Figure):
    return [ax for ax in fig.axes if ax.get_visible()]


def _bars(ax) -> dict[str, list[float]]:
    """Bar heights per legend label."""
    return {
        c.get_label(): [p.get_height() for p in c.patches]
        for c in ax.containers
        if isinstance(c, BarContainer)
    }


def _check_quality(fig: Figure) -> None:
    """Every visible axis has labels with units, and no two tick labels or titles overlap."""
    FigureCanvasAgg(fig).draw()
    renderer = fig.canvas.get_renderer()
    for ax in _visible_axes(fig):
        assert ax.get_xlabel(), f"axis {ax.get_title()!r} has no x label"
        assert ax.get_ylabel(), f"axis {ax.get_title()!r} has no y label"
        for axis in (ax.xaxis, ax.yaxis):
            boxes = [
                t.get_window_extent(renderer)
                for t in axis.get_ticklabels(which="both")
                if t.get_visible() and t.get_text()
            ]
            for a, b in itertools.combinations(boxes, 2):
                assert not a.overlaps(b), f"overlapping tick labels on {ax.get_title()!r}"
    titles = [ax.title.get_window_extent(renderer) for ax in _visible_axes(fig) if ax.get_title()]
    for a, b in itertools.combinations(titles, 2):
        assert not a.overlaps(b), "overlapping panel titles"


def test_potential_bars_show_savings(potential):
    fig = plots.plot_potential(potential)
    left, right = _visible_axes(fig)
    assert _bars(left) == {"A40": [50.0, 35.0], "V100": [40.0, 30.0]}
    assert _bars(right) == {"A40": [20.0, 0.0], "V100": [10.0, -5.0]}
    assert [t.get_text() for t in left.get_xticklabels()] == ["cifar100", "librispeech"]
    assert "%" in left.get_ylabel()
    assert fig.get_suptitle().endswith(", A40, V100")
    h200 = plots.plot_potential(pd.concat([potential, potential[potential.gpu == "v100"].assign(gpu="h200")]))
    assert "(H200: per-epoch cost measured on synthetic data; epochs from the Zeus train trace)" in (
        h200.get_suptitle()
    )
    _check_quality(fig)


def test_pareto_scatter_frontier_and_markers(configs, potential, sim):
    marks = metrics.markers(configs, potential, metrics.settled(sim))
    fig = plots.plot_pareto(configs, marks, "v100")
    axes = _visible_axes(fig)
    assert [ax.get_title() for ax in axes] == ["cifar100", "librispeech"]
    ax = axes[0]
    front = configs[(configs["workload"] == "cifar100") & configs["on_frontier"]].sort_values("tta_s")
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "Pareto frontier"]
    np.testing.assert_allclose(line.get_ydata(), front["eta_j"] / 1e6)
    np.testing.assert_allclose(line.get_xdata(), front["tta_s"] / 3600)
    offsets = {c.get_label(): c.get_offsets() for c in ax.collections}
    np.testing.assert_allclose(offsets["Baseline (b0, max limit)"], [[50 / 3600, 0.01]])
    np.testing.assert_allclose(offsets["Where Zeus settles"], [[60 / 3600, 12 * 120 * 5 / 1e6]])
    assert len(offsets["Configuration (all runs converge)"]) == 3  # one infeasible of four
    assert len(offsets["Some runs miss the target"]) == 1
    assert "(h" in ax.get_xlabel() and "(MJ" in ax.get_ylabel()
    _check_quality(fig)


def test_policies_figure_normalisations(sim):
    pols = ["zeus", "grid-search", "max-batch", "baseline"]
    fig = plots.plot_policies(metrics.normalised(sim, "max-batch"), metrics.normalised(sim, "baseline"), pols)
    axes = _visible_axes(fig)
    assert len(axes) == 4
    energy_vs_maxbatch, energy_vs_baseline = axes[0], axes[1]
    assert _bars(energy_vs_baseline)["Zeus"] == pytest.approx([0.75, 0.75])
    assert _bars(energy_vs_maxbatch)["Zeus"] == pytest.approx([1500 / 1600] * 2)
    assert _bars(energy_vs_maxbatch)["Max batch, max limit"] == pytest.approx([1.0, 1.0])
    time_vs_baseline = axes[3]
    assert _bars(time_vs_baseline)["Grid search"] == pytest.approx([1.2, 1.2])
    # Consistent policy colours.
    zeus_bars = next(c for c in energy_vs_baseline.containers if c.get_label() == "Zeus")
    assert to_hex(zeus_bars.patches[0].get_facecolor()) == POLICY_COLORS["zeus"].lower()
    _check_quality(fig)


def test_ablation_shows_the_three_variants(sim):
    fig = plots.plot_ablation(metrics.normalised(sim, "baseline"))
    energy = _bars(_visible_axes(fig)[0])
    assert list(energy) == ["Batch size only", "Power limit only", "Zeus"]
    assert energy["Batch size only"] == pytest.approx([0.65, 0.65])
    assert energy["Power limit only"] == pytest.approx([0.9, 0.9])
    _check_quality(fig)


def test_one_limit_gpu_has_no_power_limit_bars_and_says_so(sim):
    h200 = sim.assign(gpu="h200", power_limit_w=700.0)
    label = gpu_label("h200", h200["power_limit_w"])
    assert label == (
        "H200 (batch size only, at 700 W; per-epoch cost measured on synthetic data; "
        "epochs from the Zeus train trace)"
    )
    fig = plots.plot_ablation(metrics.normalised(h200, "baseline"), label=label, one_limit=True)
    assert list(_bars(_visible_axes(fig)[0])) == ["Batch size only", "Zeus"]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "Power limit only: n/a (one power limit)" in legend
    title = fig.get_suptitle()
    assert "H200" in title and "batch size only, at 700 W" in title and "synthetic data" in title
    assert "power limit or both" not in title
    _check_quality(fig)


@pytest.mark.parametrize("kind", ["policies", "ablation", "convergence", "regret", "eta", "beta"])
def test_every_title_names_its_gpu(sim, kind):
    a40 = sim.assign(gpu="a40")
    norm = metrics.normalised(a40, "baseline")
    fig = {
        "policies": lambda: plots.plot_policies(metrics.normalised(a40, "max-batch"), norm, ["zeus"]),
        "ablation": lambda: plots.plot_ablation(norm),
        "convergence": lambda: plots.plot_convergence(metrics.convergence(a40)),
        "regret": lambda: plots.plot_regret(metrics.convergence(a40)),
        "eta": lambda: plots.plot_eta(norm[norm["policy"] == "zeus"]),
        "beta": lambda: plots.plot_beta(norm[norm["policy"] == "zeus"]),
    }[kind]()
    assert ", A40" in fig.get_suptitle()
    assert gpu_label("a40", [100.0, 300.0]) == "A40"


def test_convergence_and_regret_lines(sim):
    conv = metrics.convergence(sim)
    fig = plots.plot_convergence(conv)
    ax = _visible_axes(fig)[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    assert lines["Oracle"].get_ydata()[0] == pytest.approx(1.0)  # costs relative to the oracle's
    assert lines["Grid search"].get_ydata()[0] == pytest.approx(1535.0 / 1400.0)
    assert ax.get_yscale() == "log"
    assert len(lines["Zeus"].get_xdata()) == 20
    _check_quality(fig)
    fig = plots.plot_regret(conv)
    lines = {ln.get_label(): ln for ln in _visible_axes(fig)[0].get_lines()}
    assert lines["Grid search"].get_ydata()[-1] == pytest.approx(2700.0)
    assert "Oracle" not in lines
    _check_quality(fig)


def test_eta_and_beta_sweeps():
    sims = pd.concat([make_sim(eta=e, policies=["zeus", "baseline"]) for e in (0.0, 0.5, 1.0)])
    norm = metrics.normalised(sims, "baseline")
    fig = plots.plot_eta(norm[norm["policy"] == "zeus"])
    energy_ax = _visible_axes(fig)[0]
    line = energy_ax.get_lines()[0]
    np.testing.assert_allclose(np.asarray(line.get_xdata(), float), [0.0, 0.5, 1.0])
    np.testing.assert_allclose(np.asarray(line.get_ydata(), float), [0.75] * 3)
    _check_quality(fig)
    sims = pd.concat([make_sim(beta=b, policies=["zeus", "baseline"]) for b in (1.5, 2.0, math.inf)])
    norm = metrics.normalised(sims, "baseline")
    fig = plots.plot_beta(norm[norm["policy"] == "zeus"])
    ax = _visible_axes(fig)[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1.5", "2", "off"]
    _check_quality(fig)


def test_power_profiles(configs):
    b = pd.DataFrame(
        {"gpu": ["v100", "v100"], "workload": ["cifar100", "librispeech"], "batch_size": [64, 128]}
    )
    fig = plots.plot_power_profiles(metrics.power_profile(configs, b), "v100")
    ax = _visible_axes(fig)[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    np.testing.assert_allclose(lines["Average power"].get_ydata(), [0.6, 1.0])
    np.testing.assert_allclose(lines["Energy per epoch"].get_ydata(), [0.72, 1.0])
    assert ax.get_xlabel() == "Power limit (W)"
    assert ax.get_title() == "cifar100 (batch size 64)"
    _check_quality(fig)


def test_save_writes_every_format(tmp_path, potential):
    paths = plots.save(plots.plot_potential(potential), str(tmp_path / "fig"), ["png", "pdf"], 72)
    assert [p[-3:] for p in paths] == ["png", "pdf"]
    assert (tmp_path / "fig.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "fig.pdf").read_bytes()[:4] == b"%PDF"
    assert b"CreationDate" not in (tmp_path / "fig.pdf").read_bytes()


def _pdf_streams(pdf: bytes) -> list[bytes]:
    """Every stream of a matplotlib PDF, decompressed."""
    import re
    import zlib

    return [
        zlib.decompress(m.group(2)) if b"/FlateDecode" in m.group(1) else m.group(2)
        for m in re.finditer(rb"obj\n(<<.*?>>)\nstream\n(.*?)\nendstream", pdf, re.S)
    ]


def _pdf_font_programs(pdf: bytes) -> list[bytes]:
    """The embedded TrueType font programs (FontFile2 streams) of a PDF."""
    return [s for s in _pdf_streams(pdf) if s[:4] == b"\x00\x01\x00\x00"]


def test_pdf_fonts_are_embedded_truetype_without_layout_tables(tmp_path, potential):
    import io

    from fontTools.ttLib import TTFont
    from matplotlib.backends import _backend_pdf_ps

    original = _backend_pdf_ps.get_glyphs_subset
    plots.save(plots.plot_potential(potential), str(tmp_path / "fig"), ["pdf"], 72)
    assert _backend_pdf_ps.get_glyphs_subset is original  # matplotlib's own again after saving
    pdf = (tmp_path / "fig.pdf").read_bytes()
    assert b"/CIDFontType2" in pdf and b"/FontFile2" in pdf and b"/Type3" not in pdf  # Type 42, not Type 3
    programs = _pdf_font_programs(pdf)
    assert programs
    for program in programs:
        font = TTFont(io.BytesIO(program))
        assert "glyf" in font and "hmtx" in font and "cmap" in font
        assert not set(plots.PDF_FONT_DROP_TABLES) & set(font.keys())


def test_lean_pdf_fonts_changes_only_the_font_tables(tmp_path, potential, monkeypatch):
    """The same figure saved with matplotlib's own subsetting and with the lean one: the same pages
    (what is drawn, where, with which glyph indices) and the same glyphs; the lean font is the full
    one without the layout tables and without the glyphs only a substitution closure pulls in (the
    ligatures, numbered last)."""
    import io

    from fontTools.pens.recordingPen import RecordingPen
    from fontTools.ttLib import TTFont

    def glyphs(program: bytes) -> list:
        font = TTFont(io.BytesIO(program))
        out = []
        for name in font.getGlyphOrder():
            pen = RecordingPen()
            font.getGlyphSet()[name].draw(pen)
            out.append((name, pen.value, font["hmtx"][name]))
        return out

    plots.save(plots.plot_potential(potential), str(tmp_path / "lean"), ["pdf"], 72)
    monkeypatch.setattr(plots.files, "PDF_FONT_DROP_TABLES", ())  # matplotlib's subsetting as it is
    plots.save(plots.plot_potential(potential), str(tmp_path / "full"), ["pdf"], 72)
    files = [(tmp_path / n).read_bytes() for n in ("full.pdf", "lean.pdf")]
    full, lean = (_pdf_font_programs(f) for f in files)
    assert len(full) == len(lean) > 0
    for f, lo in zip(full, lean, strict=True):
        g_full, g_lean = glyphs(f), glyphs(lo)
        assert g_lean == g_full[: len(g_lean)]
        assert len(lo) < len(f)
        assert {"GSUB", "GPOS"} <= set(TTFont(io.BytesIO(f)).keys())
    pages = [
        [s for s in _pdf_streams(f) if s not in programs]
        for f, programs in zip(files, (full, lean), strict=True)
    ]
    assert pages[0] == pages[1] and pages[0]
