"""Zeus's face over seeds on arrays (zeus_bench.sim.policies.seed_zeus, in the executor) gives each
seed's rows of its scalar face (one PruningThompsonSampling per seed) exactly, bit for bit; the
seeds it leaves are replayed from scratch and spliced in place; the path draws from block-fetched
words are NumPy's; dispatch is by method."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.optimizers import seed_bandits, streams
from zeus_bench.optimizers._ziggurat import THRESHOLDS, WIDTHS
from zeus_bench.optimizers.bandit import PRUNE_ROUNDS, BanditKnobs
from zeus_bench.optimizers.rng import (
    MASK32,
    fast_normals,
    measure_normal_tables,
    normal_tables,
    rejected_words,
    strip_densities,
)
from zeus_bench.sim import env, executor
from zeus_bench.sim.policies import Policy, get_policy, seed_zeus
from zeus_bench.sim.policies.seeds import ScalarPolicies
from zeus_bench.sim.replay import RUN_FIELDS, JobModel, SeedTries, default_recurrences, replay, replay_many

ZEUS = get_policy("zeus")
#: Zeus with the default face: one policy object per seed (the reference the face is held to).
SCALAR_ZEUS = type("ScalarZeus", (ZEUS,), {"batched": classmethod(Policy.batched.__func__)})  # type: ignore[attr-defined]


def replay_zeus(
    model: JobModel, seed: int, beta: float, recurrences: int, window: int = 0, rounds: int = PRUNE_ROUNDS
) -> list[tuple[object, ...]]:
    """One seed's rows by the scalar face (one seed, the Zeus policy object)."""
    return replay(
        model, SCALAR_ZEUS, seed, beta, recurrences, window=window, knobs=BanditKnobs(prune_rounds=rounds)
    )


def replay_batched(
    model: JobModel,
    policy: type[Policy],
    seeds: list[int],
    beta: float,
    recurrences: int,
    window: int = 0,
    rounds: int = PRUNE_ROUNDS,
) -> SeedTries:
    """Every seed's rows in one run of the executor, with the face ``policy.batched`` gives."""
    knobs = BanditKnobs(prune_rounds=rounds)
    return replay_many(model, policy, seeds, beta, recurrences, window=window, knobs=knobs)


@pytest.fixture(autouse=True)
def every_seed_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """The array face for any number of seeds (it is what these tests hold to the scalar face)."""
    monkeypatch.setattr(seed_zeus.SeedZeus, "MIN_SEEDS", 1)


@pytest.fixture
def fell_back(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """The seeds of each SeedZeus.fallback asked (the seeds replayed from scratch)."""
    asked: list[list[int]] = []
    real = seed_zeus.SeedZeus.fallback

    def counted(self, ids):  # type: ignore[no-untyped-def]
        asked.append(list(ids))
        return real(self, ids)

    monkeypatch.setattr(seed_zeus.SeedZeus, "fallback", counted)
    return asked


@pytest.fixture
def faces(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of seeds of each SeedZeus face made."""
    made: list[int] = []
    real = seed_zeus.SeedZeus.__init__

    def counted(self, model, policies, limits=None):  # type: ignore[no-untyped-def]
        made.append(len(policies))
        real(self, model, policies, limits)

    monkeypatch.setattr(seed_zeus.SeedZeus, "__init__", counted)
    return made


# Paths chosen so that pruning keeps several arms and Thompson Sampling runs for long.
NOISY = {8: [6.0, 9.0, np.nan], 16: [4.0, 5.0, 7.0], 32: [5.0, 6.0], 64: [3.0, 4.0, 9.0, np.nan]}
SPREAD = {b: [2.0 + (k * b) % 7 for k in range(1, 6)] for b in (4, 8, 16, 24, 32, 48, 64, 96, 128, 256)}


def _same(
    model: JobModel,
    seeds: list[int],
    beta: float,
    recurrences: int,
    window: int = 0,
    rounds: int = PRUNE_ROUNDS,
) -> int:
    """Assert the face's rows equal the scalar face's, seed by seed; returns the rows."""
    face = ZEUS.batched(model, [ZEUS(_ctx(model, s, window, rounds)) for s in seeds])
    assert isinstance(face, seed_zeus.SeedZeus)  # the face is what is tested here
    done = replay_batched(model, ZEUS, seeds, beta, recurrences, window, rounds)
    seed_col, columns = np.asarray(seeds)[done.seed], done.columns
    expected = [
        (s, row) for s in seeds for row in replay_zeus(model, s, beta, recurrences, window, rounds) or []
    ]
    assert seed_col.tolist() == [s for s, _ in expected]
    for k, name in enumerate(RUN_FIELDS):
        ours = columns[name].tolist()
        theirs = [row[k] for _, row in expected]
        # repr tells NaN == NaN, -0.0 from 0.0: the same values, bit for bit (ints and bools by type)
        assert [repr(v) for v in ours] == [repr(type(ours[0])(v)) for v in theirs], name
    return len(expected)


def _ctx(model: JobModel, seed: int, window: int = 0, rounds: int = PRUNE_ROUNDS):  # type: ignore[no-untyped-def]
    from zeus_bench.sim.policies import PolicyContext

    return PolicyContext(model.job, model.cost, 2.0, window, np.random.default_rng(seed), prune_rounds=rounds)


@pytest.mark.parametrize("beta", [1.0, 1.25, 2.0, 5.0, math.inf])
def test_toy_jobs_same_rows(beta: float) -> None:
    for targets in (None, NOISY, SPREAD):
        b0 = 32
        model = JobModel(toy_job(targets, b0=b0), Cost(0.5))
        assert _same(model, list(range(1, 41)), beta, 60) >= 40 * 60


def test_zero_budget_and_missed_recurrences_same_rows() -> None:
    """Batch size 64 costs 20x per epoch: at beta 1 its tries get a zero budget (no row)."""
    job = toy_job({8: [1.0, 3.0], 16: [4.0, 9.0], 32: [5.0], 64: [3.0, 8.0]})
    tpe = np.array(job.time_per_epoch_s, dtype=float)
    tpe[3] *= 20.0
    model = JobModel(replace(job, time_per_epoch_s=tpe), Cost(0.5))
    for beta in (1.0, 1.05):
        _same(model, list(range(1, 31)), beta, 40)


def test_near_ties_and_uncertain_wedges_use_the_exact_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every decision from the exact posteriors and every slow normal from NumPy: the same rows."""
    model = JobModel(toy_job(SPREAD), Cost(0.5))
    real = seed_bandits.approx_from_sums

    def uncertain(*sums: np.ndarray) -> tuple[np.ndarray, ...]:
        mean, std, c0, c1 = real(*sums)
        return mean, std, np.full_like(c0, 1e300), c1

    monkeypatch.setattr(seed_bandits, "approx_from_sums", uncertain)  # the batched optimizer's
    monkeypatch.setattr(streams, "_WEDGE_MARGIN", 10.0)
    _same(model, list(range(1, 13)), 2.0, 50)


def test_rejectable_order_words_replay_the_seed_again(
    monkeypatch: pytest.MonkeyPatch, fell_back: list[list[int]]
) -> None:
    """A visiting order with a rejectable word: its seed goes, replayed from scratch by the scalar face."""
    model = JobModel(toy_job(SPREAD), Cost(0.5))
    monkeypatch.setattr(streams, "holds_word", lambda raw, words: np.ones(raw.shape, dtype=bool))
    _same(model, list(range(1, 9)), 2.0, 50)
    # one replay from scratch for every seed whose arms have rejectable words (all of them hold one)
    assert len(fell_back) == 1 and len(fell_back[0]) >= 3


def test_path_draws_redraw_rejected_words_as_numpy() -> None:
    spans = np.array([1, 3, 6, 7, 5, 12], dtype=np.uint64)
    rng = np.random.default_rng(3)
    words = rng.integers(0, 1 << 32, size=(len(spans), 12), dtype=np.uint64)
    for i, s in enumerate(spans.tolist()):  # the first words of each row are rejected ones
        bad = rejected_words(s) if s > 1 else []
        words[i, : len(bad[:3])] = bad[:3]
    pos = np.zeros(len(spans), dtype=np.int64)
    length = np.full(len(spans), 12)
    live = np.ones(len(spans), dtype=bool)
    for _ in range(3):
        index, new_pos, short = env.draw_paths(words, pos, length, spans, live)
        assert not short.any()
        for i, s in enumerate(spans.tolist()):
            p = int(pos[i])
            if s == 1:
                assert (index[i], new_pos[i]) == (0, p)
                continue
            while True:  # Lemire's method, word by word
                m = int(words[i, p]) * s
                p += 1
                if (m & MASK32) >= (1 << 32) % s:
                    break
            assert (index[i], new_pos[i]) == (m >> 32, p)
        pos = new_pos
    assert env.draw_paths(words, np.full(len(spans), 11), length, spans, live)[2].tolist() == [
        False, False, False, False, False, False,
    ]  # fmt: skip


def test_stored_ziggurat_tables_are_numpys() -> None:
    widths, thresholds = measure_normal_tables()
    assert widths == list(WIDTHS)
    assert thresholds == list(THRESHOLDS)
    assert normal_tables() is not None


def test_normals_from_outputs_equal_numpys() -> None:
    """Every draw, the slow ones included, from the outputs: fast, wedge (with the stored
    densities, which must decide NumPy's test far beyond the margin) and tail."""
    tables = normal_tables()
    assert tables is not None
    widths, thresholds = tables
    dens = strip_densities(widths)
    r, inv_r = 3.6541528853610088, 0.27366123732975828  # the tail's start and its inverse
    closest = math.inf
    kinds = [0, 0, 0]
    for seed in range(3):
        raw = np.random.PCG64(seed).random_raw(220_000)
        drawn = np.random.Generator(np.random.PCG64(seed)).standard_normal(200_000).tolist()
        x, fast = fast_normals(raw, widths, thresholds)
        xs, fs, words = x.tolist(), fast.tolist(), raw.tolist()
        pos = 0
        for value in drawn:
            while True:
                word, q = words[pos], pos
                pos += 1
                if fs[q]:
                    ours, kind = xs[q], 0
                    break
                idx = word & 0xFF
                if idx == 0:  # the tail: pairs of uniforms until one is accepted
                    while True:
                        u1 = (words[pos] >> 11) * 2.0**-53
                        u2 = (words[pos + 1] >> 11) * 2.0**-53
                        pos += 2
                        xx = -inv_r * math.log1p(-u1)
                        if -2.0 * math.log1p(-u2) > xx * xx:
                            break
                    ours, kind = (-(r + xx) if (word >> 17) & 1 else r + xx), 2
                    break
                u = (words[pos] >> 11) * 2.0**-53
                pos += 1
                gap = (dens[idx - 1] - dens[idx]) * u + dens[idx] - math.exp(-0.5 * xs[q] * xs[q])
                closest = min(closest, abs(gap))
                if gap < 0:
                    ours, kind = xs[q], 1
                    break
            assert ours == value
            kinds[kind] += 1
    assert min(kinds) > 50  # every kind of draw was met
    assert closest > 1e3 * streams._WEDGE_MARGIN


def test_published_traces_same_rows(zeus_traces: Path) -> None:
    from zeus_bench.traces.jobs import TraceSet

    ts = TraceSet(zeus_traces)
    for gpu in ("v100", "a40"):
        for workload in ts.workload_ids(gpu):
            job = ts.job(gpu, workload)
            for eta, beta in ((0.5, 2.0), (0.3, 1.25), (0.8, 3.0)):
                _same(JobModel(job, Cost(eta)), list(range(1, 31)), beta, default_recurrences(job))


@pytest.mark.parametrize("recurrences", [1, 2, 3, 5, 9])
def test_short_replays_end_before_or_just_after_the_handover(recurrences: int) -> None:
    for targets in (None, NOISY, SPREAD):
        _same(JobModel(toy_job(targets), Cost(0.5)), list(range(1, 16)), 2.0, recurrences)


def test_first_recurrence_failure_is_the_scalar_loops_error() -> None:
    """b0 (32) reaches on one path of two: a seed that samples the other fails, here as there."""
    from zeus_bench.core.errors import ConfigError

    model = JobModel(toy_job({8: [4.0], 16: [4.0], 32: [np.nan, 5.0], 64: [3.0]}), Cost(0.5))
    with pytest.raises(ConfigError) as ours:
        replay_batched(model, ZEUS, list(range(1, 13)), 2.0, 5)
    failing = []
    for seed in range(1, 13):
        try:
            replay_zeus(model, seed, 2.0, 5)
        except ConfigError as theirs:
            failing.append(str(theirs))
    assert str(ours.value) == failing[0]


def test_grid_frames_equal_seed_by_seed_replays() -> None:
    """Several betas, seeds in several executor groups and frames: the rows of replay(), in order."""
    from zeus_bench.sim import grid
    from zeus_bench.sim.replay import replay

    job = toy_job(SPREAD)
    task = grid.Task(job, Cost(0.5), "zeus", (1.5, 2.0), tuple(range(1, 12)), 40, 0)
    old_group = grid.GROUP_SEEDS
    try:
        grid.GROUP_SEEDS = 4
        tables = list(grid.iter_task_tables(task, chunk_rows=100))
    finally:
        grid.GROUP_SEEDS = old_group
    assert len(tables) > 2
    model = JobModel(job, Cost(0.5))
    expected = [
        (beta, seed, row)
        for beta in task.betas
        for seed in task.seeds
        for row in replay(model, SCALAR_ZEUS, seed, beta, 40)
    ]
    betas = np.concatenate([np.broadcast_to(t.columns["beta"], t.rows) for t in tables])
    seeds = np.concatenate([t.columns["seed"] for t in tables])
    assert betas.tolist() == [b for b, _, _ in expected]
    assert seeds.tolist() == [s for _, s, _ in expected]
    for k, name in enumerate(RUN_FIELDS):
        ours = np.concatenate([t.columns[name] for t in tables]).tolist()
        assert [repr(v) for v in ours] == [repr(type(ours[0])(r[k])) for _, _, r in expected], name


def test_grid_groups_whose_face_stops_applying_still_give_every_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A later group replayed by the scalar face (the array face not applying) loses no row."""
    from zeus_bench.sim import grid

    real = seed_zeus.SeedZeus.applies
    calls = []

    def flaky(model, policies, jit=True):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(model, policies, jit) if len(calls) == 1 else False

    monkeypatch.setattr(seed_zeus.SeedZeus, "applies", staticmethod(flaky))
    monkeypatch.setattr(grid, "GROUP_SEEDS", 4)
    task = grid.Task(toy_job(SPREAD), Cost(0.5), "zeus", (2.0,), tuple(range(1, 12)), 40, 0)
    tables = list(grid.iter_task_tables(task, chunk_rows=100))
    assert len(calls) == 6  # one face per group (2 seeds: 100 rows // 40 recurrences)
    model = JobModel(task.job, Cost(0.5))
    expected = [(s, r) for s in task.seeds for r in replay_zeus(model, s, 2.0, 40)]
    assert np.concatenate([t.columns["seed"] for t in tables]).tolist() == [s for s, _ in expected]
    ours = np.concatenate([t.columns["cost"] for t in tables]).tolist()
    assert ours == [r[7] for _, r in expected]


def test_seeds_pruned_by_the_scalar_face_when_the_array_face_cannot(
    monkeypatch: pytest.MonkeyPatch, fell_back: list[list[int]]
) -> None:
    """Path words fetched one output at a time, or an arm to explore first: the same rows."""
    model = JobModel(toy_job(SPREAD), Cost(0.5))
    real_outputs = executor._outputs
    monkeypatch.setattr(executor, "_outputs", lambda recurrences, rec: 1)  # 2 words per refill: many refills
    _same(model, list(range(1, 16)), 2.0, 40)
    monkeypatch.setattr(executor, "_outputs", real_outputs)
    monkeypatch.setattr(seed_zeus, "MIN_OBSERVATIONS", 3)  # as if every arm had still to be explored
    _same(model, list(range(1, 16)), 2.0, 40)
    assert fell_back == [list(range(15))]


def test_zero_budget_tries_leave_gaps_in_the_attempts() -> None:
    """At beta 1 batch size 64 (20x per epoch) gets zero budgets: tries without a row, as one seed has them."""
    job = toy_job({8: [1.0, 3.0], 16: [4.0, 9.0], 32: [5.0], 64: [3.0, 8.0]})
    tpe = np.array(job.time_per_epoch_s, dtype=float)
    tpe[3] *= 20.0
    model = JobModel(replace(job, time_per_epoch_s=tpe), Cost(0.5))
    _same(model, list(range(1, 9)), 1.0, 40)
    done = replay_batched(model, ZEUS, list(range(1, 9)), 1.0, 40)
    seed_col, columns = np.asarray(range(1, 9))[done.seed], done.columns
    skipped = 0
    for seed in range(1, 9):
        mine = seed_col == seed
        rec, att = columns["recurrence"][mine], columns["attempt"][mine]
        for r in np.unique(rec):
            a = att[rec == r]
            skipped += int(a.max()) - len(a)
    assert skipped > 0


def test_unmeasured_jit_limit_is_left_to_the_per_seed_replay() -> None:
    job = toy_job()
    nan_at_jit = np.array(job.time_per_epoch_s, dtype=float)
    nan_at_jit[0, 0] = np.nan  # batch size 8 at 100 W, the JIT profile's choice, unmeasured
    jit_t = np.tile([1.5, 1.0], (len(job.batch_sizes), 1))
    model = JobModel(replace(job, time_per_epoch_s=nan_at_jit, jit_time_per_epoch_s=jit_t), Cost(1.0))
    assert model.jit_limit_w[0] == 100.0
    assert model.at_jit_limits() is None
    assert isinstance(ZEUS.batched(model, [ZEUS(_ctx(model, s)) for s in (1, 2)]), ScalarPolicies)
    ours = replay_batched(model, ZEUS, [1, 2], 2.0, 5)
    assert repr(list(ours)) == repr([replay_zeus(model, s, 2.0, 5) for s in (1, 2)])  # NaN rows too


def test_dispatch_is_by_method_a_zeus_subclass_takes_the_batched_path(faces: list[int]) -> None:
    """A renamed Zeus gets the array face (same rows), so does bs-only (its own, at its maximum limits); one
    that changes a decision (a new predict) does not."""
    model = JobModel(toy_job(NOISY), Cost(0.5))
    renamed = type("MyZeus", (ZEUS,), {"name": "my-zeus", "description": "Zeus under another name"})
    seeds = list(range(1, 9))
    mine = replay_batched(model, renamed, seeds, 2.0, 30)
    theirs = replay_batched(model, ZEUS, seeds, 2.0, 30)
    assert faces == [8, 8]
    for name in RUN_FIELDS:
        assert mine.columns[name].tolist() == theirs.columns[name].tolist()
    assert mine == [replay_zeus(model, s, 2.0, 30) for s in seeds]
    replay_batched(model, get_policy("bs-only"), seeds, 2.0, 30)

    def predict(self):  # type: ignore[no-untyped-def]
        return ZEUS.predict(self)

    replay_batched(model, type("Other", (ZEUS,), {"predict": predict}), seeds, 2.0, 30)
    replay_batched(model, get_policy("baseline"), seeds, 2.0, 30)  # the default: per seed
    replay_batched(model, SCALAR_ZEUS, seeds, 2.0, 30)  # batched overridden: its own face
    assert faces == [8, 8, 8]  # zeus, my-zeus, bs-only
    policies = [get_policy("bs-only")(_ctx(model, s)) for s in seeds]
    assert isinstance(get_policy("bs-only").batched(model, policies), seed_zeus.SeedZeus)
    tuned = type("BsOnlyOther", (get_policy("bs-only"),), {"_decide": get_policy("bs-only")._decide})
    assert isinstance(tuned.batched(model, [tuned(_ctx(model, s)) for s in seeds]), ScalarPolicies)


def test_few_seeds_take_the_scalar_face_unless_told_otherwise() -> None:
    """Below MIN_SEEDS seeds the scalar face replays faster: Zeus.batched gives it (same rows either way)."""
    model = JobModel(toy_job(SPREAD), Cost(0.5))
    few = [ZEUS(_ctx(model, s)) for s in range(1, 5)]
    assert isinstance(ZEUS.batched(model, few), seed_zeus.SeedZeus)  # MIN_SEEDS 1 here (the fixture)
    seed_zeus.SeedZeus.MIN_SEEDS = 5
    assert isinstance(ZEUS.batched(model, few), ScalarPolicies)
    assert isinstance(ZEUS.batched(model, [*few, ZEUS(_ctx(model, 9))]), seed_zeus.SeedZeus)


def test_env_words_draw_as_numpys_integers() -> None:
    """Block-fetched words, refills and rows leaving included: each row draws rng.integers(0, span)'s values."""
    spans_rng = np.random.default_rng(11)
    gens = [np.random.default_rng(s) for s in range(6)]
    ref = [np.random.default_rng(s) for s in range(6)]
    words = env.EnvWords(gens)
    rows = list(range(6))
    for step in range(400):
        span = spans_rng.integers(1, 9, size=len(rows)).astype(np.uint64)
        step_rows = None if step % 3 else np.arange(0, len(rows), 2)  # every row, or some
        drawn = words.draw(step_rows, span if step_rows is None else span[step_rows], lambda: 5)
        who = range(len(rows)) if step_rows is None else step_rows.tolist()
        expected = [int(ref[rows[k]].integers(0, int(span[k]))) for k in who]
        assert drawn.tolist() == expected
        if step == 200:  # rows 1 and 4 leave
            keep = np.array([0, 2, 3, 5])
            words.keep(keep)
            rows = [rows[k] for k in keep.tolist()]


def test_env_words_redraw_rejected_words_as_numpy() -> None:
    """Words Lemire's method rejects (met about once in 10**9 draws) take the full rule, more words."""
    span = np.array([6, 7, 5], dtype=np.uint64)
    words = env.EnvWords([np.random.default_rng(s) for s in range(3)])
    words.draw(None, np.ones(3, dtype=np.uint64), lambda: 8)  # fetch the first block (a span of 1 takes none)
    for i, s in enumerate(span.tolist()):
        bad = rejected_words(s)[:2]
        words.words[i, : len(bad)] = bad
    expect = []
    for i, s in enumerate(span.tolist()):
        p = 0
        while True:  # Lemire's method, word by word
            m = int(words.words[i, p]) * s
            p += 1
            if (m & MASK32) >= (1 << 32) % s:
                break
        expect.append((m >> 32, p))
    index = words.draw(None, span, lambda: 8)
    assert list(zip(index.tolist(), words.pos.tolist(), strict=True)) == expect
    assert min(p for _, p in expect) >= 2  # every row redrew


def test_array_face_with_drift_noise_and_a_later_start_gives_the_scalar_rows() -> None:
    """Drift, per-try noise and first=/least= are the executor's: the same rows under either face."""
    from zeus_bench.sim.executor import Run, execute
    from zeus_bench.sim.policies.base import scalar_face
    from zeus_bench.sim.rules import noise_generator, seed_generators

    model = JobModel(toy_job(SPREAD), Cost(0.5))
    seeds = list(range(1, 13))

    def drift(rec: int, bi: int) -> float:
        return 1.0 + 0.05 * (rec % 7) * (bi % 3)

    def run(array: bool) -> tuple[list[list[tuple[object, ...]]], list[float]]:
        gens = [seed_generators(s) for s in seeds]
        policies = [ZEUS(_ctx_rng(model, p)) for _, p in gens]
        face = ZEUS.batched(model, policies) if array else scalar_face(model, policies)
        assert isinstance(face, seed_zeus.SeedZeus) == array
        run = Run(1.5, 45, drift, 0.04, first=3, least=900.0)
        tries, least = execute(model, face, [e for e, _ in gens], run, [noise_generator(s) for s in seeds])
        assert sum(len(rows) for rows in tries) >= len(seeds) * 43  # recurrences 3-45, each a row at least
        return [repr(rows) for rows in tries], least.tolist()  # type: ignore[return-value]

    assert run(True) == run(False)


def _ctx_rng(model: JobModel, rng: np.random.Generator, window: int = 0):  # type: ignore[no-untyped-def]
    from zeus_bench.sim.policies import PolicyContext

    return PolicyContext(model.job, model.cost, 1.5, window, rng)


# ----------------------------------------------------------------------------- a window
@pytest.mark.parametrize("window", [2, 3, 7, 50])
def test_windowed_toy_jobs_same_rows(window: int) -> None:
    """The posteriors of each arm's last ``window`` rewards: the face's rows are the scalar face's."""
    for targets in (NOISY, SPREAD):
        model = JobModel(toy_job(targets, b0=32), Cost(0.5))
        for beta in (1.25, 2.0, math.inf):
            assert _same(model, list(range(1, 31)), beta, 80, window) >= 30 * 80


def test_windowed_face_under_drift_and_near_ties_gives_the_scalar_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A drift the window forgets, every decision once from the certified sums, once from the exact posteriors."""
    from zeus_bench.sim.executor import Run, execute
    from zeus_bench.sim.policies.base import scalar_face
    from zeus_bench.sim.rules import seed_generators

    model = JobModel(toy_job(SPREAD), Cost(0.5))
    seeds = list(range(1, 21))

    def drift(rec: int, bi: int) -> float:
        return 3.0 if rec > 30 and bi % 2 else 1.0  # half the batch sizes three times dearer after 30

    def run(array: bool) -> list[str]:
        gens = [seed_generators(s) for s in seeds]
        policies = [ZEUS(_ctx_rng(model, p, 4)) for _, p in gens]
        face = ZEUS.batched(model, policies) if array else scalar_face(model, policies)
        assert isinstance(face, seed_zeus.SeedZeus) == array
        tries, _ = execute(model, face, [e for e, _ in gens], Run(1.5, 90, drift))
        return [repr(rows) for rows in tries]

    scalar = run(False)
    assert run(True) == scalar
    real = seed_bandits.approx_from_sums

    def uncertain(*sums: np.ndarray) -> tuple[np.ndarray, ...]:
        mean, std, c0, c1 = real(*sums)
        return mean, std, np.full_like(c0, 1e300), c1

    monkeypatch.setattr(seed_bandits, "approx_from_sums", uncertain)
    assert run(True) == scalar


def test_window_sums_forget_the_rewards_that_left() -> None:
    """The ring: an arm's sums are those of its last ``window`` rewards, an infinite one's bound gone with it."""
    from zeus_bench.optimizers.posterior import running_sums
    from zeus_bench.optimizers.seed_bandits import SeedThompson

    rng = np.random.default_rng(5)
    start = seed_zeus._Start(
        [0, 1], [running_sums(r) for r in ([-1.0, -np.inf], [-4.0, -5.0])], [[-1.0, -np.inf], [-4.0, -5.0]],
        rng, rng.bit_generator.state,
    )  # fmt: skip
    with np.errstate(invalid="ignore"):  # (inf - inf in the infinite reward's variance)
        th = SeedThompson([start], [0], window=3)
    assert np.isinf(th.c0[0])  # the infinite reward is in the window
    with np.errstate(invalid="ignore"):
        for cost in (2.0, 3.0):
            th.observe(np.array([0]), np.array([cost]))
    assert np.isinf(th.c0[0]) and th.rewards(0, 0) == [-np.inf, -2.0, -3.0]
    th.observe(np.array([0]), np.array([6.0]))
    assert th.rewards(0, 0) == [-2.0, -3.0, -6.0]
    assert th.sums[:, 0, 0].tolist() == running_sums([-2.0, -3.0, -6.0])
    assert np.isfinite(th.c0[0]) and th.mean[0, 0] == -11.0 / 3.0
    th.observe(np.array([1]), np.array([7.0]))
    assert th.sums[:, 0, 1].tolist() == running_sums([-4.0, -5.0, -7.0])
    with np.errstate(invalid="ignore"):
        unbounded = SeedThompson([start], [0])  # no window: every reward, the infinite one kept
        unbounded.observe(np.array([0]), np.array([2.0]))
    assert np.isinf(unbounded.c0[0]) and unbounded.rewards(0, 0) == [-1.0, -np.inf, -2.0]


def test_a_window_below_two_or_windows_that_differ_take_the_scalar_face() -> None:
    """A window of 1 explores at every prediction; one face has one window."""
    model = JobModel(toy_job(SPREAD), Cost(0.5))
    assert isinstance(ZEUS.batched(model, [ZEUS(_ctx(model, s, 1)) for s in range(1, 9)]), ScalarPolicies)
    mixed = [ZEUS(_ctx(model, s, 2 + s % 2)) for s in range(1, 9)]
    assert isinstance(ZEUS.batched(model, mixed), ScalarPolicies)
    assert isinstance(ZEUS.batched(model, [ZEUS(_ctx(model, s, 2)) for s in range(1, 9)]), seed_zeus.SeedZeus)


# ----------------------------------------------------------------------------- pruning rounds
@pytest.mark.parametrize("rounds", [1, 3, 5])
def test_other_pruning_rounds_same_rows(rounds: int) -> None:
    """Any number of pruning rounds (one for every seed), alone and with a window."""
    for targets in (None, NOISY, SPREAD):
        model = JobModel(toy_job(targets, b0=32), Cost(0.5))
        assert _same(model, list(range(1, 26)), 2.0, 70, rounds=rounds) >= 25 * 70
        _same(model, list(range(1, 16)), 1.25, 50, window=3, rounds=rounds)


def test_windows_and_pruning_rounds_on_published_traces_same_rows(zeus_traces: Path) -> None:
    from zeus_bench.traces.jobs import TraceSet

    ts = TraceSet(zeus_traces)
    for gpu in ("v100", "a40"):
        for workload in ts.workload_ids(gpu):
            job = ts.job(gpu, workload)
            model, n = JobModel(job, Cost(0.5)), default_recurrences(job)
            for window, rounds in ((2, PRUNE_ROUNDS), (10, PRUNE_ROUNDS), (0, 1), (0, 4)):
                _same(model, list(range(1, 21)), 2.0, n, window, rounds)


def test_no_pruning_or_rounds_that_differ_take_the_scalar_face() -> None:
    """With no pruning every batch size is an arm still to explore; one face has one number of rounds."""
    model = JobModel(toy_job(SPREAD), Cost(0.5))
    assert isinstance(ZEUS.batched(model, [ZEUS(_ctx(model, s, 0, 0)) for s in range(1, 9)]), ScalarPolicies)
    mixed = [ZEUS(_ctx(model, s, 0, 1 + s % 2)) for s in range(1, 9)]
    assert isinstance(ZEUS.batched(model, mixed), ScalarPolicies)
    assert isinstance(
        ZEUS.batched(model, [ZEUS(_ctx(model, s, 0, 3)) for s in range(1, 9)]), seed_zeus.SeedZeus
    )
    assert _same(model, list(range(1, 9)), 2.0, 30, rounds=3) >= 8 * 30
