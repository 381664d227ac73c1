"""Shared fixtures: the published Zeus traces (from ../shared or ZEUS_TRACE_DIR) and their import."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import zeus_bench.catalog  # noqa: F401  (every built-in table kind, for tests that write tables through the store)
from tests.helpers.optional import in_ci

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TRACE_DIR = REPO.parent / "shared" / "traces" / "zeus-nsdi23"


def zeus_trace_dir() -> Path | None:
    """The folder of the published Zeus CSV traces, or None when absent."""
    path = Path(os.environ.get("ZEUS_TRACE_DIR", DEFAULT_TRACE_DIR))
    return path if (path / "summary_train.csv").is_file() else None


@pytest.fixture(scope="session")
def zeus_csv_dir() -> Path:
    """Folder with summary_train.csv and summary_power_<gpu>.csv.

    Missing: the test is skipped, except in CI (``CI=true``), where it fails with one line naming
    where the traces were looked for.
    """
    path = zeus_trace_dir()
    if path is None:
        where = Path(os.environ.get("ZEUS_TRACE_DIR", DEFAULT_TRACE_DIR))
        message = f"Zeus traces not found: no summary_train.csv in {where} (set ZEUS_TRACE_DIR)"
        if in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def tiny_traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny synthetic trace folder (``tests/helpers/tiny_traces.py``) for command-line tests that must never skip."""
    from tests.helpers.tiny_traces import write_tiny_traces

    return write_tiny_traces(tmp_path_factory.mktemp("tiny-traces"))


@pytest.fixture(scope="session")
def zeus_traces(zeus_csv_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Zeus traces imported to Parquet once per test session."""
    from zeus_bench.traces.zeus_csv import import_zeus

    out = tmp_path_factory.mktemp("zeus-traces")
    import_zeus(zeus_csv_dir, out)
    return out


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip tests marked ``gpu`` unless a CUDA GPU and NVML are present."""
    if not any("gpu" in item.keywords for item in items):
        return  # nothing to skip: do not pay torch's import (seconds) in every pytest run
    try:
        import torch

        has_gpu = bool(torch.cuda.is_available())
    except ImportError:
        has_gpu = False
    if has_gpu:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
