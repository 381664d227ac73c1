"""The committed report (results/report.md, `make reproduce`) keeps its shape: short lines, tables not templates."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analysis.report.text import MAX_LINE

REPORT = Path(__file__).resolve().parents[2] / "results" / "report.md"
GPU = re.compile(r"\b[a-zA-Z]+\d+[a-z]*\b")  # a40, V100, h200 (a GPU's name)
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def _template(line: str) -> str:
    """A prose line's first five words with GPU names and numbers masked: lines of one template share it."""
    return " ".join(NUMBER.sub("N", GPU.sub("G", line)).split()[:5])


def repeated_templates(text: str, run: int = 3) -> list[str]:
    """Runs of at least ``run`` consecutive prose lines (below the first screen) that share a template."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if i and ln.startswith("## ")), 0)
    start = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), start)
    out, count, last = [], 0, ""
    for line in lines[start:]:
        if not line.strip() or line.startswith(("|", "#", "![", "*")):
            continue
        key = _template(line)
        count = count + 1 if key == last else 1
        last = key
        if count == run:
            out.append(line[:120])
    return out


def test_the_template_check_finds_a_per_gpu_run() -> None:
    text = "# r\n\n## first\n\n- a40: x\n- v100: x\n- h200: x\n\n## next\n\n" + "\n".join(
        f"On {g}, zeus-plus's mean regret is {v} %." for g, v in (("a40", 2.5), ("v100", 2.3), ("h200", 17.8))
    )
    assert repeated_templates(text) == ["On h200, zeus-plus's mean regret is 17.8 %."]
    assert repeated_templates(text.replace("On h200,", "With h200,")) == []


@pytest.mark.skipif(not REPORT.is_file(), reason="no committed report")
def test_committed_report_lines_and_tables() -> None:
    text = REPORT.read_text()
    long = [(i, len(ln)) for i, ln in enumerate(text.splitlines(), 1) if len(ln) > MAX_LINE]
    assert not long, long
    assert repeated_templates(text) == []
    assert "horizon unknown" in text and "horizon known" in text
