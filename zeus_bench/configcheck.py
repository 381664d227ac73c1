"""Moved to zeus_bench.cli.configcheck; re-exported here for one release."""

from zeus_bench.cli.configcheck import *  # noqa: F403
from zeus_bench.cli.configcheck import (
    check_backends_start,
    check_known,
    check_main_config,
    check_schema,
    check_seeds,
    check_sweep_config,
    check_unique,
    config_source,
    exit_on_error,
    fake_backend_hint,
    known_gpus,
    nearest,
    schema_error_line,
)

__all__ = [
    "check_backends_start",
    "check_known",
    "check_main_config",
    "check_schema",
    "check_seeds",
    "check_sweep_config",
    "check_unique",
    "config_source",
    "exit_on_error",
    "fake_backend_hint",
    "known_gpus",
    "nearest",
    "schema_error_line",
]
