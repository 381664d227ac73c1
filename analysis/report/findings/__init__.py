"""The report's findings: pure functions from results tables to numbers and the sentence they support.

Every sentence of ``results/report.md`` that states a number or a direction comes from a
:class:`Finding`. A finding function takes small tables (summary rows, potential rows, ...) and
returns a :class:`Finding` whose ``sentence`` is built from its ``numbers``, so that a test can hand
it a table where the direction flips and check that the sentence flips too.

* :mod:`~analysis.report.findings.traces` -- the traces, the references, the measured GPUs.
* :mod:`~analysis.report.findings.simulation` -- the simulations and the eta/beta sweeps.
* :mod:`~analysis.report.findings.headline` -- the paper's headline numbers, reconciled.
* :mod:`~analysis.report.findings.study` -- the zeus-plus study.
* :mod:`~analysis.report.findings.arena` -- the arena (intervals, safety, rank, folds).
* :mod:`~analysis.report.findings.cluster` -- the cluster replay (Alibaba job groups).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Finding:
    """One computed statement of the report.

    Attributes:
        key: Stable identifier (``"<section>.<what>"``), used by tests and the renderer.
        sentence: The sentence the numbers support (Markdown, one or two sentences).
        numbers: The numbers the sentence states, by name, exactly as they were computed
            (percent values in percent, energies in J, times in s).
    """

    key: str
    sentence: str
    numbers: Mapping[str, float] = field(default_factory=dict)
