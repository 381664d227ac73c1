"""The ground floor: what every other floor may use, and which imports none of them.

- :mod:`~zeus_bench.core.cost`: the one cost model and the one set of defaults (``DEFAULT_ETA``,
  ``DEFAULT_BETA``) with their checks;
- :mod:`~zeus_bench.core.errors`: the project's exception types (one line and exit status 2);
- :mod:`~zeus_bench.core.fsutil`: atomic writes and checks of outputs before any work;
- :mod:`~zeus_bench.core.provenance`: what every table records about its making;
- :mod:`~zeus_bench.core.faults`: fault injection for the crash-safety tests;
- :mod:`~zeus_bench.core.entry`: the entry points' argument types, bounds and exit.
"""
