"""Schemas of the coverage study's tables (``results/policy/coverage*.csv``, :mod:`zeus_bench.studies.coverage`)."""

from __future__ import annotations

from zeus_bench.store import Column, TableSchema, register_schema
from zeus_bench.store.schema import Check

_SETTING = (
    Column(
        "replicates",
        "int",
        "Replicate traces of a half (zeus-bench arena --replicates; 0: seeds alone)",
        example="4",
        checks=("nonnegative",),
    ),
    Column(
        "path_draw",
        "str",
        "How a draw shifts by the path level (zeus-bench arena --path-draw): pick, normal or t",
        example="t",
    ),
)
_SHARE: tuple[Check, ...] = ("nonnegative", "finite")


def _share(name: str, description: str, example: str) -> Column:
    return Column(name, "float", description, example=example, checks=_SHARE)


COVERAGE_WORLDS = register_schema(
    TableSchema(
        kind="policy_coverage_worlds",
        version=1,
        description=(
            "`coverage-worlds.csv`: the coverage study (`python -m zeus_bench.studies.coverage`, docs/policies.md "
            "'Coverage study'), one row per world (a GPU's jobs with synthetic training paths of log standard "
            "deviation `sigma`) and interval setting: how often the 95 % interval of `regret_ratio_vs_zeus` of a "
            "half (the arena's protocol: seeds 1-6, replicate traces on seed 1) holds the world's truth, over its "
            "pairs of halves and the policies whose constants do not differ by fold. Simulated."
        ),
        columns=(
            Column(
                "gpu",
                "str",
                "GPU whose jobs (batch sizes, limits, epoch times, power) make the world",
                example="v100",
            ),
            Column(
                "sigma",
                "float",
                "Log standard deviation of a batch size's epochs to the target",
                example="0.1",
                checks=("positive",),
            ),
            *_SETTING,
            Column(
                "intervals",
                "int",
                "Intervals judged: pairs x 2 halves x policies",
                example="432",
                checks=("positive",),
            ),
            _share("coverage", "Share of the intervals that hold the truth", "0.91"),
            _share("median_width", "Median width of the intervals (x Zeus's regret)", "2.1"),
            _share(
                "truth_halfwidth_median",
                "Median half-width of the truth's own 95 % interval over its seeds (its Monte Carlo error)",
                "0.05",
            ),
            _share(
                "disjoint_share", "Share of (pair, policy) whose two halves' intervals are disjoint", "0.02"
            ),
        ),
        key=("gpu", "sigma", "replicates", "path_draw"),
    )
)

COVERAGE = register_schema(
    TableSchema(
        kind="policy_coverage",
        version=1,
        description=(
            "`coverage.csv`: the coverage study's settings over every world (`policy_coverage_worlds`), and the "
            "one its rule picks (`chosen`; zeus_bench.studies.coverage.choose: the fewest replicate traces, then "
            "pick, normal, t, whose coverage is at least 0.90 in every world; else the highest worst-world "
            "coverage). The arena's workflow runs the chosen setting (config `arena.replicates`, "
            "`arena.path_draw`). Simulated."
        ),
        columns=(
            *_SETTING,
            Column("worlds", "int", "Worlds (GPU x sigma)", example="6", checks=("positive",)),
            _share("coverage_mean", "Mean coverage over the worlds", "0.92"),
            _share("coverage_min", "Coverage of the worst world", "0.90"),
            _share("disjoint_share_mean", "Mean share of pairs whose halves' intervals are disjoint", "0.01"),
            _share("disjoint_share_max", "That share in the worst world", "0.03"),
            _share(
                "median_width",
                "Median over the worlds of their median interval width (x Zeus's regret)",
                "2.1",
            ),
            Column("chosen", "bool", "The rule's pick: True on exactly one row", example="True"),
            Column(
                "rule_met",
                "bool",
                "Whether any setting reaches the coverage the rule asks in every world",
                example="True",
            ),
        ),
        key=("replicates", "path_draw"),
    )
)
