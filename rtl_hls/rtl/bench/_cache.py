"""A bound on the RTL build cache: least recently used builds go first.

Every distinct netlist is a build directory (a Verilator build is ~100 MB), and nothing
ever removed one: a few sessions of parity runs filled a 250 GB disk. After each build
the cache is trimmed to ``$SAMFUSE_RTL_CACHE_GB`` (default 40 GB, 0 = no bound) by
removing the builds used longest ago. A build used within the last
:data:`MIN_IDLE_SECONDS`, or locked by a build in progress, is never removed, so a
parallel test run never loses the build it is about to run.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from pathlib import Path

USED = ".used"    # touched on every use: its mtime orders the builds
SIZE = ".bytes"   # the build's size, measured once after it is built
MIN_IDLE_SECONDS = 1800
DEFAULT_LIMIT_GB = 40.0


def limit_bytes() -> int | None:
    """The bound from ``$SAMFUSE_RTL_CACHE_GB``; None when it is 0 (unbounded)."""
    raw = os.environ.get("SAMFUSE_RTL_CACHE_GB", "")
    try:
        gb = float(raw) if raw.strip() else DEFAULT_LIMIT_GB
    except ValueError:
        raise ValueError(f"SAMFUSE_RTL_CACHE_GB={raw!r} is not a number of gigabytes") from None
    if not gb >= 0:
        raise ValueError(f"SAMFUSE_RTL_CACHE_GB={raw!r} must be ≥ 0")
    return None if gb == 0 else int(gb * 1e9)


def mark_used(build_dir: Path) -> None:
    """Record a use of ``build_dir`` (after its build, before its run)."""
    (build_dir / USED).touch()


def build_bytes(build_dir: Path) -> int:
    """The build's size on disk, measured once and remembered beside it."""
    stamp = build_dir / SIZE
    try:
        return int(stamp.read_text())
    except (OSError, ValueError):
        pass
    files = (p for p in build_dir.rglob("*") if p.is_file() and not p.is_symlink())
    total = sum(p.stat().st_size for p in files)
    try:
        stamp.write_text(str(total))
    except OSError:
        pass
    return total


def _last_use(build_dir: Path) -> float:
    for name in (USED, ".lock"):
        try:
            return (build_dir / name).stat().st_mtime
        except OSError:
            continue
    return build_dir.stat().st_mtime


def trim(root: Path, limit: int | None = None, now: float | None = None) -> list[Path]:
    """Remove least recently used builds under ``root`` (``<sim>/<build>``) until the
    total is within ``limit`` bytes; return what was removed."""
    limit = limit_bytes() if limit is None else limit
    if limit is None or not root.is_dir():
        return []
    now = time.time() if now is None else now
    builds = [d for sim in root.iterdir() if sim.is_dir() for d in sim.iterdir() if d.is_dir()]
    sizes = {d: build_bytes(d) for d in builds}
    total = sum(sizes.values())
    removed: list[Path] = []
    for build in sorted(builds, key=_last_use):
        if total <= limit:
            break
        if now - _last_use(build) < MIN_IDLE_SECONDS:
            break  # everything after it is more recent still
        try:
            with open(build / ".lock", "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(build, ignore_errors=True)
        except OSError:
            continue  # a build in progress holds it
        total -= sizes[build]
        removed.append(build)
    return removed
