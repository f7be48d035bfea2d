"""The FLOPs/bytes heuristic against counts measured on the Python reference model."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import TensorStats, compile_expression, estimate
from cosim import measure, measured_counts, relative_errors
from cosim.runs._counts import KERNEL_CASES, heuristic_error_table, kernel_case_inputs
from ir import examples
from sim_models.python import simulate

#: documented bound (docs/cost.md) on the heuristic's relative error for uniform random
#: inputs with at least a few hundred expected non-zeros per operand
TOLERANCE = 0.15


def _compile(name, inputs):
    case = KERNEL_CASES[name]
    return compile_expression(case.expr, case.formats, {k: v.shape for k, v in inputs.items()},
                              order=case.order)


def test_spmv_counts_match_hand_count():
    b = sp.random(20, 16, density=0.2, format="csr", random_state=3, dtype=np.float32)
    c = np.arange(1, 17, dtype=np.float32)
    counts, result = measure(examples.spmv(20, 16), {"B": b, "c": c})
    np.testing.assert_allclose(result.dense(), b @ c, rtol=1e-5)
    assert counts.flops == 2 * b.nnz                       # mul + reduce
    assert counts.words_read == {"B": 2 * 20 + 2 * b.nnz, "c": b.nnz}
    assert counts.words_written == {"x": 20}
    assert counts.bytes == 4 * (2 * 20 + 3 * b.nnz + 20)


@pytest.mark.parametrize("fmt", ["csr", "dcsr", "dense"])
def test_fuseflow_counting_leaves_out_the_compressed_scanners_reads(fmt):
    """FuseFlow's artifact sums value reads and all writes (Comal prints no read count
    for a compressed scanner): B's seg/crd reads drop out, values and writes stay."""
    rng = np.random.default_rng(7)
    b = (rng.random((12, 9)) < 0.3) * rng.uniform(0.5, 1.5, (12, 9)).astype(np.float32)
    b[4] = 0.0  # an empty row
    g = compile_expression("x(i) = B(i,j) * c(j)", {"B": fmt}, {"B": (12, 9), "c": (9,)})
    c = np.arange(1, 10, dtype=np.float32)
    res = simulate(g, {"B": b, "c": c})
    np.testing.assert_allclose(res.dense("x"), b @ c, rtol=1e-5)
    work = res.work(g)
    nnz, rows = int(np.count_nonzero(b)), int(np.count_nonzero(b.any(1)))
    if fmt == "dense":  # B scanned dense: no compressed level read at all
        assert work.level_words_read == {}
        assert work.fuseflow_mem_accesses == work.mem_accesses
    else:  # csr: 12 rows of seg pairs; dcsr: one seg pair for the row level as well
        refs = 12 if fmt == "csr" else 1 + rows
        crds = nnz if fmt == "csr" else rows + nnz
        assert work.level_words_read == {"B": 2 * refs + crds}
        assert work.fuseflow_mem_accesses == \
            work.mem_accesses - (2 * refs + crds) == 2 * nnz + sum(work.words_written.values())


@pytest.mark.parametrize("name", ["spmm_ikj", "spmm_ijk", "spmm_kij", "spmm_jki"])
def test_spmm_flops_are_the_scalar_products(name):
    inputs = kernel_case_inputs(KERNEL_CASES[name], 0.15, seed=4)
    counts, result = measure(_compile(name, inputs), inputs)
    b, c = inputs["B"] != 0, inputs["C"] != 0
    products = int((b.sum(0) * c.sum(1)).sum())
    assert counts.flops == 2 * products                    # one mul and one add each
    np.testing.assert_allclose(result.dense(), inputs["B"] @ inputs["C"], rtol=1e-4)
    out = result.outputs["X"]
    if out.format.is_compressed(1):                        # crd + seg words, dense rows
        assert counts.words_written["X"] == 2 * out.nnz + out.shape[out.format.mode_order[0]] \
            + 1


def test_counts_come_from_the_counters_or_the_trace():
    """An untraced run counts through its data-token counters, exactly as the trace
    does; a run with neither (a backend without counters, untraced) is refused."""
    g = examples.spmv(6, 5)
    b = sp.random(6, 5, density=0.4, format="csr", random_state=5, dtype=np.float32)
    inputs = {"B": b, "c": np.ones(5, np.float32)}
    counted, traced = measure(g, inputs)
    traced.data_tokens = {}  # counted from the streams themselves
    assert measured_counts(g, traced) == counted
    assert counted.flops == 2 * b.nnz
    result = simulate(g, inputs)
    assert measured_counts(g, result) == counted
    result.data_tokens = {}
    with pytest.raises(ValueError, match="run it traced to count its work"):
        measured_counts(g, result)


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(KERNEL_CASES)), scale=st.floats(0.1, 0.4),
       seed=st.integers(0, 100))
def test_estimate_is_exact_for_dense_inputs(name, scale, seed):
    inputs = kernel_case_inputs(KERNEL_CASES[name], 1.0, seed, scale)
    graph = _compile(name, inputs)
    counts, _ = measure(graph, inputs)
    for stats in (inputs, {k: 1.0 for k in inputs}):
        est = estimate(graph, stats)
        assert est.flops == pytest.approx(counts.flops, rel=1e-12)
        assert est.bytes_read == pytest.approx(counts.bytes_read, rel=1e-12)
        assert est.bytes_written == pytest.approx(counts.bytes_written, rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_estimate_within_tolerance_for_uniform_sparse_inputs(seed):
    for row in heuristic_error_table(density=0.2, seed=seed, scale=1.5):
        for stats in ("error_tensor", "error_density"):
            worst = max(row[stats].values())
            assert worst <= TOLERANCE, (row["kernel"], stats, row[stats])


def test_estimate_tracks_density():
    """Same graph, sparser inputs: the estimate falls the way the measurement does."""
    case = KERNEL_CASES["spmm_ikj"]
    graph = _compile("spmm_ikj", kernel_case_inputs(case, 1.0, scale=1.5))
    for density in (0.05, 0.3):
        inputs = kernel_case_inputs(case, density, seed=7, scale=1.5)
        counts, _ = measure(graph, inputs)
        errors = relative_errors(estimate(graph, inputs), counts)
        assert max(errors.values()) <= TOLERANCE, (density, errors)


def test_tensor_stats_levels():
    x = np.zeros((6, 5), np.float32)
    x[1, [0, 3]] = 1
    x[4, 2] = 2
    s = TensorStats.from_tensor(x, "dcsr")
    assert s.shape == (6, 5) and s.density == pytest.approx(3 / 30)
    assert s.levels("dcsr") == [(6, pytest.approx(2 / 6)), (5, pytest.approx(3 / 10))]
    # another format falls back on the uniform model: rows are non-empty w.p. 1-(1-p)^5
    p = 0.1
    (rows, pr), (cols, pc) = s.levels("csc")
    assert (rows, cols, pr) == (5, 6, 1.0)
    assert pc == pytest.approx(p)
    (_, q0), (_, q1) = TensorStats((6, 5), p).levels("dcsr")
    assert q0 == pytest.approx(1 - (1 - p) ** 5) and q0 * q1 == pytest.approx(p)


def test_estimate_errors():
    g = examples.spmv(4, 3)
    with pytest.raises(ValueError, match=r"no statistics for input tensor\(s\) \['c'\]"):
        estimate(g, {"B": 0.5})
    with pytest.raises(ValueError, match="shape"):
        estimate(g, {"B": TensorStats((3, 3), 0.5), "c": 1.0})
    with pytest.raises(ValueError, match="density"):
        TensorStats((3,), 1.5)


def test_estimate_reports_edge_tokens():
    b = sp.random(30, 20, density=0.3, format="csr", random_state=1, dtype=np.float32)
    g = examples.spmv(30, 20)
    est = estimate(g, {"B": b, "c": np.ones(20, np.float32)})
    _, result = measure(g, {"B": b, "c": np.ones(20, np.float32)})
    edge = next(e.name for e in g.edges if e.src == "mul.val")
    assert est.tokens[edge] == pytest.approx(b.nnz)
    assert sum(1 for t in result.trace.edges[edge].tokens if isinstance(t, float)) == b.nnz


def test_broadcast_takes_the_repeat_signals_shape():
    """row_scale on a full 5x6 matrix: 5 row sums broadcast to 30 values; the reducer and
    the multiplier do 30 FLOPs each. Dense input: the estimate is exact."""
    g = examples.row_scale(5, 6, "dc")
    a = np.full((5, 6), 2.0, np.float32)
    est = estimate(g, {"A": a})
    assert est.tokens["rowsum.val->bc_j.val_in"] == pytest.approx(5)
    assert est.tokens["bc_j.val->mul.b"] == pytest.approx(30)
    assert est.flops == pytest.approx(60)
    counts, _ = measure(g, {"A": a})
    assert counts.flops == 60
    assert relative_errors(est, counts) == pytest.approx(
        {k: 0.0 for k in relative_errors(est, counts)})


def test_locate_is_priced_per_sparse_coordinate():
    """The compiled SpMV locates c with B's crds: the located refs (and c's loads) are
    B's nnz, not B's rows times c's length as a dense scan + intersect would carry."""
    b = sp.random(30, 20, density=0.1, format="csr", random_state=2, dtype=np.float32)
    inputs = {"B": b.toarray(), "c": np.ones(20, np.float32)}
    g = compile_expression("x(i) = B(i,j) * c(j)", {"B": "csr"}, {"B": (30, 20), "c": (20,)})
    (loc,) = [n for n in g.nodes.values() if n.op == "locate"]
    edge = next(e.name for e in g.edges if e.src == f"{loc.id}.ref")
    est = estimate(g, inputs)
    assert est.tokens[edge] == pytest.approx(b.nnz)
    counts, result = measure(g, inputs)
    assert sum(isinstance(t, int) for t in result.trace.edges[edge].tokens) == b.nnz
    assert est.words_read["c"] == pytest.approx(counts.words_read["c"]) == b.nnz
    hand = estimate(examples.spmv(30, 20), inputs)  # scan_dense c + intersect
    assert max(hand.tokens.values()) == pytest.approx(30 * 20)
    assert max(est.tokens.values()) < 30 * 20 / 4


@pytest.mark.parametrize("name", ["gcn", "autoencoder"])
def test_model_kernels_within_tolerance(name):
    """Every kernel of a compiled evaluation model (frontend → unfused schedule)."""
    from compiler import compile_model, from_torch, torch_inputs, torch_weights
    from compiler.models import MODELS
    from cosim import model_counts

    model = MODELS[name].from_config("small")
    args = model.example_inputs()
    program = from_torch(model, args)
    rows = model_counts(compile_model(program),
                        {**torch_weights(model, program), **torch_inputs(program, args)})
    assert rows
    for row in rows:
        assert max(row.errors.values()) <= TOLERANCE, (row.target, row.errors)


def test_every_primitive_has_a_cost_rule():
    from compiler._cost import _Walker
    from ir import CATALOGUE

    missing = [op for op in CATALOGUE if not hasattr(_Walker, f"_op_{op}")]
    assert not missing, f"cost model has no rule for {missing}"
