"""Moved to zeus_bench.store.frames; re-exported here for one release.

``read_user_table(path, what)`` here is the unvalidated reader
:func:`zeus_bench.store.frames.read_user_file`; :func:`zeus_bench.store.read_user_table` takes a
registered kind instead and validates against it.
"""

from zeus_bench.store.frames import read_user_file
from zeus_bench.store.frames import read_user_file as read_user_table

__all__ = ["read_user_file", "read_user_table"]
