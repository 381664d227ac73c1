"""``zeus-plus``'s quiet seeds on arrays: the incumbent's runs replayed without each seed's optimizer.

Most of a replay's decisions of :class:`~zeus_bench.optimizers.hill_climb.SafeHillClimb` run the
incumbent and nothing else (in the arena's goal command 89 %): no probe is due
(:meth:`Verdicts.none_due <zeus_bench.optimizers.hill_climb_verdicts.Verdicts.none_due>`), or
none the funds pay for; the run reaches the target, its cost joins the incumbent's, and the
incumbent stays. A seed is *quiet* while that holds. :class:`QuietClimbs` keeps what those steps
read and change, for every quiet seed, in arrays:

* the incumbent's exact mean cost: its runs' sum as a float and the error-free remainders of
  each addition (:func:`two_sum`), rounded as :func:`math.fsum` rounds the exact sum, and
  certified so (:func:`certified_round`; an inexact remainder near a rounding boundary is not);
* bounds of the incumbent's spread (Welford's running sums, or the largest deviation, as
  :meth:`~zeus_bench.optimizers.hill_climb_estimates.ClimbEstimates.spread_bounds`) and of its
  mean epochs;
* the other batch sizes' runs, means, epoch costs and verdict sets, which a quiet step does not
  change (read from the optimizer when the seed turns quiet), and what the funds rule reads;
* what each quiet step adds (costs, epochs, the money spent, the incumbent's epoch cost), handed
  to the optimizer object when the seed wakes (:meth:`QuietClimbs.wake`).

Each step is certified before it is taken on arrays: a decision when the rules' verdicts leave
no probe, or the funds pay for none, throughout the bounds (:meth:`QuietClimbs.idle`); an outcome
when it reached the target, its mean is certainly rounded, the incumbent stays and the drift rule
certainly returns early (:meth:`QuietClimbs.observe`). A seed not certified wakes: its object
gets what it missed and decides (or observes) itself, so every row is the object's own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from zeus_bench.optimizers.hill_climb_estimates import DRIFT_RISE, DRIFT_RUNS, SPREAD_MIN_CV, SPREAD_SLACK

if TYPE_CHECKING:
    from zeus_bench.optimizers.hill_climb import SafeHillClimb

__all__ = ["QuietClimbs", "certified_round", "two_sum"]

_U = 2.0**-53  # the unit roundoff of float64


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``s = fl(a + b)`` and ``e`` with ``s + e == a + b`` exactly (Knuth's TwoSum, elementwise)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def certified_round(hi: np.ndarray, lo: np.ndarray, err: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The float nearest ``hi + L``, ``L`` a remainder within ``err`` of ``lo``, and whether it is certainly so.

    ``hi`` is a sum rounded at each addition and ``L`` what those roundings left out, so the
    result is what :func:`math.fsum` gives the same terms (it rounds their exact sum once, ties to
    even) where certified. With ``err`` 0 the remainder is exact and one IEEE addition rounds
    ``hi + lo`` so; otherwise the exact sum must lie within the half-spacings around the result
    (the spacing below a power of two is half the one above) by more than the errors of ``lo``
    and of the residual.
    """
    r = hi + lo
    d = (hi - r) + lo  # hi - r is exact (r is within a factor 2 of hi); d's own rounding below
    slack = err * (1.0 + 1e-9) + np.abs(d) * _U
    half_up = np.spacing(np.abs(r)) / 2.0
    mantissa, _ = np.frexp(r)
    half_down = np.where(np.abs(mantissa) == 0.5, half_up / 2.0, half_up)
    near = (d + slack < half_up) & (d - slack > -half_down)
    return r, np.isfinite(r) & (r > 0.0) & ((err == 0.0) | near)


class QuietClimbs:
    """The quiet state of the seeds of one ``zeus-plus`` face (see the module notes), seed ``i`` at row ``i``.

    Args:
        batch_sizes: The job's batch sizes, ascending (the optimizers').
        seeds: How many seeds the face has.
    """

    def __init__(self, batch_sizes: Sequence[int], seeds: int) -> None:
        self.batch_sizes = [int(b) for b in batch_sizes]
        self.col = {b: k for k, b in enumerate(self.batch_sizes)}
        a, k = seeds, len(self.batch_sizes)
        self.quiet = np.zeros(a, dtype=bool)
        self.inc = np.zeros(a, dtype=np.intp)  # the incumbent's column
        # The incumbent's runs: exact sum (hi, remainders lo, what lo lost), count, mean, extremes.
        self.hi, self.lo, self.err = np.zeros(a), np.zeros(a), np.zeros(a)
        self.n = np.zeros(a, dtype=np.int64)
        self.mean, self.most, self.least = np.zeros(a), np.zeros(a), np.zeros(a)
        self.w_mean, self.w_ss = np.zeros(a), np.zeros(a)  # Welford's running mean and squares
        self.last = np.zeros((a, DRIFT_RUNS))  # its latest runs, oldest first (the drift rule's)
        # The incumbent's epochs: their sum (rounded at each addition), its error bound, count.
        self.e_sum, self.e_err = np.zeros(a), np.zeros(a)
        self.e_n = np.zeros(a, dtype=np.int64)
        # The other batch sizes (not changed by a quiet step).
        self.runs = np.zeros((a, k), dtype=np.int64)
        self.means = np.full((a, k), math.inf)
        self.epoch_cost = np.full((a, k), math.nan)
        # What the verdicts read of them, made when the seed turns quiet: the batch sizes still open
        # (neither ruled out nor settled by their runs), those ruled out by their own probe, those
        # tried with runs, those whose epoch evidence counts, the means (-inf without runs: never
        # dearer) and the roots of the runs.
        self.open = np.zeros((a, k), dtype=bool)
        self.own = np.zeros((a, k), dtype=bool)
        self.tried_runs = np.zeros((a, k), dtype=bool)
        self.evidence_of = np.zeros((a, k), dtype=bool)
        self.dear_means = np.full((a, k), -math.inf)
        self.root = np.ones((a, k))
        # The batch sizes a probe may be drawn from (Verdicts.candidates' order): the neighbours of
        # each batch size (nbr[i, b, c]: c is one of b's, which depend on the seed's capped ones)
        # and the prior's best (its column, -1: none).
        self.nbr = np.zeros((a, k, k), dtype=bool)
        self.prior = np.full(a, -1, dtype=np.intp)
        self._nbr_of: dict[tuple[bool, frozenset[int]], np.ndarray] = {}
        cols = np.arange(k)
        lo, hi = np.minimum(cols[:, None], cols[None, :]), np.maximum(cols[:, None], cols[None, :])
        # between[inc, b, c]: c lies strictly between b and the incumbent
        self.between = (cols[None, None, :] > lo[:, :, None]) & (cols[None, None, :] < hi[:, :, None])
        # Settings (per seed: the face's objects share a class, not necessarily a horizon).
        self.noise_z, self.beta = np.zeros(a), np.zeros(a)
        # The funds rule (SafeHillClimb.budget, Verdicts.promise and need): the baseline's cost and
        # mean (kept while the incumbent is not b0; b0's: its runs are the baseline's, bounded each
        # step), the settings, the recurrences before the seed turned quiet, each batch size's cut
        # cost and inc / b.
        self.funded = np.zeros(a, dtype=bool)
        self.at_b0 = np.zeros(a, dtype=bool)
        self.base, self.base_mean, self.ratio = np.zeros(a), np.zeros(a), np.zeros(a)
        self.margin, self.safety, self.loan, self.lookahead = (
            np.zeros(a),
            np.zeros(a),
            np.zeros(a),
            np.zeros(a),
        )
        self.horizon, self.rec0 = np.zeros(a, dtype=np.int64), np.zeros(a, dtype=np.int64)
        self.short, self.factor = np.zeros((a, k)), np.ones((a, k))
        self.marks: list[tuple[int, ...] | None] = [None] * a  # what the batch sizes' rows were read at
        # What the quiet steps added, for the object.
        self.spent = np.zeros(a)
        self.inc_epoch_cost = np.full(a, math.nan)  # the last finite epoch cost its run measured
        self.added = np.zeros(a, dtype=np.int64)
        self.costs = np.zeros((a, 16))
        self.epochs = np.zeros((a, 16))
        self._cols = np.arange(k)

    # Turning quiet and waking ----------------------------------------------------------------
    @staticmethod
    def eligible(cl: SafeHillClimb) -> bool:
        """Whether an optimizer's state is one a quiet step can follow (its incumbent run at least twice)."""
        if cl.window or not cl.prune or cl.probe is not None or not cl.base_costs:
            return False
        inc = cl.incumbent()
        c = cl.costs.get(inc)
        if inc not in cl.tried or c is None or len(c) < 2 or not cl.epochs.get(inc):
            return False
        return math.isfinite(cl.mean_cost(inc))

    def enter(self, i: int, cl: SafeHillClimb, beta: float) -> None:
        """Seed ``i`` turns quiet with its optimizer ``cl`` as it is now (:meth:`eligible`)."""
        inc = cl.incumbent()
        c = cl.costs[inc]
        m = cl.mean_cost(inc)
        # The optimizer's own caches where they hold this list as it is (the same values, fewer terms).
        kept = cl._exact.get(inc)  # partials whose exact sum is the runs'
        terms = kept[2] if kept is not None and kept[0] is c and kept[1] == len(c) else c
        hi = math.fsum(terms)
        lo = math.fsum([*terms, -hi])  # the exact sum's remainder, rounded once
        rest = math.fsum([*terms, -hi, -lo])  # 0: the remainder is exact
        self.inc[i] = self.col[inc]
        self.hi[i], self.lo[i], self.err[i] = hi, lo, abs(rest) * (1.0 + 4 * _U)
        self.n[i], self.mean[i] = len(c), m
        self.most[i], self.least[i] = cl._extremes_of(inc, c)
        moments = cl._moments.get(inc)  # Welford's running sums, kept as its runs grew
        if moments is not None and moments[0] is c and moments[1] == len(c):
            self.w_mean[i], self.w_ss[i] = moments[2], moments[3]
        else:
            self.w_mean[i], self.w_ss[i] = m, math.fsum([(x - m) ** 2 for x in c])
        tail = c[-DRIFT_RUNS:]
        self.last[i, DRIFT_RUNS - len(tail) :] = tail
        e = cl.epochs[inc]
        total = cl._mean_epochs(inc) * len(e)  # fsum's sum / n, times n: within 3 roundings of the sum
        self.e_sum[i], self.e_err[i], self.e_n[i] = total, abs(total) * 4 * _U, len(e)
        self.noise_z[i], self.beta[i] = cl.noise_z, beta
        self.at_b0[i] = inc == cl.default_batch_size
        self.funded[i] = not self.at_b0[i] or cl.base_costs == c  # (b0's runs all the baseline's)
        if self.funded[i]:
            self.base[i], self.base_mean[i] = cl._base(), cl._summary("base", cl.base_costs)[0]
            self.ratio[i], self.margin[i], self.safety[i] = cl.baseline_ratio, cl.margin, cl.safety
            self.loan[i], self.lookahead[i], self.horizon[i] = cl.loan, cl.lookahead, cl.horizon
            self.rec0[i] = cl.recurrences
        # The other batch sizes change only by a probe, a drift restart or their own runs (as the
        # incumbent): read again only then (a seed wakes and turns quiet again often, its
        # incumbent run between).
        others = sum(len(v) for v in cl.costs.values()) - len(c)
        mark = (
            inc,
            others,
            cl.probes,
            cl.resets,
            len(cl.tried),
            len(cl.ruled_out),
            len(cl.capped),
            len(cl.short),
        )
        if self.marks[i] != mark:
            self.marks[i] = mark
            self._batch_sizes(i, cl, inc)
        self.spent[i], self.inc_epoch_cost[i], self.added[i] = cl.spent, math.nan, 0
        self.quiet[i] = True

    def _batch_sizes(self, i: int, cl: SafeHillClimb, inc: int) -> None:
        """Seed ``i``'s row of what the verdicts and the funds read of every batch size, from ``cl``."""
        summary, ruled_out, tried_set, capped_set = cl.run_summary(), cl.ruled_out, cl.tried, cl.capped
        epoch_costs, short, none = cl.epoch_costs, cl.short, (0, math.inf)
        per_batch_size = [
            (
                *summary.get(b, none),  # runs, mean
                b in ruled_out,
                b in tried_set,
                b in capped_set,
                epoch_costs.get(b, math.nan),
                short.get(b, 0.0),
                max(1.0, inc / b),
            )
            for b in self.batch_sizes
        ]
        runs_of, means, ruled_of, tried_of, capped_of, ec, cut, factor = zip(*per_batch_size, strict=True)
        self.epoch_cost[i], self.short[i], self.factor[i] = ec, cut, factor
        runs = np.array(runs_of, dtype=np.int64)
        ruled, tried, capped = np.array(ruled_of), np.array(tried_of), np.array(capped_of)
        self.runs[i], self.means[i] = runs, means
        self.open[i] = ~ruled & ~(tried & (runs != 1))
        self.own[i] = ruled & tried & ~capped
        self.tried_runs[i] = tried & (runs > 0)
        self.evidence_of[i] = cl.epoch_evidence & (runs > 0) & np.isfinite(self.epoch_cost[i])
        self.dear_means[i] = np.where(runs > 0, self.means[i], -math.inf)
        self.root[i] = np.sqrt(np.maximum(runs, 1).astype(float))
        self.nbr[i] = self._neighbours(cl)
        self.prior[i] = -1 if cl.prior_best is None else self.col[cl.prior_best]

    def _neighbours(self, cl: SafeHillClimb) -> np.ndarray:
        """``nbr[b, c]``: ``c`` is one of ``b``'s neighbours for ``cl`` (they depend on its ``up_first`` and capped batch sizes alone), kept."""
        key = (cl.up_first, frozenset(cl.capped))
        nbr = self._nbr_of.get(key)
        if nbr is None:
            col, k = self.col, len(self.batch_sizes)
            nbr = self._nbr_of[key] = np.zeros((k, k), dtype=bool)
            for b in cl.batch_sizes:  # (the optimizer's own: a batch size it does not hold has none)
                nbr[col[b], [col[c] for c in cl._neighbours_kept(b)]] = True
        return nbr

    def wake(self, i: int, cl: SafeHillClimb) -> None:
        """Seed ``i`` wakes: its optimizer ``cl`` gets what the quiet steps added, as its own steps would have."""
        self.quiet[i] = False
        inc = self.batch_sizes[int(self.inc[i])]
        k = int(self.added[i])
        if k:
            costs = self.costs[i, :k].tolist()
            cl.costs[inc].extend(costs)
            if inc == cl.default_batch_size:
                cl.base_costs.extend(costs)
            cl.epochs.setdefault(inc, []).extend(self.epochs[i, :k].tolist())
            cl.recurrences += k
        cl.spent = float(self.spent[i])
        if not math.isnan(self.inc_epoch_cost[i]):
            cl.epoch_costs[inc] = float(self.inc_epoch_cost[i])
        cl.costs = cl.costs  # its estimates made anew from the runs (they are only caches)

    # The steps -------------------------------------------------------------------------------
    def _spread_bounds(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bounds of the incumbent's spread, as :meth:`ClimbEstimates.spread_bounds` has them.

        Welford's running sums within :data:`SPREAD_SLACK` where their coefficient of variation
        allows; else 0 and the largest deviation from the mean.
        """
        n, m, ss, wm = self.n[rows].astype(float), self.mean[rows], self.w_ss[rows], self.w_mean[rows]
        running = np.isfinite(ss) & (ss >= SPREAD_MIN_CV**2 * (n - 1) * wm * wm)
        sd = np.sqrt(ss / (n - 1))
        dev = np.maximum(self.most[rows] - m, m - self.least[rows]) * np.sqrt(n / (n - 1)) * (1.0 + 1e-9)
        return np.where(running, sd * (1.0 - SPREAD_SLACK), 0.0), np.where(
            running, sd * (1.0 + SPREAD_SLACK), dev
        )

    def idle(self, rows: np.ndarray) -> np.ndarray:
        """Whether each quiet seed of ``rows`` certainly runs its incumbent next (its object would predict it).

        Certain when no probe is due (:meth:`_unsettled` leaves no batch size), or when the funds
        rule pays for none of those it leaves (:meth:`_unfunded`). False: not certain (the object decides).
        """
        e_lo, e_hi = self._epoch_bounds(rows)
        left = self._unsettled(rows, e_lo, e_hi)
        sure: np.ndarray = np.logical_not(left.any(axis=1))
        maybe = np.flatnonzero(~sure & self.funded[rows])
        if len(maybe):
            sure[maybe] = self._unfunded(rows[maybe], left[maybe], e_lo[maybe], e_hi[maybe])
        return sure

    def _epoch_bounds(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bounds of the incumbent's mean epochs (``_mean_epochs``: fsum's sum over their number), as columns."""
        e_n = self.e_n[rows]
        e_slack = self.e_err[rows] + np.abs(self.e_sum[rows]) * 4 * _U
        e_lo = (self.e_sum[rows] - e_slack) / e_n * (1.0 - 4 * _U)
        e_hi = (self.e_sum[rows] + e_slack) / e_n * (1.0 + 4 * _U)
        return e_lo[:, None], e_hi[:, None]

    def _unsettled(self, rows: np.ndarray, e_lo: np.ndarray, e_hi: np.ndarray) -> np.ndarray:
        """The batch sizes that may be probe candidates: open, not certainly pruned nor settled, and drawn.

        The rules of :class:`~zeus_bench.optimizers.hill_climb_verdicts.Verdicts` (``none_due``,
        ``dearer``, ``refuted``, ``_pruned``) over the batch sizes: a verdict counts where it holds
        throughout the bounds of the spread and of the mean epochs. Drawn: ``candidates`` takes
        its probes from the prior's best and the neighbours of the incumbent and of the batch
        sizes with runs it does not refute; one that is certainly refuted draws none (an open
        batch size no rule draws, often one far from the incumbent, is no candidate however
        cheap its measurement).
        """
        inc = self.inc[rows]
        m_inc = self.mean[rows][:, None]
        z = self.noise_z[rows][:, None]
        # dearer: ruled out by its own probe, or dearer on average (the same floats as the rule's)
        bar = m_inc + z * self._spread_bounds(rows)[1][:, None] / self.root[rows]
        dear = self.own[rows] | (self.dear_means[rows] > bar)
        # refuted: dearer, and (epoch evidence) not only by the epochs: the least its expected
        # cost can be, over the bounds of the incumbent's mean epochs, above the incumbent's mean
        ec = self.epoch_cost[rows]
        refuted = dear & (~self.evidence_of[rows] | (np.minimum(ec * e_lo, ec * e_hi) > m_inc))
        # pruned: a refuted batch size strictly between it and the incumbent
        pruned = (self.between[inc] & refuted[:, None, :]).any(axis=2)
        # settled: pruned, or tried once and dearer (the incumbent is never open)
        left = self.open[rows] & ~(pruned | (self.tried_runs[rows] & dear))
        # and in the order candidates are drawn from: the prior's best, the neighbours of the
        # incumbent and of every batch size with runs that may not be refuted (it may be near)
        near = (self.runs[rows] > 0) & ~refuted
        near[np.arange(len(rows)), inc] = True  # (the incumbent's own neighbours)
        order = (near[:, :, None] & self.nbr[rows]).any(axis=1)
        prior = self.prior[rows]
        has = np.flatnonzero(prior >= 0)
        order[has, prior[has]] = True
        return left & order

    def _unfunded(self, rows: np.ndarray, left: np.ndarray, e_lo: np.ndarray, e_hi: np.ndarray) -> np.ndarray:
        """Whether the funds certainly pay for no batch size of ``left`` (:meth:`SafeHillClimb._predict_funded`).

        The budget is the optimizer's float (the same operations on the same numbers); a batch size
        is certainly passed over when its expected cost is above ``(1 + margin) x`` the incumbent's
        throughout the epochs' bounds, or the most its funds can be stays below the least it needs.
        """
        m = self.mean[rows]
        safety, margin, loan, ratio = self.safety[rows], self.margin[rows], self.loan[rows], self.ratio[rows]
        base, base_mean, spent = self.base[rows], self.base_mean[rows], self.spent[rows]
        at_b0 = self.at_b0[rows]
        if at_b0.any():
            # b0's runs are the baseline's: its mean is the incumbent's, and the most its estimate
            # (mean less a standard error) can be takes the least the spread can be
            n_b0 = self.n[rows].astype(float)
            se = self._spread_bounds(rows)[0] / np.sqrt(n_b0) * (1.0 - 1e-9)
            base = np.where(at_b0, (m - se) * ratio, base)
            base_mean = np.where(at_b0, m, base_mean)
        t = (self.rec0[rows] + self.added[rows] + 1).astype(float)
        n = np.maximum(self.horizon[rows], t)
        told = (1.0 + safety) * n * base - spent - (n - t + 1) * m
        anytime = (1.0 + safety) * t * base + self.lookahead[rows] * t * np.maximum(0.0, base - m) - spent - m
        budget = np.where(self.horizon[rows] > 0, told, anytime)[:, None]
        unbounded = m > (1.0 + safety) * base_mean * ratio
        ec = self.epoch_cost[rows]
        measured = np.isfinite(ec)
        least = np.where(measured, np.minimum(ec * e_lo, ec * e_hi), -math.inf)  # its expected cost
        m_col = m[:, None]
        out_of_reach = least > ((1.0 + margin) * m)[:, None]
        promise = np.where(measured, np.maximum(0.0, m_col - least), 0.0)  # x base / base
        lent = loan[:, None] * promise
        funds = budget + lent
        need = np.where(measured, least, m_col / e_hi * self.factor[rows])
        need = np.maximum(need, (1.0 + margin)[:, None] * self.short[rows])
        slack = 1e-9 * (np.abs(budget) + np.abs(lent) + np.abs(need))
        unpaid = funds + slack < need
        certain = ~unbounded & np.isfinite(budget[:, 0]) & (e_lo[:, 0] > 0.0) & (base > 0.0)
        return certain & (~left | out_of_reach | unpaid).all(axis=1)

    def stop_cost(self, rows: np.ndarray, bound: np.ndarray, epoch_cost: np.ndarray) -> np.ndarray:
        """The incumbent's run's cost bound: ``beta x`` its mean when above ``bound``; its epoch cost kept."""
        measured = np.isfinite(epoch_cost)
        self.inc_epoch_cost[rows[measured]] = epoch_cost[measured]
        return np.maximum(bound, self.beta[rows] * self.mean[rows])

    def observe(
        self, rows: np.ndarray, bi: np.ndarray, cost: np.ndarray, reached: np.ndarray, epochs: np.ndarray
    ) -> np.ndarray:
        """Take the unprofiled outcomes of quiet seeds ``rows`` that certainly keep them quiet; return which.

        Certain: the incumbent's run, reached, a cost > 0 and finite epochs; its new mean certainly
        rounded; the incumbent still the least mean (first in batch-size order); and (more than
        ``DRIFT_RUNS + 1`` runs) the drift rule's early return certain. The others are not taken
        (the caller wakes them first and the object observes).
        """
        inc = self.inc[rows]
        ok = reached & (cost > 0.0) & np.isfinite(epochs) & (epochs > 0.0) & (bi == inc)
        hi, e = two_sum(self.hi[rows], cost)
        lo, lost = two_sum(self.lo[rows], e)
        err = self.err[rows] + np.abs(lost)  # (0 while every remainder is exact)
        n = self.n[rows] + 1
        total, certain = certified_round(hi, lo, err)
        mean = total / n
        others = self.means[rows]
        cols = self._cols[None, :]
        stays = (
            (others > mean[:, None])
            | ((others == mean[:, None]) & (cols > inc[:, None]))
            | (cols == inc[:, None])
        )
        last = np.concatenate([self.last[rows, 1:], cost[:, None]], axis=1)
        least = np.minimum(self.least[rows], cost)
        recent = last.sum(axis=1) / DRIFT_RUNS * (1.0 + 8 * _U)
        calm = (n <= DRIFT_RUNS + 1) | (
            (least > 1e-300) & (recent <= (1.0 + DRIFT_RISE) * least * (1.0 - 1e-12))
        )
        ok &= certain & stays.all(axis=1) & calm
        take = rows[ok]
        if len(take):
            c = cost[ok]
            self.hi[take], self.lo[take], self.err[take], self.n[take] = hi[ok], lo[ok], err[ok], n[ok]
            self.mean[take] = mean[ok]
            self.most[take] = np.maximum(self.most[take], c)
            self.least[take] = least[ok]
            self.last[take] = last[ok]
            d = c - self.w_mean[take]  # Welford, as ClimbEstimates._add_cost updates it
            self.w_mean[take] = self.w_mean[take] + d / n[ok]
            self.w_ss[take] = self.w_ss[take] + d * (c - self.w_mean[take])
            ep = epochs[ok]
            self.e_sum[take] = self.e_sum[take] + ep
            self.e_err[take] = self.e_err[take] + np.abs(self.e_sum[take]) * _U
            self.e_n[take] += 1
            self.spent[take] = self.spent[take] + c
            at = self.added[take]
            if at.max() >= self.costs.shape[1]:
                grow = self.costs.shape[1]
                self.costs = np.concatenate([self.costs, np.zeros((len(self.costs), grow))], axis=1)
                self.epochs = np.concatenate([self.epochs, np.zeros((len(self.epochs), grow))], axis=1)
            self.costs[take, at], self.epochs[take, at] = c, ep
            self.added[take] = at + 1
        return ok
