"""``python -m analysis.report_html``: the findings (``results/report.md``) as one HTML page.

``snakemake --report`` shows an HTML result as a page, but a Markdown one only as a download,
whose figure links (``figures/<name>.png``) do not resolve there. This renders the report's
Markdown (the subset :mod:`analysis.report` writes: headings, paragraphs, bullet lists, pipe
tables, images, links, ``**bold**``, ``*italics*`` and ``code``) into a page that embeds every
figure it shows as a data URI, so it works inside the Snakemake report or opened alone. The page
is derived (git-ignored), written by the workflow's ``report_html`` rule.
"""

from __future__ import annotations

import argparse
import base64
import html
import logging
import mimetypes
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from zeus_bench.core.fsutil import atomic_write_text

log = logging.getLogger(__name__)

_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ITALIC = re.compile(r"(?<![*\w])\*(?!\s)(.+?)(?<!\s)\*(?![*\w])")
_STYLE = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;line-height:1.45}
table{border-collapse:collapse;margin:1em 0;font-size:90%}th,td{border:1px solid #ccc;padding:.2em .5em}
th{background:#f3f3f3}td{text-align:right}td:first-child{text-align:left}img{max-width:100%}
code{background:#f3f3f3;padding:0 .2em}"""


def data_uri(path: Path) -> str:
    """``path``'s bytes as a ``data:`` URI (its type from the file name)."""
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def inline(text: str, base: Path) -> str:
    """One line of Markdown as HTML: code spans first (their content is left as written)."""
    codes: list[str] = []

    def keep(m: re.Match[str]) -> str:
        codes.append(f"<code>{html.escape(m.group(1))}</code>")
        return f"\x00{len(codes) - 1}\x00"

    out = html.escape(_CODE.sub(keep, text), quote=False)

    def image(m: re.Match[str]) -> str:
        alt, src = m.group(1), html.unescape(m.group(2))
        path = base / src
        if not path.is_file():
            log.warning("%s: figure not found; the page shows its caption only", path)
            return f"<em>[figure {html.escape(src)} missing]</em>"
        return f'<img alt="{html.escape(alt)}" src="{data_uri(path)}">'

    out = _IMAGE.sub(image, out)
    out = _LINK.sub(lambda m: f'<a href="{m.group(2)}">{m.group(1)}</a>', out)
    out = _BOLD.sub(r"<strong>\1</strong>", out)
    out = _ITALIC.sub(r"<em>\1</em>", out)
    return re.sub("\x00(\\d+)\x00", lambda m: codes[int(m.group(1))], out)


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def _table(rows: list[str], base: Path) -> str:
    head, body = _cells(rows[0]), [r for r in rows[1:] if not re.fullmatch(r"[|:\-\s]+", r)]
    out = ["<table>", "<tr>" + "".join(f"<th>{inline(c, base)}</th>" for c in head) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{inline(c, base)}</td>" for c in _cells(r)) + "</tr>" for r in body]
    return "\n".join([*out, "</table>"])


def markdown_to_html(text: str, base: Path, title: str = "zeus-bench findings") -> str:
    """The report's Markdown as a whole HTML page; figures are read from ``base`` and embedded."""
    out: list[str] = []
    block: list[str] = []
    kind = ""  # "p", "ul" or "table": what ``block`` holds

    def flush() -> None:
        nonlocal kind
        if kind == "p":
            out.append("<p>" + " ".join(inline(line, base) for line in block) + "</p>")
        elif kind == "ul":
            out.append("<ul>" + "".join(f"<li>{inline(item, base)}</li>" for item in block) + "</ul>")
        elif kind == "table":
            out.append(_table(block, base))
        block.clear()
        kind = ""

    for line in text.splitlines():
        heading = re.match(r"(#{1,6}) (.*)", line)
        new = (
            "table"
            if line.startswith("|")
            else "ul"
            if line.startswith("- ")
            else ""
            if heading or not line.strip()
            else "p"
        )
        wrapped = kind == "ul" and new == "p" and line.startswith("  ")  # a list item's next line
        if (new != kind or new == "") and not wrapped:
            flush()
        if heading:
            level = len(heading.group(1))
            out.append(f"<h{level}>{inline(heading.group(2), base)}</h{level}>")
        elif new == "ul":
            block.append(line[2:])
        elif wrapped:
            block[-1] += " " + line.strip()
            continue
        elif new:
            block.append(line)
        kind = new if new else kind
    flush()
    head = f'<meta charset="utf-8"><title>{html.escape(title)}</title><style>{_STYLE}</style>'
    return f"<!DOCTYPE html>\n<html><head>{head}</head><body>\n" + "\n".join(out) + "\n</body></html>\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Write ``--out`` from ``--report``; a missing report is one line and status 2."""
    p = argparse.ArgumentParser(prog="python -m analysis.report_html", description=__doc__.splitlines()[0])
    p.add_argument("--report", type=Path, required=True, help="the report's Markdown (results/report.md)")
    p.add_argument("--out", type=Path, required=True, help="the HTML page to write")
    args = p.parse_args(argv)
    if not args.report.is_file():
        print(
            f"python -m analysis.report_html: error: --report: {args.report}: no such file", file=sys.stderr
        )
        return 2
    page = markdown_to_html(args.report.read_text(), args.report.parent)
    atomic_write_text(args.out, page)
    log.info("wrote %s (%d kB)", args.out, len(page) // 1024)
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    from zeus_bench.core.entry import exit_command

    exit_command(main())
