"""Optional dependencies of tests: skipped on a developer's machine, a failure in CI (``CI=true``).

``make test`` installs every extra its tests need, so in CI a missing one is a broken install:
:func:`require` then fails the test with one line naming the extra that installs the module,
instead of skipping it silently as ``pytest.importorskip`` would.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

#: The pyproject extra that installs each optional module the tests import.
EXTRA_OF = {
    "torch": "workloads",
    "torchvision": "workloads",
    "transformers": "workloads",
    "accelerate": "workloads",
    "soundfile": "workloads",
    "lightning": "lightning",
    "ipywidgets": "notebooks",
}


def in_ci() -> bool:
    """Whether the tests run in continuous integration (``CI=true``)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def require(module: str) -> ModuleType:
    """Import ``module``; missing: skip the test, or fail it in CI naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        extra = EXTRA_OF.get(module, "?")
        message = f"{module} is not installed ({exc}); install the extra: pip install -e '.[{extra}]'"
        if in_ci():
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)
