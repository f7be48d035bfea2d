"""The example kernels and compiled graphs on every backend against the Python model and
numpy: fixed-shape cases (every example kernel, the primitives the examples do not use,
compiled and factored graphs) × float32/int32 on empty, sparse, mostly full and dense
inputs; compiled kernels cycle for cycle in RTL; random shapes, densities and formats
(full-range int32, so wrapping is exercised) on the cheap backends at the contract's FIFO
depths; special values through every unary and binary op; stream errors and deadlocks
with the model's report. What each backend is held to is in ``_backends.py``.

Each HLS and RTL graph is built once per dtype and serves every input of its shape; the
builds run on the cases they ran before the suites were merged (``only=``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from _backends import RTL, assert_replays, assert_same_result, over, python_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import compile_expression
from cosim import HlsRunError, SystemCRun
from ir import CATALOGUE, Graph, GraphBuilder, examples
from sim_models.python import DeadlockError, SimulationError, simulate
from tests._kernel_graphs import (
    CASES,
    CHAIN,
    COMPILED,
    FORMATS_KEPT,
    case_inputs,
    chain_gold,
    chain_operands,
    chain_shapes,
    compiled_case,
    small_random,
)
from tests._kernel_graphs import full_range_random as _rand

DTYPES = ["float32", "int32"]
#: example kernels with a parity test below (a new example must get one)
COVERED_KERNELS = {"spmv", "spmm_ijk", "spmm_ikj", "spmm_kij", "sddmm", "elementwise", "ttv",
                   "row_scale", "masked_dense"}


def test_every_example_kernel_has_a_parity_test():
    assert set(examples.KERNELS) == COVERED_KERNELS


def _output(graph: Graph) -> str:
    (name,) = [t for t, spec in graph.tensors.items() if spec.role == "output"]
    return name


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


#: numpy's result of each kernel (int32 operands wrap as the graphs do); elementwise
#: unions read a missing operand as zero
ELEMENTWISE = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum,
               "min": np.minimum}
GOLD: dict[str, Callable[..., np.ndarray]] = {
    "spmv": lambda B, c: B @ c, "spmm": lambda B, C: B @ C,
    "sddmm": lambda B, C, D: B * (C @ D), "ttv": lambda B, c: np.einsum("ijk,k->ij", B, c),
    "masked_dense": lambda A, W: A * W, "row_scale": lambda A: _row_scale_reference(A),
    **{f"elementwise_{op}": f for op, f in ELEMENTWISE.items()}}


def _gold(kernel: str | None, graph: Graph, inputs: dict) -> dict[str, np.ndarray] | None:
    """The numpy result of ``kernel`` on ``inputs`` (None where numpy has none here)."""
    if kernel not in GOLD:
        return None
    with np.errstate(over="ignore"):
        return {_output(graph): GOLD[kernel](*inputs.values())}


def _check(backend, graph: Graph, inputs: dict, kernel: str | None = None, **kw) -> list:
    """``backend.check`` with numpy's result of ``kernel``: exact for int32."""
    return backend.check(graph, inputs, _gold(kernel, graph, inputs),
                         exact=graph.dtype == "int32", **kw)


# -- fixed shapes on every backend ------------------------------------------------------

#: empty, sparse, mostly full, dense; the RTL (a simulation per input) runs the sparse one
DENSITIES = [0.0, 0.3, 0.7, 1.0]
RTL_DENSITIES = [0.3]
CASE_RUNS = [(c, d) for c in sorted(CASES) for d in DTYPES]
#: the example kernels the RTL builds (each Icarus build takes seconds)
RTL_KERNELS = ["spmv", "spmm_ijk", "spmm_ikj", "spmm_kij", "elementwise_add",
               "elementwise_mul", "row_scale", "masked_dense"]
RTL_RUNS = [f"{k}-{d}" for k in RTL_KERNELS for d in DTYPES]
HLS_RUNS = [f"{c}-{d}" for c, d in CASE_RUNS if c != "elementwise_add"]


#: HLS runs each at the graph's own depths (``unaries`` keeps one edge unbounded)
AT_GRAPH_DEPTH = {"hls": [("graph", None)]}


@pytest.mark.parametrize("backend,case,dtype", over(CASE_RUNS, only={
    "hls": HLS_RUNS, "rtl-icarus": RTL_RUNS, "rtl-verilator": RTL_RUNS}),
    indirect=["backend"])
def test_kernel_cases_match_model_and_numpy(backend, case, dtype):
    make, shapes, kernel = CASES[case]
    graph = make(dtype)
    densities = RTL_DENSITIES if backend.name in RTL else DENSITIES
    for k, density in enumerate(densities):
        _check(backend, graph, case_inputs(shapes, density, dtype, seed=k), kernel,
               configs=AT_GRAPH_DEPTH)


@pytest.mark.parametrize("backend,kernel,dtype", over(
    [(k, d) for k in RTL_KERNELS for d in DTYPES], backends=RTL), indirect=["backend"])
def test_every_primitive_replays_its_trace_cycle_exactly(backend, kernel, dtype):
    make, shapes, _ = CASES[kernel]
    assert_replays(make(dtype), case_inputs(shapes, RTL_DENSITIES[0], dtype, seed=0), backend.sim)


@pytest.mark.parametrize("backend", over([()], ["large"], backends=("python", "hls")),
                         indirect=True)
def test_writer_arrays_grow_when_the_output_is_large(backend):
    """More than the HLS testbench's first 1024-entry guess: it reruns with larger
    arrays."""
    graph = examples.elementwise(40, 40, op="add", dtype="float32")
    _check(backend, graph, case_inputs({"A": ((40, 40), None), "B": ((40, 40), None)}, 0.9,
                                   "float32", seed=7), "elementwise_add",
           configs=AT_GRAPH_DEPTH)


COMPILED_GOLD = {"spmv": "spmv", "spmm_ikj": "spmm", "spmm_kij": "spmm", "sddmm": "sddmm",
                 "elementwise_add": "elementwise_add"}
COMPILED_RUNS = [(k, "float32") for k in COMPILED] + [("spmv", "int32"),
                                                     ("elementwise_add", "int32")]


@pytest.mark.parametrize("backend,kernel,dtype", over(COMPILED_RUNS, backends=(
    "python", "systemc", *RTL)), indirect=["backend"])
def test_compiled_kernels_match_model_cycle_for_cycle(backend, kernel, dtype):
    graph, inputs = compiled_case(kernel, dtype)
    want = None
    if kernel == "row_scale":
        want = {"X": inputs["A"] * (inputs["B"] @ inputs["c"])[:, None]}
    elif kernel in COMPILED_GOLD:
        want = _gold(COMPILED_GOLD[kernel], graph, inputs)
    (res,) = backend.check(graph, inputs, want, exact=dtype == "int32",
                           configs={backend.name: [("graph", None)]})
    assert sorted(res.trace.edges) == sorted(e.name for e in graph.edges)


@pytest.mark.parametrize("backend", over([()], ["pinned"]), indirect=True)
def test_pinned_fifos_keep_their_depth_under_a_shallower_run_depth(backend):
    """A compiled graph whose bypass FIFOs are pinned to hold a whole fiber
    (docs/timing.md, "Which FIFO depth a run uses"; docs/compiler.md, rule 5) runs at a
    run depth of 2 on every backend: each keeps the pinned depths, agrees with the
    model, and equals numpy."""
    shapes = chain_shapes(2, 3, 3, 3, 2, 3)
    ops = chain_operands(shapes, FORMATS_KEPT, 0.7, 9)
    graph = compile_expression(CHAIN, FORMATS_KEPT, shapes, transpose=False, stats=ops)
    assert any(e.pinned and e.depth > 2 for e in graph.edges)
    backend.check(graph, ops, {"P": chain_gold(ops)}, configs={backend.name: [(2, None)]})


# -- random shapes on the cheap backends -------------------------------------------------

DIM = st.integers(1, 5)
DENSITY = st.sampled_from([0.0, 0.3, 0.6, 1.0])
MATRIX_FMT = st.sampled_from(["dc", "cc", "dd"])
DTYPE = st.sampled_from(DTYPES)
SEED = st.integers(0, 2**16)
SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
CHEAP = over([()], ["random"], backends=("python", "systemc"))


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
@SETTINGS
@given(m=DIM, n=DIM, d=DENSITY, fmt=MATRIX_FMT, dtype=DTYPE, seed=SEED)
def test_spmv_parity(backend, m, n, d, fmt, dtype, seed):
    inputs = {"B": _rand(seed, (m, n), d, dtype), "c": _rand(seed + 1, (n,), 1.0, dtype)}
    _check(backend, examples.spmv(m, n, fmt, dtype=dtype), inputs, "spmv")


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
@SETTINGS
@given(m=DIM, k=DIM, n=DIM, d=DENSITY, fmt=MATRIX_FMT, dtype=DTYPE, seed=SEED)
def test_spmm_inner_product_parity(backend, m, k, n, d, fmt, dtype, seed):
    inputs = {"B": _rand(seed, (m, k), d, dtype), "C": _rand(seed + 1, (k, n), d, dtype)}
    _check(backend, examples.spmm_ijk(m, k, n, fmt, dtype=dtype), inputs, "spmm")


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
@SETTINGS
@given(m=DIM, k=DIM, n=DIM, d=DENSITY, bf=MATRIX_FMT, cf=MATRIX_FMT, dtype=DTYPE, seed=SEED)
def test_spmm_gustavson_parity(backend, m, k, n, d, bf, cf, dtype, seed):
    inputs = {"B": _rand(seed, (m, k), d, dtype), "C": _rand(seed + 1, (k, n), d, dtype)}
    _check(backend, examples.spmm_ikj(m, k, n, bf, cf, dtype=dtype), inputs, "spmm")


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
@SETTINGS
@given(m=DIM, k=DIM, n=DIM, d=DENSITY, dtype=DTYPE, seed=SEED)
def test_spmm_outer_product_parity(backend, m, k, n, d, dtype, seed):
    inputs = {"B": _rand(seed, (m, k), d, dtype), "C": _rand(seed + 1, (k, n), d, dtype)}
    _check(backend, examples.spmm_kij(m, k, n, dtype=dtype), inputs, "spmm")


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
@SETTINGS
@given(m=DIM, n=DIM, k=DIM, d=DENSITY, fmt=MATRIX_FMT, dtype=DTYPE, seed=SEED)
def test_sddmm_parity(backend, m, n, k, d, fmt, dtype, seed):
    inputs = {"B": _rand(seed, (m, n), d, dtype), "C": _rand(seed + 1, (m, k), 1.0, dtype),
              "D": _rand(seed + 2, (k, n), 1.0, dtype)}
    _check(backend, examples.sddmm(m, n, k, fmt, dtype=dtype), inputs, "sddmm")


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
@SETTINGS
@given(m=DIM, n=DIM, d=DENSITY, op=st.sampled_from(["add", "sub", "mul", "max", "min", "div"]),
       af=MATRIX_FMT, bf=MATRIX_FMT, of=st.sampled_from(["dc", "cc"]), dtype=DTYPE, seed=SEED)
def test_elementwise_parity(backend, m, n, d, op, af, bf, of, dtype, seed):
    inputs = {"A": _rand(seed, (m, n), d, dtype), "B": _rand(seed + 1, (m, n), d, dtype)}
    _check(backend, examples.elementwise(m, n, op, af, bf, of, dtype=dtype), inputs,
           f"elementwise_{op}")


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
@SETTINGS
@given(m=DIM, n=DIM, p=DIM, d=DENSITY, fmt=st.sampled_from(["dcc", "ccc", "ddd", "dcd"]),
       dtype=DTYPE, seed=SEED)
def test_ttv_parity(backend, m, n, p, d, fmt, dtype, seed):
    inputs = {"B": _rand(seed, (m, n, p), d, dtype), "c": _rand(seed + 1, (p,), 1.0, dtype)}
    _check(backend, examples.ttv(m, n, p, fmt, dtype=dtype), inputs, "ttv")


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
@SETTINGS
@given(m=DIM, n=DIM, d=DENSITY, fmt=MATRIX_FMT, dtype=DTYPE, seed=SEED)
def test_row_scale_broadcast_parity(backend, m, n, d, fmt, dtype, seed):
    """A reduce's row sum broadcast over the row's j crds (factored iteration): parity at
    every depth (depth 1 mostly deadlocks, like spmv, with the same report) and the
    numpy result (float32 within one rounding)."""
    A = _rand(seed, (m, n), d, dtype)
    graph = examples.row_scale(m, n, fmt, dtype=dtype)
    results = _check(backend, graph, {"A": A}, "row_scale")
    got, want = results[-1].dense("X"), _row_scale_reference(A)  # unbounded FIFOs
    if dtype == "float32":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
@SETTINGS
@given(m=DIM, n=DIM, d=DENSITY, fmt=MATRIX_FMT, dtype=DTYPE, seed=SEED)
def test_masked_dense_locate_parity(backend, m, n, d, fmt, dtype, seed):
    """``locate``: A's crds address dense W at both levels; parity at every depth and the
    numpy product."""
    inputs = {"A": _rand(seed, (m, n), d, dtype), "W": _rand(seed + 1, (m, n), 1.0, dtype)}
    _check(backend, examples.masked_dense(m, n, fmt, dtype=dtype), inputs, "masked_dense")


@pytest.mark.parametrize("backend", over([()], ["random"], backends=("rtl-icarus",)),
                         indirect=True)
@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=st.integers(1, 5), n=st.integers(1, 6), density=st.sampled_from([0.0, 0.2, 0.6, 1.0]),
       fmt=st.sampled_from(["dc", "cc"]), seed=st.integers(0, 2**16))
def test_locate_on_random_sparse_inputs_in_rtl(backend, m, n, density, fmt, seed):
    """masked_dense (A's crds locate into dense W) on random shapes and densities in the
    RTL (a build per shape): small int32 operands."""
    rng = np.random.default_rng(seed)
    inputs = {"A": small_random(rng, (m, n), density, "int32"),
              "W": small_random(rng, (m, n), 1.0, "int32")}
    _check(backend, examples.masked_dense(m, n, fmt, dtype="int32"), inputs, "masked_dense")


#: compiled expressions whose default order hoists reductions (factored iteration)
FACTORED = {
    "softmax": "Y(i,j) = exp(Z(i,j) - max(j2) Z(i,j2)) / sum(j3) exp(Z(i,j3) - max(j4) Z(i,j4))",
    "row_stats": "Y(i,j) = Z(i,j) - max(j2) Z(i,j2) + sum(k) C(i,k) * d(k)",
}


@pytest.mark.parametrize("backend,name", over([(n,) for n in sorted(FACTORED)],
                                              backends=("python", "systemc")),
                         indirect=["backend"])
@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=DIM, n=st.integers(2, 5), d=DENSITY, fmt=st.sampled_from(["dense", "csr"]),
       seed=SEED)
def test_compiled_factored_iteration_parity(backend, name, m, n, d, fmt, seed):
    """Broadcasts of hoisted reductions in compiled graphs, at every depth, against numpy.
    (Rows of one column cost the same in every order, so hoisting needs n >= 2.)"""
    inputs = {"Z": _rand(seed, (m, n), 1.0, "float32"),
              "C": _rand(seed + 1, (m, 4), d, "float32"),
              "d": _rand(seed + 2, (4,), 1.0, "float32")}
    used = {t: a for t, a in inputs.items() if f"{t}(" in FACTORED[name]}
    graph = compile_expression(FACTORED[name], {"C": fmt} if "C" in used else {},
                               {t: a.shape for t, a in used.items()}, name=name)
    assert any(node.op == "broadcast" for node in graph.nodes.values())
    z = inputs["Z"].astype(np.float64)
    if name == "softmax":
        e = np.exp(z - z.max(axis=1, keepdims=True))
        want = e / e.sum(axis=1, keepdims=True)
    else:
        want = z - z.max(axis=1, keepdims=True) + (inputs["C"] @ inputs["d"])[:, None]
    backend.check(graph, used, {"Y": want}, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("backend", over([()], ["extremes"], backends=("python", "systemc")),
                         indirect=True)
def test_all_empty_and_fully_dense_operands(backend):
    for d in (0.0, 1.0):
        for dtype in DTYPES:
            inputs = {"B": _rand(1, (4, 5), d, dtype), "C": _rand(2, (5, 3), d, dtype)}
            _check(backend, examples.spmm_ikj(4, 5, 3, "cc", "dc", dtype=dtype), inputs,
                   "spmm")


# -- special values and the primitives the examples do not use -----------------------------

def _vector_graph(name: str, dtype: str, n: int, *, unary: str | None = None,
                  binary: str | None = None, const: float = 0.0) -> Graph:
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


@pytest.mark.parametrize("backend,dtype", over([(d,) for d in DTYPES], backends=("systemc",)),
                         indirect=["backend"])
def test_unary_and_binary_ops_on_special_values(backend, dtype):
    """Every unary op (each constant op with extreme constants) and every binary op on
    special values: the model's words, in one SystemC batch."""
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
    results = backend.tool.run_batch([SystemCRun(g, ins, trace=True) for g, ins in runs])
    for (g, ins), sc in zip(runs, results, strict=True):
        assert_same_result(python_run(g, ins, "graph"), sc, g.name)


def _rowmax_graph(dtype: str, m: int, n: int) -> Graph:
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


def _crdhold_graph(m: int, n: int) -> Graph:
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


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
@SETTINGS
@given(m=DIM, n=DIM, d=DENSITY, dtype=DTYPE, seed=SEED)
def test_max_reducer_and_crdhold_parity(backend, m, n, d, dtype, seed):
    """The row max (an empty row keeps the identity) and crdhold (rebuilds A)."""
    A = _rand(seed, (m, n), d, dtype)
    ident = np.iinfo(np.int32).min if dtype == "int32" else -np.inf
    rowmax = np.where(A != 0, A, ident).max(axis=1) if n else np.full(m, ident)
    backend.check(_rowmax_graph(dtype, m, n), {"A": A}, {"x": rowmax}, exact=True)
    Af = A.astype(np.float32)
    backend.check(_crdhold_graph(m, n), {"A": Af}, {"X": Af}, exact=True)


# -- failures: stream errors and deadlocks with the model's report --------------------------

def _assert_fails_like_the_model(backend, graph: Graph, inputs: dict, message: str,
                                 csim_message: str = "") -> None:
    """The run fails: SystemC with the model's error (every field) and ``message``,
    C-simulation with its own report (``csim_message``) of the same rule."""
    res = backend.run(graph, inputs, "graph")
    assert isinstance(res, SimulationError), res
    if backend.name == "hls":
        assert isinstance(res, HlsRunError), res
        assert f"graph '{graph.name}': the HLS C-simulation failed" in str(res)
        assert csim_message in str(res), str(res)
        return
    assert_same_result(python_run(graph, inputs, "graph"), res, graph.name)
    assert message in str(res), str(res)


#: an ALU fed a matrix and a vector misaligns its stops: (A's format, ALU op, n, the
#: model's message)
MISALIGNED = [("dd", "mul", 2, "misaligned operands: a holds 1.5 while b holds D"),
              ("dc", "add", 3, "misaligned operands")]


@pytest.mark.parametrize("backend,a_fmt,op,n,message", over(
    MISALIGNED, [f"{c[0]}-{c[1]}" for c in MISALIGNED],
    backends=("python", "systemc", "hls"), only={"hls": ["dc-add"]}), indirect=["backend"])
def test_stream_errors_give_the_model_message(backend, a_fmt, op, n, message):
    graph = examples.misaligned_alu(2, n, a_fmt, op)
    inputs = {"A": np.full((2, n), 1.5, np.float32), "c": np.full(n, 0.1, np.float32)}
    _assert_fails_like_the_model(backend, graph, inputs, message,
                                 "samfuse csim: samfuse_alu: misaligned")


@pytest.mark.parametrize("backend", over([()], ["locate"], backends=("python", "systemc")),
                         indirect=True)
def test_locate_stream_errors_give_the_model_message(backend):
    """A coordinate beyond W's dense level (W narrower than A) stops both models alike."""
    graph = examples.masked_dense(2, 3)
    graph.tensors["W"] = type(graph.tensors["W"])("W", (2, 2), "dd")
    inputs = {"A": np.eye(2, 3, 1, dtype=np.float32), "W": np.ones((2, 2), np.float32)}
    _assert_fails_like_the_model(backend, graph, inputs,
                                 "coordinate 2 is outside the dense level of size 2")


@pytest.mark.parametrize("backend", over([()], ["broadcast"], backends=("python", "systemc")),
                         indirect=True)
def test_broadcast_stream_errors_give_the_model_message(backend):
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
    _assert_fails_like_the_model(backend, graph, inputs, "node 'bc'")
    assert str(backend.run(graph, inputs, "graph")).endswith(": repsig D but val_in holds 1.5")


def _fork_into_intersect(depth: int) -> Graph:
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


@pytest.mark.parametrize("backend,depth", over([(1,), (2,)], backends=("python", "systemc")),
                         indirect=["backend"])
def test_deadlock_gives_the_model_report(backend, depth):
    g, inputs = _fork_into_intersect(depth), {"A": np.ones((2, 4), np.float32)}
    res = backend.run(g, inputs, "graph")
    assert isinstance(res, DeadlockError), res
    with pytest.raises(DeadlockError) as py:
        simulate(g, inputs)
    assert (res.cycle, res.blocked, res.wait_cycle) == \
        (py.value.cycle, py.value.blocked, py.value.wait_cycle)
    assert str(res) == str(py.value)
    assert ("Aj", "Aj.crd->isect.crd_a", f"output full ({depth}/{depth} tokens unread)") \
        in res.blocked
