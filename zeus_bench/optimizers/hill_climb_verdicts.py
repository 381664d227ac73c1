"""One state's verdicts on the batch sizes against the incumbent: the probe rules of :class:`SafeHillClimb`.

:class:`Verdicts` holds what every rule reads of the incumbent (its mean cost, spread, runs and mean
epochs), computed once, and the verdicts it has given; :meth:`SafeHillClimb.predict
<zeus_bench.optimizers.hill_climb.SafeHillClimb.predict>` asks one per call (a replay asks millions),
and the optimizer's own rule methods (``_dearer``, ``_refuted``, ...) ask a fresh one. The state must not
change while a view is used. The rules themselves are described in :mod:`zeus_bench.optimizers.hill_climb`.
"""

from __future__ import annotations

import math
from typing import Protocol

__all__ = ["Climber", "Verdicts"]


class Climber(Protocol):
    """What the rules read of the optimizer (:class:`~zeus_bench.optimizers.hill_climb.SafeHillClimb`)."""

    batch_sizes: list[int]
    window: int
    margin: float
    noise_z: float
    second_chance: bool
    prune: bool
    epoch_evidence: bool
    prior_best: int | None
    tried: set[int]
    ruled_out: set[int]
    capped: set[int]
    base_costs: list[float]
    epoch_costs: dict[int, float]
    short: dict[int, float]
    _means: dict[int, float]

    @property
    def costs(self) -> dict[int, list[float]]: ...  # noqa: D102 (the optimizer's)

    def mean_cost(self, b: int) -> float: ...  # noqa: D102

    def run_summary(self) -> dict[int, tuple[int, float]]: ...  # noqa: D102

    def _spread(self, b: int) -> float: ...

    def spread_bounds(self, b: int) -> tuple[float, float] | None: ...  # noqa: D102

    def _mean_epochs(self, b: int) -> float: ...

    def _base(self) -> float: ...

    def _neighbours(self, b: int) -> list[int]: ...

    def _neighbours_kept(self, b: int) -> list[int]: ...


class Verdicts:
    """The rules of the optimizer ``opt`` against incumbent ``inc``, on its state as it is now."""

    __slots__ = (
        "_above",
        "_below",
        "_e_inc",
        "bounds",
        "inc",
        "m_inc",
        "memo",
        "n_inc",
        "opt",
        "runs",
        "sd_inc",
    )

    def __init__(self, opt: Climber, inc: int) -> None:
        """Read what the rules need of the incumbent ``inc`` and of every batch size with runs.

        (The estimates are pure functions of the state, only cached: reading them early changes nothing.)
        """
        self.opt, self.inc = opt, inc
        runs = opt.run_summary()  # per batch size with runs (costs' order): their number, mean
        self.runs = runs
        self.m_inc = runs[inc][1] if inc in runs else math.inf
        self.n_inc = runs[inc][0] if inc in runs else 0
        self.bounds = opt.spread_bounds(inc)  # the incumbent's spread: bounds, then (when needed) itself
        self.sd_inc = math.nan if self.bounds is not None else opt._spread(inc)
        self._e_inc: float | None = None  # e_inc, once asked
        self.memo: dict[int, bool] = {}  # refuted's answers
        self._below: float | None = None  # the nearest refuted batch size below the incumbent, once asked
        self._above: float | None = None  # (above it)

    @property
    def e_inc(self) -> float:
        """The incumbent's mean epochs (nan: none recorded), read once asked (most decisions do not)."""
        e = self._e_inc
        if e is None:
            e = self._e_inc = self.opt._mean_epochs(self.inc)
        return e

    def expected(self, b: int) -> float:
        """Expected cost of a run of ``b``: its measured epoch cost x the incumbent's mean epochs (-inf: unmeasured)."""
        e_inc = self.e_inc
        if b in self.opt.epoch_costs and math.isfinite(e_inc):
            return self.opt.epoch_costs[b] * e_inc
        return -math.inf

    def dearer(self, c: int) -> bool:
        """Whether ``c`` is known to cost more than the incumbent: ruled out, or dearer on average.

        A larger batch size ruled out because it was cut at its cap (``capped``) may only have drawn
        a slow training path: it counts by its runs that reached the target, if any; one a prior
        ruled out (never run here) does not count either.
        """
        opt = self.opt
        if c in opt.ruled_out and c in opt.tried and c not in opt.capped:
            return True  # its own probe failed (one a prior ruled out is no evidence here)
        r = self.runs.get(c)
        if r is None:
            return False
        bounds = self.bounds
        if bounds is not None:  # the rule is monotone in the spread: its bounds may decide it
            if r[1] <= self.m_inc:
                return False  # (the noise is >= 0)
            if r[1] > self.m_inc + opt.noise_z * bounds[1] / math.sqrt(r[0]):
                return True
            if not r[1] > self.m_inc + opt.noise_z * bounds[0] / math.sqrt(r[0]):
                return False
            self.bounds, self.sd_inc = None, opt._spread(self.inc)
        noise = opt.noise_z * self.sd_inc / math.sqrt(r[0])
        return r[1] > self.m_inc + noise

    def refuted(self, c: int) -> bool:
        """Dearer, and (``epoch_evidence``) not only by its epochs: its epoch cost x the incumbent's too."""
        out = self.memo.get(c)
        if out is None:
            out = self.dearer(c)
            if out and self.opt.epoch_evidence and c in self.runs:
                out = not -math.inf < self.expected(c) <= self.m_inc
            self.memo[c] = out
        return out

    def settled(self, b: int) -> bool:
        """Whether probing ``b`` again would teach nothing: ruled out, run twice, or clearly dearer.

        One run that is not dearer than the incumbent beyond the noise of the incumbent's runs
        (with one run of the incumbent: within ``(1 + margin) x`` its cost) may have been an
        unlucky training path, so such a batch size is probed a second time.
        """
        opt = self.opt
        if b in opt.ruled_out:
            return True
        if b not in opt.tried:
            return False
        r = self.runs.get(b)
        if not opt.second_chance or r is None or r[0] > 1:
            return True
        if self.n_inc > 1:
            return self.dearer(b)
        return r[1] > (1.0 + opt.margin) * self.m_inc

    def beyond_dearer(self, b: int) -> bool:
        """Whether a batch size between ``b`` and the incumbent cost more than it (:meth:`refuted`).

        The cost curve over batch sizes is taken as unimodal: past a dearer batch size it only rises.
        """
        lo, hi = sorted((b, self.inc))
        refuted = self.refuted
        return any(refuted(c) for c in self.opt.batch_sizes if lo < c < hi)

    def candidates(self) -> list[int]:
        """Batch sizes to probe next, in order.

        The prior's best (warm start), then the neighbours of the incumbent, then those of every
        other batch size whose mean cost is within ``(1 + margin) x`` the incumbent's (a noisy
        plateau does not end the search), cheapest first.

        (:meth:`refuted`, :meth:`dearer`, :meth:`settled` and :meth:`beyond_dearer` inlined: a replay asks this millions of times, and
        mostly gets nothing. Every batch size with runs is asked :meth:`refuted` first, as the order
        needs; :meth:`beyond_dearer` is then the nearest refuted batch size on ``b``'s side of the incumbent.)
        """
        if self.none_due():
            return []
        opt, inc, runs, memo = self.opt, self.inc, self.runs, self.memo
        ruled_out, tried, capped, m_inc, z = opt.ruled_out, opt.tried, opt.capped, self.m_inc, opt.noise_z
        evidence, epoch_costs = opt.epoch_evidence, opt.epoch_costs
        near: list[int] = []  # the batch sizes with runs not refuted
        dear: dict[int, bool] = {}  # dearer's answers
        for b, (n, m) in runs.items():  # refuted(b) and dearer(b), inlined
            if b == inc:
                continue
            out = memo.get(b)
            if out is None:
                bounds = self.bounds
                if b in ruled_out and b in tried and b not in capped:
                    d = True
                elif bounds is None:
                    d = self.dearer(b)
                elif m <= m_inc:
                    d = False
                elif m > m_inc + z * bounds[1] / math.sqrt(n):
                    d = True
                elif not m > m_inc + z * bounds[0] / math.sqrt(n):
                    d = False
                else:
                    d = self.dearer(b)  # (the spread itself)
                dear[b] = out = d
                if d and evidence:
                    ec, e_inc = epoch_costs.get(b), self.e_inc
                    e = ec * e_inc if ec is not None and math.isfinite(e_inc) else -math.inf
                    out = not -math.inf < e <= m_inc
                memo[b] = out
            if not out:
                near.append(b)
        if len(near) > 1:
            near.sort(key=lambda b: runs[b][1])
        order = [opt.prior_best] if opt.prior_best is not None else []
        neighbours = opt._neighbours_kept
        for b in [inc, *near]:
            order += neighbours(b)
        prune, second_chance = opt.prune, opt.second_chance
        probes: list[int] = []
        for b in dict.fromkeys(order):
            if b is None or b in ruled_out:
                continue
            if b in tried:  # settled(b), inlined
                r = runs.get(b)
                if not second_chance or r is None or r[0] > 1:
                    continue
                if self.n_inc > 1:
                    known = dear.get(b)
                    if known if known is not None else self.dearer(b):
                        continue
                elif r[1] > (1.0 + opt.margin) * self.m_inc:
                    continue
            if prune and b != inc and self._pruned(b):
                continue
            probes.append(b)
        return probes

    def none_due(self) -> bool:
        """Whether :meth:`candidates` is certainly empty, told from fewer verdicts (most decisions' case).

        A candidate is neither ruled out nor settled by its runs alone: untried, or tried once with
        a second chance due. None is due when every such batch size is pruned (beyond a refuted one
        on its side of the incumbent) or, tried once, settled by its verdict (:meth:`settled`).
        False: not told here (the incumbent among them, no pruning, or an untried batch size not
        pruned, whose place among the neighbours decides).
        """
        opt, inc, runs = self.opt, self.inc, self.runs
        ruled_out, tried, second_chance, prune = opt.ruled_out, opt.tried, opt.second_chance, opt.prune
        for b in opt.batch_sizes:
            if b in ruled_out:
                continue
            r = None
            if b in tried:
                r = runs.get(b)
                if not second_chance or r is None or r[0] > 1:
                    continue
            if b == inc or not prune:
                return False
            if self._pruned(b):
                continue
            if r is None or not (
                self.dearer(b) if self.n_inc > 1 else r[1] > (1.0 + opt.margin) * self.m_inc
            ):
                return False
        return True

    def _pruned(self, b: int) -> bool:
        """Whether ``b`` (not the incumbent) lies beyond the nearest refuted batch size on its side (:meth:`beyond_dearer`).

        The nearest refuted batch size of each side is looked for once per view.
        """
        if b < self.inc:
            below = self._below
            if below is None:
                below = self._below = self._nearest_refuted(False)
            return below > b
        above = self._above
        if above is None:
            above = self._above = self._nearest_refuted(True)
        return above < b

    def _nearest_refuted(self, up: bool) -> float:
        """The refuted batch size nearest the incumbent above it (``up``) or below it; none: -+inf.

        :meth:`beyond_dearer` of ``b`` on that side is whether it lies strictly between it and ``b``.
        """
        bs, inc, refuted = self.opt.batch_sizes, self.inc, self.refuted
        i = bs.index(inc)
        for c in bs[i + 1 :] if up else reversed(bs[:i]):
            if refuted(c):
                return c
        return math.inf if up else -math.inf

    def promise(self, b: int) -> float:
        """Saving per recurrence that ``b``'s measured epoch cost promises, in baseline costs.

        Against the incumbent's mean cost; 0 while unmeasured or when it promises none.
        """
        e = self.expected(b)
        if not self.opt.base_costs or not math.isfinite(e):
            return 0.0
        return max(0.0, self.m_inc - e) / self.opt._base()

    def need(self, b: int) -> float:
        """Least funds worth a probe of ``b``.

        Its expected run once measured, else what one epoch of it costs at most (enough to
        measure it): the incumbent's epoch cost, times ``inc / b`` for a smaller batch size (as
        many more steps per epoch). A probe once cut by its funds at some cost needs
        ``(1 + margin) x`` that cost.
        """
        e_inc, opt = self.e_inc, self.opt
        if not math.isfinite(e_inc) or e_inc <= 0.0:
            return 0.0
        need = self.expected(b) if b in opt.epoch_costs else self.m_inc / e_inc * max(1.0, self.inc / b)
        return max(need, (1.0 + opt.margin) * opt.short.get(b, 0.0))
