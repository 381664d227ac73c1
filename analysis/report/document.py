"""The whole report: every section in order (:class:`Report`)."""

from __future__ import annotations

from analysis.report.sections import MeasuredSections, PolicySections, TraceSections, evaluation
from analysis.report.sections.paper_map import paper_map
from analysis.report.text import wrap_long_lines


class Report(TraceSections, PolicySections, MeasuredSections):
    """Reads the results files once and lays out the sections; every sentence with a number is a Finding."""

    def render(self) -> str:
        """Build every section."""
        self.header()
        for section in (
            lambda: evaluation.headline(self),
            lambda: paper_map(self),
            self.potential,
            self.pareto,
            self.policies,
            self.ablation,
            self.convergence,
            self.sweeps,
            self.power_profiles,
            self.own,
            self.reference,
            self.policy_study,
            self.arena,
            lambda: evaluation.cluster(self),
            lambda: evaluation.capriccio(self),
        ):
            section()
        self.skipped_section()
        return wrap_long_lines("\n".join(self.parts).rstrip()) + "\n"
