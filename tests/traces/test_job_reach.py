"""A job's reach per batch size: made once per job, read-only, and a job's other versions their own."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job


def test_reach_fraction_is_made_once_and_cannot_be_changed() -> None:
    job = toy_job({16: [4.0, float("nan"), 12.0, 5.0], 32: [3.0, 4.0], 64: [11.0, 9.0]}, max_epochs=10)
    reach = job.reach_fraction()
    assert reach.tolist() == [0.5, 1.0, 0.5]
    assert job.reach_fraction() is reach  # made once
    assert job.converging_batch_sizes().tolist() == [32]
    with pytest.raises(ValueError, match="read-only"):
        reach[0] = 1.0
    # another version of the job (more epochs allowed): its own reach
    longer = dataclasses.replace(job, workload=dataclasses.replace(job.workload, max_epochs=12))
    assert longer.reach_fraction().tolist() == [0.75, 1.0, 1.0]
    assert np.array_equal(job.reach_fraction(), [0.5, 1.0, 0.5])
