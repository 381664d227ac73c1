"""The project's exception types.

Every error a user can cause (bad input, bad config, missing hardware, no permission) is a
:class:`ZeusBenchError`. The CLI turns it into one line on stderr and exit status 2; anything
else is a bug and keeps its traceback.
"""

from __future__ import annotations


class ZeusBenchError(Exception):
    """Base class of every user-facing error; the CLI prints it as one line and exits 2."""


class TraceFormatError(ZeusBenchError):
    """A trace file (CSV or Parquet) is malformed; the message names file, row/column and problem."""


class ConfigError(ZeusBenchError):
    """An impossible or malformed configuration or command-line argument."""


class UnknownWorkloadError(ConfigError):
    """A workload id that is not in the registry (or not in the traces)."""
