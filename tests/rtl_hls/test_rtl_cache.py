"""The RTL build cache's bound: least recently used builds go first, recent or locked
builds stay (no simulator needed: builds are directories of known size)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from rtl_hls.rtl.bench import _cache


def _build(root: Path, name: str, size: int, used: float) -> Path:
    d = root / "verilator" / name
    d.mkdir(parents=True)
    (d / "model.bin").write_bytes(b"x" * size)
    (d / ".lock").touch()
    (d / _cache.USED).touch()
    os.utime(d / _cache.USED, (used, used))
    return d


def test_trim_removes_least_recently_used_first(tmp_path: Path) -> None:
    now = 1_000_000.0
    old = _build(tmp_path, "old", 400, now - 9000)
    mid = _build(tmp_path, "mid", 400, now - 5000)
    new = _build(tmp_path, "new", 400, now - 4000)
    removed = _cache.trim(tmp_path, limit=900, now=now)
    assert removed == [old]
    assert not old.exists() and mid.exists() and new.exists()
    assert _cache.trim(tmp_path, limit=900, now=now) == []


def test_recent_builds_are_kept_over_the_bound(tmp_path: Path) -> None:
    now = 1_000_000.0
    recent = [_build(tmp_path, f"b{i}", 500, now - 60 * i) for i in range(3)]
    assert _cache.trim(tmp_path, limit=100, now=now) == []
    assert all(d.exists() for d in recent)


def test_a_locked_build_is_skipped(tmp_path: Path) -> None:
    now = 1_000_000.0
    busy = _build(tmp_path, "busy", 500, now - 9000)
    idle = _build(tmp_path, "idle", 500, now - 8000)
    with open(busy / ".lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert _cache.trim(tmp_path, limit=600, now=now) == [idle]
    assert busy.exists()


def test_size_is_measured_once(tmp_path: Path) -> None:
    d = _build(tmp_path, "b", 1234, 0.0)
    assert _cache.build_bytes(d) == 1234 + 0  # stamps are empty files
    (d / "more.bin").write_bytes(b"y" * 10)
    assert _cache.build_bytes(d) == 1234  # remembered


@pytest.mark.parametrize("raw, expected", [("", int(40e9)), ("0", None), ("1.5", int(1.5e9))])
def test_limit_from_environment(monkeypatch: pytest.MonkeyPatch, raw: str,
                                expected: int | None) -> None:
    monkeypatch.setenv("SAMFUSE_RTL_CACHE_GB", raw)
    assert _cache.limit_bytes() == expected


@pytest.mark.parametrize("raw", ["lots", "-1", "nan"])
def test_bad_limit_is_one_clear_error(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("SAMFUSE_RTL_CACHE_GB", raw)
    with pytest.raises(ValueError, match="SAMFUSE_RTL_CACHE_GB"):
        _cache.limit_bytes()
