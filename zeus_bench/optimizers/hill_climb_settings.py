"""The settings of :class:`~zeus_bench.optimizers.hill_climb.SafeHillClimb`: their defaults and one frozen object.

The defaults are owned here (the ``zeus-plus`` policies take their class attributes from them,
through :mod:`zeus_bench.optimizers.hill_climb`); :class:`ClimbSettings` holds one optimizer's
choice of them and checks their ranges.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from zeus_bench.core.errors import ConfigError

DEFAULT_MARGIN = 0.2  # cross-fitted: chosen on the tune half (zeus_bench.studies.tuning; docs/policies.md)
DEFAULT_SAFETY = 0.02
DEFAULT_HORIZON = 0  # runs assumed when unknown (online): the anytime budget (tune half's pick; was 50)
DEFAULT_LOAN = 1.0  # with a horizon: baseline recurrences lent per unit of measured promised saving
#: Without one, no loan and no saving credited ahead: the job may end after any recurrence (a rule, not tuned).
ANYTIME_LOAN = ANYTIME_LOOKAHEAD = 0.0
#: zeus-plus-safe's own margin, loan and lookahead (leave-one-GPU-out, benchmarks/zeus_plus_tuning.py).
ANYTIME_MARGIN, SAFE_LOAN, SAFE_LOOKAHEAD = 0.2, 1.0, 4.0
NOISE_Z = 3.0  # standard deviations of the incumbent's runs a cost must pass to count as dearer
DEFAULT_EPOCH_EVIDENCE = True  # dearer only by its epochs bounds no search (_refuted): both tune halves' pick


def _number(value: float, name: str, what: str, positive: bool = False) -> None:
    """Refuse a ``value`` that is not finite and >= 0 (> 0 when ``positive``): ConfigError naming ``name``."""
    if not ((value > 0.0 if positive else value >= 0.0) and math.isfinite(value)):
        raise ConfigError(f"{name} must be {what}, got {value}")


@dataclass(frozen=True)
class ClimbSettings:
    """The tunable settings of :class:`~zeus_bench.optimizers.hill_climb.SafeHillClimb` (``docs/policies.md``, zeus-plus's knobs).

    Attributes:
        margin: A probe is stopped at ``(1 + margin) x`` the incumbent's mean cost; a batch
            size run once is given a second run if it cost less than that (one run of the
            incumbent; with more, the noise of its runs decides).
        safety: Allowed excess of the cumulative cost over running b0 throughout (0.02 = 2 %).
        window: Latest runs per batch size its mean uses (0 = all).
        horizon: Recurrences the job will have (at least ``t + 1``): the funds are the 2 %
            allowance over them plus the incumbent's projected saving
            (:meth:`~zeus_bench.optimizers.hill_climb.SafeHillClimb.budget`). 0: the anytime budget, which assumes nothing about
            the number of recurrences.
        up_first: Probe the larger coarse neighbour before the smaller one.
        loan: Baseline costs a probe may borrow per unit of the saving its measured epoch cost
            promises (:meth:`~zeus_bench.optimizers.hill_climb.SafeHillClimb.promise`); None: :data:`DEFAULT_LOAN` with a
            horizon, else :data:`ANYTIME_LOAN` (none).
        lookahead: Anytime budget: the incumbent's saving over the baseline is credited for
            ``lookahead x`` as many recurrences as have run; None: :data:`ANYTIME_LOOKAHEAD` (none).
        prune: Probe no batch size beyond one dearer than the incumbent (unimodal cost curve).
        noise_z: Standard deviations of the incumbent's runs by which a mean cost must exceed
            the incumbent's to count as dearer.
        epoch_evidence: A batch size dearer only by its epochs bounds no search
            (:meth:`~zeus_bench.optimizers.hill_climb.SafeHillClimb._refuted`).

    Raises:
        ConfigError: a setting out of its range (named in the message).
    """

    margin: float = DEFAULT_MARGIN
    safety: float = DEFAULT_SAFETY
    window: int = 0
    horizon: int = DEFAULT_HORIZON
    up_first: bool = True
    loan: float | None = None
    lookahead: float | None = None
    prune: bool = True
    noise_z: float = NOISE_Z
    epoch_evidence: bool = DEFAULT_EPOCH_EVIDENCE

    def __post_init__(self) -> None:
        """Refuse settings out of range (the loan and lookahead as :meth:`funds_rates` resolves them)."""
        _number(self.margin, "margin", "a positive number", positive=True)
        _number(self.safety, "safety", "a number >= 0")
        if self.window < 0:
            raise ConfigError(f"window must be >= 0 (0 = unbounded), got {self.window}")
        if self.horizon < 0:
            raise ConfigError(f"horizon must be >= 0 recurrences (0 = anytime budget), got {self.horizon}")
        _number(self.noise_z, "noise_z", "a number >= 0")
        loan, lookahead = self.funds_rates()
        if not (loan >= 0.0 and math.isfinite(loan)) or not (lookahead >= 0.0 and math.isfinite(lookahead)):
            raise ConfigError(f"loan and lookahead must be numbers >= 0, got {loan} and {lookahead}")

    def funds_rates(self) -> tuple[float, float]:
        """``(loan, lookahead)`` with their defaults filled in (the loan's depends on ``horizon``)."""
        loan = (DEFAULT_LOAN if self.horizon > 0 else ANYTIME_LOAN) if self.loan is None else self.loan
        return float(loan), float(ANYTIME_LOOKAHEAD if self.lookahead is None else self.lookahead)
