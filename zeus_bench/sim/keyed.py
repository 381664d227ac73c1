"""Rows keyed by several columns, on arrays: codes, one sort key, runs of equal keys, and the grid of runs x recurrences.

What :func:`zeus_bench.sim.metrics.recurrence_table` is made of: a column's values as ranks in
their sort order (:func:`key_codes`), several such codes as one int64 that sorts as their tuples
(:func:`sort_key`), the runs of equal keys in a sorted array (:func:`runs_of`), pandas' ``first`` and
``last`` of each run (:func:`first_valid`), and every run of a policy x every recurrence its setting
has (:class:`Grid`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["Grid", "first_valid", "groups", "key_codes", "runs_of", "sort_key"]


def key_codes(col: pd.Series) -> np.ndarray:
    """Each value's rank among the column's distinct values (missing values last, as ``sort_values`` puts them)."""
    codes, uniques = pd.factorize(col, sort=True)
    codes = codes.astype(np.int64)
    codes[codes < 0] = len(uniques)
    return codes


def sort_key(cols: Sequence[np.ndarray]) -> np.ndarray:
    """One int64 per element that orders as the element's tuple of the codes ``cols`` (each >= 0) does."""
    key = np.zeros(len(cols[0]), dtype=np.int64)
    span = 1
    for c in cols:
        width = int(c.max()) + 1 if len(c) else 1
        span *= width
        if span >= 2**62:  # beyond int64: the tuples' ranks, by one lexsort
            order = np.lexsort(cols[::-1])
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.cumsum(_starts_mask(np.stack([x[order] for x in cols]))) - 1
            return rank
        key = key * width + c
    return key


def _starts_mask(sorted_codes: np.ndarray) -> np.ndarray:
    """Whether each element starts a run of equal values (``sorted_codes``: 1-D, or keys x elements)."""
    codes = np.atleast_2d(sorted_codes)
    new = np.ones(codes.shape[1], dtype=bool)
    new[1:] = (codes[:, 1:] != codes[:, :-1]).any(axis=0)
    return new


def runs_of(sorted_key: np.ndarray) -> np.ndarray:
    """Where each run of equal values starts in ``sorted_key``."""
    return np.flatnonzero(_starts_mask(sorted_key))


def first_valid(x: np.ndarray, starts: np.ndarray, ends: np.ndarray, last: bool = False) -> np.ndarray:
    """Per segment ``[start, end)`` of ``x``, its first (``last``: last) value that is not NaN; NaN if none (pandas' ``first``)."""
    valid = np.flatnonzero(~np.isnan(x))
    if len(valid) == len(x):
        return x[ends - 1] if last else x[starts]
    if last:
        at = np.searchsorted(valid, ends) - 1
        ok = (at >= 0) & (valid[np.maximum(at, 0)] >= starts)
    else:
        at = np.searchsorted(valid, starts)
        ok = (at < len(valid)) & (valid[np.minimum(at, len(valid) - 1)] < ends)
    at = np.clip(at, 0, max(len(valid) - 1, 0))
    return np.where(ok, x[valid[at]] if len(valid) else np.nan, np.nan)


def groups(*cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct tuples of the integer arrays ``cols``, in sorted order: each element's tuple id and the first element of each."""
    _, first, ids = np.unique(sort_key(cols), return_index=True, return_inverse=True)
    return ids.reshape(-1), first


class Grid:
    """Every run (policy x setting x seed) x every recurrence its setting has (any policy's, by group).

    Row ``(r, w)`` is run ``r``'s recurrence ``w``; those a run has rows for are :attr:`here` (in
    the order of ``codes``' columns); :attr:`order` sorts the rows by their keys.
    """

    def __init__(self, codes: np.ndarray, roles: Sequence[str]) -> None:
        """The grid of the recurrences whose keys' codes are ``codes`` (keys x recurrences).

        ``roles[j]`` says what key ``j`` is: ``setting`` (shared by the policies compared), ``run``
        (the policy) or ``wanted`` (the recurrence and its group); each kind in the keys' order.
        """
        rows = {role: [j for j, r in enumerate(roles) if r == role] for role in ("setting", "run", "wanted")}
        setting, self.s_rep = groups(*(codes[j] for j in rows["setting"]))
        run, self.r_rep = groups(setting, *(codes[j] for j in rows["run"]))
        wanted, self.w_rep = groups(setting, *(codes[j] for j in rows["wanted"]))
        self.r_s = setting[self.r_rep]  # each run's setting
        self.w_lo = np.searchsorted(setting[self.w_rep], np.arange(len(self.s_rep)))  # a setting's first
        w_n = np.diff(np.append(self.w_lo, len(self.w_rep)))[self.r_s]  # per run, its setting's recurrences
        self.r_lo = np.concatenate([[0], np.cumsum(w_n)[:-1]]).astype(np.int64)
        self.size = int(w_n.sum())
        self.run = np.repeat(np.arange(len(self.r_rep)), w_n)
        self.w = np.arange(self.size) - np.repeat(self.r_lo, w_n) + np.repeat(self.w_lo[self.r_s], w_n)
        self.here = self.r_lo[run] + (wanted - self.w_lo[setting])
        of = {
            "run": self.r_rep[self.run],
            "wanted": self.w_rep[self.w],
            "setting": self.s_rep[self.r_s[self.run]],
        }
        self.source = [of[role] for role in roles]  # per key, the recurrence each grid row takes it from
        self.codes = np.stack([codes[j][src] for j, src in enumerate(self.source)])
        self.order = np.argsort(sort_key(list(self.codes)), kind="stable")

    def on_grid(self, values: np.ndarray, fill: object) -> np.ndarray:
        """``values`` (one per recurrence with rows) on the grid's rows, ``fill`` elsewhere (grid order)."""
        out = np.full(self.size, fill, dtype=values.dtype)
        out[self.here] = values
        return out

    def spread(self, values: np.ndarray, fill: object) -> np.ndarray:
        """:meth:`on_grid` in the keys' order."""
        return self.on_grid(values, fill)[self.order]

    def reference(self, run_policy: np.ndarray, code: int | None) -> np.ndarray:
        """Per row (keys' order), the grid row of the same recurrence of the run of policy ``code`` (-1: none).

        ``run_policy``: each run's policy code.
        """
        ref_run = np.full(len(self.s_rep), -1, dtype=np.int64)
        if code is not None:
            mine = np.flatnonzero(run_policy == code)
            ref_run[self.r_s[mine]] = mine
        s = self.r_s[self.run]
        rr = ref_run[s]
        return np.where(rr >= 0, self.r_lo[np.maximum(rr, 0)] + self.w - self.w_lo[s], -1)[self.order]
