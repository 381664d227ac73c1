"""Removed: the fused scalar ``zeus`` loop is gone (one executor: :mod:`zeus_bench.sim.replay`).

A single seed replays through the generic loop, many seeds through
:meth:`zeus_bench.sim.policies.Policy.batched` (``zeus``: :mod:`zeus_bench.sim.lockstep`). Kept for
one release for the arrival replay's import: use
:meth:`zeus_bench.sim.model.JobModel.at_jit_limits` instead of ``_configs``.
"""

from __future__ import annotations

from zeus_bench.sim.model import JitConfig, JobModel

__all__ = ["_configs"]


def _configs(model: JobModel) -> list[JitConfig] | None:
    """:meth:`JobModel.at_jit_limits`."""
    return model.at_jit_limits()
