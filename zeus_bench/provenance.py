"""Moved to zeus_bench.core.provenance; re-exported here for one release."""

from zeus_bench.core.provenance import *  # noqa: F403
from zeus_bench.core.provenance import (
    base_provenance,
    git_commit,
    sha256_file,
)

__all__ = [
    "base_provenance",
    "git_commit",
    "sha256_file",
]
