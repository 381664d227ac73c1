"""`make test` installs every extra the tests need; `make reproduce` installs the lock's exact versions."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from tests.helpers.optional import EXTRA_OF

REPO = Path(__file__).resolve().parents[2]


def _make_recipe(target: str) -> str:
    text = (REPO / "Makefile").read_text()
    match = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n)+)", text, re.M)
    assert match, target
    return match.group(1)


def test_make_test_installs_every_extra_the_tests_import():
    recipe = _make_recipe("$(VENV)/.test")
    installed = set(re.search(r"\.\[([a-z,]+)\]", recipe).group(1).split(","))
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(EXTRA_OF.values()) <= installed <= set(extras)


def test_reproduce_installs_with_the_lock_of_exact_versions():
    assert "-c $(LOCK)" in _make_recipe("$(VENV)/.core")
    lines = [
        line
        for line in (REPO / "requirements.lock").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert lines and all(re.fullmatch(r"[A-Za-z0-9_.-]+==[^=\s]+", line) for line in lines), lines
    pinned = {line.split("==")[0].lower().replace("_", "-") for line in lines}
    for name in ("numpy", "pandas", "matplotlib", "pyarrow", "snakemake", "fonttools"):
        assert name in pinned, name
        # This checkout's environment is the locked one (the outputs' byte-identity relies on it).
        locked = next(line.split("==")[1] for line in lines if line.lower().startswith(name + "=="))
        assert metadata.version(name) == locked, (name, metadata.version(name), locked)
