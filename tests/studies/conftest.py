"""Fixtures of the studies' tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.tiny_traces import two_gpu_traces


@pytest.fixture()
def tiny(tmp_path: Path) -> Path:
    """Tiny traces of a V100 and an A40 (:func:`~tests.helpers.tiny_traces.two_gpu_traces`)."""
    return two_gpu_traces(tmp_path / "traces")
