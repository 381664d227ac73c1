"""Zeus's batch-size optimizer: pruning exploration, then Gaussian Thompson Sampling.

:class:`PruningThompsonSampling` is a pure, self-contained algorithm: no I/O, no clock, its only
source of randomness the injected :class:`numpy.random.Generator`. The simulator replays it on
traces and a real training loop uses it online across recurrences of a job; both call
:meth:`~PruningThompsonSampling.predict` before a run and
:meth:`~PruningThompsonSampling.observe` after it. :meth:`~PruningThompsonSampling.state_dict`
/ :meth:`~PruningThompsonSampling.from_state_dict` persist it between recurrences (JSON), and a
restored object continues exactly as the original would, random draws included.

Rules (``docs/policies.md``, "The replay rules" and "Knobs of the batch-size optimizer"):

* **Pruning**, ``prune_rounds`` rounds. A round starts at the current default ``d``: first
  downwards over the candidates ``<= d`` from ``d`` to the smallest, then upwards over those
  ``> d`` from the smallest. In each direction a batch size that does not reach the target ends
  the direction. Batch sizes that reach are *good*; the cheapest good one of the round becomes
  ``d``. After the round the candidates are the good batch sizes. A round that finds none
  good (every try early-stopped; the paper's code raises here, with no arm left) leaves one
  candidate, the default ``d`` it started from: the cheapest batch size that has reached the
  target so far. Keeping the previous candidates instead lets an arm whose tries are all
  early-stopped after one epoch look cheapest forever (beta 1.25, movielens-1m). An observation that
  is not the batch size pruning asked for is kept in the history but not fed to pruning.
* **Thompson Sampling**: one Gaussian arm per surviving candidate, reward ``-cost``, prior mean
  0 and precision 0, so the posterior mean is the sample mean and the posterior precision
  ``n / variance`` (population variance over the last ``window`` observations of the arm, all
  when ``window`` is 0); zero variance means the sample is the mean. :meth:`predict` visits the
  arms in a random order and returns the first with fewer than 2 observations (in its window);
  once every arm has 2, it draws one sample per arm and returns the largest. The generator is
  used exactly as the paper's optimizer uses its own (a fresh ``default_rng(seed)``): one
  ``choice(n, n, replace=False)`` visiting order per prediction, then one ``normal`` draw per
  arm in ascending batch-size order, so a replay seeded like the paper's makes the same draws
  (both computed without NumPy's per-call overhead, draw for draw the same: :mod:`zeus_bench.optimizers.rng`
  for the visiting order, ``standard_normal`` scaled per arm for the samples, and the posterior's
  sums in NumPy's own summation order, :func:`~zeus_bench.optimizers.posterior.numpy_sum`). When pruning ends, each arm is fit
  to every observation of its batch size so far (those of pruning included), as the paper's
  optimizer does; replaying with fresh arms instead misses the paper's cumulative savings by up
  to 2.3 points (imagenet on the V100).

The pruning transition and the certified sample-and-pick are stated once, on arrays over seeds,
in :mod:`zeus_bench.optimizers.seed_bandits`: this class is their one-seed face, the replay's
batched Zeus their face over many seeds.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from zeus_bench.core.errors import ConfigError
from zeus_bench.optimizers.posterior import (
    approx_from_sums,
    check_prior,
    largest_sample,
    posterior,
    running_sums,
)
from zeus_bench.optimizers.rng import ChoiceDraws
from zeus_bench.optimizers.seed_bandits import (
    Pruning,
    arm_rewards,
    certified_pick,
    next_round,
    prune_choice,
    prune_step,
)
from zeus_bench.optimizers.state import rng_from_state, rng_state

# One seed's pruning states are small tuples of Python numbers, and the replays of one job meet
# the same ones again and again (the same costs): the one-seed face remembers the rules' answers.
_choice = functools.lru_cache(maxsize=1 << 14)(prune_choice)


@functools.lru_cache(maxsize=1 << 14)
def _transition(p: Pruning, index: int, cost: float, reached: bool) -> tuple[Pruning, Pruning, int]:
    """Pruning's step on one observation, then the next round if that one is over.

    Returns (stepped, next state, the batch-size index the next state tries: :func:`prune_choice`).
    """
    stepped, over = prune_step(p, index, cost, reached)
    after = next_round(stepped, over)
    return stepped, after, prune_choice(after)


STATE_VERSION = 1
MIN_OBSERVATIONS = 2  # per arm, before Thompson Sampling draws from the posteriors
PRUNE_ROUNDS = 2  # rounds of pruning exploration by default (the paper's)


class BanditKnobs(NamedTuple):
    """Knobs of the batch-size optimizer the paper's code exposes (``PolicyContext`` fields).

    Attributes:
        prior_mean: Mean of each arm's Gaussian prior (reward = -cost, J); the paper's 0.
        prior_precision: Its precision (1 / J^2); the paper's 0 (no prior).
        prune_rounds: Rounds of pruning exploration; the paper's 2.
    """

    prior_mean: float = 0.0
    prior_precision: float = 0.0
    prune_rounds: int = PRUNE_ROUNDS

    def check(self) -> None:
        """Raise ConfigError naming the knob out of range."""
        check_prior(self.prior_mean, self.prior_precision)
        if self.prune_rounds < 0:
            raise ConfigError(f"prune_rounds must be >= 0, got {self.prune_rounds}")

    @property
    def default(self) -> bool:
        """Whether these are the paper's defaults (what the fast replays implement)."""
        return self == BanditKnobs()


class PruningThompsonSampling:
    """Batch-size optimizer of Zeus: pruning exploration, then Gaussian Thompson Sampling.

    Args:
        batch_sizes: Feasible batch sizes (any order, unique).
        default_batch_size: The job's default batch size b0; must be one of ``batch_sizes``.
        rng: The optimizer's own random generator.
        prune_rounds: Rounds of pruning exploration (0 skips pruning: every batch size is an
            arm).
        window: Observations per arm the posterior uses (the latest); 0 = all (no drift
            handling).
        prior_mean: Mean of each arm's Gaussian prior (reward, i.e. minus a cost in J).
        prior_precision: Precision of that prior (1 / J^2); 0 (default) = no prior.
        concurrency: Runs may overlap (arrival tables): pruning takes an observation only for
            the batch size its last :meth:`predict` asked for, once, as the paper's optimizer
            built with ``concurrency=True`` (an observation arriving between a pruning result
            and the next prediction is kept in the history only). Without it, an observation of
            the batch size pruning waits for is taken whenever it comes.
    """

    def __init__(
        self,
        batch_sizes: Sequence[int],
        default_batch_size: int,
        rng: np.random.Generator,
        prune_rounds: int = PRUNE_ROUNDS,
        window: int = 0,
        prior_mean: float = 0.0,
        prior_precision: float = 0.0,
        concurrency: bool = False,
    ) -> None:
        """Create an optimizer in its initial state (pruning round 1 at b0)."""
        bs = sorted({int(b) for b in batch_sizes})
        if not bs:
            raise ConfigError("the batch-size optimizer needs at least one batch size")
        if int(default_batch_size) not in bs:
            raise ConfigError(f"default batch size {default_batch_size} is not among {bs}")
        if prune_rounds < 0:
            raise ConfigError(f"prune_rounds must be >= 0, got {prune_rounds}")
        if window < 0:
            raise ConfigError(f"window must be >= 0 (0 = unbounded), got {window}")
        self.batch_sizes: list[int] = bs
        self._bs_set = frozenset(bs)
        self.default_batch_size = int(default_batch_size)
        self.prune_rounds = int(prune_rounds)
        self.window = int(window)
        check_prior(prior_mean, prior_precision)
        self.prior_mean = float(prior_mean)
        self.prior_precision = float(prior_precision)
        self._no_prior = self.prior_mean == 0.0 and self.prior_precision == 0.0
        self.concurrency = bool(concurrency)
        self._index = {b: i for i, b in enumerate(bs)}
        self._first = Pruning.one(len(bs), self._index[self.default_batch_size])  # pruning's first state
        self._start(rng)

    def restarted(self, rng: np.random.Generator) -> PruningThompsonSampling:
        """A new optimizer with this one's settings, in its initial state, drawing from ``rng``.

        What the constructor with the same arguments makes, without its checks and conversions
        again (a replay of many groups starts one optimizer per group).
        """
        fresh = object.__new__(type(self))
        fresh.__dict__.update(self.__dict__)  # the settings; every per-run field is _start's
        fresh._start(rng)
        return fresh

    def _start(self, rng: np.random.Generator) -> None:
        """Every per-run field in its initial state (pruning round 1 at b0), drawing from ``rng``."""
        self._rng = rng
        self._order_draws = ChoiceDraws(rng)
        self._awaiting: int | None = None  # concurrency: the batch size the last predict asked pruning for
        # Pruning state: one seed's row of the batched rule's state (indices into batch_sizes).
        self._prune = self._first
        self._frozen: dict[str, Any] | None = None  # pruning's fields of state_dict once it is over ...
        self._frozen_from: tuple[Pruning, Pruning | None] | None = None  # ... from its last states
        self._next: int | None = None  # the batch size pruning waits for (None: not computed yet)
        # Thompson Sampling state: rewards per arm (None until pruning ends).
        self._arms: list[int] | None = None
        self._rewards: dict[int, list[float]] = {}
        self._history: list[tuple[int, float, bool]] = []
        self._post_cache: dict[int, tuple[float, float]] = {}
        # Running sums per arm, for the certified approximate posteriors (see _sampled_arm).
        self._sums: dict[int, list[float]] = {}
        self._approx_lists: list[list[float]] | None = None  # means, stds, c0s, c1s in arm order
        self._arm_pos: dict[int, int] = {}
        self._stale: set[int] = set()  # arms observed since their caches were last brought up to date
        self._explored = False
        if self.prune_rounds == 0:  # no pruning: every batch size is an arm
            self._begin_sampling(self._prune, None)

    @property
    def rng(self) -> np.random.Generator:
        """The optimizer's generator, brought up to date for use outside the optimizer."""
        self._order_draws.sync()
        return self._rng

    # ----------------------------------------------------------------- pruning state machine
    def _pruning_fields(self, p: Pruning) -> dict[str, Any]:
        """The pruning fields of :meth:`state_dict` from a pruning state (the lists it stands for)."""
        bs = self.batch_sizes
        n, cand, good, d = len(bs), p.candidates, p.good, p.default

        listed = self._listed
        return {
            "round": p.rounds,
            "candidates": listed(cand, range(n)),
            "default": bs[d],
            "down": listed(cand, range(min(p.down, n - 1), -1, -1)),
            "up": listed(cand, range(max(p.up, 0), n)),
            # in the order pruning finds them: downwards from the default, then upwards
            "good": listed(good, range(d, -1, -1)) + listed(good, range(d + 1, n)),
            "round_best": bs[p.best],
            "round_best_cost": None if math.isinf(p.best_cost) else p.best_cost,
        }

    def _listed(self, mask: int, indices: range) -> list[int]:
        """The batch sizes of ``mask``'s bits (indices into :attr:`batch_sizes`), in the order of ``indices``."""
        bs = self.batch_sizes
        return [bs[i] for i in indices if mask >> i & 1]

    def _load_pruning(self, d: dict[str, Any]) -> Pruning:
        """The pruning state whose :meth:`_pruning_fields` are ``d``'s."""
        n, ix = len(self.batch_sizes), self._index
        cand = sum(1 << ix[int(b)] for b in d["candidates"])
        good = sum(1 << ix[int(b)] for b in d["good"])
        rbc = d["round_best_cost"]
        return Pruning(
            n, int(d["round"]), cand, ix[int(d["default"])], ix[int(d["down"][0])] if d["down"] else -1,
            ix[int(d["up"][0])] if d["up"] else n, good, ix[int(d["round_best"])],
            math.inf if rbc is None else float(rbc),
        )  # fmt: skip

    def _begin_sampling(self, final: Pruning, last: Pruning | None) -> None:
        """Pruning is over: the candidates of its ``final`` state become the arms.

        ``last``: the last round's state before it ended (None: no pruning); pruning's fields of
        :meth:`state_dict` are made from both when asked (:meth:`_frozen_fields`).
        """
        self._frozen_from = (final, last)
        self._arms = self._listed(final.candidates, range(len(self.batch_sizes)))
        rewards = arm_rewards([(b, c) for b, c, _ in self._history], self._arms)
        self._rewards = dict(zip(self._arms, rewards, strict=True))

    def _frozen_fields(self) -> dict[str, Any]:
        """Pruning's fields of :meth:`state_dict` once it is over: its final state's, the last round's kept."""
        if self._frozen is None:
            assert self._frozen_from is not None
            final, last = self._frozen_from
            fields = self._pruning_fields(final)
            if last is None:  # no pruning
                fields.update(down=[], up=[])
            else:  # the last round's fields stay in the state
                kept = self._pruning_fields(last)
                fields.update({k: kept[k] for k in ("down", "up", "good", "round_best_cost")})
            self._frozen = fields
        return self._frozen

    def _expected(self) -> int | None:
        """Batch size pruning waits for, or None once pruning is over."""
        if self._arms is not None:
            return None
        if self._next is None:
            self._next = self.batch_sizes[_choice(self._prune)]
        return self._next

    def _prune_observe(self, batch_size: int, cost: float, reached: bool) -> None:
        """Pruning's transition (:func:`~zeus_bench.optimizers.seed_bandits.prune_observe`, one row)."""
        stepped, self._prune, choice = _transition(self._prune, self._index[batch_size], cost, reached)
        if self._prune.rounds >= self.prune_rounds:
            self._next = None
            self._begin_sampling(self._prune, stepped)
        else:
            self._next = self.batch_sizes[choice]

    # ----------------------------------------------------------------------- public interface
    @property
    def pruning(self) -> bool:
        """True while pruning exploration is under way."""
        return self._arms is None

    @property
    def arms(self) -> list[int]:
        """Arms of the bandit (the candidates while pruning)."""
        return list(self._arms if self._arms is not None else self._pruning_fields(self._prune)["candidates"])

    def predict(self) -> int:
        """Batch size for the next run."""
        arms = self._arms
        if arms is None:  # pruning: the batch size it waits for
            b = self._next  # (computed at the last observation pruning took, or now)
            if b is None:
                b = self._expected()
                assert b is not None
            self._awaiting = b
            return b
        # One random visiting order per prediction, drawn even when every arm is explored,
        # then one posterior sample per arm in arm order: the paper's sequence of draws.
        n = len(arms)
        if self._explored:
            self._order_draws.skip(n)  # the order is not needed, its draws are
        else:
            for i in self._order_draws.permutation(n):
                if len(self._window(arms[i])) < MIN_OBSERVATIONS:
                    return arms[i]
            # Counts never fall again unless the window is shorter than the exploration.
            self._explored = self.window == 0 or self.window >= MIN_OBSERVATIONS
        # rng.normal(means, stds) is means[i] + stds[i] * (i-th standard normal), in arm order;
        # the first largest sample wins (a NaN first of all, as argmax has it).
        z = self._rng.standard_normal(n).tolist()
        if self.window == 0 and self._no_prior:
            arm = self._sampled_arm(arms, z)
            if arm is not None:
                return arm
        return self._exact_sample(arms, z)

    def _exact_sample(self, arms: list[int], z: list[float]) -> int:
        """The arm of largest sample ``mean + std * z[i]`` from the exact posteriors."""
        if self._stale:
            self._refresh()
        cache = self._post_cache
        return arms[largest_sample([cache.get(b) or self._posterior(b) for b in arms], z)]

    def _approx_posterior(self, arm: int) -> tuple[float, float, float, float]:
        """Posterior mean and std of an arm from running sums, with bounds on their errors.

        Returns ``(mean, std, c0, c1)``: the exact posterior (:meth:`_posterior`, NumPy's two-pass
        sums in its pairwise order) and the sample ``mean + std * z`` drawn from it lie within
        ``c0 + c1 * |z|`` of this one's (``c0`` infinite when the sums are not finite). With u the unit roundoff, any summation order of n terms errs by at most
        (n - 1) u times the sum of their magnitudes, so both sums of the rewards lie within that of
        the true sum; the two-pass variance lies within (n + 4) u (var + d^2) + d^2 of the true one
        (d: the mean's error) and the one-pass ``sum(x^2)/n - mean^2`` within (n + 4) u sum(x^2)/n
        + 2 |mean| d + d^2; square roots turn a variance error e into a std error of at most
        sqrt(e / n). The bounds below take twice u per operation and multiply by 8 on top.
        """
        sums = self._sums.get(arm)
        if sums is None:
            sums = self._sums[arm] = running_sums(self._rewards[arm])
        return approx_from_sums(*sums)

    def _sampled_arm(self, arms: list[int], z: list[float]) -> int | None:
        """The arm of largest sample when the approximate posteriors decide it beyond doubt.

        Every sample ``mean + std * z`` lies within ``B = max c0 + max c1 * max |z|`` of the
        exact one (:meth:`_approx_posterior`); when the largest approximate sample exceeds the
        second largest by more than ``2 B``, the exact samples have the same, unique, largest and
        that arm is returned. Otherwise (near-ties, non-finite values) None: the caller computes
        the exact posteriors. The rule is :func:`~zeus_bench.optimizers.seed_bandits.certified_pick`
        for one seed, as the replay's batched Zeus calls it for many.
        """
        if self._stale:
            self._refresh()  # (the lists' entries of the arms observed since, when there are lists)
        lists = self._approx_lists
        if lists is None:
            self._arm_pos = {b: i for i, b in enumerate(arms)}
            approx = [self._approx_posterior(b) for b in arms]
            lists = self._approx_lists = [[a[k] for a in approx] for k in range(4)]
        means, stds, c0s, c1s = lists
        win, certain = certified_pick(means, stds, max(c0s), max(c1s), z)
        return arms[win] if certain else None

    def observe(self, batch_size: int, cost: float, reached: bool) -> None:
        """Feed back the outcome of one run.

        Args:
            batch_size: Batch size the run used (need not be the one predicted).
            cost: Its Zeus cost (J); an early-stopped run's cost so far.
            reached: Whether it reached the target metric.
        """
        b, c, r = int(batch_size), float(cost), bool(reached)
        if b not in self._bs_set:
            raise ConfigError(f"batch size {b} is not among {self.batch_sizes}")
        self.feed(b, c, r)

    def feed(self, b: int, c: float, r: bool) -> None:
        """:meth:`observe` without its checks, for a replay's own outcomes (millions of them).

        ``b`` must be one of the batch sizes (an ``int``), ``c`` a ``float`` and ``r`` a ``bool``.
        """
        self._history.append((b, c, r))
        if self._arms is None:
            if self.concurrency:
                if b == self._awaiting:
                    self._awaiting = None
                    self._prune_observe(b, c, r)
            elif b == self._expected():
                self._prune_observe(b, c, r)
        else:
            rewards = self._rewards.get(b)
            if rewards is not None:  # the arm's caches are brought up to date when next read (_refresh)
                rewards.append(-c)
                self._stale.add(b)

    def _refresh(self) -> None:
        """The caches of the arms observed since the last call brought up to date.

        Their exact posteriors are dropped, their running sums extended and, once the approximate
        posteriors are listed (:meth:`_sampled_arm`), their entries there made anew. A run of
        observations between two predictions costs one update per arm: the new rewards are added
        to the arm's sums in their order (:func:`~zeus_bench.optimizers.posterior.running_sums`
        from the sums so far), the same additions as one per observation.
        """
        stale, post, all_sums, rewards, lists = (
            self._stale,
            self._post_cache,
            self._sums,
            self._rewards,
            self._approx_lists,
        )
        for b in stale:
            if post:
                post.pop(b, None)
            sums = all_sums.get(b)
            if sums is not None:
                sums = all_sums[b] = running_sums(rewards[b][int(sums[0]) :], sums)
                if lists is not None:  # (then every arm has its sums) its approximate posterior, anew
                    i = self._arm_pos[b]
                    lists[0][i], lists[1][i], lists[2][i], lists[3][i] = approx_from_sums(*sums)
        stale.clear()

    def best_batch_size(self) -> int:
        """Best batch size known so far.

        While pruning: the cheapest good batch size of the current round (the default before
        any). After: the arm of largest posterior mean reward among observed arms (the pruning
        result before any arm is observed).
        """
        if self._arms is None:
            return self.batch_sizes[self._prune.best]
        if self._stale:
            self._refresh()
        observed = [b for b in self._arms if self._rewards[b]]
        if not observed:
            return int(self._frozen_fields()["default"])
        means, _ = self._posteriors(observed)
        return observed[int(np.argmax(means))]

    def _window(self, arm: int) -> list[float]:
        """Rewards of an arm the posterior uses: the last ``window`` (all when 0)."""
        r = self._rewards[arm]
        return r[-self.window :] if self.window else r

    def _posterior(self, arm: int) -> tuple[float, float]:
        """Posterior mean and standard deviation of an arm's mean reward (cached per arm).

        Reward precision ``1 / var`` (population variance), prior precision 0: the posterior
        precision is ``n / var`` and the mean the sample mean; zero variance gives a point mass.
        """
        if self._stale:
            self._refresh()
        cached = self._post_cache.get(arm)
        if cached is not None:
            return cached
        post = posterior(self._window(arm), self.prior_mean, self.prior_precision)
        self._post_cache[arm] = post
        return post

    def _posteriors(self, arms: Sequence[int]) -> tuple[list[float], list[float]]:
        """Posterior means and standard deviations of several arms."""
        cache = self._post_cache
        means, stds = [], []
        for b in arms:
            post = cache.get(b) or self._posterior(b)
            means.append(post[0])
            stds.append(post[1])
        return means, stds

    # ----------------------------------------------------------------------------- persistence
    def state_dict(self) -> dict[str, Any]:
        """JSON-serializable state, random generator included."""
        return {
            "version": STATE_VERSION,
            "batch_sizes": list(self.batch_sizes),
            "default_batch_size": self.default_batch_size,
            "prune_rounds": self.prune_rounds,
            "window": self.window,
            "rng": rng_state(self.rng),
            **(self._frozen_fields() if self._arms is not None else self._pruning_fields(self._prune)),
            "arms": None if self._arms is None else list(self._arms),
            "rewards": [[b, list(r)] for b, r in self._rewards.items()],
            "history": [[b, c, r] for b, c, r in self._history],
            "prior_mean": self.prior_mean,
            "prior_precision": self.prior_precision,
            "concurrency": self.concurrency,
            "awaiting": self._awaiting,
        }

    @classmethod
    def from_state_dict(cls, d: dict[str, Any]) -> PruningThompsonSampling:
        """Restore an optimizer saved with :meth:`state_dict`."""
        if d.get("version") != STATE_VERSION:
            raise ConfigError(
                f"unsupported batch-size optimizer state version {d.get('version')!r} "
                f"(this version reads {STATE_VERSION})"
            )
        obj = cls(
            d["batch_sizes"],
            d["default_batch_size"],
            rng_from_state(d["rng"]),
            prune_rounds=d["prune_rounds"],
            window=d["window"],
            prior_mean=float(d.get("prior_mean", 0.0)),
            prior_precision=float(d.get("prior_precision", 0.0)),
            concurrency=bool(d.get("concurrency", False)),
        )
        awaiting = d.get("awaiting")
        obj._awaiting = None if awaiting is None else int(awaiting)
        obj._prune = obj._load_pruning(d)
        obj._next = None
        obj._frozen = None
        obj._frozen_from = None
        obj._arms = None
        if d["arms"] is not None:  # pruning's fields as saved (they change no more)
            rbc = d["round_best_cost"]
            obj._frozen = {
                **{k: int(d[k]) for k in ("round", "default", "round_best")},
                **{k: [int(b) for b in d[k]] for k in ("candidates", "down", "up", "good")},
                "round_best_cost": None if rbc is None else float(rbc),
            }
            obj._arms = [int(b) for b in d["arms"]]
        obj._rewards = {int(b): [float(x) for x in r] for b, r in d["rewards"]}
        obj._history = [(int(b), float(c), bool(r)) for b, c, r in d["history"]]
        return obj

    @property
    def history(self) -> list[tuple[int, float, bool]]:
        """Every observation, in order: (batch size, cost, reached)."""
        return list(self._history)
