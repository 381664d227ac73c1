"""The documentation: every subcommand listed, the measuring example runs, no policies text lost.

The site itself is built strict by `make docs` (CI); these checks need no MkDocs.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import re
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path
from types import ModuleType

import pytest

from zeus_bench.cli.main import build_parser

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
MEASURE_PAGE = REPO / "docs" / "getting-started" / "measure.md"


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", REPO / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _subcommands(parser: argparse.ArgumentParser, prefix: str = "") -> list[str]:
    names: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                names.append(prefix + name)
                names += _subcommands(sub, prefix + name + " ")
    return names


SUBCOMMANDS = _subcommands(build_parser())


def test_the_parser_has_the_subcommands_this_test_knows() -> None:
    assert {"measure", "arena", "study", "gpud", "sweep-merge", "synth-arrivals", "gpu info"} <= set(
        SUBCOMMANDS
    )


@pytest.mark.parametrize("command", SUBCOMMANDS, ids=lambda c: "cmd-" + c.replace(" ", "-"))
def test_readme_and_cli_reference_list_every_subcommand(command: str) -> None:
    readme = README.read_text()
    # In the README's command table as `command` (a group, `traces`, through its subcommands).
    is_group = any(c.startswith(command + " ") for c in SUBCOMMANDS)
    listed = f"`{command} " in readme if is_group else f"`{command}`" in readme
    assert listed, f"README.md does not list `{command}`"
    reference = _hooks().cli_reference()
    assert f"## `zeus-bench {command}`" in reference
    assert re.search(rf"usage: zeus-bench {re.escape(command)}\b", reference)


def test_python_dash_m_is_the_command() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "zeus_bench", "--version"], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0 and out.stdout.startswith("zeus-bench ")


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


def _measure_example(path: Path) -> str:
    (block,) = [b for b in _python_blocks(path) if "EnergyMonitor(gpus)" in b]
    return block


def test_the_measuring_example_is_the_same_in_readme_and_docs_and_short() -> None:
    block = _measure_example(README)
    assert block == _measure_example(MEASURE_PAGE)
    assert len([line for line in block.splitlines() if line.strip()]) <= 12


def test_the_measuring_example_runs_on_the_fake_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZEUS_BENCH_BACKEND", "fake")
    monkeypatch.delenv("ZEUS_BENCH_FAKE_STATE", raising=False)
    import time

    out = io.StringIO()
    with redirect_stdout(out):
        exec(_measure_example(README), {"train_one_epoch": lambda: time.sleep(0.2)})
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    for k, line in enumerate(lines):
        match = re.fullmatch(rf"epoch {k}: (\d+) ± (\d+) J, ([\d.]+) s, (\d+) W", line)
        assert match, line
        energy, _, time_s, power = (float(g) for g in match.groups())
        assert time_s >= 0.2
        assert power == pytest.approx(80.0, abs=4)  # the idle fake GPU draws 80 W
        assert energy == pytest.approx(80.0 * time_s, rel=0.1, abs=1.0)


def test_policies_pages_keep_every_line_of_policies_md() -> None:
    text = (REPO / "docs" / "policies.md").read_text()
    hooks = _hooks()
    intro, sections = hooks.split_sections(text)
    assert len(sections) == text.count("\n## ") and len(sections) >= 10
    pages = intro + "".join(body for _, body in sections)

    def words(s: str) -> list[str]:
        return re.sub(r"^#+ ", "", s, flags=re.M).split()

    assert words(pages) == words(text)
    names = [hooks.slug(h) for h, _ in sections]
    assert len(set(names)) == len(names)
    for page in ("the-policy-interface", "the-replay-rules", "the-arena-protocol"):
        assert page in names  # linked from the getting-started and concept pages


def test_every_docs_page_is_in_the_navigation() -> None:
    nav = (REPO / "mkdocs.yml").read_text()
    pages = [p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs").rglob("*.md")]
    missing = [p for p in pages if p != "policies.md" and f": {p}" not in nav]
    assert not missing, f"docs pages not in mkdocs.yml's nav: {missing}"
