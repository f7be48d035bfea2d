"""SystemC backend against the Python reference model: token-for-token, cycle-for-cycle.

Every hypothesis example runs one graph at FIFO depths 1, 2, 4 and unbounded as one batch
(one forked SystemC child, one elaboration) and requires, for each depth, equal traces
(tokens and write cycles on every edge), equal cycle counts, node statistics and FIFO
occupancies, and equal output tensors. Deadlocks and stream errors must give the same
report as the Python model.
"""

from __future__ import annotations

import re
import time

import numpy as np
import pytest
from _parity import assert_same_result, python_run
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import compile_expression
from cosim import (
    BACKENDS,
    PythonBackend,
    SystemCBackend,
    SystemCError,
    SystemCRun,
    compare_backends,
)
from ir import CATALOGUE, GraphBuilder, examples
from sim_models.python import DeadlockError, InputError, SimulationError, simulate

pytestmark = pytest.mark.cosim

DEPTHS = (1, 2, 4, None)
DIM = st.integers(1, 5)
DENSITY = st.sampled_from([0.0, 0.3, 0.6, 1.0])
MATRIX_FMT = st.sampled_from(["dc", "cc", "dd"])
DTYPE = st.sampled_from(["float32", "int32"])
SEED = st.integers(0, 2**16)
SETTINGS = settings(max_examples=20, deadline=None)
#: example kernels with a parity test below (a new example must get one)
COVERED_KERNELS = {"spmv", "spmm_ijk", "spmm_ikj", "spmm_kij", "sddmm", "elementwise", "ttv",
                   "row_scale", "masked_dense"}



def _rand(seed: int, shape, density: float, dtype: str) -> np.ndarray:
    """Non-integer floats (so rounding is exercised) or full-range int32 (so is wrap)."""
    rng = np.random.default_rng(seed)
    if dtype == "float32":
        vals = rng.standard_normal(shape).astype(np.float32)
        vals[vals == 0] = 1
    else:
        vals = rng.integers(-2**31, 2**31, size=shape, dtype=np.int64).astype(np.int32)
        vals[vals == 0] = 7
    return np.where(rng.random(shape) < density, vals, 0).astype(vals.dtype)


def _assert_same(graph, inputs, depth, sc) -> None:
    """SystemC result ``sc`` equals the Python model's, down to every token's cycle."""
    assert_same_result(python_run(graph, inputs, depth), sc,
                       f"{graph.name} ({graph.dtype}, depth={depth})")


def _check(systemc, graph, inputs, depths=DEPTHS) -> None:
    results = systemc.run_batch([SystemCRun(graph, inputs, trace=True, depth=d)
                                 for d in depths])
    for depth, sc in zip(depths, results, strict=True):
        _assert_same(graph, inputs, depth, sc)


# -- the catalogue ----------------------------------------------------------------------

def test_every_catalogue_primitive_has_a_systemc_model(systemc):
    from cosim.backends._systemc_child import prepare

    drv = prepare()
    for op, prim in CATALOGUE.items():
        assert [p for p in str(drv.ports(op, True)).split(",") if p] == \
            [p.name for p in prim.inputs], op
        assert [p for p in str(drv.ports(op, False)).split(",") if p] == \
            [p.name for p in prim.outputs], op
    assert str(drv.ports("no_such_primitive", True)) == ""


# -- parity on every example kernel -------------------------------------------------------

def test_every_example_kernel_has_a_parity_test():
    assert set(examples.KERNELS) == COVERED_KERNELS


@SETTINGS
@given(m=DIM, n=DIM, d=DENSITY, fmt=MATRIX_FMT, dtype=DTYPE, seed=SEED)
def test_spmv_parity(systemc, m, n, d, fmt, dtype, seed):
    inputs = {"B": _rand(seed, (m, n), d, dtype), "c": _rand(seed + 1, (n,), 1.0, dtype)}
    _check(systemc, examples.spmv(m, n, fmt, dtype=dtype), inputs)


@SETTINGS
@given(m=DIM, k=DIM, n=DIM, d=DENSITY, fmt=MATRIX_FMT, dtype=DTYPE, seed=SEED)
def test_spmm_inner_product_parity(systemc, m, k, n, d, fmt, dtype, seed):
    inputs = {"B": _rand(seed, (m, k), d, dtype), "C": _rand(seed + 1, (k, n), d, dtype)}
    _check(systemc, examples.spmm_ijk(m, k, n, fmt, dtype=dtype), inputs)


@SETTINGS
@given(m=DIM, k=DIM, n=DIM, d=DENSITY, bf=MATRIX_FMT, cf=MATRIX_FMT, dtype=DTYPE, seed=SEED)
def test_spmm_gustavson_parity(systemc, m, k, n, d, bf, cf, dtype, seed):
    inputs = {"B": _rand(seed, (m, k), d, dtype), "C": _rand(seed + 1, (k, n), d, dtype)}
    _check(systemc, examples.spmm_ikj(m, k, n, bf, cf, dtype=dtype), inputs)


@SETTINGS
@given(m=DIM, k=DIM, n=DIM, d=DENSITY, dtype=DTYPE, seed=SEED)
def test_spmm_outer_product_parity(systemc, m, k, n, d, dtype, seed):
    inputs = {"B": _rand(seed, (m, k), d, dtype), "C": _rand(seed + 1, (k, n), d, dtype)}
    _check(systemc, examples.spmm_kij(m, k, n, dtype=dtype), inputs)


@SETTINGS
@given(m=DIM, n=DIM, k=DIM, d=DENSITY, fmt=MATRIX_FMT, dtype=DTYPE, seed=SEED)
def test_sddmm_parity(systemc, m, n, k, d, fmt, dtype, seed):
    inputs = {"B": _rand(seed, (m, n), d, dtype), "C": _rand(seed + 1, (m, k), 1.0, dtype),
              "D": _rand(seed + 2, (k, n), 1.0, dtype)}
    _check(systemc, examples.sddmm(m, n, k, fmt, dtype=dtype), inputs)


@SETTINGS
@given(m=DIM, n=DIM, d=DENSITY, op=st.sampled_from(["add", "sub", "mul", "max", "min", "div"]),
       af=MATRIX_FMT, bf=MATRIX_FMT, of=st.sampled_from(["dc", "cc"]), dtype=DTYPE, seed=SEED)
def test_elementwise_parity(systemc, m, n, d, op, af, bf, of, dtype, seed):
    inputs = {"A": _rand(seed, (m, n), d, dtype), "B": _rand(seed + 1, (m, n), d, dtype)}
    _check(systemc, examples.elementwise(m, n, op, af, bf, of, dtype=dtype), inputs)


@SETTINGS
@given(m=DIM, n=DIM, p=DIM, d=DENSITY, fmt=st.sampled_from(["dcc", "ccc", "ddd", "dcd"]),
       dtype=DTYPE, seed=SEED)
def test_ttv_parity(systemc, m, n, p, d, fmt, dtype, seed):
    inputs = {"B": _rand(seed, (m, n, p), d, dtype), "c": _rand(seed + 1, (p,), 1.0, dtype)}
    _check(systemc, examples.ttv(m, n, p, fmt, dtype=dtype), inputs)


def _row_scale_reference(A: np.ndarray) -> np.ndarray:
    """A(i,j) * sum_j' A(i,j'), summed left to right in the graph's arithmetic: float32
    rounding after every add, int32 wrapping."""
    if A.dtype == np.float32:
        rowsum = np.cumsum(A, axis=1, dtype=np.float32)[:, -1:]
        return A * rowsum

    def wrap(x: np.ndarray) -> np.ndarray:
        return (x + 2**31) % 2**32 - 2**31

    rowsum = wrap(A.astype(np.int64).sum(axis=1, keepdims=True))
    return wrap(A.astype(np.int64) * rowsum).astype(np.int32)


@SETTINGS
@given(m=DIM, n=DIM, d=DENSITY, fmt=MATRIX_FMT, dtype=DTYPE, seed=SEED)
def test_row_scale_broadcast_parity(systemc, m, n, d, fmt, dtype, seed):
    """A reduce's row sum broadcast over the row's j crds (factored iteration): parity at
    every depth (depth 1 mostly deadlocks, like spmv, with the same report) and the
    numpy result."""
    A = _rand(seed, (m, n), d, dtype)
    graph = examples.row_scale(m, n, fmt, dtype=dtype)
    _check(systemc, graph, {"A": A})
    got = systemc.run(graph, {"A": A}).dense("X")
    want = _row_scale_reference(A)
    if dtype == "float32":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    else:
        np.testing.assert_array_equal(got, want)


#: compiled expressions whose default order hoists reductions (factored iteration)
FACTORED = {
    "softmax": "Y(i,j) = exp(Z(i,j) - max(j2) Z(i,j2)) / sum(j3) exp(Z(i,j3) - max(j4) Z(i,j4))",
    "row_stats": "Y(i,j) = Z(i,j) - max(j2) Z(i,j2) + sum(k) C(i,k) * d(k)",
}


@pytest.mark.parametrize("name", sorted(FACTORED))
@settings(max_examples=8, deadline=None)
@given(m=DIM, n=st.integers(2, 5), d=DENSITY, fmt=st.sampled_from(["dense", "csr"]),
       seed=SEED)
def test_compiled_factored_iteration_parity(systemc, name, m, n, d, fmt, seed):
    """Broadcasts of hoisted reductions in compiled graphs: SystemC equals the Python
    model at every depth, and the Python model equals numpy. (Rows of one column cost
    the same in every order, so hoisting needs n >= 2.)"""
    inputs = {"Z": _rand(seed, (m, n), 1.0, "float32"),
              "C": _rand(seed + 1, (m, 4), d, "float32"),
              "d": _rand(seed + 2, (4,), 1.0, "float32")}
    used = {t: a for t, a in inputs.items() if f"{t}(" in FACTORED[name]}
    graph = compile_expression(FACTORED[name], {"C": fmt} if "C" in used else {},
                               {t: a.shape for t, a in used.items()}, name=name)
    assert any(node.op == "broadcast" for node in graph.nodes.values())
    _check(systemc, graph, used)
    z = inputs["Z"].astype(np.float64)
    if name == "softmax":
        e = np.exp(z - z.max(axis=1, keepdims=True))
        want = e / e.sum(axis=1, keepdims=True)
    else:
        want = z - z.max(axis=1, keepdims=True) + (inputs["C"] @ inputs["d"])[:, None]
    np.testing.assert_allclose(simulate(graph, used).dense("Y"), want, rtol=1e-4,
                               atol=1e-4)


@SETTINGS
@given(m=DIM, n=DIM, d=DENSITY, fmt=MATRIX_FMT, dtype=DTYPE, seed=SEED)
def test_masked_dense_locate_parity(systemc, m, n, d, fmt, dtype, seed):
    """``locate``: A's crds address dense W at both levels; parity at every depth and the
    numpy product."""
    inputs = {"A": _rand(seed, (m, n), d, dtype), "W": _rand(seed + 1, (m, n), 1.0, dtype)}
    graph = examples.masked_dense(m, n, fmt, dtype=dtype)
    _check(systemc, graph, inputs)
    want = (inputs["A"].astype(np.int64) * inputs["W"]).astype(np.int32) \
        if dtype == "int32" else inputs["A"] * inputs["W"]
    np.testing.assert_array_equal(systemc.run(graph, inputs).dense("X"), want)


def test_locate_stream_errors_give_the_python_message(systemc):
    """A coordinate beyond W's dense level (W narrower than A) stops both models alike."""
    graph = examples.masked_dense(2, 3)
    graph.tensors["W"] = type(graph.tensors["W"])("W", (2, 2), "dd")
    inputs = {"A": np.eye(2, 3, 1, dtype=np.float32), "W": np.ones((2, 2), np.float32)}
    with pytest.raises(SimulationError) as py:
        simulate(graph, inputs)
    with pytest.raises(SimulationError) as sc:
        systemc.run(graph, inputs)
    assert str(sc.value) == str(py.value)
    assert "coordinate 2 is outside the dense level of size 2" in str(sc.value)


def test_all_empty_and_fully_dense_operands(systemc):
    for d in (0.0, 1.0):
        for dtype in ("float32", "int32"):
            inputs = {"B": _rand(1, (4, 5), d, dtype), "C": _rand(2, (5, 3), d, dtype)}
            _check(systemc, examples.spmm_ikj(4, 5, 3, "cc", "dc", dtype=dtype), inputs)


# -- primitives the examples do not use; special values -----------------------------------

def _vector_graph(name: str, dtype: str, n: int, *, unary: str | None = None,
                  binary: str | None = None, const: float = 0.0):
    """x(i) = f(a(i)) or a(i) op b(i) over dense vectors (exercises the value semantics)."""
    g = GraphBuilder(name, dtype)
    g.tensor("a", (n,), "d")
    g.tensor("x", (n,), "d", role="output")
    g.node("r", "root")
    g.node("ai", "scan_dense", tensor="a", level=0)
    g.node("av", "array", tensor="a")
    g.node("xi", "level_writer", tensor="x", level=0)
    g.node("xv", "value_writer", tensor="x")
    edges = [("r.ref", "ai.ref_in"), ("ai.crd", "xi.crd"), ("ai.ref", "av.ref")]
    if unary:
        g.node("f", "unary", op=unary, const=const)
        edges += [("av.val", "f.a"), ("f.val", "xv.val")]
    else:
        g.tensor("b", (n,), "d")
        g.node("bv", "array", tensor="b")
        g.node("f", "alu", op=binary)
        edges += [("ai.ref", "bv.ref"), ("av.val", "f.a"), ("bv.val", "f.b"),
                  ("f.val", "xv.val")]
    for s, d in edges:
        g.edge(s, d)
    return g.build()


_F_SPECIAL = np.array([0.0, -0.0, 1.5, -2.25, 1e-40, 3.0e38, -3.0e38, np.inf, -np.inf, np.nan,
                       88.0, 89.0, -104.0, 0.1, 7.0], np.float32)
_I_SPECIAL = np.array([0, 1, -1, 2, -7, 21, 22, 100, -2**31, 2**31 - 1, 65536, -65537, 3, 5,
                       -3], np.int32)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_unary_and_binary_ops_on_special_values(systemc, dtype):
    a = _F_SPECIAL if dtype == "float32" else _I_SPECIAL
    b = np.roll(a, 3)
    n = len(a)
    consts = (2.5, -3.0, -1.0, 0.0, 1e39) if dtype == "float32" else \
        (2, -3, -1, 0, 2**31 - 1, -2**31)
    runs = [(_vector_graph(f"un_{op}", dtype, n, unary=op, const=c), {"a": a})
            for op in CATALOGUE["unary"].param("op").choices
            for c in ((0.0,) if "const" not in op else consts)]
    runs += [(_vector_graph(f"bin_{op}", dtype, n, binary=op), {"a": a, "b": b})
             for op in CATALOGUE["alu"].param("op").choices]
    results = systemc.run_batch([SystemCRun(g, ins, trace=True) for g, ins in runs])
    for (g, ins), sc in zip(runs, results, strict=True):
        _assert_same(g, ins, "graph", sc)


def _rowmax_graph(dtype: str, m: int, n: int):
    """x(i) = max_j A(i,j): the max reducer and its identity (-inf / INT32_MIN)."""
    g = GraphBuilder("rowmax", dtype)
    g.tensor("A", (m, n), "dc")
    g.tensor("x", (m,), "d", role="output")
    for nid, op, kw in [("r", "root", {}), ("Ai", "scan_dense", {"tensor": "A", "level": 0}),
                        ("Aj", "scan_compressed", {"tensor": "A", "level": 1}),
                        ("Av", "array", {"tensor": "A"}), ("red", "reduce", {"op": "max"}),
                        ("xi", "level_writer", {"tensor": "x", "level": 0}),
                        ("xv", "value_writer", {"tensor": "x"})]:
        g.node(nid, op, **kw)
    for s, d in [("r.ref", "Ai.ref_in"), ("Ai.ref", "Aj.ref_in"), ("Ai.crd", "xi.crd"),
                 ("Aj.ref", "Av.ref"), ("Av.val", "red.val_in"), ("Ai.ref", "red.outer"),
                 ("red.val", "xv.val")]:
        g.edge(s, d)
    return g.build()


def _crdhold_graph(m: int, n: int):
    """crdhold on a CSR matrix: its inner output rebuilds A; its outer point stream feeds a
    repsig whose output port has no edge (exercising the discarding port)."""
    g = GraphBuilder("crdhold_points")
    g.tensor("A", (m, n), "cc")
    g.tensor("X", (m, n), "cc", role="output")
    for nid, op, kw in [("r", "root", {}), ("Ai", "scan_compressed", {"tensor": "A", "level": 0}),
                        ("Aj", "scan_compressed", {"tensor": "A", "level": 1}),
                        ("hold", "crdhold", {}), ("points", "repsig", {}),
                        ("Av", "array", {"tensor": "A"}),
                        ("Xi", "level_writer", {"tensor": "X", "level": 0}),
                        ("Xj", "level_writer", {"tensor": "X", "level": 1}),
                        ("Xv", "value_writer", {"tensor": "X"})]:
        g.node(nid, op, **kw)
    for s, d in [("r.ref", "Ai.ref_in"), ("Ai.ref", "Aj.ref_in"), ("Ai.crd", "hold.outer_in"),
                 ("Ai.crd", "Xi.crd"), ("Aj.crd", "hold.inner_in"), ("hold.outer", "points.crd"),
                 ("hold.inner", "Xj.crd"), ("Aj.ref", "Av.ref"), ("Av.val", "Xv.val")]:
        g.edge(s, d)
    return g.build()


@SETTINGS
@given(m=DIM, n=DIM, d=DENSITY, dtype=DTYPE, seed=SEED)
def test_max_reducer_and_crdhold_parity(systemc, m, n, d, dtype, seed):
    A = _rand(seed, (m, n), d, dtype)
    _check(systemc, _rowmax_graph(dtype, m, n), {"A": A})
    _check(systemc, _crdhold_graph(m, n), {"A": A.astype(np.float32)})


def test_per_module_processes_give_the_same_cycles():
    """Every primitive as its own SC_METHOD: slower, but the same trace and cycles."""
    backend = SystemCBackend(per_module_processes=True)
    B, C = _rand(3, (5, 6), 0.4, "float32"), _rand(4, (6, 4), 0.5, "float32")
    _check(backend, examples.spmm_ikj(5, 6, 4), {"B": B, "C": C})
    _check(backend, examples.sddmm(5, 4, 6), {"B": _rand(5, (5, 4), 0.5, "float32"),
                                               "C": B, "D": _rand(6, (6, 4), 1.0, "float32")})


# -- failures: deadlock, stream errors, SystemC errors, crashes ---------------------------

def _fork_into_intersect(depth: int):
    """Aj's crds fork (depth-1 FIFOs) into an intersecter and a sparse accumulator whose
    output is the intersecter's other side: the accumulator needs the whole row, the
    intersecter needs both heads, so the fork's producer blocks — a real deadlock."""
    g = GraphBuilder("fork_into_intersect", depth=depth)
    g.tensor("A", (2, 4), "dd")
    g.tensor("X", (2, 4), "dc", role="output")
    for nid, op, kw in [("r", "root", {}), ("Ai", "scan_dense", {"tensor": "A", "level": 0}),
                        ("Aj", "scan_dense", {"tensor": "A", "level": 1}),
                        ("Av", "array", {"tensor": "A"}), ("acc", "spacc", {}),
                        ("isect", "intersect", {}), ("Xa", "array", {"tensor": "A"}),
                        ("Xi", "level_writer", {"tensor": "X", "level": 0}),
                        ("Xj", "level_writer", {"tensor": "X", "level": 1}),
                        ("Xv", "value_writer", {"tensor": "X"})]:
        g.node(nid, op, **kw)
    for s, d in [("r.ref", "Ai.ref_in"), ("Ai.ref", "Aj.ref_in"), ("Ai.crd", "Xi.crd"),
                 ("Aj.crd", "isect.crd_a"), ("Aj.crd", "acc.crd_in"), ("Aj.ref", "Av.ref"),
                 ("Av.val", "acc.val_in"), ("acc.crd", "isect.crd_b"),
                 ("Aj.ref", "isect.ref_a"), ("Aj.ref", "isect.ref_b"), ("isect.crd", "Xj.crd"),
                 ("isect.ref_a", "Xa.ref"), ("Xa.val", "Xv.val")]:
        g.edge(s, d)
    return g.build()


@pytest.mark.parametrize("depth", [1, 2])
def test_deadlock_gives_the_python_report(systemc, depth):
    g, inputs = _fork_into_intersect(depth), {"A": np.ones((2, 4), np.float32)}
    with pytest.raises(DeadlockError) as py:
        simulate(g, inputs)
    with pytest.raises(DeadlockError) as sc:
        systemc.run(g, inputs)
    assert (sc.value.cycle, sc.value.blocked, sc.value.wait_cycle) == \
        (py.value.cycle, py.value.blocked, py.value.wait_cycle)
    assert str(sc.value) == str(py.value)
    assert ("Aj", "Aj.crd->isect.crd_a", f"output full ({depth}/{depth} tokens unread)") \
        in sc.value.blocked


def test_stream_errors_give_the_python_message(systemc):
    g = examples.misaligned_alu()
    inputs = {"A": np.full((2, 2), 1.5, np.float32), "c": np.full(2, 0.1, np.float32)}
    with pytest.raises(SimulationError) as py:
        simulate(g, inputs)
    with pytest.raises(SimulationError) as sc:
        systemc.run(g, inputs)
    assert str(sc.value) == str(py.value)
    assert "misaligned operands: a holds 1.5 while b holds D" in str(sc.value)


def test_broadcast_stream_errors_give_the_python_message(systemc):
    """A broadcast fed one value per element instead of one per row: repsig
    R R S0 R R S1 D consumes val_in 1.5 (S0), 1.5 (S1), S0 (the merged stop), so at D it
    finds a value (formatted as one). Unbounded FIFOs: it would deadlock first, since it
    holds its val_in back row by row."""
    g = GraphBuilder("misnested_broadcast", depth=None)
    g.tensor("A", (2, 2), "dd")
    g.tensor("X", (2, 2), "dd", role="output")
    for nid, op, kw in [("r", "root", {}), ("Ai", "scan_dense", {"tensor": "A", "level": 0}),
                        ("Aj", "scan_dense", {"tensor": "A", "level": 1}),
                        ("Av", "array", {"tensor": "A"}), ("rs", "repsig", {}),
                        ("bc", "broadcast", {}),
                        ("Xi", "level_writer", {"tensor": "X", "level": 0}),
                        ("Xj", "level_writer", {"tensor": "X", "level": 1}),
                        ("Xv", "value_writer", {"tensor": "X"})]:
        g.node(nid, op, **kw)
    for s, d in [("r.ref", "Ai.ref_in"), ("Ai.ref", "Aj.ref_in"), ("Ai.crd", "Xi.crd"),
                 ("Aj.crd", "Xj.crd"), ("Aj.crd", "rs.crd"), ("Aj.ref", "Av.ref"),
                 ("Av.val", "bc.val_in"), ("rs.repsig", "bc.repsig"), ("bc.val", "Xv.val")]:
        g.edge(s, d)
    graph, inputs = g.build(), {"A": np.full((2, 2), 1.5, np.float32)}
    with pytest.raises(SimulationError) as py:
        simulate(graph, inputs)
    with pytest.raises(SimulationError) as sc:
        systemc.run(graph, inputs)
    assert str(sc.value) == str(py.value)
    assert "node 'bc'" in str(sc.value)
    assert str(sc.value).endswith(": repsig D but val_in holds 1.5")


def test_input_errors_are_raised_before_forking(systemc):
    with pytest.raises(InputError, match=r"needs input tensor\(s\) \['B'\]"):
        systemc.run(examples.spmv(3, 4), {"c": np.ones(4, np.float32)})


def test_a_systemc_error_in_the_child_is_a_python_exception(systemc, monkeypatch):
    import cosim.backends._systemc_child as child
    from cosim.backends._systemc_load import load

    child.prepare()  # warm up in this process before _elaborate is changed
    real = child._elaborate
    stray = []

    def with_unbound_port(drv, plan, index):
        net = real(drv, plan, index)
        stray.append(load().Root("stray"))  # a module whose clock port is never bound
        return net

    monkeypatch.setattr(child, "_elaborate", with_unbound_port)
    with pytest.raises(SystemCError, match=r"E109.*port not bound"):
        systemc.run(examples.spmv(2, 2), {"B": np.eye(2, dtype=np.float32),
                                          "c": np.ones(2, np.float32)})


def test_a_crashing_child_is_reported_not_hung(systemc, monkeypatch):
    import cppyy

    import cosim.backends._systemc_child as child

    child.prepare()  # warm up in this process before _elaborate is made to crash
    cppyy.cppdef("namespace samfuse_test { void crash() { *(volatile int*)nullptr = 1; } }")
    monkeypatch.setattr(child, "_elaborate", lambda *a: cppyy.gbl.samfuse_test.crash())
    with pytest.raises(SystemCError, match="died without a result.*SIGSEGV"):
        systemc.run(examples.spmv(2, 2), {"B": np.eye(2, dtype=np.float32),
                                          "c": np.ones(2, np.float32)})


def test_a_stuck_child_times_out(monkeypatch):
    import cosim.backends._systemc_child as child

    child.prepare()  # warm up in this process before _elaborate is made to hang
    # a child that woke up after the sleep would fail elaborating, not time out
    monkeypatch.setattr(child, "_elaborate", lambda *a: time.sleep(30))
    with pytest.raises(SystemCError, match="timed out after 0.5 s"):
        SystemCBackend(timeout=0.5).run(examples.spmv(2, 2), {
            "B": np.eye(2, dtype=np.float32), "c": np.ones(2, np.float32)})


# -- waveforms and the comparison report ---------------------------------------------------

def test_vcd_dump_has_every_edge_handshake(tmp_path):
    g = examples.spmv(3, 4)
    SystemCBackend(vcd=tmp_path / "spmv").run(g, {"B": np.eye(3, 4, dtype=np.float32),
                                                  "c": np.ones(4, np.float32)})
    text = (tmp_path / "spmv.vcd").read_text()
    assert "$enddefinitions" in text
    assert "Bi_crd__rs_i_crd" in text
    for sig in ("empty_n", "read", "full_n", "write"):
        assert re.search(rf"\$var wire\s+1\s+\S+\s+{sig}\s+\$end", text), sig
    for sig in ("dout", "din"):
        assert re.search(rf"\$var wire\s+34\s+\S+\s+{sig} \[33:0\]", text), sig


def test_compare_backends_reports_agreement_and_the_first_difference(systemc, monkeypatch):
    g = examples.spmv(4, 5)
    inputs = {"B": _rand(1, (4, 5), 0.5, "float32"), "c": _rand(2, (5,), 1.0, "float32")}
    report = compare_backends(g, inputs, ["python", "systemc"])
    assert report.ok and report.cycles["python"] == report.cycles["systemc"]
    assert "all backends agree" in str(report)

    class LateBackend(PythonBackend):
        """The reference model with every token on one edge written a cycle late."""

        name = "late"

        def run(self, graph, inputs, *, trace=False, depth="graph", hw=None, mem_trace=False):
            res = super().run(graph, inputs, trace=trace, depth=depth)
            et = res.trace.edges["Bi.crd->xi.crd"]
            et.cycles = [c + 1 for c in et.cycles]
            return res

    monkeypatch.setitem(BACKENDS, "late", LateBackend)
    report = compare_backends(g, inputs, ["systemc", "late"])
    assert not report.ok and report.outputs_agree["late"]
    (mm,) = report.mismatches["late"]
    assert mm.edge == "Bi.crd->xi.crd" and mm.index == 0 and mm.what == "cycle differs"
    assert "late vs systemc: edge Bi.crd->xi.crd: cycle differs at token #0" in str(report)


# -- the auto backend --------------------------------------------------------------------

def _spmm(n: int, density: float):
    return examples.spmm_ikj(n, n, 16, "dc", "dd"), {
        "B": _rand(n, (n, n), density, "float32"), "C": _rand(n + 1, (n, 16), 1.0, "float32")}


def test_auto_runs_large_graphs_on_systemc_and_small_ones_on_python(systemc):
    from compiler import estimate
    from cosim import AUTO_SYSTEMC_TOKENS, get_backend

    auto = get_backend("auto")
    for (graph, inputs), want in ((_spmm(8, 0.3), "python"), (_spmm(200, 0.1), "systemc")):
        tokens = sum(estimate(graph, inputs).tokens.values())
        assert (tokens >= AUTO_SYSTEMC_TOKENS) == (want == "systemc")
        res = auto.run(graph, inputs, trace=True, depth=2)
        assert res.backend == want
        _assert_same(graph, inputs, 2, res)


def test_auto_without_systemc_is_the_python_model(monkeypatch):
    from cosim import get_backend

    monkeypatch.setattr(SystemCBackend, "unavailable", classmethod(lambda cls: "not here"))
    graph, inputs = _spmm(200, 0.1)
    assert get_backend("auto").run(graph, inputs).backend == "python"


# -- the compiled library ----------------------------------------------------------------

def test_concurrent_first_uses_build_the_library_once(systemc, tmp_path):
    """Two processes starting on an empty cache ($XDG_CACHE_HOME): one compiles, under
    the lock, the other waits and loads the same file; nothing half-written is left."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "PYTHONPATH": str(root)}
    env.pop("SAMFUSE_CACHE", None)
    code = ("from cosim.backends._systemc_child import prepare; "
            "from cosim.backends._systemc_load import models_library; prepare(); "
            "print(models_library())")
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, cwd=root, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    paths = {out.strip() for out, _ in outs}
    assert len(paths) == 1
    lib = Path(paths.pop())
    assert lib.parent == tmp_path / "samfuse" / "systemc" and lib.exists()
    assert sum("compiling the SystemC models" in err for _, err in outs) == 1
    assert sorted(p.name for p in lib.parent.iterdir()) == sorted([lib.name,
                                                                   lib.stem + ".lock"])
