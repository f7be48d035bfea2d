"""Fixtures of the parity suites: the backend under test (``backend``, parametrised
indirectly by :func:`_backends.over`), each toolchain compiled once per session and
skipped, with the reason, where its tools are missing."""

from __future__ import annotations

import pytest
from _backends import Under


def _compiled(cls, **kwargs):
    """A toolchain backend, or a skip with the reason its tools are missing."""
    reason = cls.unavailable()
    if reason:
        pytest.skip(reason)
    return cls(**kwargs)


@pytest.fixture(scope="session")
def systemc():
    from cosim import SystemCBackend

    return _compiled(SystemCBackend)


@pytest.fixture(scope="session")
def hls():
    """C-simulation with its builds in the user cache, like every other HLS and RTL run:
    a design compiles once per machine (the xdist workers share it; the backend renames a
    finished build into place), not once per worker."""
    from cosim import HlsCsimBackend

    return _compiled(HlsCsimBackend)


def rtl_simulator(name: str) -> str:
    """``name`` (icarus or verilator), or a skip with the reason it is missing."""
    from rtl_hls.rtl.bench import simulator_missing

    reason = simulator_missing(name)
    if reason:
        pytest.skip(reason)
    return name


@pytest.fixture
def backend(request) -> Under:
    """The backend named by the test's ``backend`` parameter."""
    name = request.param
    if name == "python":
        return Under(name)
    if name in ("systemc", "hls"):
        return Under(name, request.getfixturevalue(name))
    from cosim import RtlBackend

    return Under(name, RtlBackend(rtl_simulator(name.removeprefix("rtl-"))))
