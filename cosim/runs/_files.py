"""Files a run writes: safe joins under an output folder, writability checked before the
run, and atomic writes (a temp file renamed into place, so an interrupted run never leaves
a truncated output behind)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["OutputPathError", "safe_join", "writable_dir", "atomic_path", "write_atomic",
           "write_tensor", "path_arg"]


class OutputPathError(OSError):
    """An output path that would leave its folder, or a folder that cannot be written."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "bad output path"


def safe_join(base: str | Path, *parts: str) -> Path:
    """``base/part/…``, refusing any part that is empty, absolute, has a separator or a
    NUL, or is ``.``/``..``: names from a graph or schedule must not choose where a run
    writes."""
    path = Path(base)
    for part in parts:
        if (not isinstance(part, str) or not part or "\0" in part or "/" in part
                or "\\" in part or part in (".", "..") or part.startswith("..")
                or os.path.isabs(part)):
            raise OutputPathError(f"refusing to write {part!r} under {str(base)!r}: a file "
                                  "name must not be empty, absolute, contain '/', '\\', NUL "
                                  "or start with '..'")
        path = path / part
    return path


def path_arg(text: str) -> str:
    """An argparse type for output paths: an empty one (``--output-dir ""``) would
    otherwise read as "not given" and the run would write nothing, exit 0."""
    if not text.strip():
        import argparse

        raise argparse.ArgumentTypeError(f"{text!r}: expected a path, not an empty string")
    return text


def writable_dir(path: str | Path, option: str) -> Path:
    """Create ``path`` (and parents) and check a file can be written there, before any
    long run whose results would otherwise be lost at the end; ``option`` names the flag."""
    text = str(path)
    if "\0" in text:
        raise OutputPathError(f"{option} {text!r}: a path must not contain NUL")
    folder = Path(text)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".samfuse-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputPathError(f"{option} {text!r} is not a writable folder: "
                              f"{exc.strerror or exc}") from None
    return folder


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it is renamed onto ``path``
    (atomic on one file system), on error it is removed and ``path`` is untouched."""
    target = Path(path)
    # the temp name ends in the target's suffix: writers that pick a format by suffix
    # (Graphviz, np.save) write the right thing
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".tmp{target.suffix}",
                               dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o666 & ~_umask())  # mkstemp makes it 0600
        os.replace(tmp_path, target)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically."""
    with atomic_path(path) as tmp:
        if isinstance(data, str):
            tmp.write_text(data, encoding="utf-8")
        else:
            tmp.write_bytes(data)


def write_tensor(tree: Any, folder: str | Path, stem: str) -> Path:
    """Write a tensor as ``sim --input`` reads it back: ``STEM.mtx`` for a sparse matrix
    (every stored entry, explicit zeros too, so a re-run sees the same fibers), else
    ``STEM.npy`` (dense, or not a matrix); atomically. Returns the path."""
    import numpy as np

    sparse = tree.ndim == 2 and not tree.format.all_dense
    path = safe_join(folder, f"{stem}.{'mtx' if sparse else 'npy'}")
    with atomic_path(path) as tmp:
        if sparse:
            tree.to_mtx(tmp)
        else:
            np.save(tmp, tree.to_dense())
    return path
