"""Test-wide settings.

Under CI (the ``CI`` environment variable set, as ``.ci/run`` has it) hypothesis runs
derandomized and without its example database, so a landing is decided by the same
examples every time; locally every run explores new ones (the fuzzers found real bugs
that way). Verilator models build at ``-O0`` (``SAMFUSE_VERILATOR_OPT``).
"""

import os

import pytest
from hypothesis import settings

# Verilator models of the suite's small designs compile at -O0: a cold run builds each
# about a third faster, and they simulate for milliseconds (docs/rtl.md)
os.environ.setdefault("SAMFUSE_VERILATOR_OPT", "-O0")

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture
def unchecked_graphs(monkeypatch):
    """Build graphs past the load-time rules on lane splits and output sizes: tests that
    check a backend's own run-time message for such a fault (its defence in depth, and
    the parity of that message with the Python model's) build deliberately broken graphs
    that ``ir.Graph`` now refuses at load (tests/cosim/test_hostile_2.py and
    test_messages.py check the refusals)."""
    from ir import Graph

    monkeypatch.setattr(Graph, "_validate_lane_splits", lambda self: None)
    monkeypatch.setattr(Graph, "_validate_output_sizes", lambda self: None)
