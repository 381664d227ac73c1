"""``python -m analysis.figures``: draw figures (:func:`analysis.figures.cli.main`)."""

from analysis.figures.cli import main
from zeus_bench.core.entry import exit_command

exit_command(main())
