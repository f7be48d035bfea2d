"""The RTL netlists of the position-lane primitives (``position_split``, ``lane_combine``,
``lane_combine2``; docs/parallel.md) lint clean. Parity with the Python model is in
tests/parity/test_parity_lanes.py.
"""

from __future__ import annotations

import pytest

from rtl_hls.rtl import generate
from tests._lane_graphs import POSITION_CASES, position_case
from tests.parity._backends import assert_lint_clean as _assert_lint_clean


@pytest.mark.cosim
def test_position_lane_netlists_are_lint_clean(tmp_path):
    for case in ("spmv_3", "spmm_3_int"):
        graph = position_case(*POSITION_CASES[case])[0]
        for open_edges in (False, True):
            _assert_lint_clean(generate(graph, open_edges=open_edges), tmp_path)
