"""Moved to zeus_bench.core.fsutil; re-exported here for one release."""

from zeus_bench.core.fsutil import *  # noqa: F403
from zeus_bench.core.fsutil import (
    atomic_path,
    atomic_write_text,
    check_writable_dir,
    check_writable_file,
    glob_escape,
    remove_partial_writes,
    staged_dir,
)

__all__ = [
    "atomic_path",
    "atomic_write_text",
    "check_writable_dir",
    "check_writable_file",
    "glob_escape",
    "remove_partial_writes",
    "staged_dir",
]
