"""A module of the repository that is no package's (a benchmark, a script), imported from its file."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def module_at(path: Path, name: str) -> ModuleType:
    """Import the file ``path`` as module ``name`` (registered in ``sys.modules``: its dataclasses look it up)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
