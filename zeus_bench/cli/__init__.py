"""Command-line interface: ``zeus-bench <command>``."""
