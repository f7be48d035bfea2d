"""Reference RTL of the position-lane primitives (``position_split``, ``lane_combine``,
``lane_combine2``; docs/parallel.md) against the Python model, on compiled SpMV and SpMM
whose heavy row spans lanes: whole graphs cycle for cycle (every edge's tokens, write and
read cycles) and equal numpy, float32 and int32, deep and shallow lane buffers; each
primitive also replays its recorded trace in isolation; the netlists lint clean."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from test_rtl import _assert_lint_clean, _sim
from test_rtl_lanes import _check_whole_graph

from compiler import compile_expression
from rtl_hls.rtl import generate
from tests.parity._backends import assert_replays


def _case(kernel: str, lanes: int, dtype: str = "float32", lane_buffer: int | None = None,
          seed: int = 1):
    rng = np.random.default_rng(seed)
    npt = np.float32 if dtype == "float32" else np.int32
    vals = rng.integers(1, 6, (8, 7)) * (rng.random((8, 7)) < 0.3)
    vals[3] = rng.integers(1, 6, 7)  # the heavy row
    a = sp.csr_matrix(vals.astype(npt))
    if kernel == "spmv":
        other, expr, fmts, order = rng.integers(-4, 6, 7).astype(npt), \
            "y(i) = A(i,k) * x(k)", {"A": "csr"}, "i,k"
        inputs = {"A": a, "x": other}
    else:
        other, expr, fmts, order = rng.integers(-4, 6, (7, 3)).astype(npt), \
            "X(i,j) = A(i,k) * B(k,j)", {"A": "csr", "X": "csr"}, "i,k,j"
        inputs = {"A": a, "B": other}
    graph = compile_expression(expr, fmts, {t: v.shape for t, v in inputs.items()},
                               order=order, par={"i": lanes}, partition="position",
                               lane_buffer=lane_buffer, stats=inputs, dtype=dtype,
                               name=f"{kernel}_position")
    return graph, inputs, a.toarray() @ other


CASES = {"spmv_3": ("spmv", 3, "float32", None), "spmv_4_int": ("spmv", 4, "int32", None),
         "spmm_2": ("spmm", 2, "float32", None), "spmm_3_shallow": ("spmm", 3, "float32", 2),
         "spmm_3_int": ("spmm", 3, "int32", None)}


@pytest.mark.cosim
@pytest.mark.parametrize("case", sorted(CASES))
def test_position_lanes_match_python_cycle_for_cycle_on_icarus(case):
    graph, inputs, gold = _case(*CASES[case])
    assert "position_split" in {n.op for n in graph.nodes.values()}
    _check_whole_graph(graph, inputs, gold, "icarus")


@pytest.mark.cosim
@pytest.mark.parametrize("case", ["spmv_3", "spmm_3_shallow"])
def test_position_lane_primitives_replay_their_traces_cycle_exactly(case):
    graph, inputs, _ = _case(*CASES[case])
    assert_replays(graph, inputs, _sim("icarus"))


@pytest.mark.cosim
def test_position_lane_netlists_are_lint_clean(tmp_path):
    for case in ("spmv_3", "spmm_3_int"):
        graph = _case(*CASES[case])[0]
        for open_edges in (False, True):
            _assert_lint_clean(generate(graph, open_edges=open_edges), tmp_path)
