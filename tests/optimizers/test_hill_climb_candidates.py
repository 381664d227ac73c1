"""zeus-plus's probe list (issue 34): :meth:`Verdicts.candidates` answers as its rules stated one by one.

:meth:`~zeus_bench.optimizers.hill_climb_verdicts.Verdicts.candidates` inlines :meth:`settled` and
:meth:`beyond_dearer` (a replay asks it millions of times). Checked here on random states (costs,
epochs, what was tried, ruled out or capped, a prior, every rule switch): the same list, in the same
order, as the rules asked one at a time (:func:`_stated`, the list as the rules define it).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from zeus_bench.optimizers.hill_climb import SafeHillClimb
from zeus_bench.optimizers.hill_climb_verdicts import Verdicts

BS = [8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 512]
COST = st.sampled_from([90.0, 100.0, 100.0, 101.0, 110.0, 130.0, 200.0, 0.0]) | st.floats(50.0, 300.0)


def _stated(view: Verdicts) -> list[int]:
    """The probe list as the rules state it: neighbours in order, less the settled and those beyond a dearer one."""
    opt, inc, runs = view.opt, view.inc, view.runs
    near = sorted((b for b in runs if b != inc and not view.refuted(b)), key=lambda b: runs[b][1])
    order = [opt.prior_best] if opt.prior_best is not None else []
    for b in [inc, *near]:
        order += opt._neighbours(b)
    return [
        b
        for b in dict.fromkeys(order)
        if b is not None and not view.settled(b) and not (opt.prune and view.beyond_dearer(b))
    ]


@st.composite
def states(draw: Any) -> tuple[dict[str, Any], dict[int, list[float]], dict[str, Any]]:
    """Settings, costs per batch size and the rest of a state (tried, ruled out, capped, epochs)."""
    knobs = dict(
        prune=draw(st.booleans()),
        epoch_evidence=draw(st.booleans()),
        window=draw(st.sampled_from([0, 0, 2])),
        noise_z=draw(st.sampled_from([0.5, 1.0, 3.0])),
        margin=draw(st.sampled_from([0.05, 0.1, 0.4])),
    )
    run = draw(st.lists(st.sampled_from(BS), unique=True, min_size=0, max_size=7))
    costs = {b: draw(st.lists(COST, min_size=1, max_size=5)) for b in run}
    rest = dict(
        tried=set(draw(st.lists(st.sampled_from(BS), max_size=8))) | {b for b in run if draw(st.booleans())},
        ruled_out=set(draw(st.lists(st.sampled_from(BS), max_size=4))),
        capped=set(draw(st.lists(st.sampled_from(BS), max_size=3))),
        epoch_costs={b: draw(st.floats(1.0, 40.0)) for b in draw(st.sets(st.sampled_from(BS)))},
        epochs={b: draw(st.lists(st.floats(2.0, 12.0), min_size=1, max_size=3)) for b in run},
        prior_best=draw(st.none() | st.sampled_from(BS)),
        second_chance=draw(st.booleans()),
    )
    return knobs, costs, rest


def _climber(knobs: dict[str, Any], costs: dict[int, list[float]], rest: dict[str, Any]) -> SafeHillClimb:
    opt = SafeHillClimb(BS, 64, horizon=100, prior_best=rest["prior_best"], **knobs)
    opt.costs = {b: list(c) for b, c in costs.items()}
    opt.epochs = {b: list(e) for b, e in rest["epochs"].items()}
    opt.tried, opt.ruled_out, opt.capped = set(rest["tried"]), set(rest["ruled_out"]), set(rest["capped"])
    opt.epoch_costs, opt.second_chance = dict(rest["epoch_costs"]), rest["second_chance"]
    return opt


@settings(max_examples=1500, deadline=None)
@given(state=states(), inc_pick=st.integers(0, 100))
def test_candidates_answer_as_the_rules_one_by_one(state: Any, inc_pick: int) -> None:
    knobs, costs, rest = state
    opt = _climber(knobs, costs, rest)
    for inc in (opt.incumbent(), BS[inc_pick % len(BS)]):
        stated = _stated(Verdicts(_climber(knobs, costs, rest), inc))
        assert Verdicts(opt, inc).candidates() == stated
        # the quick answer that candidates() tries first is never wrong
        assert not Verdicts(opt, inc).none_due() or stated == []
