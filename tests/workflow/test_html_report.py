"""Snakemake's HTML report (issue 23): `snakemake --report report.html` holds every committed
figure with its caption and the findings (results/report.md as a page with its figures,
results/findings.html), and the figures load in a real
browser (headless Chromium, Debian's `chromium`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from workflow_helpers import REPO, SNAKEMAKE

from tests.helpers.optional import in_ci

# Appended to the report: once the page (Snakemake's report app) has run, decode every embedded
# result that is an image in the browser and write what loaded, and the app's text (polled until
# the app has drawn its navigation).
PROBE = """<script>
function probe(tries) {
  const app = document.getElementById("app");
  if (!app.textContent.includes("Results") && tries > 0) return setTimeout(() => probe(tries - 1), 200);
  const images = Object.entries(results).filter(([, r]) => r.mime_type.startsWith("image/"));
  const out = {text: document.getElementById("app").textContent, results: {}};
  for (const [path, r] of Object.entries(results)) out.results[path] = {caption: r.caption, width: 0};
  let left = images.length;
  const done = () => {
    const pre = document.createElement("pre");
    pre.id = "probe";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  };
  if (!left) done();
  for (const [path, r] of images) {
    const img = new Image();
    img.onload = () => { out.results[path].width = img.naturalWidth; if (--left === 0) done(); };
    img.onerror = () => { if (--left === 0) done(); };
    img.src = r.data_uri;
  }
}
window.addEventListener("load", () => probe(50));
</script>
"""


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        message = "chromium is not installed (apt-get install -y chromium); the HTML report test needs it"
        if in_ci():
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)
    return path


def _copy_checkout(dest: Path) -> None:
    """The checkout's files as git sees them (committed outputs included; no .snakemake/)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


@pytest.mark.timeout(300)
def test_html_report_holds_every_figure_and_the_findings(tmp_path: Path, zeus_csv_dir: Path) -> None:
    chromium = _chromium()
    work = tmp_path / "checkout"
    _copy_checkout(work)
    env = {**os.environ, "ZEUS_TRACE_DIR": str(zeus_csv_dir)}

    def snakemake(*args: str) -> None:
        out = subprocess.run(
            [str(SNAKEMAKE), *args], cwd=work, env=env, capture_output=True, text=True, timeout=240
        )
        assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]

    # The report needs the DAG past its checkpoints (the traces); everything else is committed.
    snakemake("--cores", "1", "data/traces/zeus", "data/traces/zeus-csv", "data/traces/alibaba")
    # The findings page (results/findings.html, git-ignored), as its rule renders it after
    # `make reproduce`: here from the committed report (the rule would first redo the simulations).
    subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis.report_html",
            "--report",
            "results/report.md",
            "--out",
            "results/findings.html",
        ],
        cwd=work,
        check=True,
        timeout=120,
    )
    findings = (work / "results" / "findings.html").read_text()
    report_md = (REPO / "results" / "report.md").read_text()
    assert findings.count('src="data:image/png;base64,') == report_md.count("![") > 20
    snakemake("--report", "report.html")
    page = work / "probe.html"
    html = (work / "report.html").read_text()
    end = html.rindex("</body>")  # the page's own (the report's scripts hold others in strings)
    page.write_text(html[:end] + PROBE + html[end:])
    dom = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=15000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    probe = json.loads(found.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))

    figures = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "results" / "figures").glob("*.png"))
    assert len(figures) >= 27
    shown = {path: r for path, r in probe["results"].items() if path.endswith(".png")}
    assert sorted(shown) == figures  # every figure, no other
    for path, r in shown.items():
        assert r["width"] > 100, f"{path} did not load in Chromium"
        assert len(re.sub(r"<[^>]+>", "", r["caption"]).strip()) > 40, f"{path} has no caption"
    # The findings are a page (HTML, shown inline), not a Markdown download.
    assert "results/findings.html" in probe["results"] and "results/report.md" not in probe["results"]
    assert "Findings" in probe["text"]
    for category in ("Traces", "Measured GPUs", "Policies"):
        assert category in probe["text"], probe["text"][:2000]
