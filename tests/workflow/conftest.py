"""A reduced real run of the main workflow (1 GPU, 2 workloads, 2 seeds), shared by the tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_helpers import OWN_DIR, REDUCED, Workdir, make_workdir


@pytest.fixture(scope="session")
def reduced_run(zeus_csv_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Workdir:
    """The workflow run once on the real traces with a reduced config."""
    wd = make_workdir(
        tmp_path_factory.mktemp("reduced"),
        {**REDUCED, "traces": {"zeus": {"local_dir": str(zeus_csv_dir)}, "own_dir": str(OWN_DIR)}},
    )
    # About 210 s on a quiet 2-core machine (the arena's splits and recurrence sweep included):
    # a loaded runner needs more than the helper's default 300 s (pytest-timeout stops a test at 600 s).
    wd.first_run = wd.snakemake(timeout=570)
    return wd
