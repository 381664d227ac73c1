"""The batch-size optimizer's draws for many seeds at once, from their generators' raw outputs.

The replay's face of ``zeus`` over seeds (:mod:`zeus_bench.sim.policies.seed_zeus`) takes each seed's Thompson
Sampling draws (the visiting order's words, one normal per arm) from its policy generator's raw
64-bit outputs, fetched in blocks: each output's normal draw as NumPy's ziggurat takes it
(:func:`~zeus_bench.optimizers.rng.fast_normals`); a draw that needs more outputs (about 0.7% of
them) is resolved from them when the ziggurat's wedge test is decided beyond doubt, else made by
NumPy itself on a generator moved to that output (which tells how many it took).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zeus_bench.optimizers.rng import fast_normals, pcg64_steps_between

# A wedge test is decided here only when its two sides differ by more than this: the stored
# densities are within about 1e-16 of NumPy's (tests/sim/test_sim_seed_zeus.py), both sides' rounding
# a few units of 1e-16; closer calls (about one in 10**12) are left to NumPy.
_WEDGE_MARGIN = 1e-12
_ASK_NUMPY = -2  # res_next of an output whose draw NumPy makes when a draw starts there
_FEW_WORDS = 32  # up to this many words, one comparison each (holds_word)


def holds_word(raw: np.ndarray, words: np.ndarray) -> np.ndarray:
    """Whether each 64-bit output's low or high 32-bit word is one of ``words``."""
    # Each output's two words side by side (their order does not matter).
    half = np.ascontiguousarray(raw).view(np.uint32)
    if len(words) > _FEW_WORDS:
        hit = np.isin(half, words.astype(np.uint32))
    else:  # a comparison per word beats isin's own sorting and its 64-bit halves
        hit = np.zeros(half.shape, dtype=bool)
        for w in words.astype(np.uint32).tolist():
            hit |= half == w
    return hit.view(np.uint16) != 0  # two flags per output: either word


class PolicyStreams:
    """Each seed's policy outputs and their resolved normal draws, one array row per seed.

    A mixin of the batched optimizer's per-seed state (:class:`~zeus_bench.optimizers.seed_bandits.SeedThompson`), which provides: ``ids`` (each row's seed
    position), ``handovers`` (each with ``pol_rng`` and ``pol_state``), ``n_arms``, ``cols``,
    ``rejectable`` (per arm count, the rejectable words), ``widths``, ``thresholds``,
    ``densities``, ``pol_raw``, ``pol_pos``, ``pol_base``, ``twins``, ``made`` and
    ``_remaining()`` (per seed, a bound on the recurrences left).
    """

    ids: np.ndarray
    handovers: list[Any]
    n_arms: np.ndarray
    cols: np.ndarray
    rejectable: dict[int, np.ndarray]
    widths: np.ndarray
    thresholds: np.ndarray
    densities: np.ndarray
    pol_raw: np.ndarray
    pol_pos: np.ndarray
    pol_base: int
    twins: dict[int, list[Any]]
    made: dict[tuple[int, int], tuple[float, int]]
    reject_cum: np.ndarray | None

    def _remaining(self) -> np.ndarray:
        raise NotImplementedError

    def refill_policy(self, need: np.ndarray) -> None:
        """Fetch more policy outputs so that every seed has at least ``need`` past its position.

        Outputs before every seed's position are dropped (:attr:`pol_base` counts them); each
        output's normal draw is resolved (:meth:`_resolve`).
        """
        have = self.pol_raw.shape[1]
        short = self.pol_pos + need - have
        if short.max() <= 0:
            return
        est = int((self._remaining() * (2 * self.n_arms - 1) * 1.1).max()) + 64
        # At most about 48 MiB of outputs and their resolutions (some 48 bytes each) at a time.
        cap = max(256, (48 << 20) // (48 * len(self.ids)))
        grow = max(int(short.max()), min(est, cap))
        cut = int(self.pol_pos.min())
        kept = self.pol_raw.shape[1] - cut
        raw = np.empty((len(self.handovers), kept + grow), dtype=np.uint64)
        raw[:, :kept] = self.pol_raw[:, cut:]
        for row, h in zip(raw, self.handovers, strict=True):
            row[kept:] = h.pol_rng.bit_generator.random_raw(grow)
        self.pol_base += cut
        self.pol_pos = self.pol_pos - cut
        self.pol_raw = raw
        self._resolve()
        bad = np.zeros(self.pol_raw.shape, dtype=bool)
        for n, words in self.rejectable.items():
            rows = self.n_arms == n
            bad[rows] = holds_word(self.pol_raw[rows], words)
        # Per seed, the rejectable outputs before each column (None: there are none, as almost always).
        self.reject_cum = None
        if bad.any():
            zero = np.zeros((len(bad), 1), np.int32)
            self.reject_cum = np.concatenate([zero, np.cumsum(bad, axis=1, dtype=np.int32)], axis=1)

    def _resolve(self) -> None:
        """Per policy output, the normal draw that starts there: its value and the next output.

        :attr:`z`: the draw of one output, ``slow``: it takes more; :attr:`res_val` and
        :attr:`res_next` (-1: not known within the fetched outputs) resolve every draw: one output;
        a wedge test decided with certainty from the approximate densities (two outputs, or a new
        attempt two outputs on); else NumPy's own draw (:meth:`slow_normal`), made when a draw
        starts there (:data:`_ASK_NUMPY` until then).
        """
        raw = self.pol_raw
        a, width = raw.shape
        x, fast = fast_normals(raw, self.widths, self.thresholds)
        slow = ~fast
        self.z, self.slow = x, slow
        self.slow_cum = np.empty((a, width + 1), np.int32)
        self.slow_cum[:, 0] = 0
        np.cumsum(slow, axis=1, dtype=np.int32, out=self.slow_cum[:, 1:])
        # The resolved values in place of the one-output draws: a slow output's one-output draw is
        # never read (a row's draws from its first slow one are walked: slow_draws).
        val = x
        nxt = np.broadcast_to(np.arange(1, width + 1, dtype=np.int64), (a, width)).copy()
        rows, cols = np.divmod(np.flatnonzero(slow), width)  # (np.nonzero's, faster on few)
        if len(rows):
            q_raw = raw[rows, cols]
            idx = (q_raw & np.uint64(0xFF)).astype(np.intp)
            has_u = cols + 1 < width
            u = np.where(has_u, (raw[rows, np.minimum(cols + 1, width - 1)] >> np.uint64(11)) * 2.0**-53, 0.0)
            xq = x[rows, cols]
            dens = self.densities
            lhs = (dens[idx - 1] - dens[idx]) * u + dens[idx]
            rhs = np.exp(-0.5 * xq * xq)
            wedge = (idx != 0) & has_u
            accept = wedge & (lhs < rhs - _WEDGE_MARGIN)
            reject = wedge & (lhs > rhs + _WEDGE_MARGIN)
            nxt[rows[accept], cols[accept]] = cols[accept] + 2
            numpy_made = ~accept & ~reject
            nxt[rows[numpy_made], cols[numpy_made]] = _ASK_NUMPY  # drawn if a draw starts there
            # A rejected attempt starts again two outputs on (which may itself be rejected).
            rejected = np.zeros((a, width), dtype=bool)
            rr, rc = rows[reject], cols[reject]
            rejected[rr, rc] = True
            target = rc + 2
            while True:
                again = np.zeros(len(target), dtype=bool)
                inside = target < width
                again[inside] = rejected[rr[inside], target[inside]]
                if not again.any():
                    break
                target = np.where(again, target + 2, target)
            inside = target < width
            val[rr[inside], rc[inside]] = val[rr[inside], target[inside]]
            nxt[rr[inside], rc[inside]] = nxt[rr[inside], target[inside]]
            nxt[rr[~inside], rc[~inside]] = -1
        self.res_val, self.res_next = val, nxt

    def slow_normal(self, i: int, col: int) -> tuple[float, int] | None:
        """NumPy's normal draw starting at policy output column ``col`` of seed row ``i``, and outputs taken.

        NumPy draws it on a twin of the seed's policy generator (made at the first such draw),
        moved forward to that output; the outputs it took are counted from the twin's state.
        """
        seed_id = int(self.ids[i])
        pos = self.pol_base + col
        known = self.made.get((seed_id, pos))
        if known is not None:
            return known
        twin = self.twins.get(seed_id)
        if twin is None:
            bit_gen = np.random.PCG64(0)
            bit_gen.state = self.handovers[i].pol_state
            twin = self.twins[seed_id] = [bit_gen, np.random.Generator(bit_gen), 0]
        bit_gen, gen, at = twin
        if pos < at:
            return None
        bit_gen.advance(pos - at)
        state = bit_gen.state["state"]
        before, inc = state["state"], state["inc"]
        x = float(gen.standard_normal())
        taken = pcg64_steps_between(before, bit_gen.state["state"]["state"], inc)
        if taken is None:
            return None
        twin[2] = pos + taken
        self.made[seed_id, pos] = x, taken
        return x, taken

    def slow_draws(
        self, sub: np.ndarray, first: np.ndarray, z: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The normal draws of seed rows ``sub`` from output columns ``first`` when some take more outputs.

        ``z``: their draws as if each took one output (right up to the first slow one). Each row's
        draws from its first slow one follow one another: a draw starts at the output after the
        previous one's last (:attr:`res_next`) and is its start's resolved value (:attr:`res_val`);
        a start whose draw NumPy makes (:data:`_ASK_NUMPY`) is drawn then (:meth:`slow_normal`).
        Few rows take this path at a step (about one seed in 12), a few draws each: plain Python
        beats arrays (most rows need no walk: see below). Returns the draws (``z``, filled in), the column after the last draw, and
        whether all were resolved within the fetched outputs (a row that was not: its draws and end
        are meaningless, its seed goes).
        """
        width = self.pol_raw.shape[1]
        res_next, res_val = self.res_next, self.res_val
        n_arms = self.n_arms[sub]
        cols = self.cols[None, :]
        rows = sub[:, None]
        # Each row's first slow draw (the caller found one among its n draws' outputs).
        skip = self.slow[rows, np.minimum(first[:, None] + cols, width - 1)].argmax(axis=1)
        at = first + skip
        after = res_next[sub, at]
        # Most rows: that draw is resolved, and every later one takes one output (they all move
        # on by the outputs it took beyond one): filled at once; the others are walked below.
        moved = (after - at - 1)[:, None]
        later = (cols > skip[:, None]) & (cols < n_arms[:, None])
        outputs = first[:, None] + cols + moved
        inside = np.maximum(np.minimum(outputs, width - 1), 0)
        simple = (after > at) & ~((self.slow[rows, inside] | (outputs >= width)) & later).any(axis=1)
        z = np.where(later & simple[:, None], res_val[rows, inside], z)
        z[simple, skip[simple]] = res_val[sub[simple], at[simple]]
        end = first + n_arms + moved[:, 0]
        ok = np.ones(len(sub), dtype=bool)
        walk = np.flatnonzero(~simple)
        if not len(walk):  # (most steps) every row filled at once
            return z, end, ok
        sub, skip, n_arms = sub[walk], skip[walk], n_arms[walk]
        walked = zip(
            walk.tolist(), sub.tolist(), at[walk].tolist(), skip.tolist(), n_arms.tolist(), strict=True
        )
        for r, row, begin, j0, n in walked:
            nxt_row, val_row, out, start = res_next[row], res_val[row], z[r], begin
            for j in range(j0, n):
                if start >= width:
                    ok[r] = False
                    break
                nxt = int(nxt_row[start])
                if nxt == _ASK_NUMPY:
                    drawn = self.slow_normal(row, start)
                    nxt = -1 if drawn is None else start + drawn[1]
                    nxt_row[start] = nxt
                    if drawn is not None:
                        val_row[start] = drawn[0]
                if nxt <= start:  # not known within the fetched outputs
                    ok[r] = False
                    break
                out[j] = val_row[start]
                start = nxt
            end[r] = start
        return z, end, ok
