"""The figure registry: the CLI and the workflow's per-GPU lists come from it, and it refuses mistakes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from analysis.figures import FIGURES, FigureSpec, _register, figure, per_gpu_figures, single_figures
from analysis.figures.cli import build_parser


def test_every_registered_draw_function_resolves_and_has_a_subcommand():
    parser = build_parser()
    for spec in FIGURES.values():
        assert callable(spec.drawer()), spec.name
        args = ["--out", "x"] + [a for name in spec.input_names for a in _dummy(name)]
        assert parser.parse_args([spec.name, *args]).kind == spec.name


def _dummy(name: str) -> list[str]:
    return ["--gpu", "v100"] if name == "gpu" else [f"--{'sim' if name == 'sims' else name}", "f.parquet"]


def test_per_gpu_lists_follow_the_registry():
    # The per-GPU job draws the per-GPU entries in registry order; power-profiles only for several limits.
    assert [s.name for s in per_gpu_figures(False)] == [
        "pareto",
        "policies",
        "ablation",
        "convergence",
        "regret",
        "eta",
        "beta",
    ]
    assert [s.name for s in per_gpu_figures(True)][-1] == "power-profiles"
    assert [s.name for s in single_figures()] == [
        "potential",
        "measured-gpus",
        "generations",
        "policy-regret",
        "policy-cost",
        "policy-drift",
        "policy-arena",
        "policy-profile",
        "policy-recurrences",
        "alibaba",
        "validation",
    ]


def test_the_measured_gpus_figure_is_named_for_them_not_for_one_gpu():
    spec = figure("measured-gpus")
    assert spec.stem == spec.caption_name == "measured-gpus" and spec.category == "Measured GPUs"
    assert (Path(__file__).resolve().parents[2] / "workflows" / "report" / "measured-gpus.rst").is_file()
    assert (
        build_parser().parse_args(["measured-gpus", "--out", "x", "--power", "p.parquet"]).kind
        == "measured-gpus"
    )
    with pytest.raises(KeyError, match="unknown figure 'h200'"):
        figure("h200")


def test_unknown_names_and_inputs_are_refused():
    with pytest.raises(KeyError, match="unknown figure 'potentail'; registered: potential, pareto"):
        figure("potentail")
    spec = FigureSpec("x", "analysis.figures.traces:potential", ("potential",))
    with pytest.raises(ValueError, match="figure 'x' registered twice"):
        _register(spec, spec)
    with pytest.raises(ValueError, match=r"figure 'y': unknown input\(s\) simm"):
        _register(FigureSpec("y", "m:f", ("simm",)))


def test_the_registry_imports_nothing_heavy():
    # The workflow imports it while parsing the Snakefile.
    import subprocess

    code = "import sys, analysis.figures; print(sorted({'pandas', 'matplotlib'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
