"""Print the README's table of the committed H200 trace and its confidence summary (Markdown)."""

from pathlib import Path

from analysis.plots.sweeps import markdown_table
from zeus_bench.store import read_table

TRACE = Path(__file__).resolve().parents[2] / "results" / "traces" / "h200" / "power-h200.parquet"
df = read_table(TRACE, "power")
print(markdown_table(df))
met = df["ci_met"].astype(bool)
print(f"\n{int(met.sum())} of {len(df)} points below 1 %; {int((~met).sum())} flagged.")
med = df.groupby("dataset")["energy_per_sample_ci_rel"].median().mul(100).round(2)
print("median energy-per-sample half-width (%):", med.to_dict())
print(f"average power: {df['avg_power_w'].min():.1f}-{df['avg_power_w'].max():.1f} W;")
print(
    f"power half-width: median {df['avg_power_ci_w'].median():.1f} W, max {df['avg_power_ci_w'].max():.1f} W"
)
