"""Generated Vitis HLS C++ C-simulated with g++ (``hls-csim``) against the Python model:
every example graph (and a few compiled ones) × float32/int32 on random, empty and dense
inputs must give the same outputs and, on every edge, the same token sequence.

Each graph is compiled once per dtype (the executable reads its inputs at run time) and
reused for every input set; builds go to a per-session cache directory.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest

from compiler import compile_expression
from cosim import HlsCompileError, HlsCsimBackend, HlsRunError, get_backend
from ir import CATALOGUE, FiberTree, Graph, GraphBuilder, Trace, compare_traces, examples
from rtl_hls.hls import UNBOUNDED_DEPTH, generate, template_path
from sim_models.python import SimulationError, simulate

DTYPES = ["float32", "int32"]
DENSITIES = [0.0, 0.3, 0.7, 1.0]  # empty, sparse, mostly full, dense


def _rand(rng: np.random.Generator, shape: tuple[int, ...], density: float,
          dtype: str) -> np.ndarray:
    vals = rng.integers(-4, 9, shape) if dtype == "int32" else rng.standard_normal(shape)
    vals = np.where(vals == 0, 1, vals)
    return (vals * (rng.random(shape) < density)).astype(dtype)


def _unary_graph(dtype: str) -> Graph:
    """Every unary op and reduce-max on one CSR matrix, plus a crdhold whose outputs feed
    repsigs (so its streams are traced): the primitives the examples do not use."""
    g = GraphBuilder("unaries", dtype)
    m, n = 4, 5
    g.tensor("A", (m, n), "dc")
    g.node("root", "root")
    g.node("Ai", "scan_dense", tensor="A", level=0)
    g.node("Aj", "scan_compressed", tensor="A", level=1)
    g.node("Av", "array", tensor="A")
    g.edge("root.ref", "Ai.ref_in")
    g.edge("Ai.ref", "Aj.ref_in")
    g.edge("Aj.ref", "Av.ref")
    consts = {"add_const": 3.0, "mul_const": -2.0, "div_const": 2.0}
    if dtype == "float32":
        consts = {"add_const": 0.25, "mul_const": -1.5, "div_const": 3.0}
    for op in ("relu", "exp", "neg", "rsqrt", "add_const", "mul_const", "div_const"):
        g.tensor(f"X_{op}", (m, n), "dc", role="output")
        g.node(f"u_{op}", "unary", op=op, const=consts.get(op, 0.0))
        g.node(f"Xi_{op}", "level_writer", tensor=f"X_{op}", level=0)
        g.node(f"Xj_{op}", "level_writer", tensor=f"X_{op}", level=1)
        g.node(f"Xv_{op}", "value_writer", tensor=f"X_{op}")
        for s, d in [("Av.val", f"u_{op}.a"), (f"u_{op}.val", f"Xv_{op}.val"),
                     ("Ai.crd", f"Xi_{op}.crd"), ("Aj.crd", f"Xj_{op}.crd")]:
            g.edge(s, d)
    g.tensor("y", (m,), "d", role="output")
    g.node("rmax", "reduce", op="max")
    g.node("yi", "level_writer", tensor="y", level=0)
    g.node("yv", "value_writer", tensor="y")
    g.node("hold", "crdhold")
    g.node("rs_o", "repsig")
    g.node("rs_n", "repsig")
    for s, d in [("Av.val", "rmax.val_in"), ("Ai.ref", "rmax.outer"), ("rmax.val", "yv.val"),
                 ("Ai.crd", "yi.crd"), ("Ai.crd", "hold.outer_in"), ("Aj.crd", "hold.inner_in"),
                 ("hold.outer", "rs_o.crd"), ("hold.inner", "rs_n.crd")]:
        g.edge(s, d, depth=None if s == "Ai.crd" else "default")
    return g.build()


def _elementwise(op: str, out_fmt: str = "dc") -> Callable:
    return lambda dt: examples.elementwise(5, 6, op=op, out_fmt=out_fmt, dtype=dt)


def _compiled(expr: str, fmts: dict, shapes: dict, **kw) -> Callable:
    return lambda dt: compile_expression(expr, fmts, shapes, dtype=dt, **kw)


#: case → (graph factory taking the dtype, operand shapes and densities: None = the
#: swept density, a number = fixed)
CASES: dict[str, tuple[Callable[[str], Graph], dict[str, tuple[tuple[int, ...], float | None]]]]
CASES = {
    "spmv": (lambda dt: examples.spmv(6, 7, dtype=dt),
             {"B": ((6, 7), None), "c": ((7,), 1.0)}),
    "spmm_ijk": (lambda dt: examples.spmm_ijk(5, 6, 4, dtype=dt),
                 {"B": ((5, 6), None), "C": ((6, 4), None)}),
    "spmm_ikj": (lambda dt: examples.spmm_ikj(5, 6, 4, dtype=dt),
                 {"B": ((5, 6), None), "C": ((6, 4), None)}),
    "spmm_kij": (lambda dt: examples.spmm_kij(5, 6, 4, dtype=dt),
                 {"B": ((5, 6), None), "C": ((6, 4), None)}),
    "sddmm": (lambda dt: examples.sddmm(5, 6, 3, dtype=dt),
              {"B": ((5, 6), None), "C": ((5, 3), 1.0), "D": ((3, 6), 1.0)}),
    "ttv": (lambda dt: examples.ttv(3, 4, 5, dtype=dt),
            {"B": ((3, 4, 5), None), "c": ((5,), None)}),
    "elementwise_add_cc": (_elementwise("add", "cc"), {"A": ((5, 6), None), "B": ((5, 6), None)}),
    "elementwise_mul": (_elementwise("mul"), {"A": ((5, 6), None), "B": ((5, 6), None)}),
    "elementwise_div": (_elementwise("div"), {"A": ((5, 6), None), "B": ((5, 6), None)}),
    # locate: A's crds address dense W at both levels (no scan of W)
    "masked_dense": (lambda dt: examples.masked_dense(5, 6, dtype=dt),
                     {"A": ((5, 6), None), "W": ((5, 6), 1.0)}),
    "masked_dense_cc": (lambda dt: examples.masked_dense(5, 6, "cc", dtype=dt),
                        {"A": ((5, 6), None), "W": ((5, 6), 1.0)}),
    "unaries": (_unary_graph, {"A": ((4, 5), None)}),
    # broadcast of a row sum (an all-empty "cc" matrix gives broadcast an empty parent)
    "row_scale": (lambda dt: examples.row_scale(5, 6, dtype=dt), {"A": ((5, 6), None)}),
    "row_scale_cc": (lambda dt: examples.row_scale(5, 6, "cc", dtype=dt),
                     {"A": ((5, 6), None)}),
    "scaled": (_compiled("X(i,j) = 2 * B(i,k) * C(k,j) - E(i,j) * F(i,j) / 2",
                         {"B": "csr", "C": "csr", "E": "csr", "F": "csr", "X": "dc"},
                         {"B": (4, 5), "C": (5, 3), "E": (4, 3), "F": (4, 3)}),
               {"B": ((4, 5), None), "C": ((5, 3), None), "E": ((4, 3), None),
                "F": ((4, 3), None)}),
    "mttkrp_kijl": (_compiled("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", {"B": "ccc", "A": "cc"},
                              {"B": (3, 4, 3), "C": (4, 5), "D": (3, 5)}, order="k,i,j,l"),
                    {"B": ((3, 4, 3), None), "C": ((4, 5), 0.8), "D": ((3, 5), 0.8)}),
    "rowmax": (_compiled("x(i) = max(j) B(i,j)", {"B": "csr"}, {"B": (5, 6)}),
               {"B": ((5, 6), None)}),
    # factored iteration: the row max and the row sum inside it hoisted out of j
    "hoisted": (_compiled("Y(i,j) = B(i,j) - max(j2) B(i,j2) + sum(k) C(i,k) * d(k)",
                          {"B": "dense", "C": "csr"}, {"B": (5, 6), "C": (5, 4),
                                                       "d": (4,)}),
                {"B": ((5, 6), 1.0), "C": ((5, 4), None), "d": ((4,), 1.0)}),
}


def _inputs(shapes: dict, density: float, dtype: str, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {name: _rand(rng, shape, density if d is None else d, dtype)
            for name, (shape, d) in shapes.items()}


def _assert_same_tree(got: FiberTree, want: FiberTree, name: str) -> None:
    """Equal storage and bit-identical values (any NaN equals any NaN, as in traces)."""
    assert (got.shape, got.format) == (want.shape, want.format), name
    assert got.levels == want.levels, f"output {name}: levels {got.levels} != {want.levels}"
    a, b = np.asarray(got.vals), np.asarray(want.vals)
    assert a.dtype == b.dtype and a.shape == b.shape, name
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        assert np.array_equal(nan, np.isnan(b)), f"output {name}: NaNs differ: {a} vs {b}"
        a, b = np.where(nan, 0, a).view(np.uint32), np.where(nan, 0, b).view(np.uint32)
    assert np.array_equal(a, b), f"output {name}: values {got.vals} != {want.vals}"


def _assert_same(graph: Graph, inputs: dict, hls: HlsCsimBackend) -> None:
    py = simulate(graph, inputs, trace=True)
    got = hls.run(graph, inputs, trace=True)
    assert got.cycles is None
    assert set(got.outputs) == set(py.outputs)
    for name, want in py.outputs.items():
        _assert_same_tree(got.outputs[name], want, name)
    assert got.trace is not None and py.trace is not None
    assert set(got.trace.edges) == {e.name for e in graph.edges}
    mismatches = compare_traces(py.trace, got.trace, timed=False)
    assert not mismatches, "\n".join(map(str, mismatches))


def test_every_catalogue_primitive_has_an_hls_template():
    for op in CATALOGUE:
        path = template_path(op)
        assert path.exists(), f"no HLS template for {op!r} (expected {path})"
        text = path.read_text()
        assert re.search(rf"\bvoid samfuse_{op}\(", text), f"{path} defines no samfuse_{op}()"
        included = "".join((path.parent / inc).read_text()
                           for inc in re.findall(r'#include "(\w+\.h)"', text))
        # every firing loop is pipelined by the timing shell at the template's II, 1 unless
        # the node's ii or a block operator's cycles say more (docs/hls.md, "Timing knobs")
        assert "SAMFUSE_PIPELINE" in text + included and "int II = 1" in text, \
            f"{path}: no II=1 loop"


def test_generated_top_and_tcl_follow_the_vitis_conventions():
    g = examples.spmv(6, 7).with_depth(None)
    design = generate(g)
    top = design.files[design.top_source]
    assert "#pragma HLS dataflow" in top
    assert top.count("hls::stream<samfuse::tok_t>") == len(g.edges)
    assert top.count(f"depth={UNBOUNDED_DEPTH}  // unbounded") == len(g.edges)
    for arg in design.inputs:
        assert f"m_axi port={arg.name} " in top
    assert "samfuse::fork(" in top  # Bi.crd feeds both rs_i and the writer
    assert "samfuse::Discard()" in top  # isect_j.crd has no reader
    tcl = design.files["run_hls.tcl"]
    for cmd in ("open_project", f"set top {design.top}", "set_top $top",
                "csim_design", "csynth_design", "cosim_design -trace_level all",
                "export_design -format ip_catalog"):
        assert cmd in tcl, cmd


def test_hls_backend_is_registered_untimed():
    assert HlsCsimBackend.name == "hls-csim" and HlsCsimBackend.timed is False
    if HlsCsimBackend.unavailable() is None:
        assert isinstance(get_backend("hls-csim"), HlsCsimBackend)


@pytest.mark.cosim
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_python_model_token_for_token(case, dtype, hls):
    make, shapes = CASES[case]
    graph = make(dtype)
    for k, density in enumerate(DENSITIES):
        _assert_same(graph, _inputs(shapes, density, dtype, seed=k), hls)


@pytest.mark.cosim
def test_writer_arrays_grow_when_the_output_is_large(hls):
    """More than the testbench's first 1024-entry guess: it reruns with larger arrays."""
    graph = examples.elementwise(40, 40, op="add", dtype="float32")
    _assert_same(graph, _inputs({"A": ((40, 40), None), "B": ((40, 40), None)}, 0.9,
                                "float32", seed=7), hls)


@pytest.mark.cosim
def test_untimed_trace_file_round_trips(hls):
    graph = examples.spmv(6, 7)
    res = hls.run(graph, _inputs(CASES["spmv"][1], 0.5, "float32", 3), trace=True)
    assert res.trace is not None
    assert all(c is None for et in res.trace.edges.values() for c in et.cycles)
    text = res.trace.to_text()
    assert text.startswith("# samfuse-trace 1\n# graph spmv\n") and "\n- D\n" in text
    assert compare_traces(Trace.from_text(text), res.trace, timed=False) == []


@pytest.mark.cosim
def test_compiler_error_shows_gxx_message(hls, monkeypatch):
    import cosim.backends._hls as mod

    def broken(graph):
        design = generate(graph)
        src = design.top_source
        design = replace(design, files={**design.files,
                                        src: design.files[src] + "\nint oops( {\n"})
        return design

    monkeypatch.setattr(mod, "generate", broken)
    with pytest.raises(HlsCompileError) as info:
        hls.build(examples.spmv(3, 3))
    msg = str(info.value)
    assert "g++ failed to compile the HLS design of graph 'spmv'" in msg
    assert "error:" in msg and "oops" in msg


@pytest.mark.cosim
def test_a_stream_rule_violation_fails_the_run_with_its_message(hls):
    """An ALU fed a matrix and a vector: stops misalign, in the model and in csim alike."""
    graph = examples.misaligned_alu(2, 3, "dc", "add")
    arrays = {"A": np.ones((2, 3), np.float32), "c": np.ones(3, np.float32)}
    with pytest.raises(SimulationError):
        simulate(graph, arrays)
    with pytest.raises(HlsRunError, match="graph 'misaligned_alu': the HLS C-simulation failed"
                                          "(.|\n)*samfuse csim: samfuse_alu: misaligned"):
        hls.run(graph, arrays)
