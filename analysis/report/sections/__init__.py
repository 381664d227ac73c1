"""The report's sections: one mixin of :class:`~analysis.report.render.Page` per theme, and the studies' sections.

* :mod:`~analysis.report.sections.traces`, :mod:`~.policies`, :mod:`~.measured` -- the mixins.
* :mod:`~analysis.report.sections.study`, :mod:`~.arena` -- the zeus-plus study's and the arena's
  sections (their tables read, their findings in order).
* :mod:`~analysis.report.sections.evaluation` -- the headline, the cluster replay, Capriccio.
"""

from analysis.report.sections.measured import MeasuredSections
from analysis.report.sections.policies import PolicySections
from analysis.report.sections.traces import TraceSections

__all__ = ["MeasuredSections", "PolicySections", "TraceSections"]
