"""The one HLS C-simulation backend every HLS test module shares (skipped without g++).

It keeps its builds in the user cache like every other HLS and RTL run: a design is
compiled once per machine (xdist workers share it; the backend renames a finished build
into place), not once per test session and worker.
"""

from __future__ import annotations

import pytest

from cosim import HlsCsimBackend


@pytest.fixture(scope="session")
def hls() -> HlsCsimBackend:
    reason = HlsCsimBackend.unavailable()
    if reason:
        pytest.skip(reason)
    return HlsCsimBackend()
