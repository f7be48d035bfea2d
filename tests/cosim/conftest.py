"""Fixtures of the cosim tests."""

from __future__ import annotations

import pytest

from cosim import SystemCBackend


@pytest.fixture(scope="module")
def systemc() -> SystemCBackend:
    """The SystemC backend, compiled once per module (skipped where SystemC is missing)."""
    reason = SystemCBackend.unavailable()
    if reason:
        pytest.skip(reason)
    return SystemCBackend()
