"""Trace-driven simulation of recurring training jobs under energy-optimization policies.

Layers: :mod:`zeus_bench.sim.policies` (pure policies behind one interface, in a registry),
:mod:`zeus_bench.sim.replay` and :mod:`zeus_bench.sim.executor` (the replay loop over a job's seeds
that wires its trace, a policy and the cost and emits one row per try), :mod:`zeus_bench.sim.scenarios.arrivals` (concurrent submissions),
:mod:`zeus_bench.sim.summarize` (savings, regret, convergence) and :mod:`zeus_bench.sim.schema`
(the ``runs`` and ``sim_summary`` tables, registered on import of this package).
"""

from zeus_bench.sim import schema

__all__ = ["schema"]
