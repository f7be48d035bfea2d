"""The ``samfuse`` command line (``docs/cli.md``): argv in, an exit status and one-line
errors out. Top layer of ``cosim``: it may use the tuning, studies, runs and backends below."""

from ._main import USER_ERRORS, CliError, build_parser, main

__all__ = ["main", "build_parser", "CliError", "USER_ERRORS"]
