"""MkDocs hooks (``mkdocs.yml``, ``hooks:``): the pages generated at build time.

* ``reference/cli.md``: every subcommand's ``--help``, from the package's argparse parser
  (:func:`zeus_bench.cli.main.build_parser`), so the reference cannot drift from the code.
* ``reference/results.md``: ``results/README.md``, itself rendered from the table schemas.
* ``policies/*.md``: ``docs/policies.md`` cut into one page per ``##`` section (the file stays one
  file in the repository, where several changes append sections; the site shows it in pages).
  Its first part, before any section, becomes ``policies/index.md`` with a list of the pages.
* ``reference/workflow.md`` and ``how-to/workloads.md``: ``workflows/README.md`` and
  ``workloads/README.md`` as they are.

The navigation entry ``Policies`` of ``mkdocs.yml`` (a placeholder) is filled with the pages.
Nothing is written into ``docs/``: the pages exist only in the build.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # mkdocs is imported by the hooks that MkDocs calls: the tests import the rest
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files

REPO = Path(__file__).resolve().parents[1]
#: Files of the repository shown as pages: repository path -> page path in the site.
INCLUDED = {
    "results/README.md": "reference/results.md",
    "workflows/README.md": "reference/workflow.md",
    "workloads/README.md": "how-to/workloads.md",
    "analysis/README.md": "how-to/add-figure.md",
}
POLICIES = "policies.md"
_FENCE = re.compile(r"^\s*(```|~~~)")


def slug(title: str) -> str:
    """A page name from a heading: its words before any ``(`` or ``:``, lower case, joined by ``-``."""
    words = re.findall(r"[a-z0-9]+", re.split(r"[(:]", title)[0].lower())
    return "-".join(words[:8]) or "section"


def split_sections(text: str) -> tuple[str, list[tuple[str, str]]]:
    """Cut Markdown at its ``##`` headings (outside code fences).

    Returns:
        The part before the first section, and (heading, body with headings raised one level)
        per section.
    """
    intro: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            sections.append((line[3:].strip(), [f"# {line[3:].strip()}"]))
            continue
        if sections:
            raised = line[1:] if not fenced and re.match(r"^#{3,6} ", line) else line
            sections[-1][1].append(raised)
        else:
            intro.append(line)
    return "\n".join(intro) + "\n", [(h, "\n".join(body) + "\n") for h, body in sections]


def _policy_pages(docs_dir: Path) -> list[tuple[str, str, str]]:
    """(title, page path, content) of the policies pages, index first."""
    intro, sections = split_sections((docs_dir / POLICIES).read_text())
    names: list[str] = []
    for heading, _ in sections:
        name = slug(heading)
        while name in names:
            name += "-2"
        names.append(name)
    toc = "\n".join(f"- [{h.replace('`', '')}]({n}.md)" for (h, _), n in zip(sections, names, strict=True))
    index = intro + "\n## Pages\n\n" + toc + "\n"
    pages = [("Overview", "policies/index.md", index)]
    pages += [
        (h.replace("`", ""), f"policies/{n}.md", body) for (h, body), n in zip(sections, names, strict=True)
    ]
    return pages


def _usage(parser: argparse.ArgumentParser, name: str, level: int) -> list[str]:
    """A subcommand's section: its help text as a code block, then its own subcommands."""
    parser.formatter_class = lambda prog: argparse.HelpFormatter(prog, width=100)
    out = [f"{'#' * level} `{name}`", "", "```text", parser.format_help().rstrip(), "```", ""]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                out += _usage(sub, f"{name} {sub_name}", level + 1)
    return out


def cli_reference() -> str:
    """The command-line reference: every subcommand's ``--help``."""
    from zeus_bench.cli.main import build_parser

    parser = build_parser()
    lines = [
        "# Command line",
        "",
        "Generated from the parser of the installed `zeus-bench` (`docs/hooks.py`) when the site is built.",
        "`python -m zeus_bench` is the same command.",
        "",
    ]
    lines += _usage(parser, "zeus-bench", 2)
    return "\n".join(lines) + "\n"


def on_config(config: MkDocsConfig, **_: Any) -> MkDocsConfig:
    """Fill the ``Policies`` placeholder of the navigation with the policies pages."""
    pages = _policy_pages(Path(config.docs_dir))
    nav = config.nav or []
    for k, entry in enumerate(nav):
        if isinstance(entry, dict) and "Policies" in entry:
            nav[k] = {"Policies": [{title: path} for title, path, _ in pages]}
    return config


def on_files(files: Files, config: MkDocsConfig, **_: Any) -> Files:
    """Add the generated pages; ``policies.md`` itself is shown as its pages only."""
    from mkdocs.structure.files import File

    source = files.get_file_from_path(POLICIES)
    if source is not None:
        files.remove(source)
    for _title, path, content in _policy_pages(Path(config.docs_dir)):
        files.append(File.generated(config, path, content=content))
    for repo_path, page in INCLUDED.items():
        files.append(File.generated(config, page, content=(REPO / repo_path).read_text()))
    files.append(File.generated(config, "reference/cli.md", content=cli_reference()))
    return files
