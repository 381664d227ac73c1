"""The findings page: the report's Markdown as HTML with its figures embedded (analysis.report_html)."""

from __future__ import annotations

import base64
from pathlib import Path

from analysis.report_html import main, markdown_to_html

REPO = Path(__file__).resolve().parents[2]
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def test_every_construct_of_the_report(tmp_path: Path) -> None:
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "a.png").write_bytes(PNG)
    text = "\n".join(
        [
            "# Title",
            "",
            "**Bold.** A *reading* with `code *not italic*` and a [link](https://x.org) & <tag>.",
            "second line of the paragraph",
            "",
            "| gpu | saving |",
            "|---|---|",
            "| v100 | 74.7 % |",
            "",
            "![potential](figures/a.png)",
            "",
            "## Skipped",
            "",
            "- one",
            "  continued",
            "- two",
        ]
    )
    page = markdown_to_html(text, tmp_path)
    assert "<h1>Title</h1>" in page and "<h2>Skipped</h2>" in page
    assert (
        "<p><strong>Bold.</strong> A <em>reading</em> with <code>code *not italic*</code> and a "
        '<a href="https://x.org">link</a> &amp; &lt;tag&gt;. second line of the paragraph</p>'
    ) in page
    assert "<tr><th>gpu</th><th>saving</th></tr>\n<tr><td>v100</td><td>74.7 %</td></tr>" in page
    assert f'<img alt="potential" src="data:image/png;base64,{base64.b64encode(PNG).decode()}">' in page
    assert "<ul><li>one continued</li><li>two</li></ul>" in page
    missing = markdown_to_html("![gone](figures/gone.png)", tmp_path)
    assert "<em>[figure figures/gone.png missing]</em>" in missing


def test_the_committed_report_embeds_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "findings.html"
    assert main(["--report", str(REPO / "results" / "report.md"), "--out", str(out)]) == 0
    page = out.read_text()
    report = (REPO / "results" / "report.md").read_text()
    assert page.count('src="data:image/png;base64,') == report.count("![") > 20
    assert "missing]" not in page and "|---" not in page


def test_missing_report_is_one_line(tmp_path: Path, capsys) -> None:
    assert main(["--report", str(tmp_path / "no.md"), "--out", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"python -m analysis.report_html: error: --report: {tmp_path / 'no.md'}: no such file"]
    assert not (tmp_path / "x.html").exists()
