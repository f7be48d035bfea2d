"""Deep-epilogue orders are safe in every search pass (compiler/_fifo_hazard.py,
docs/compiler.md rule 5): when only deep orders lower and each has a bypass that buffers
a whole fiber, the search pins those FIFOs at a depth that holds the fiber, and the graph
runs at depth 2 on the Python model and SystemC and equals numpy. The accumulators the
check looks for are the catalogue's ``drains_fiber`` primitives, which are exactly the
compute primitives whose Python actors emit nothing before a fiber's stop."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import compile_expression, compile_model, einsum_program
from compiler._errors import LoweringError
from compiler._fifo_hazard import bypasses, deepen_fifos, fifo_hazard
from cosim import get_backend, run_model
from ir import CATALOGUE, COMPUTE_PRIMITIVES, DONE, Edge, Graph, Region, Schedule, Stop, stop
from sim_models.python import DeadlockError, run_primitive, simulate
from tests._kernel_graphs import CHAIN, FORMATS_KEPT
from tests._kernel_graphs import CHAIN_FORMATS as FORMATS
from tests._kernel_graphs import chain_gold as _gold
from tests._kernel_graphs import chain_operands as _operands
from tests._kernel_graphs import chain_shapes as _shapes


def _compiled(ops: dict[str, np.ndarray]):
    program = einsum_program([CHAIN], {t: x.shape for t, x in ops.items()}, FORMATS)
    schedule = Schedule([Region("chain", ["P"], order=["i", "k3", "k"])])
    return compile_model(program, schedule, stats=ops)


def _unpinned(graph: Graph) -> Graph:
    """``graph`` with every FIFO at its compiled depth 2 again, nothing pinned."""
    edges = [Edge(e.src, e.dst, 2 if e.depth is not None else None, e.kind)
             for e in graph.edges]
    return Graph(graph.name, graph.nodes.values(), edges, graph.tensors.values(),
                 graph.dtype, graph.meta)


sizes = st.integers(1, 5)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.tuples(sizes, sizes, sizes, sizes, sizes, sizes), st.sampled_from([0.3, 0.7, 1.0]),
       st.integers(0, 2**16))
def test_a_region_whose_orders_are_all_deep_and_hazardous_runs_at_depth_two(dims, density,
                                                                            seed):
    """The region's only lowering orders are deep with a bypass; the search keeps one,
    with the bypass's FIFOs pinned, and it equals numpy at the compiled depth and at a
    run depth of 2 on the Python model."""
    ops = _operands(_shapes(*dims), FORMATS, density, seed)
    compiled = _compiled(ops)
    kernel = compiled.regions[0].kernels[0]
    assert kernel.order[:3] == ["i", "k3", "k"]
    assert fifo_hazard(kernel.graph) is None
    for depth in ("graph", 2):
        run = run_model(compiled, ops, depth=depth)
        np.testing.assert_allclose(run.outputs["P"], _gold(ops), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("depth", ["graph", 2])
def test_the_deepened_region_runs_on_systemc(depth):
    ops = _operands(_shapes(3, 4, 4, 5, 3, 4), FORMATS, 0.8, 5)
    run = run_model(_compiled(ops), ops, backend="systemc", depth=depth)
    np.testing.assert_allclose(run.outputs["P"], _gold(ops), rtol=1e-5, atol=1e-5)


def test_the_pins_are_what_makes_it_run():
    """Every order the region weighed was deepened (none runs at depth 2 as lowered),
    and the chosen graph without its pins deadlocks at depth 2."""
    ops = _operands(_shapes(3, 4, 4, 5, 3, 4), FORMATS, 1.0, 2)
    graph = _compiled(ops).regions[0].kernels[0].graph
    rows = [r for r in graph.meta["order_search"]["candidates"] if "cost" in r]
    assert rows and all(r.get("fifos_deepened") for r in rows)
    pinned = [e for e in graph.edges if e.pinned]
    assert pinned and all(e.depth > 2 for e in pinned)
    bare = _unpinned(graph)
    assert fifo_hazard(bare) is not None
    with pytest.raises(DeadlockError):
        simulate(bare, ops)
    np.testing.assert_allclose(simulate(graph, ops, depth=2).dense("P"), _gold(ops),
                               rtol=1e-5, atol=1e-5)


def test_compile_expression_deepens_when_every_order_is_hazardous():
    """Without transposes every order of the chain that lowers is deep and hazardous:
    the searched graph is pinned, equals numpy at depth 2 on both models, and says so in
    the order search."""
    shapes = _shapes(3, 4, 4, 5, 3, 4)
    ops = _operands(shapes, FORMATS_KEPT, 0.7, 9)
    graph = compile_expression(CHAIN, FORMATS_KEPT, shapes, transpose=False, stats=ops)
    assert fifo_hazard(graph) is None and any(e.pinned for e in graph.edges)
    assert fifo_hazard(_unpinned(graph)) is not None
    for backend in ("python", "systemc"):
        run = get_backend(backend).run(graph, ops, depth=2)
        np.testing.assert_allclose(run.dense("P"), _gold(ops), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("par", [{"i": 2}, {"j": 2}])
def test_parallel_lanes_keep_the_deepened_fifos(par):
    """The lanes are built after the search: each lane's bypass is pinned as the searched
    graph's was, and the lanes run at depth 2 and equal numpy."""
    shapes = _shapes(3, 4, 4, 5, 3, 4)
    ops = _operands(shapes, FORMATS_KEPT, 0.7, 4)
    graph = compile_expression(CHAIN, FORMATS_KEPT, shapes, transpose=False, stats=ops,
                               par=par)
    assert graph.meta["parallel"]["par"] == par
    assert fifo_hazard(graph) is None and fifo_hazard(_unpinned(graph)) is not None
    np.testing.assert_allclose(simulate(graph, ops, depth=2).dense("P"), _gold(ops),
                               rtol=1e-5, atol=1e-5)


def test_a_fiber_too_long_for_any_fifo_is_one_clear_error():
    """A bypass whose fiber bound exceeds a FIFO's limit cannot be pinned: one line
    naming the fork, the accumulator and the join."""
    ops = _operands(_shapes(3, 4, 4, 5, 3, 4), FORMATS, 1.0, 2)
    graph = _unpinned(_compiled(ops).regions[0].kernels[0].graph)
    bypass = next(b for b in bypasses(graph) if not b.safe)
    with pytest.raises(LoweringError) as exc:
        deepen_fifos(graph, [1000] * len(graph.meta["order"]))
    msg = str(exc.value)
    assert "\n" not in msg
    assert all(name in msg for name in (bypass.fork, bypass.accumulator, bypass.join))


# -- the catalogue's accumulators, from the actors' behaviour ----------------------------

S0, S1, S2, S3, D = stop(0), stop(1), stop(2), stop(3), DONE
#: one drained fiber per compute primitive (the SAM examples of tests/sim)
STREAMS = {
    "alu": {"a": [1.0, 2.0, 3.0, S0, D], "b": [4.0, 5.0, 6.0, S0, D]},
    "unary": {"a": [1.0, -2.0, 3.0, S0, D]},
    "reduce": {"val_in": [1.0, 2.0, S0, S1, D], "outer": [0, S0, D]},
    "spacc": {"crd_in": [3, 1, S0, 1, 2, S1, D], "val_in": [1.0, 2.0, S0, 3.0, 4.0, S1, D]},
    "spacc2": {"crd1_in": [2, 0, S0, 2, S1, D], "crd0_in": [1, S0, 0, S1, 1, 3, S2, D],
               "val_in": [1.0, S0, 2.0, S1, 3.0, 4.0, S2, D]},
    "spacc3": {"crd2_in": [1, 0, S0, 1, S1, D], "crd1_in": [0, 2, S0, 1, S1, 2, S2, D],
               "crd0_in": [2, S0, 0, S1, 1, S2, 0, 3, S3, D],
               "val_in": [1.0, S0, 2.0, S1, 3.0, S2, 4.0, 5.0, S3, D]},
}
PARAMS = {"alu": {"op": "add"}, "unary": {"op": "relu"}, "reduce": {"op": "sum"}}
#: the cycle the first stop of every input (and all after it) is written
LATE = 40


@functools.cache
def drainers() -> frozenset[str]:
    """The compute primitives whose Python actor emits nothing until a stop arrives."""
    out = set()
    for op, streams in STREAMS.items():
        cycles = {}
        for port, toks in streams.items():
            first = next(n for n, t in enumerate(toks) if isinstance(t, Stop))
            cycles[port] = [n if n < first else LATE + n for n in range(len(toks))]
        run = run_primitive(op, streams, params=PARAMS.get(op), input_cycles=cycles)
        if min(c[0] for c in run.cycles.values() if c) > LATE:
            out.add(op)
    return frozenset(out)


def test_every_compute_primitive_is_driven():
    assert set(STREAMS) == set(COMPUTE_PRIMITIVES)


def test_drains_fiber_is_set_on_exactly_the_primitives_that_wait_for_a_stop():
    assert drainers()  # the accumulators exist, and some compute primitives stream
    assert drainers() < set(COMPUTE_PRIMITIVES)
    assert {p.name for p in CATALOGUE.values() if p.drains_fiber} == drainers()


def test_every_bypassed_accumulator_drains_its_fiber():
    """The check's accumulators are drainers: each bypass found in the unpinned graph
    of the hazardous region is around one."""
    ops = _operands(_shapes(3, 4, 4, 5, 3, 4), FORMATS, 1.0, 2)
    graph = _unpinned(_compiled(ops).regions[0].kernels[0].graph)
    found = list(bypasses(graph))
    assert found
    assert {graph.nodes[b.accumulator].op for b in found} <= drainers()
