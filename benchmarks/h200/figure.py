"""Render results/traces/h200/sweep.{png,pdf} from the committed H200 traces."""

from pathlib import Path

import pandas as pd

from analysis.plots.sweeps import plot_sweep
from zeus_bench.store import read_table

HERE = Path(__file__).resolve().parents[2] / "results" / "traces" / "h200"
df = pd.concat([read_table(f, "power") for f in sorted(HERE.glob("power-*.parquet"))], ignore_index=True)
fig = plot_sweep(
    df,
    title="Synthetic-data training on NVIDIA H200 at its current 700 W limit (observe mode, v2: bf16, repeated windows)",
)
for ext in ("png", "pdf"):
    fig.savefig(HERE / f"sweep.{ext}", dpi=200)
print("wrote", HERE / "sweep.png", HERE / "sweep.pdf")
