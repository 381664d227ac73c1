"""``python -m analysis.report``: write the report (:func:`analysis.report.cli.main`)."""

from analysis.report.cli import main
from zeus_bench.core.entry import exit_command

exit_command(main())
