"""The study cache: one JSON file of result rows per run, ``<out>/runs/<key>.json``, named
by the run's key (its configuration, its hardware's numbers and ``code_version()``), written
atomically the moment the run finishes, read back on a re-run, run again when damaged."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ..runs._config import RunConfig
from ..runs._files import write_atomic

__all__ = ["cached_rows", "store_rows", "json_default"]


def json_default(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"not JSON-serialisable: {type(x).__name__}")



def store_rows(path: Path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Write a run's rows to its cache file; the rows as they will be read back."""
    write_atomic(path, json.dumps(rows, indent=1, default=json_default))
    return json.loads(json.dumps(rows, default=json_default))


def cached_rows(path: Path, cfg: RunConfig, version: str) -> list[dict[str, Any]] | None:
    """The rows cached for ``cfg``, or None to run it: no entry, or one that is damaged
    (truncated, emptied, edited: not one row per backend with this run's key and a
    status), which is run again rather than dropped from the table or crashing it."""
    if not path.exists():
        return None
    try:
        rows = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        rows = None
    key = cfg.key(version)
    if not isinstance(rows, list) or not all(
            isinstance(r, dict) and r.get("key") == key and isinstance(r.get("status"), str)
            for r in rows) or {r.get("backend") for r in rows} != set(cfg.backends):
        print(f"samfuse: cache entry {path} is damaged; running it again", file=sys.stderr)
        return None
    return rows
