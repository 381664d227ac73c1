"""Report sections on measurements and references: own GPUs, reference numbers, the policy study, the arena, what was skipped."""

from __future__ import annotations

import pandas as pd

from analysis import metrics
from analysis.report.findings.traces import (
    gpu_caveats,
    own_batch_finding,
    paper_comparable,
    reference_agreement,
    summary_column,
)
from analysis.report.render import Page, figure_link
from analysis.report.sections.arena import labels_of
from analysis.report.sections.arena import section_items as arena_items
from analysis.report.sections.study import section_items as study_items
from analysis.report.text import (
    ORIGINAL_LABEL,
    PAPER_LABEL,
    beta_text,
    gpu_name,
    md_table,
    pct,
)
from analysis.tables import load_all


class MeasuredSections(Page):
    """Sections 9 and on, and what was skipped."""

    def own(self) -> None:
        """The project's own measurements."""
        self.add("## 9. Measured GPUs (this project)", "")
        if not self.args.own:
            self.skipped.append(
                "Measured-GPU figure: no committed sweep traces under `results/traces/<gpu>/` (run the sweep workflow, "
                "`workflows/rules/sweep.smk`, on a GPU)."
            )
            self.add("Skipped: no sweep traces of a measured GPU are committed yet.", "")
            return
        power = load_all(self.args.own)
        per = metrics.per_sample(power)
        if per.empty:
            self.skipped.append(
                "Measured-GPU figure: the committed power traces have no throughput (samples_per_s)."
            )
            return
        self.add(figure_link("measured-gpus", self.figures, "Measured GPUs"), "")
        self.say(gpu_caveats({str(g): list(d["power_limit_w"]) for g, d in per.groupby("gpu")}))
        self.say(
            own_batch_finding(per, self.potential_rows),
            before="Energy per sample and throughput against the batch size, measured by `zeus-bench sweep` in observe "
            "mode (the lender does not allow changing the power limit, so there is no power-limit axis); where the "
            "Zeus train trace is available, the sections above evaluate these GPUs with the batch size as the only "
            "knob."
            + (
                " `h200x2` is data-parallel training on two GPUs."
                if "h200x2" in set(per["gpu"].astype(str))
                else ""
            ),
        )
        best = per.loc[per.groupby(["gpu", "workload"])["energy_per_sample_j"].idxmin()]
        sizes = per.groupby(["gpu", "workload"])["batch_size"]
        keys = list(zip(best["gpu"], best["workload"], strict=True))
        table = pd.DataFrame(
            {
                "GPU": best["gpu"],
                "workload": best["workload"],
                "batch sizes measured": [
                    f"{sizes.nunique()[k]} ({sizes.min()[k]}-{sizes.max()[k]})" for k in keys
                ],
                "least energy per sample at bs": best["batch_size"],
                "energy per sample (J)": best["energy_per_sample_j"].map(lambda v: f"{v:.3g}"),
                "throughput (samples/s)": best["samples_per_s"].map(lambda v: f"{v:.4g}"),
            }
        )
        self.add(md_table(table), "")

    def reference(self) -> None:
        """Reference numbers: the original simulator's outputs and the paper's statements, beside ours."""
        refs = self.references
        if refs.empty:
            return
        summary = self.summary
        self.add("## 10. Reference numbers", "")
        if summary is not None:
            self.say(reference_agreement(summary, refs))
        zeus = (
            summary[summary["policy"] == "zeus"].set_index(["gpu", "workload", "eta", "beta"])
            if summary is not None
            else pd.DataFrame()
        )
        orig = refs[refs["source"] == ORIGINAL_LABEL]
        if not orig.empty:
            keys = ["gpu", "workload", "eta", "beta", "seeds", "baseline"]
            rows = []
            for key, d in orig.groupby(keys, sort=False, dropna=False):
                gpu, workload, eta, beta, seeds, baseline = key
                row = {
                    "GPU": gpu_name(gpu),
                    "workload": workload,
                    "eta / beta / seeds": f"{float(eta):g} / {beta_text(float(beta))} / {seeds}",
                    "against": baseline,
                }
                for r in d.itertuples(index=False):
                    col = summary_column(baseline, r.metric)
                    k = (gpu, workload, float(eta), float(beta))
                    ours = (
                        pct(float(zeus.at[k, col]))
                        if col and col in zeus.columns and k in zeus.index
                        else "n/a"
                    )
                    row[f"{r.metric}: reference / zeus-bench"] = f"{pct(float(r.value_pct))} / {ours}"
                rows.append(row)
            self.add(f"{ORIGINAL_LABEL}:", "", md_table(pd.DataFrame(rows)), "")
        paper = refs[refs["source"] == PAPER_LABEL]
        if not paper.empty:
            rows = []
            for r in paper.itertuples(index=False):
                value, what = paper_comparable(r, self.potential_rows, summary)
                rows.append(
                    {
                        "what the paper states": getattr(r, "statement", "") or r.metric,
                        "GPU": gpu_name(r.gpu),
                        "against": r.baseline,
                        "paper": pct(float(r.value_pct)),
                        "zeus-bench": pct(value) if what else "n/a",
                        "zeus-bench number": what or "none comparable",
                    }
                )
            self.add(f"{PAPER_LABEL}:", "", md_table(pd.DataFrame(rows)), "")

    def skipped_section(self) -> None:
        """What was not done and how to get it."""
        self.add("## What was skipped", "")
        if not self.skipped:
            self.add("Nothing.", "")
            return
        self.add(*[f"- {s}" for s in self.skipped], "")

    def policy_study(self) -> None:
        """The zeus-plus section (:mod:`analysis.report.sections.study`), when the study's tables are given."""
        if self.args.policy_study is not None:
            labels = labels_of(self.args.arena) if self.args.arena is not None else {}
            self.add_items(study_items(self.args.policy_study, self.args.policy_seeds, labels))

    def arena(self) -> None:
        """The arena section (:mod:`analysis.report.sections.arena`), when the arena's tables are given."""
        if self.args.arena is not None:
            self.add_items(
                arena_items(
                    self.args.arena, self.args.arena_unknown, self.args.arena_tuning, self.args.arena_coverage
                )
            )
