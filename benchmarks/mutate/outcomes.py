"""A module to mutate (``modules.toml``), what its run gave, and the report of every run."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Module:
    """One module to mutate and the fast test files that guard it."""

    name: str
    path: str
    tests: list[str]
    functions: list[str] = field(default_factory=list)
    sample: int = 20
    timeout: float = 120.0
    equivalent: list[dict[str, str]] = field(default_factory=list)
    equivalent_annotations: bool = True


@dataclass
class Outcome:
    """What one module's run gave."""

    module: Module
    sampled: int = 0
    killed: int = 0
    equivalent: int = 0
    survivors: list[str] = field(default_factory=list)
    incompetent: int = 0
    killed_before: int = 0  # with --compare-rev: killed by the older tests alone
    seconds: float = 0.0
    population: int = 0
    error: str = ""

    @property
    def kill_rate(self) -> float:
        """Killed over sampled less the equivalents (nan if none left)."""
        n = self.sampled - self.equivalent - self.incompetent
        return self.killed / n if n > 0 else float("nan")

    @property
    def kill_rate_before(self) -> float:
        """With ``--compare-rev``: the older tests' kills over the same mutants."""
        n = self.sampled - self.equivalent - self.incompetent
        return self.killed_before / n if n > 0 else float("nan")


def pct(rate: float) -> str:
    return f"{100 * rate:.1f}" if rate == rate else ""


def write_report(outcomes: list[Outcome], out: Path, before: bool, total_s: float) -> None:
    """Print the table and the survivors; write them (CSV, and a text file beside it)."""
    header = ["module", "mutants", "sampled", "killed", "equiv", "surv", "rate%"]
    header += ["before%"] if before else []
    print("\n" + " ".join(f"{h:>9}" for h in [*header, "s"]))
    for o in outcomes:
        cells = [o.module.name, o.population, o.sampled, o.killed, o.equivalent, len(o.survivors)]
        cells += [pct(o.kill_rate)] + ([pct(o.kill_rate_before)] if before else [])
        print(
            " ".join(f"{c:>9}" for c in [*cells, f"{o.seconds:.0f}"])
            + (f"  ERROR {o.error}" if o.error else "")
        )
    print(f"total {total_s:.0f} s wall")
    survivors = [s for o in outcomes for s in o.survivors]
    if survivors:
        print("\nsurvivors:")
        for s in survivors:
            print("  " + s)
    out.parent.mkdir(parents=True, exist_ok=True)
    cols = ["module", "path", "mutants", "sampled", "killed", "equivalent", "survived", "kill_rate_pct"]
    with out.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(cols + (["killed_before", "kill_rate_before_pct"] if before else []) + ["seconds"])
        for o in outcomes:
            row: list[object] = [o.module.name, o.module.path, o.population, o.sampled, o.killed]
            row += [o.equivalent, len(o.survivors), pct(o.kill_rate)]
            row += [o.killed_before, pct(o.kill_rate_before)] if before else []
            w.writerow([*row, round(o.seconds)])
    out.with_name("mutation-survivors.txt").write_text("".join(s + "\n" for s in survivors))
