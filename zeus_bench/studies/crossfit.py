"""Cross-fitting over training paths: tune constants on one half of the paths, judge on the other.

The train trace holds, per (workload, batch size), a few training paths (runs and learning rates:
2-10 in the Zeus trace). Replaying a job samples one of them per try. A constant chosen on a
replay and then reported on the same replay flatters: the choice saw the very paths it is judged
on. :func:`split_job` splits each batch size's paths, in trace order, into two disjoint halves:
the paths of even index form the ``tune`` half, those of odd index the ``judge`` half. Every
tunable constant is chosen on ``tune`` (:mod:`zeus_bench.studies.tuning`); the arena
(:mod:`zeus_bench.studies.arena`) reports ``judge``. A batch size with a single path cannot be split:
it is left out of *both* halves (its path would otherwise be tuned and judged on); a job whose
default batch size has a single path, or that keeps no batch size, is refused (an empty split).

Two folds (:data:`FOLDS`): fold 1 chooses the constants on ``tune`` and judges ``judge``; fold 2
swaps the halves. Each fold's constants (:data:`FOLD_CONSTANTS`) are the pick of the tuning run on
its own tuning half (``results/policy/tuning-known.csv``, ``tuning-known-evidence.csv`` and
``tuning-unknown-safety.csv`` for fold 1, whose picks are the registered defaults; their ``-fold2``
tables for fold 2), applied as class-attribute overrides
(:func:`variant`): the arena replays fold 2 with them, never with a constant the judged half chose.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

import numpy as np

from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.policies import get_policy
from zeus_bench.sim.policies.base import Policy
from zeus_bench.traces.jobs import JobTrace

log = logging.getLogger(__name__)

HALVES = ("tune", "judge")
"""The two halves: constants are chosen on ``tune`` and reported on ``judge``."""

FOLDS: dict[int, tuple[str, str]] = {1: ("tune", "judge"), 2: ("judge", "tune")}
"""Fold -> (half its constants are chosen on, half it is judged on)."""

FOLD_CONSTANTS: dict[int, dict[str, dict[str, Any]]] = {
    1: {},  # the registered defaults: the tune half's picks (tuning-known.csv, tuning-unknown-safety.csv)
    # the judge half's picks: tuning-known-fold2.csv (margin, up_first), tuning-known-evidence-fold2.csv
    # (epoch_evidence). Not the horizon assumed when unknown (tuning-unknown-safety-fold2.csv picked 20):
    # an unknown horizon runs the anytime budget in both folds, a rule (hill_climb.ANYTIME_LOAN), not a pick.
    2: {"zeus-plus": {"margin": 0.4, "up_first": True, "epoch_evidence": True}},
}
"""Per fold, per policy: the constants chosen on the fold's tuning half (overrides of the defaults)."""


def judged_half(fold: int) -> str:
    """The half fold ``fold`` is judged on.

    Raises:
        ConfigError: an unknown fold.
    """
    if fold not in FOLDS:
        raise ConfigError(f"unknown fold {fold!r}; known: {', '.join(map(str, FOLDS))}")
    return FOLDS[fold][1]


def variant(policy: str, setting: Mapping[str, Any]) -> type[Policy]:
    """The registered policy with ``setting``'s class attributes (an unregistered subclass).

    Raises:
        ConfigError: the policy has no such constant.
    """
    base = get_policy(policy)
    if not setting:
        return base
    for key, value in setting.items():
        check_constant(policy, base, key, value)
    return type(f"{base.__name__}Tuned", (base,), dict(setting))


def check_constant(policy: str, base: type[Policy], key: str, value: Any) -> None:
    """Refuse ``value`` for the constant ``key`` of ``base`` unless it is of the constant's type.

    A constant is a public class attribute that is data (not a method): a number, a flag, a
    text or ``None``. An ``int`` one takes integers, a ``float`` one finite numbers, a ``bool``
    one ``true``/``false``, an optional (``None`` by default) one ``null`` or a finite number.

    Raises:
        ConfigError: no such constant, or a value of another type (one line naming both).
    """
    import math

    current = getattr(base, key, _MISSING)
    if key.startswith("_") or current is _MISSING or callable(current) or isinstance(current, property):
        raise ConfigError(f"policy {policy!r} has no constant {key!r}")
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and not math.isfinite(value):
        ok = False
    elif isinstance(current, bool):
        ok = isinstance(value, bool)
    elif isinstance(current, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(current, float) or current is None:
        ok = number or (current is None and value is None)
    else:
        ok = type(value) is type(current)
    if not ok:
        kind = "a number or null" if current is None else type(current).__name__
        raise ConfigError(
            f"policy {policy!r}: constant {key!r} takes {kind} (default {current!r}), got {value!r}"
        )


_MISSING = object()


def path_halves(n_paths: int) -> dict[str, np.ndarray]:
    """Indices (trace order) of the paths of each half among ``n_paths``: even -> tune, odd -> judge."""
    idx = np.arange(n_paths)
    return {"tune": idx[0::2], "judge": idx[1::2]}


def splittable(job: JobTrace) -> np.ndarray:
    """Mask of the job's batch sizes with at least two training paths (both halves non-empty)."""
    return np.array([len(t) >= 2 for t in job.target_epochs], dtype=bool)


def split_job(job: JobTrace, half: str) -> JobTrace:
    """The job with only ``half``'s training paths of each batch size (single-path ones dropped).

    Raises:
        ConfigError: ``half`` is not ``tune`` or ``judge``; the default batch size has fewer than
            two paths, or no batch size does (an empty split).
    """
    if half not in HALVES:
        raise ConfigError(f"unknown half {half!r}; known: {', '.join(HALVES)}")
    keep = splittable(job)
    where = f"workload {job.workload.id!r} on {job.gpu!r}"
    if not keep[job.bs_index(job.b0)]:
        raise ConfigError(
            f"{where}: default batch size {job.b0} has {len(job.target_epochs[job.bs_index(job.b0)])} "
            "training path(s): cross-fitting needs at least 2 (an empty split)"
        )
    dropped = job.batch_sizes[~keep].tolist()
    if dropped:
        log.info("%s: batch size(s) %s have a single training path: left out of both halves", where, dropped)
    paths = tuple(t[path_halves(len(t))[half]] for t, k in zip(job.target_epochs, keep, strict=True) if k)

    def rows(a: np.ndarray | None) -> np.ndarray | None:
        return None if a is None else a[keep]

    return dataclasses.replace(
        job,
        batch_sizes=job.batch_sizes[keep],
        time_per_epoch_s=job.time_per_epoch_s[keep],
        avg_power_w=job.avg_power_w[keep],
        target_epochs=paths,
        max_power_by_bs_w=job.max_power_by_bs_w[keep],
        jit_time_per_epoch_s=rows(job.jit_time_per_epoch_s),
        jit_avg_power_w=rows(job.jit_avg_power_w),
        profile_energy_j=rows(job.profile_energy_j),
        profile_time_s=rows(job.profile_time_s),
    )
