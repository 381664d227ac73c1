"""The main workflow's localrules name existing rules, and only the simulations are left as cluster jobs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from analysis.figures import single_figures

REPO = Path(__file__).resolve().parents[2]
CLUSTER_JOBS = {
    "simulate",
    "simulate_eta",
    "simulate_beta",
    "policy_study",
    "policy_arena",
    "arena_recurrences",
    "simulate_alibaba",
}


def test_localrules_are_every_rule_but_the_simulations():
    text = (REPO / "Snakefile").read_text()
    block = re.search(r"^localrules:\n((?:    \w+,\n)+)", text, re.MULTILINE)
    assert block is not None
    local = set(re.findall(r"\w+", block.group(1)))
    # The figure rules generated from the registry (figures.smk) are local where they are made.
    figures_smk = (REPO / "workflows" / "rules" / "figures.smk").read_text()
    generated = re.search(
        r"^for _spec in single_figures\(\):\n\n    rule:\n(?:        .*\n|\n)+", figures_smk, re.M
    )
    assert generated is not None and "        localrule: True\n" in generated.group(0)
    local |= {f"figure_{spec.name}" for spec in single_figures()}
    listed = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--list-rules"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.split()
    # `all` is a target only (no job is submitted for it).
    assert local == set(listed) - CLUSTER_JOBS - {"all"}, local ^ (set(listed) - CLUSTER_JOBS - {"all"})
