"""``python -m zeus_bench``: the ``zeus-bench`` command (for a venv whose scripts are not on PATH)."""

from zeus_bench.cli.main import run

if __name__ == "__main__":
    run()
