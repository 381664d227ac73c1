"""Studies over the simulator: arena, cross-fitting, tuning, recurrence bounds, warm-start jobs.

The policy arena and the zeus-plus study (``zeus-bench arena``, ``zeus-bench study``).

A floor above :mod:`zeus_bench.sim`: studies replay policies through the simulator and write their own
tables, whose kinds they own (``arena_schema``, ``coverage_schema``, ``study_schema``, ``validation_schema``, ``warmjobs_schema``; registered on
import of this package).
"""

from zeus_bench.studies import arena_schema, coverage_schema, study_schema, validation_schema, warmjobs_schema

__all__ = ["arena_schema", "coverage_schema", "study_schema", "validation_schema", "warmjobs_schema"]
