"""What :class:`~zeus_bench.optimizers.hill_climb.SafeHillClimb` knows from its runs: costs, estimates, drift.

The base class of the optimizer: the record of each batch size's runs (costs, epochs), the
estimates derived from them (mean cost, spread, incumbent, the baseline's cost, a run's expected
cost; kept between calls, since a replay asks for them millions of times) and the drift rule
that forgets them when the job changes. The search, the funds and the interface stay in
:mod:`~zeus_bench.optimizers.hill_climb`, which sets every attribute declared here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

DRIFT_RISE = 0.4  # least relative rise of a batch size's latest runs that counts as drift
DRIFT_RUNS = 4  # latest runs of a batch size compared with its earlier ones
DRIFT_Z = 3.0  # standard errors a rise must pass to count as drift
_NO_RUNS: list[float] = []  # the runs of a batch size never run (read only)
#: :meth:`ClimbEstimates.spread_bounds`: relative half-width of the bounds of a running spread (its
#: rounding errors are below 1e-12 relative where it is used), and the least coefficient of variation it is
#: used at (below it, cancellation could cost the running sums their digits: the spread is computed).
SPREAD_SLACK, SPREAD_MIN_CV = 1e-6, 1e-2
KEPT_FROM = 64  # the least length of a list whose exact partial sums are kept (:func:`kept_mean`)


def mean_of(xs: Sequence[float]) -> float:
    """Mean of ``xs`` by :func:`math.fsum` (exact sum: the replay's goldens depend on it)."""
    return math.fsum(xs) / len(xs)


def add_exact(partials: list[float], x: float) -> bool:
    """Add ``x`` to ``partials`` (non-overlapping floats whose exact sum is what was added): fsum's own step.

    False, the partials then unusable, where ``x`` or a partial sum is not finite (:func:`math.fsum`
    raises or handles infinities itself there).
    """
    i = 0
    for p in partials:
        x, y = (p, x) if abs(x) < abs(p) else (x, p)
        hi = x + y
        lo = y - (hi - x)  # exact: hi + lo == x + y
        if lo:
            partials[i] = lo
            i += 1
        x = hi
    partials[i:] = [x]
    return math.isfinite(x)


def kept_mean(
    kept: dict[object, tuple[list[float], int, list[float]]], key: object, xs: list[float]
) -> float:
    """:func:`mean_of` of the list ``xs``, from exact partial sums kept under ``key`` while the list only grows.

    :func:`math.fsum` rounds the exact sum once (correctly), so the exact sum of the kept partials,
    rounded by it, is the same float; a list grown since adds only its new values. The entry keeps
    the list (its id is not reused); another list, or a shorter one, starts again. A list shorter
    than :data:`KEPT_FROM` is summed whole (as fast).
    """
    if len(xs) < KEPT_FROM:
        return mean_of(xs)
    hit = kept.get(key)
    if hit is not None and hit[0] is xs and hit[1] <= len(xs):
        partials, start = hit[2], hit[1]
    else:
        partials, start = [], 0
    for i in range(start, len(xs)):
        if not add_exact(partials, xs[i]):
            kept.pop(key, None)
            return mean_of(xs)
    kept[key] = (xs, len(xs), partials)
    return math.fsum(partials) / len(xs)


class ClimbEstimates:
    """Runs and estimates of the batch-size optimizer (its subclass's ``__init__`` sets the attributes)."""

    batch_sizes: list[int]
    default_batch_size: int
    window: int
    baseline_ratio: float
    base_costs: list[float]
    epochs: dict[int, list[float]]
    epoch_costs: dict[int, float]
    tried: set[int]
    ruled_out: set[int]
    capped: set[int]
    resets: int
    _costs: dict[int, list[float]]
    _means: dict[int, float]
    _spreads: dict[int, float]
    _incumbent: int | None
    _runs: dict[int, tuple[int, float]] | None
    _sums: dict[str | int, tuple[list[float], int, float, float]]
    _moments: dict[int, tuple[list[float], int, float, float]]
    _extremes: dict[int, tuple[list[float], int, float, float]]
    _exact: dict[object, tuple[list[float], int, list[float]]]

    @property
    def costs(self) -> dict[int, list[float]]:
        """Costs of each batch size's runs, oldest first.

        Read-only in place: a change goes through :meth:`_add_cost` or a new dict assigned here, so
        that the estimates derived from it (kept between calls: a replay asks for them millions
        of times) are recomputed.
        """
        return self._costs

    @costs.setter
    def costs(self, value: dict[int, list[float]]) -> None:
        self._costs = value
        self._means.clear()
        self._spreads.clear()
        self._moments.clear()
        self._extremes.clear()
        self._exact.clear()
        self._incumbent = None
        self._runs = None

    def _add_cost(self, b: int, cost: float) -> None:
        c = self._costs.setdefault(b, [])
        c.append(cost)
        before, inc = self._means.pop(b, None), self._incumbent
        self._spreads.pop(b, None)
        self._incumbent = None
        runs = self._runs
        if runs is not None:
            if b in runs or next(reversed(self._costs)) == b:  # (a new batch size comes last in both)
                m = self.mean_cost(b)
                runs[b] = (min(len(c), self.window) if self.window else len(c), m)
                # The incumbent follows from its mean and b's, the only one changed (else incumbent() looks).
                m_inc = None if inc is None else self._means.get(inc)
                if inc is None or m_inc is None:
                    pass
                elif b != inc:
                    if m < m_inc or (m == m_inc < math.inf and b < inc):
                        self._incumbent = b
                    elif m > m_inc:
                        self._incumbent = inc
                elif before is not None and m <= before:
                    self._incumbent = inc  # (NaN: looked for again)
            else:
                self._runs = None  # (it had an empty list, earlier in the costs' order)
        ext = self._extremes.get(b)
        if ext is not None and ext[0] is c and ext[1] == len(c) - 1:  # as max() and min() would find them
            hi, lo = cost if cost > ext[2] else ext[2], cost if cost < ext[3] else ext[3]
            self._extremes[b] = (c, len(c), hi, lo)
        kept = self._moments.get(b)
        if kept is not None and kept[0] is c and kept[1] == len(c) - 1:
            # Welford's update of the running mean and sum of squared deviations (approximate).
            _, n, m, ss = kept
            d = cost - m
            m += d / (n + 1)
            self._moments[b] = (c, n + 1, m, ss + d * (cost - m))

    def _recent(self, b: int) -> list[float]:
        c = self._costs.get(b, _NO_RUNS)
        return c[-self.window :] if self.window else c

    def mean_cost(self, b: int) -> float:
        """Mean cost of a batch size's runs that reached the target (inf: none)."""
        m = self._means.get(b)
        if m is None:
            c = self._recent(b)
            # every run counted: the list itself, its exact sums kept as it grows
            m = math.inf if not c else mean_of(c) if self.window else kept_mean(self._exact, b, c)
            self._means[b] = m
        return m

    def run_summary(self) -> dict[int, tuple[int, float]]:
        """Each batch size with runs, in the costs' order: the number of its runs counted and :meth:`mean_cost`.

        Kept between calls and brought up to date by :meth:`_add_cost` (one batch size's entry): read only.
        """
        runs = self._runs
        if runs is None:
            w, mean_cost = self.window, self.mean_cost
            runs = self._runs = {}
            for b, c in self._costs.items():
                n = min(len(c), w) if w else len(c)
                if n:
                    runs[b] = (n, mean_cost(b))
        return runs

    def incumbent(self) -> int:
        """Batch size of least mean cost (b0 before any run reached the target).

        Only batch sizes with runs can have a finite mean: the others are not asked (the first of
        least mean in batch-size order wins, as over every batch size).
        """
        if self._incumbent is None:
            best, best_cost = self.default_batch_size, math.inf
            means, mean_cost = self._means, self.mean_cost
            for b in sorted(self._costs) if len(self._costs) > 1 else self._costs:
                m = means.get(b)
                if m is None:
                    m = mean_cost(b)
                if m < best_cost:
                    best, best_cost = b, m
            self._incumbent = best
        return self._incumbent

    def _spread(self, b: int) -> float:
        """Standard deviation of a batch size's costs (0 with fewer than two runs)."""
        sd = self._spreads.get(b)
        if sd is None:
            c = self._recent(b)
            if len(c) < 2:
                sd = 0.0
            else:
                m = self.mean_cost(b)
                ss = math.fsum([(x - m) ** 2 for x in c])
                sd = math.sqrt(ss / (len(c) - 1))
                if not self.window:
                    self._moments[b] = (c, len(c), m, ss)  # the running sums start here
            self._spreads[b] = sd
        return sd

    def spread_bounds(self, b: int) -> tuple[float, float] | None:
        """Bounds of :meth:`_spread` without computing it; None: none kept (compute it).

        With all runs counted (``window`` 0) and at least two: above, the largest deviation from the
        mean times ``sqrt(n / (n - 1))`` (every rounded deviation is at most it, their squares and sum
        err by ulps: a margin of 1e-9 covers them). Below, 0, or, where the spread was computed on
        the runs before some were added (:meth:`_add_cost`) and their coefficient of variation is at
        least :data:`SPREAD_MIN_CV`, Welford's running sums: they err by far less than
        :data:`SPREAD_SLACK` (relative error about runs x condition number x 1.1e-16, the condition number
        below 1 / SPREAD_MIN_CV), so the spread lies within ``(1 -+ SPREAD_SLACK) x`` theirs. A rule
        whose answer is the same at both bounds (it is monotone in the spread) need not compute it.
        """
        sd = self._spreads.get(b)
        if sd is not None:
            return sd, sd
        c = self._costs.get(b)
        if c is None or len(c) < 2 or self.window:
            return None
        n, kept = len(c), self._moments.get(b)
        if kept is not None and kept[0] is c and kept[1] == n:
            ss, mw = kept[3], kept[2]
            if math.isfinite(ss) and ss >= SPREAD_MIN_CV**2 * (n - 1) * mw * mw:
                sd = math.sqrt(ss / (n - 1))
                return sd * (1.0 - SPREAD_SLACK), sd * (1.0 + SPREAD_SLACK)
        m, (most, least) = self.mean_cost(b), self._extremes_of(b, c)
        hi = max(most - m, m - least) * math.sqrt(n / (n - 1)) * (1.0 + 1e-9)
        return (0.0, hi) if math.isfinite(hi) else None

    def _extremes_of(self, b: int, c: list[float]) -> tuple[float, float]:
        """``max(c)`` and ``min(c)`` of ``b``'s runs ``c``, kept (:meth:`_add_cost` brings them up to date)."""
        ext = self._extremes.get(b)
        if ext is None or ext[0] is not c or ext[1] != len(c):
            ext = self._extremes[b] = (c, len(c), max(c), min(c))
        return ext[2], ext[3]

    def _base(self) -> float:
        """Cost of the baseline's recurrence (b0 at its maximum limit), estimated from b0's runs.

        Their mean less one standard error: a lower bound, so that noise does not fund probes.
        """
        m, se = self._summary("base", self.base_costs, True)
        return (m - se) * self.baseline_ratio

    def _summary(self, key: str | int, c: list[float], se: bool = False) -> tuple[float, float]:
        """Mean of the runs ``c`` and (``se``) its standard error, kept while ``c`` is the same list, as long.

        ``key``: ``"base"`` for the baseline's runs, a batch size for its epochs.

        The lists only grow in place or are replaced (:meth:`observe`, drift), so the same list
        object of the same length holds the same values (the entry keeps the list: its id is not reused).
        """
        hit = self._sums.get(key)
        if hit is not None and hit[0] is c and hit[1] == len(c) and (not se or not math.isnan(hit[3])):
            return hit[2], hit[3]
        m = kept_mean(self._exact, ("summary", key), c)
        err = math.nan
        if se:
            err = (
                math.sqrt(math.fsum([(x - m) ** 2 for x in c]) / (len(c) - 1) / len(c)) if len(c) > 1 else 0.0
            )
        self._sums[key] = (c, len(c), m, err)
        return m, err

    def _mean_epochs(self, b: int) -> float:
        e = self.epochs.get(b)
        return self._summary(b, e)[0] if e else math.nan

    def _expected(self, b: int, inc: int) -> float:
        """Expected cost of a run of ``b``: its measured epoch cost x the incumbent's mean epochs.

        -inf while unmeasured (measuring comes first).
        """
        e_inc = self._mean_epochs(inc)
        if b in self.epoch_costs and math.isfinite(e_inc):
            return self.epoch_costs[b] * e_inc
        return -math.inf

    def _check_drift(self, b: int) -> None:
        """Restart the search when a batch size's latest runs are clearly dearer than before.

        Clearly: the mean of its last :data:`DRIFT_RUNS` runs exceeds the mean of the earlier
        ones by more than :data:`DRIFT_RISE` of it and by more than :data:`DRIFT_Z` standard errors
        (the earlier runs' spread), so that the paths' own noise does not restart the search.
        """
        c = self.costs[b]
        if len(c) <= DRIFT_RUNS + 1:
            return
        m1 = mean_of(c[-DRIFT_RUNS:])
        if not self.window:
            # Every earlier run costs at least the least of all runs, and so does their mean (within
            # its rounding, which the 1e-12 covers): no rise past it, no drift, and no sum of them asked.
            least = self._extremes_of(b, c)[1]
            if least > 1e-300 and m1 <= (1.0 + DRIFT_RISE) * least * (1.0 - 1e-12):
                return
        before = c[:-DRIFT_RUNS][-self.window :] if self.window else c[:-DRIFT_RUNS]
        m0 = mean_of(before)
        if m1 <= (1.0 + DRIFT_RISE) * m0:
            return  # (the spread is only needed past the rise: not computed on every run)
        sd = math.sqrt(mean_of([(x - m0) ** 2 for x in before])) if len(before) > 1 else 0.0
        if m1 - m0 <= DRIFT_Z * sd / math.sqrt(DRIFT_RUNS):
            return
        self.resets += 1
        self.costs = {x: v[-1:] for x, v in self.costs.items() if x != b} | {b: c[-DRIFT_RUNS:]}
        self.epochs = {x: v[-1:] for x, v in self.epochs.items() if x != b} | {
            b: self.epochs.get(b, [])[-DRIFT_RUNS:]
        }
        self.tried, self.ruled_out, self.capped = {b}, set(), set()
