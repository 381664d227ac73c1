"""The main workflow's localrules name existing rules, and only the simulations are left as cluster jobs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLUSTER_JOBS = {
    "simulate",
    "simulate_eta",
    "simulate_beta",
    "policy_study",
    "policy_arena",
    "simulate_alibaba",
}


def test_localrules_are_every_rule_but_the_simulations():
    text = (REPO / "Snakefile").read_text()
    block = re.search(r"^localrules:\n((?:    \w+,\n)+)", text, re.MULTILINE)
    assert block is not None
    local = set(re.findall(r"\w+", block.group(1)))
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
