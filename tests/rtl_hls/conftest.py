"""The one HLS C-simulation backend every HLS test module shares (skipped without g++)."""

from __future__ import annotations

import pytest

from cosim import HlsCsimBackend


@pytest.fixture(scope="session")
def hls(tmp_path_factory) -> HlsCsimBackend:
    reason = HlsCsimBackend.unavailable()
    if reason:
        pytest.skip(reason)
    return HlsCsimBackend(cache_dir=tmp_path_factory.mktemp("hls-cache"))
