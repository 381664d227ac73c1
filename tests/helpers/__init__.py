"""Helpers shared by tests of several folders, imported as ``tests.helpers.<module>``.

* :mod:`~tests.helpers.sim_toy` -- small job traces built in memory (``toy_job``).
* :mod:`~tests.helpers.tiny_traces` -- a tiny Zeus-format trace folder on disk.
* :mod:`~tests.helpers.optional` -- skip a test when an optional dependency is missing.
* :mod:`~tests.helpers.gpud_helpers` -- the privileged GPU daemon under test, fake limits.
* :mod:`~tests.helpers.run_as_user` -- run ``zeus-bench`` as another user (also a script).
"""
