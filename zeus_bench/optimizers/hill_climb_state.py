"""The saved state of :class:`~zeus_bench.optimizers.hill_climb.SafeHillClimb`: its JSON, versions 1-3.

A state holds the optimizer's settings (:data:`SETTINGS`), what it observed and its counters; an
older version lacks the settings it had no choice of, and loads with the values it ran with
(:data:`LEGACY`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from zeus_bench.core.errors import ConfigError

__all__ = ["LEGACY", "SETTINGS", "STATE_VERSION", "from_state", "to_state"]

STATE_VERSION = 3
#: Settings of the optimizer, as its constructor takes them and a state keeps them (in this order;
#: ``epoch_evidence`` only when on).
SETTINGS: tuple[str, ...] = ("margin", "safety", "window", "horizon", "up_first", "loan", "lookahead")
SETTINGS += ("prune", "noise_z", "prior_best", "epoch_evidence")
COUNTS = ("recurrences", "resets", "probes", "failed_probes")  # persisted counters
#: Settings older saved states lack, as those versions ran: 1 (projected budget only) had no loan or
#: lookahead; 1 and 2 did not prune; none weighed epoch evidence.
LEGACY: dict[str, Any] = dict(loan=1.0, lookahead=4.0, prune=False, noise_z=3.0, epoch_evidence=False)
C = TypeVar("C")  # the optimizer class (not imported: hill_climb imports this module)


def to_state(opt: Any) -> dict[str, Any]:
    """JSON-serializable state of ``opt``, a ``SafeHillClimb`` (``version`` :data:`STATE_VERSION`)."""
    return {
        "version": STATE_VERSION,
        "batch_sizes": list(opt.batch_sizes),
        "default_batch_size": opt.default_batch_size,
        **{k: getattr(opt, k) for k in SETTINGS if k != "epoch_evidence" or opt.epoch_evidence},
        "costs": [[b, list(c)] for b, c in sorted(opt.costs.items())],
        "epochs": [[b, list(e)] for b, e in sorted(opt.epochs.items())],
        **{k: sorted(getattr(opt, k)) for k in ("tried", "ruled_out", "capped")},
        "base_costs": list(opt.base_costs),
        "baseline_ratio": opt.baseline_ratio,
        "spent": opt.spent,
        **{k: getattr(opt, k) for k in COUNTS},
        "epoch_costs": [[b, e] for b, e in sorted(opt.epoch_costs.items())],
        "short": [[b, c] for b, c in sorted(opt.short.items())],
    }


def from_state(cls: Callable[..., C], d: dict[str, Any]) -> C:
    """An optimizer of class ``cls`` (``SafeHillClimb``) restored from :func:`to_state`'s output (versions 1 to 3).

    Raises:
        ConfigError: another version.
    """
    if d.get("version") not in (1, 2, STATE_VERSION):
        raise ConfigError(
            f"unsupported zeus-plus optimizer state version {d.get('version')!r} "
            f"(this version reads 1 to {STATE_VERSION})"
        )
    settings = {k: d.get(k, LEGACY[k]) if k in LEGACY else d[k] for k in SETTINGS}
    obj: Any = cls(d["batch_sizes"], d["default_batch_size"], **settings)
    obj.costs = {int(b): [float(x) for x in c] for b, c in d["costs"]}
    obj.epochs = {int(b): [float(x) for x in e] for b, e in d["epochs"]}
    obj.tried, obj.capped = {int(b) for b in d["tried"]}, {int(b) for b in d["capped"]}
    obj.ruled_out = {int(b) for b in d["ruled_out"]}
    obj.base_costs = [float(x) for x in d["base_costs"]]
    obj.baseline_ratio, obj.spent = float(d["baseline_ratio"]), float(d["spent"])
    obj.recurrences, obj.resets = int(d["recurrences"]), int(d["resets"])
    obj.probes, obj.failed_probes = int(d["probes"]), int(d["failed_probes"])
    obj.epoch_costs = {int(b): float(e) for b, e in d.get("epoch_costs", [])}
    obj.short = {int(b): float(c) for b, c in d.get("short", [])}
    return obj
