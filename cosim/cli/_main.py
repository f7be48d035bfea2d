"""The ``samfuse`` command line: compile, simulate, co-simulate, render, models, a demo.

``main(argv)`` returns an exit status (0 success, 1 an error or a failed check, 2 a usage
error) and never lets a user error escape as a traceback: every error class the project
raises for bad input is caught and printed as one line on stderr (compile errors add the
expression with a caret). ``docs/cli.md`` documents every command.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from compiler import CompileError
from ir import (
    FormatError,
    GraphError,
    HwError,
    ProgramError,
    ScheduleError,
    StorageError,
    TraceFormatError,
)
from sim_models.python import InputError, SimulationError

from ..backends._backend import ToolNotFoundError
from ._args import PROG, CliError
from ._calibrate import add_calibrate_parser
from ._compile import add_compile_parser
from ._demo import add_demo_parsers
from ._fifo_size import add_fifo_size_parser
from ._hw import add_hw_parser
from ._model import add_model_parser
from ._show import add_show_parser
from ._sim import add_sim_parsers
from ._study import add_study_parsers
from ._tune import add_tune_parser

__all__ = ["main", "build_parser", "CliError", "USER_ERRORS"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Compile sparse tensor expressions to "
                                "SAM dataflow graphs and simulate them.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    add_compile_parser(sub)
    add_sim_parsers(sub)
    add_show_parser(sub)
    add_demo_parsers(sub)
    add_hw_parser(sub)
    add_fifo_size_parser(sub)
    add_model_parser(sub, CliError)
    add_study_parsers(sub, CliError)
    add_tune_parser(sub, CliError)
    add_calibrate_parser(sub, CliError)
    return p


#: errors that mean "bad input", printed as one line
USER_ERRORS: tuple[type[BaseException], ...] = (
    CliError, CompileError, GraphError, FormatError, StorageError, TraceFormatError,
    InputError, SimulationError, ToolNotFoundError, ProgramError, ScheduleError, HwError,
    OSError)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``samfuse`` command line; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help or a usage error, already printed by argparse
        return int(exc.code or 0)
    try:
        with _sigterm_as_interrupt():
            return args.func(args)
    except BrokenPipeError:  # stdout closed early (``samfuse compile … | head``)
        _silence_stdout()
        return 0
    except USER_ERRORS as exc:
        print(f"{PROG}: error: {_message(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (``kill``, a batch scheduler's time limit) ends a command like Ctrl-C: the
    finished runs of a study or tuning run are cached, worker pools are shut down, and the
    exit status is 130, instead of dying at once with -15 and leaked semaphores."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail too."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _message(exc: BaseException) -> str:
    if isinstance(exc, CompileError):
        return str(exc)  # the message, then the expression with a caret
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.strerror or exc}: {exc.filename!r}"
    text = str(exc)
    if isinstance(exc, SimulationError) and "\n" in text:
        return text  # a deadlock lists the blocked nodes below its first line
    return text.splitlines()[0] if text else type(exc).__name__


if __name__ == "__main__":
    sys.exit(main())
