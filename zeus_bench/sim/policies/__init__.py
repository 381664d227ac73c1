"""Policies of the simulator, behind one small interface, found in a registry.

Importing this package registers the built-in policies: ``zeus``, ``baseline``, ``max-batch``,
``oracle``, ``grid-search``, ``bs-only``, ``pl-only``, ``zeus-plus``, and the standard baselines
``eps-greedy``, ``ucb1``, ``sw-ts``, ``conservative-ucb`` and ``bo-ei``.
"""

from zeus_bench.optimizers.bandit import PruningThompsonSampling
from zeus_bench.optimizers.jit import jit_power_limit
from zeus_bench.sim.policies import baselines as _baselines  # noqa: F401 - registers the bandit baselines
from zeus_bench.sim.policies import bo as _bo  # noqa: F401 - registers bo-ei
from zeus_bench.sim.policies import builtin as _builtin  # noqa: F401 - registers the policies
from zeus_bench.sim.policies import zeus_plus as _zeus_plus  # noqa: F401 - registers zeus-plus
from zeus_bench.sim.policies.base import (
    POLICIES,
    Decision,
    Outcome,
    Policy,
    PolicyContext,
    UnknownPolicyError,
    get_policy,
    register_policy,
)
from zeus_bench.sim.policies.seeds import SeedPolicies

__all__ = [
    "POLICIES",
    "Decision",
    "Outcome",
    "Policy",
    "PolicyContext",
    "PruningThompsonSampling",
    "SeedPolicies",
    "UnknownPolicyError",
    "get_policy",
    "jit_power_limit",
    "register_policy",
]
