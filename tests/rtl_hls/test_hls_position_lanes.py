"""Position lanes in the HLS C++ backend (``position_split``, ``lane_combine``,
``lane_combine2``; docs/parallel.md): compiled graphs with a heavy row split across lanes,
C-simulated with g++, must give the Python model's token on every edge and numpy's result,
float32 on the recording top and int32 on the m_axi top."""

from __future__ import annotations

import numpy as np
import pytest
from test_hls_lanes import _assert_token_exact

from compiler import compile_expression
from ir import load_hw


def _inputs(shapes: dict, dtype: str, seed: int) -> dict[str, np.ndarray]:
    """Small-integer values (exact in any summation order); row 2 of A is full."""
    rng = np.random.default_rng(seed)
    out = {n: (rng.integers(1, 9, s) * (rng.random(s) < 0.4)).astype(dtype)
           for n, s in shapes.items()}
    out["A"][2] = rng.integers(1, 9, shapes["A"][1]).astype(dtype)
    return out


CASES = {
    "spmv": ("y(i) = A(i,k) * x(k)", {"A": "csr"}, {"A": (7, 9), "x": (9,)}, "i,k",
             lambda t: t["A"] @ t["x"], "lane_combine"),
    "spmm": ("X(i,j) = A(i,k) * B(k,j)", {"A": "csr", "X": "csr"},
             {"A": (7, 9), "B": (9, 4)}, "i,k,j", lambda t: t["A"] @ t["B"], "lane_combine2"),
}


@pytest.mark.cosim
@pytest.mark.parametrize("memory", [False, True], ids=["recording", "hbm"])
@pytest.mark.parametrize("lanes", [2, 3])
@pytest.mark.parametrize("case", sorted(CASES))
def test_position_lanes_are_token_exact_and_match_numpy(case, lanes, memory, hls):
    expr, formats, shapes, order, want, combine = CASES[case]
    dtype = "int32" if memory else "float32"
    inputs = _inputs(shapes, dtype, seed=lanes)
    graph = compile_expression(expr, formats, shapes, order=order, par={"i": lanes},
                               partition="position", stats=inputs, dtype=dtype)
    assert {"position_split", combine} <= {n.op for n in graph.nodes.values()}
    _assert_token_exact(graph, inputs, hls, want(inputs), hw=load_hw("hbm2-u280") if memory
                        else None)
