"""MLIR's own parse of a file, guarded: parse errors become one ``MlirError`` line, and
a crash of MLIR's C++ parser ends a forked child, not this process.

MLIR's custom op parsers do not check everything they read: ``linalg.reduce … dimensions
= 5`` (anything but a list) is a segmentation fault of the whole interpreter. So each
file is parsed once in a forked child first (a few ms: the module without its resource
blobs, ``_mlir_types.MlirSource``); if the child dies by a signal, the file is refused
with one line, and otherwise it is parsed here. Deep nesting, which overflows the
parser's stack, is refused before either (``MlirSource.check_nesting``).
"""

from __future__ import annotations

import faulthandler
import os
import signal
import time
from typing import Any

from ._mlir_types import MlirError, MlirSource

__all__ = ["parse_module", "PARSE_SECONDS"]

#: how long the child may parse before it is killed (a file up to 1 GiB of literals)
PARSE_SECONDS = 600.0


def parse_module(ir: Any, src: MlirSource) -> tuple[Any, Any]:
    """``(context, module)`` for ``src.text``; raises :class:`MlirError`."""
    _parse_in_child(ir, src)
    ctx = ir.Context()
    try:
        return ctx, ir.Module.parse(src.text, ctx)
    except ir.MLIRError as exc:
        diags = getattr(exc, "error_diagnostics", None) or []
        if diags:
            raise MlirError(diags[0].message.splitlines()[0],
                            where=src.where(diags[0].location)) from None
        raise MlirError(str(exc).splitlines()[-1].strip(), where=src.name) from None


def _parse_in_child(ir: Any, src: MlirSource) -> None:
    """Parse in a forked child; a child killed by a signal refuses the file."""
    if not hasattr(os, "fork"):
        return
    pid = os.fork()
    if pid == 0:  # the child: parse, then leave without Python's exit handlers
        code = 0
        try:
            faulthandler.disable()  # its crash is reported by the parent, in one line
            quiet = os.open(os.devnull, os.O_WRONLY)
            os.dup2(quiet, 1)
            os.dup2(quiet, 2)
            ir.Module.parse(src.text, ir.Context())
        except BaseException:  # noqa: BLE001 - the parent parses again for the message
            code = 1
        os._exit(code)
    status = _wait(pid)
    if os.WIFSIGNALED(status):
        sig = signal.Signals(os.WTERMSIG(status)).name
        raise MlirError(f"MLIR's parser crashed on this file ({sig}): a malformed op its "
                        "parser does not check; refused", where=src.name)


def _wait(pid: int) -> int:
    """The child's exit status; killed after :data:`PARSE_SECONDS`."""
    deadline, pause = time.monotonic() + PARSE_SECONDS, 1e-4
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise MlirError(f"MLIR's parser did not finish within {PARSE_SECONDS:.0f} s")
        time.sleep(pause)
        pause = min(pause * 2, 0.01)
