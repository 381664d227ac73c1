"""Faces over seeds asked through the executor's array protocol.

:class:`ObjectArrays` asks a face of decisions and outcomes (one scalar policy object per seed,
:class:`~zeus_bench.sim.policies.seeds.SeedPolicies`) through the array protocol
(:class:`~zeus_bench.sim.policies.seeds.SeedArrays`), so that the executor
(:mod:`zeus_bench.sim.executor`) has one protocol to ask; :class:`Blocks` asks the faces of several
policies over consecutive blocks of seeds as one (the arena replays a job's policies in one walk:
:func:`~zeus_bench.sim.executor.execute_blocks`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import cast

import numpy as np

from zeus_bench.sim.policies.seeds import (
    Decided,
    Decision,
    SeedArrays,
    SeedList,
    SeedPolicies,
    Tried,
    outcomes,
    settle,
)

__all__ = ["Blocks", "ObjectArrays"]


class ObjectArrays:
    """A face of decisions and outcomes (:class:`SeedPolicies`) asked through the array protocol."""

    def __init__(self, face: SeedPolicies, limits: np.ndarray) -> None:
        """``face`` on a model whose power limits are ``limits`` (W, the outcomes' limits)."""
        self.face = face
        self.limits = limits
        self._seeds = SeedList()
        self._decisions: list[Decision] = []

    def decide_arrays(self, ids: np.ndarray, left: np.ndarray) -> Decided:
        """The face's decisions for seeds ``ids``, as indices (kept for the observation)."""
        decisions, bi, pj, profiled = self.face.decide(self._seeds(ids))
        self._decisions = decisions
        return Decided(bi, pj, profiled)

    def early_stopping(self, ids: np.ndarray) -> np.ndarray:
        """Whether each seed's policy stops early (the face's)."""
        return self.face.early_stopping(self._seeds(ids))

    def stop_cost(self, ids: np.ndarray, bound: np.ndarray, epoch_cost: np.ndarray) -> np.ndarray:
        """The cost at which each seed's run stops (the face's)."""
        return self.face.stop_cost(self._seeds(ids), bound, epoch_cost)

    def observe_arrays(self, ids: np.ndarray, tried: Tried) -> None:
        """Tell the face the outcomes of its last decisions (Python numbers, as a scalar policy wants)."""
        self.face.observe(self._seeds(ids), outcomes(self._decisions, self.limits, tried))

    def fallback(self, ids: Sequence[int]) -> SeedPolicies:
        """The face itself (never asked: this face leaves no seed)."""
        return self.face


class Blocks:
    """Faces of several policies over consecutive blocks of seeds, asked as one array face.

    Block ``k`` holds seeds ``starts[k]`` to ``starts[k + 1] - 1`` of the executor, which are its
    face's seeds 0, 1, ...; a face of decisions and outcomes (:class:`SeedPolicies`) is asked
    through the array protocol. The seeds' timelines are independent, so one walk of the
    executor over every block gives each seed the rows its face's own walk would
    (:func:`~zeus_bench.sim.executor.execute_blocks`); a step asks each block that still has seeds.
    """

    def __init__(
        self, faces: Sequence[SeedPolicies | SeedArrays], sizes: Sequence[int], limits: np.ndarray
    ) -> None:
        """``faces[k]``, of ``sizes[k]`` seeds, on a model whose power limits are ``limits`` (W)."""
        self.faces: list[SeedArrays] = [
            cast("SeedArrays", f) if callable(getattr(f, "decide_arrays", None)) else ObjectArrays(cast("SeedPolicies", f), limits)
            for f in faces
        ]  # fmt: skip
        self.limits = limits
        self.sizes = list(sizes)
        self.starts = np.cumsum([0, *self.sizes])
        self._seeds: np.ndarray | None = None  # the seeds of the last split, and their blocks
        self._parts: list[tuple[int, int, int, np.ndarray]] = []

    def _split(self, ids: np.ndarray) -> list[tuple[int, int, int, np.ndarray]]:
        """Per block with seeds in ``ids`` (ascending): (block, first and end position in ids, its own ids)."""
        if ids is not self._seeds:  # the same array for every call of a step
            edges = np.searchsorted(ids, self.starts).tolist()
            self._seeds, self._parts = (
                ids,
                [
                    (k, lo, hi, ids[lo:hi] - self.starts[k])
                    for k, (lo, hi) in enumerate(itertools.pairwise(edges))
                    if hi > lo
                ],
            )
        return self._parts

    def decide_arrays(self, ids: np.ndarray, left: np.ndarray) -> Decided:
        """Each block's decisions, its positions moved to those of its seeds in ``ids``."""
        bis, pjs, profs, steps, gones = [], [], [], [], []
        every = True
        for k, lo, hi, own in self._split(ids):
            d = self.faces[k].decide_arrays(own, left[lo:hi])
            bis.append(d.bi)
            pjs.append(d.pj)
            profs.append(d.profiled)
            if d.step is None:
                steps.append(np.arange(lo, hi))
            else:
                every = every and len(d.step) == hi - lo
                steps.append(d.step + lo)
            if d.gone is not None and len(d.gone):
                every = False
                gones.append(d.gone + lo)
        if not bis:
            empty = np.zeros(0, dtype=np.intp)
            return Decided(empty, empty, np.zeros(0, dtype=bool), empty)
        gone = np.concatenate(gones) if gones else None
        step = None if every else np.concatenate(steps)
        return Decided(np.concatenate(bis), np.concatenate(pjs), np.concatenate(profs), step, gone)

    def early_stopping(self, ids: np.ndarray) -> np.ndarray:
        """Each block's."""
        return np.concatenate([self.faces[k].early_stopping(own) for k, _, _, own in self._split(ids)])

    def stop_cost(self, ids: np.ndarray, bound: np.ndarray, epoch_cost: np.ndarray) -> np.ndarray:
        """Each block's."""
        return np.concatenate(
            [
                self.faces[k].stop_cost(own, bound[lo:hi], epoch_cost[lo:hi])
                for k, lo, hi, own in self._split(ids)
            ]
        )

    def observe_arrays(self, ids: np.ndarray, tried: Tried) -> None:
        """Each block's outcomes."""
        for k, lo, hi, own in self._split(ids):
            self.faces[k].observe_arrays(own, Tried(*(x[lo:hi] for x in tried)))

    def settle(self) -> None:
        """Each block's face's ``settle``, where it has one (its objects brought up to date)."""
        for face in self.faces:
            settle(face)

    def fallback(self, ids: Sequence[int]) -> Blocks:
        """The blocks' scalar faces of seeds ``ids`` (ascending), block by block."""
        at = np.asarray(ids, dtype=np.int64)
        edges = np.searchsorted(at, self.starts).tolist()
        faces, sizes = [], []
        for k, (lo, hi) in enumerate(itertools.pairwise(edges)):
            if hi > lo:
                faces.append(self.faces[k].fallback((at[lo:hi] - self.starts[k]).tolist()))
                sizes.append(hi - lo)
        return Blocks(faces, sizes, self.limits)
