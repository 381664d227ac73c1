"""The report's sections, one mixin of :class:`~analysis.report.render.Page` per theme."""

from analysis.report.sections.measured import MeasuredSections
from analysis.report.sections.policies import PolicySections
from analysis.report.sections.traces import TraceSections

__all__ = ["MeasuredSections", "PolicySections", "TraceSections"]
