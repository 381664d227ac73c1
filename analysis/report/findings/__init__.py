"""The report's findings: pure functions from results tables to numbers and the sentence they support.

Every sentence of ``results/report.md`` that states a number or a direction comes from a
:class:`Finding`. A finding function takes small tables (summary rows, potential rows, ...) and
returns a :class:`Finding` whose ``sentence`` is built from its ``numbers``, so that a test can hand
it a table where the direction flips and check that the sentence flips too.

* :mod:`~analysis.report.findings.traces` -- the traces, the references, the measured GPUs.
* :mod:`~analysis.report.findings.simulation` -- the simulations and the eta/beta sweeps.
* :mod:`~analysis.report.findings.headline` -- the paper's headline numbers, reconciled.
* :mod:`~analysis.report.findings.study` -- the zeus-plus study.
* :mod:`~analysis.report.findings.arena` -- the arena (intervals, safety, rank, folds);
  :mod:`~analysis.report.findings.arena_horizon` -- its horizon-unknown findings.
* :mod:`~analysis.report.findings.cluster` -- the cluster replay (Alibaba job groups).
* :mod:`~analysis.report.findings.claims` -- earlier claims restated as the data support them (the
  same-seed pairing, the anytime floor, the horizon's price, the warm start's goal per job left out).

Findings stated once per GPU, fold or job carry a :attr:`Finding.row`; the report shows them as a
:class:`Table` (a caption naming the horizon and the labels, a row per finding), not as a run of
sentences of one template.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Finding:
    """One computed statement of the report.

    Attributes:
        key: Stable identifier (``"<section>.<what>"``), used by tests and the renderer.
        sentence: The sentence the numbers support (Markdown, one or two sentences).
        numbers: The numbers the sentence states, by name, exactly as they were computed
            (percent values in percent, energies in J, times in s).
        row: The finding as one row of a table (column header -> cell), for findings stated once per
            GPU or job: the report shows those as a :class:`Table` rather than repeating a sentence.
    """

    key: str
    sentence: str
    numbers: Mapping[str, float] = field(default_factory=dict)
    row: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Table:
    """Findings of one template shown as a Markdown table: a caption line, then a row per finding.

    Attributes:
        caption: Fixed text above the table (it names the horizon and the labels the rows share).
        findings: The findings, each with :attr:`Finding.row` cells (the first row's headers lead).
        labels: Each GPU's label (``projected`` for a GPU the project measured); a ``GPU`` cell
            ``g`` is shown as ``g (label)``, ``simulated`` when the GPU has none.
        rows: The rows to show instead of the findings' own (see :meth:`joined`).
    """

    caption: str
    findings: Sequence[Finding]
    labels: Mapping[str, str] = field(default_factory=dict)
    rows: Sequence[Mapping[str, str]] | None = None

    @classmethod
    def joined(
        cls,
        caption: str,
        *groups: Sequence[Finding],
        key: Sequence[str] = ("GPU",),
        labels: Mapping[str, str] | None = None,
    ) -> Table:
        """One row per value of the ``key`` cells (e.g. the GPU), the cells of every group's finding side by side."""
        merged: dict[tuple[str, ...], dict[str, str]] = {}
        for group in groups:
            for f in group:
                if f.row:
                    merged.setdefault(tuple(f.row.get(k, "") for k in key), {}).update(f.row)
        return cls(caption, [f for g in groups for f in g], dict(labels or {}), list(merged.values()))

    def markdown(self) -> str:
        """The caption and the table (empty when there is no row)."""
        rows = list(self.rows) if self.rows is not None else [f.row for f in self.findings if f.row]
        if not rows:
            return ""
        head = list(dict.fromkeys(h for r in rows for h in r))

        def cell(r: Mapping[str, str], h: str) -> str:
            v = r.get(h, "")
            return f"{v} ({self.labels.get(v, 'simulated')})" if h == "GPU" and v else v

        lines = [self.caption, "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(cell(r, h) for h in head) + " |" for r in rows]
        return "\n".join(lines)
