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

**Repeated splits.** Split 1 is the even/odd split above. Split ``k >= 2`` (``zeus-bench arena
--splits K``) shuffles each batch size's paths with a generator seeded by ``(k, gpu, workload,
batch size)`` and gives the even positions of the shuffle to ``tune``, the odd ones to ``judge``
(the same sizes as split 1). Its folds use split 1's fold constants: those were chosen on split
1's halves, which a random split's judged half overlaps, so only split 1's folds are judged on
paths no constant saw (docs/policies.md, "Design log").

**Replicate traces.** :func:`replicate_job` redraws each batch size's paths of a half with
replacement (the path level of the arena's two-stage intervals).
"""

from __future__ import annotations

import dataclasses
import logging
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.policies import get_policy
from zeus_bench.sim.policies.base import Policy
from zeus_bench.traces.jobs import JobTrace

log = logging.getLogger(__name__)

#: The dropped batch sizes already said, by job (each is said once per process, not once per split).
_SAID: set[tuple[str, str, tuple[int, ...]]] = set()

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


SPLIT_STREAM = 0x73706C6974
"""Entropy of the random splits' generators besides (split, job, batch size): "split"."""
REPLICATE_STREAM = 0x7265706C
"""Entropy of the replicate traces' generators besides (split, fold, replicate, job): "repl"."""


def job_key(job: JobTrace) -> int:
    """A stable number naming the job (CRC-32 of ``gpu/workload``) for its generators."""
    return zlib.crc32(f"{job.gpu}/{job.workload.id}".encode())


def path_halves(n_paths: int, split: int = 1, key: tuple[int, ...] = ()) -> dict[str, np.ndarray]:
    """Indices (trace order) of the paths of each half among ``n_paths``.

    Split 1: even -> tune, odd -> judge. Split ``k >= 2``: the paths shuffled by a generator of
    ``(k, *key)`` first (``key`` names the job and batch size), then even positions -> tune, odd ->
    judge; each half sorted.

    Raises:
        ConfigError: a split below 1.
    """
    if split < 1:
        raise ConfigError(f"split must be a positive integer, got {split!r}")
    idx = np.arange(n_paths)
    if split > 1:
        idx = np.random.default_rng([SPLIT_STREAM, split, *key]).permutation(n_paths)
    return {"tune": np.sort(idx[0::2]), "judge": np.sort(idx[1::2])}


def replicate_job(job: JobTrace, split: int, fold: int, replicate: int) -> JobTrace:
    """The job with each batch size's paths redrawn with replacement (as many as it has).

    The generator is seeded by ``(split, fold, replicate, job)``: the same replicate for every
    policy (paired). A draw that leaves b0 no path reaching the target is drawn again (a replay
    needs b0 to converge), at most 100 times.
    """
    rng = np.random.default_rng([REPLICATE_STREAM, split, fold, replicate, job_key(job)])
    i0 = job.bs_index(job.b0)
    paths = []
    for i, t in enumerate(job.target_epochs):
        for _ in range(100):
            drawn = t[rng.integers(0, len(t), size=len(t))]
            if i != i0 or (~np.isnan(drawn) & (drawn <= job.max_epochs)).any():
                break
        paths.append(drawn)
    return dataclasses.replace(job, target_epochs=tuple(paths))


def splittable(job: JobTrace) -> np.ndarray:
    """Mask of the job's batch sizes with at least two training paths (both halves non-empty)."""
    return np.array([len(t) >= 2 for t in job.target_epochs], dtype=bool)


def split_job(job: JobTrace, half: str, split: int = 1) -> JobTrace:
    """The job with only ``half``'s training paths of each batch size (single-path ones dropped).

    ``split``: which split of the paths (:func:`path_halves`; 1: even/odd in trace order).

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
    said = (job.gpu, job.workload.id, tuple(dropped))
    if dropped and said not in _SAID:
        _SAID.add(said)
        log.info("%s: batch size(s) %s have a single training path: left out of both halves", where, dropped)
    key = job_key(job)
    paths = tuple(
        t[path_halves(len(t), split, (key, i))[half]]
        for i, (t, k) in enumerate(zip(job.target_epochs, keep, strict=True))
        if k
    )
    return dataclasses.replace(keep_batch_sizes(job, keep), target_epochs=paths)


def keep_batch_sizes(job: JobTrace, keep: np.ndarray) -> JobTrace:
    """The job with only the batch sizes of mask ``keep`` (every per-batch-size array cut alike)."""

    def rows(a: np.ndarray | None) -> np.ndarray | None:
        return None if a is None else a[keep]

    return dataclasses.replace(
        job,
        batch_sizes=job.batch_sizes[keep],
        time_per_epoch_s=job.time_per_epoch_s[keep],
        avg_power_w=job.avg_power_w[keep],
        target_epochs=tuple(t for t, k in zip(job.target_epochs, keep, strict=True) if k),
        max_power_by_bs_w=job.max_power_by_bs_w[keep],
        jit_time_per_epoch_s=rows(job.jit_time_per_epoch_s),
        jit_avg_power_w=rows(job.jit_avg_power_w),
        profile_energy_j=rows(job.profile_energy_j),
        profile_time_s=rows(job.profile_time_s),
    )
