"""The sweep kernels: every hand-built graph computes its numpy reference."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cosim.runs._sweep import SWEEP_KERNELS, kernel_graph
from sim_models.python import simulate


@settings(max_examples=25, deadline=None)
@given(kernel=st.sampled_from(sorted(SWEEP_KERNELS)), size=st.integers(1, 9),
       density=st.sampled_from([0.0, 0.2, 0.6, 1.0]), depth=st.sampled_from([2, 4, None]),
       dtype=st.sampled_from(["float32", "int32"]), seed=st.integers(0, 2**16))
def test_kernel_graph_computes_its_reference(kernel, size, density, depth, dtype, seed):
    graph, inputs = kernel_graph(kernel, size, density, depth, dtype, seed)
    want = SWEEP_KERNELS[kernel].reference({k: v.astype(np.int64) for k, v in inputs.items()})
    got = simulate(graph, inputs).dense()
    np.testing.assert_array_equal(got, want)


def test_inputs_are_seeded_and_respect_density():
    a = kernel_graph("spmv", 40, 0.1, 2, "float32", 3)[1]
    b = kernel_graph("spmv", 40, 0.1, 2, "float32", 3)[1]
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert 0.03 < np.count_nonzero(a["B"]) / a["B"].size < 0.2
    assert np.count_nonzero(a["c"]) == a["c"].size
