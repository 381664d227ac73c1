"""Properties of the monitor's windows on the fake backend (Hypothesis).

On a manual clock with a counter that moves only every 0.1 s (as on an H200): windows that
nest and follow each other add up (the energy of consecutive windows is that of their union), and
every window's energy lies within its stated uncertainty of the true energy drawn.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from zeus_bench.device.fake import FakeBackend
from zeus_bench.device.monitor import EnergyMonitor

PERIOD_S = 0.1

#: (duration in ms, load, whether a window edge follows)
segments = st.lists(
    st.tuples(st.integers(1, 1500), st.sampled_from([0.0, 0.2, 0.5, 1.0]), st.booleans()),
    min_size=1,
    max_size=12,
)


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@settings(max_examples=60, deadline=None)
@given(segments, st.integers(0, 99), st.sampled_from([0.0, 0.5, 1.0]))
def test_consecutive_windows_add_up_to_their_union_within_the_uncertainty(
    segs: list[tuple[int, float, bool]], offset_ms: int, first_load: float
) -> None:
    clock = Clock(100.0 + offset_ms / 1000.0)
    b = FakeBackend(state_path=None, n_gpus=1, clock=clock)
    b.configure(counter_update_period_s=PERIOD_S)
    g = b.gpu(0)
    g.set_load(first_load)
    mon = EnergyMonitor(
        [g], sync_cuda=False, clock=clock, read_in_background=False, counter_update_period_s=PERIOD_S
    )
    mon.begin_window("union")
    parts, truths = [], []
    k, truth, union_truth = 0, 0.0, 0.0
    mon.begin_window("part-0")
    for i, (ms, load, edge) in enumerate(segs):
        g.set_load(load)
        drawn = g.instant_power_w() * ms / 1000.0
        clock.t += ms / 1000.0
        truth += drawn
        union_truth += drawn
        if edge and i < len(segs) - 1:
            parts.append(mon.end_window(f"part-{k}"))
            truths.append(truth)
            k, truth = k + 1, 0.0
            mon.begin_window(f"part-{k}")
    parts.append(mon.end_window(f"part-{k}"))
    truths.append(truth)
    union = mon.end_window("union")
    assert mon.open_windows() == []
    total = sum(p.energy_j[0] for p in parts)
    assert abs(total - union.energy_j[0]) <= 1e-9 * max(1.0, union.energy_j[0])
    assert abs(total - union.energy_j[0]) <= union.total_energy_uncertainty_j
    assert (
        sum(p.time_s for p in parts) == union.time_s
        or abs(sum(p.time_s for p in parts) - union.time_s) < 1e-9
    )
    for m, true_j in [*zip(parts, truths, strict=True), (union, union_truth)]:
        assert abs(m.energy_j[0] - true_j) <= m.total_energy_uncertainty_j + 1e-9, (m.name, m, true_j)
