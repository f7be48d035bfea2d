"""Whole programs run region by region: outputs equal numpy under every schedule, cycles
add up over regions, and fusing intermediates away reduces the bytes moved."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import compile_model, einsum_program
from cosim import RegionProgress, SystemCBackend, region_weights, run_model, storage_bytes
from ir import FiberTree, Region, Schedule
from sim_models.python import InputError, simulate


def rand(rng, shape, density=1.0):
    vals = rng.uniform(-1, 1, shape).astype(np.float32)
    return np.where(rng.random(shape) < density, vals, 0).astype(np.float32)


def _sparse_chain(seed: int):
    """``Y = A·(B·C)`` with A, B in CSR, and seeded inputs."""
    rng = np.random.default_rng(seed)
    p = einsum_program(["T(i,j) = B(i,k) * C(k,j)", "Y(i,j) = A(i,l) * T(l,j)"],
                       {"A": (4, 4), "B": (4, 5), "C": (5, 3)}, {"A": "csr", "B": "csr"})
    inputs = {"A": rand(rng, (4, 4), 0.5), "B": rand(rng, (4, 5), 0.5),
              "C": rand(rng, (5, 3))}
    return p, inputs


def schedules(p):
    """Unfused, by scope, every 2-statement prefix group, fully fused."""
    targets = [s.target for s in p.statements]
    out = [Schedule.unfused(p), Schedule.by_scope(p), Schedule.fused(p)]
    if len(targets) > 2:
        out.append(Schedule.groups(p, [targets[:2], targets[2:]]))
    return out


def check(p, inputs, gold, **kw):
    runs = []
    for sched in schedules(p):
        run = run_model(compile_model(p, sched), inputs, **kw)
        for name, want in gold.items():
            np.testing.assert_allclose(run.outputs[name], want, rtol=1e-4, atol=1e-4,
                                       err_msg=f"{name} under schedule {sched.name}")
        runs.append(run)
    return runs


def test_two_layer_gcn_all_schedules():
    rng = np.random.default_rng(1)
    n, f, h, c = 7, 5, 4, 3
    p = einsum_program(["T1(i,j) = X(i,k) * W1(k,j)", "T2(i,j) = A(i,k) * T1(k,j)",
                        "H1(i,j) = relu(T2(i,j) + b1(j))", "T3(i,j) = H1(i,k) * W2(k,j)",
                        "H2(i,j) = A(i,k) * T3(k,j)"],
                       {"X": (n, f), "W1": (f, h), "A": (n, n), "b1": (h,), "W2": (h, c)},
                       {"A": "csr", "X": "csr"}, scopes=["l0"] * 3 + ["l1"] * 2)
    X, W1, W2, b1 = rand(rng, (n, f), 0.5), rand(rng, (f, h)), rand(rng, (h, c)), \
        rand(rng, (h,))
    A = sp.random(n, n, density=0.3, random_state=2, format="csr", dtype=np.float32)
    H1 = np.maximum(A.toarray() @ (X @ W1) + b1, 0)
    check(p, {"X": X, "W1": W1, "W2": W2, "b1": b1, "A": A}, {"H2": A.toarray() @ (H1 @ W2)})


def test_gcn_chain_without_functions():
    rng = np.random.default_rng(3)
    p = einsum_program(["T1(i,j) = X(i,k) * W(k,j)", "T2(i,j) = A(i,k) * T1(k,j)",
                        "H(i,j) = T2(i,j) + b(j)"],
                       {"X": (6, 4), "W": (4, 3), "A": (6, 6), "b": (3,)}, {"A": "csr"})
    X, W, b = rand(rng, (6, 4)), rand(rng, (4, 3)), rand(rng, (3,))
    A = sp.random(6, 6, density=0.4, random_state=4, format="csr", dtype=np.float32)
    check(p, {"X": X, "W": W, "b": b, "A": A}, {"H": A.toarray() @ (X @ W) + b})


@pytest.mark.parametrize("fmts", [("csr", "csr", "csr"), ("csc", "csr", "dense"),
                                  ("dense", "csc", "csc"), ("dcsr", "dense", "csr")])
def test_nested_matmul_a_bc(fmts):
    rng = np.random.default_rng(5)
    p = einsum_program(["T(i,j) = B(i,k) * C(k,j)", "Y(i,j) = A(i,l) * T(l,j)"],
                       {"A": (5, 4), "B": (4, 6), "C": (6, 3)}, dict(zip("ABC", fmts, strict=True)))
    A, B, C = rand(rng, (5, 4), 0.5), rand(rng, (4, 6), 0.5), rand(rng, (6, 3), 0.5)
    check(p, {"A": A, "B": sp.csr_matrix(B), "C": C}, {"Y": A @ (B @ C)})


def test_spmm_chain_with_two_outputs_recomputes():
    rng = np.random.default_rng(6)
    p = einsum_program(["T(i,j) = B(i,k) * C(k,j)", "U(i,j) = A(i,k) * T(k,j)",
                        "Y(i,j) = U(i,j) + D(i,j)", "Z(i,j) = T(i,j) * U(i,j)"],
                       {"A": (4, 4), "B": (4, 3), "C": (3, 5), "D": (4, 5)},
                       {"A": "csr", "B": "csr", "C": "csr", "D": "csr"},
                       outputs=["Y", "Z"])
    A, B, C, D = (rand(rng, s, 0.5) for s in [(4, 4), (4, 3), (3, 5), (4, 5)])
    T = B @ C
    U = A @ T
    runs = check(p, dict(A=A, B=B, C=C, D=D), {"Y": U + D, "Z": T * U})
    unfused, fused = runs[0], runs[2]
    (region,) = fused.regions
    assert list(region.results) == ["Y", "Z"]  # one fused expression per export
    # Z inlines T twice (once directly, once inside U): recomputation costs cycles
    assert fused.cycles > 0 and unfused.cycles > 0


def test_cycles_add_up_and_match_the_kernel_graphs():
    p, inputs = _sparse_chain(seed=7)
    for sched in (Schedule.unfused(p), Schedule.fused(p)):
        cm = compile_model(p, sched)
        run = run_model(cm, inputs)
        assert run.cycles == sum(r.cycles for r in run.regions) > 0
        # each region's cycles are its kernel graph's own run on the same tensors
        memory = {n: v for n, v in inputs.items()}
        for reg, rr in zip(cm.regions, run.regions, strict=True):
            (k,) = reg.kernels
            alone = simulate(k.graph, {t: memory[t] for t in k.inputs})
            assert alone.cycles == rr.cycles
            memory[k.target] = alone.dense()
        assert str(run).splitlines()[-1].split()[:3] == ["total", str(len(cm.regions)),
                                                       str(run.cycles)]


def test_bytes_moved_exact_and_smaller_when_fused():
    rng = np.random.default_rng(8)
    p = einsum_program(["T(i,j) = A(i,k) * X(k,j)", "Y(i,j) = A(i,k) * T(k,j)"],
                       {"A": (6, 6), "X": (6, 3)}, {"A": "csr"})
    A = sp.random(6, 6, density=0.3, random_state=9, format="csr", dtype=np.float32)
    X = rand(rng, (6, 3))
    unfused = run_model(compile_model(p), {"A": A, "X": X})
    csr_bytes = 4 * (len(A.indptr) + len(A.indices) + len(A.data))
    dense = 4 * 6 * 3
    first = unfused.regions[0]
    assert first.bytes_read == {"A": csr_bytes, "X": dense}
    assert first.bytes_written == {"T": dense}
    assert unfused.bytes_moved == 2 * (csr_bytes + dense + dense)
    fused = run_model(compile_model(p, Schedule.fused(p)), {"A": A, "X": X})
    # T never reaches memory: one write and one read fewer; A read twice by one graph
    # counts once per graph
    assert fused.bytes_moved == unfused.bytes_moved - 2 * dense - csr_bytes
    assert fused.bytes_moved < unfused.bytes_moved


def test_intermediate_format_override_is_materialised():
    rng = np.random.default_rng(10)
    p = einsum_program(["T(i,j) = B(i,j) * C(i,j)", "Y(i,j) = T(i,j) + D(i,j)"],
                       {"B": (4, 5), "C": (4, 5), "D": (4, 5)},
                       {"B": "csr", "C": "csr", "D": "csr"})
    B, C, D = (rand(rng, (4, 5), 0.4) for _ in range(3))
    sched = Schedule.groups(p, [["T"], ["Y"]], {"T": "dcsr"})
    run = run_model(compile_model(p, sched), {"B": B, "C": C, "D": D})
    np.testing.assert_allclose(run.outputs["Y"], B * C + D, rtol=1e-5)
    nnz = int(np.count_nonzero(B * C))
    rows = int(np.count_nonzero((B * C).any(axis=1)))
    assert run.regions[0].bytes_written["T"] == 4 * ((2 + rows) + (rows + 1 + nnz) + nnz)
    assert storage_bytes(FiberTree.from_any(B * C, "dcsr")) == \
        run.regions[0].bytes_written["T"]


def test_input_errors():
    p = einsum_program(["Y(i) = B(i,k) * c(k)"], {"B": (3, 4), "c": (4,)})
    cm = compile_model(p)
    with pytest.raises(InputError, match=r"needs input tensor\(s\) \['c'\]"):
        run_model(cm, {"B": np.ones((3, 4))})
    with pytest.raises(InputError, match=r"has no input tensor\(s\) \['q'\]"):
        run_model(cm, {"B": np.ones((3, 4)), "c": np.ones(4), "q": 1})
    with pytest.raises(InputError, match=r"input 'c': shape \(5,\), but the program "
                                         r"declares \(4,\)"):
        run_model(cm, {"B": np.ones((3, 4)), "c": np.ones(5)})


# -- random chains -------------------------------------------------------------------------

FMT2 = ["dense", "csr", "csc", "dcsr", "dc:1,0"]
OPS = ["right", "left", "mul", "add", "relu"]


@st.composite
def chains(draw):
    """2-3 statements; each multiplies the previous result by a new matrix (left or
    right), combines it elementwise with one, or applies relu after a broadcast
    scaling; formats of inputs and intermediates vary."""
    rows, cols = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    shapes = {"M0": (rows, cols)}
    stmts, gold_ops = [], []
    prev = "M0"
    for n in range(1, draw(st.integers(2, 3)) + 1):
        op = draw(st.sampled_from(OPS))
        name, out = f"M{n}", f"T{n}"
        if op == "right":
            k = draw(st.integers(1, 4))
            shapes[name] = (cols, k)
            cols = k
            stmts.append(f"{out}(i,j) = {prev}(i,k) * {name}(k,j)")
        elif op == "left":
            k = draw(st.integers(1, 4))
            shapes[name] = (k, rows)
            rows = k
            stmts.append(f"{out}(i,j) = {name}(i,k) * {prev}(k,j)")
        elif op == "relu":
            shapes[name] = (cols,)
            stmts.append(f"{out}(i,j) = relu({prev}(i,j) * {name}(j))")
        else:
            shapes[name] = (rows, cols)
            stmts.append(f"{out}(i,j) = {prev}(i,j) {'*' if op == 'mul' else '+'} "
                         f"{name}(i,j)")
        gold_ops.append((op, name))
        prev = out
    names = [*shapes, *(f"T{n}" for n in range(1, len(stmts)))]
    formats = {t: draw(st.sampled_from(FMT2)) for t in names if len(shapes.get(t, "ij")) == 2}
    return stmts, shapes, formats, gold_ops


def numpy_chain(inputs, ops):
    acc = inputs["M0"]
    for op, name in ops:
        m = inputs[name]
        acc = {"right": lambda a, b: a @ b, "left": lambda a, b: b @ a,
               "relu": lambda a, b: np.maximum(a * b, 0), "mul": np.multiply,
               "add": np.add}[op](acc, m)
    return acc


@settings(max_examples=25, deadline=None)
@given(chain=chains(), seed=st.integers(0, 2**16), density=st.sampled_from([0.3, 0.7, 1.0]),
       split=st.integers(0, 3))
def test_random_chains_match_numpy_under_every_schedule(chain, seed, density, split):
    stmts, shapes, formats, ops = chain
    p = einsum_program(stmts, shapes, formats)
    rng = np.random.default_rng(seed)
    inputs = {n: rand(rng, s, density) for n, s in shapes.items()}
    targets = [s.target for s in p.statements]
    cut = min(split, len(targets) - 1) or 1
    sched = [Schedule.unfused(p), Schedule.fused(p),
             Schedule([Region("a", targets[:cut]), Region("b", targets[cut:])])]
    want = numpy_chain(inputs, ops)
    for s in sched:
        run = run_model(compile_model(p, s), inputs)
        np.testing.assert_allclose(run.outputs[targets[-1]], want, rtol=1e-4, atol=1e-4,
                                   err_msg=f"{stmts} {formats} under {s.name}")
        assert run.cycles == sum(r.cycles for r in run.regions)


@pytest.mark.parametrize("second", ["T1(i,j) * M2(i,j)", "T1(i,j) + M2(i,j)"])
@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 4, 2)])
def test_epilogue_chain_with_a_factor_builds_no_dead_broadcast(second, shape):
    """Found by the random chains: fused, ``relu((sum(k) M0*M1) * M2 * M3(j))`` in order
    j,k,i once broadcast ``M3(j)`` over the accumulator's inner loop as a probe for an
    epilogue join that belongs to the inner product; that dead ``broadcast`` saw one
    value per ``j`` against a repsig per ``(j,k)`` and stopped the simulation."""
    rows, mid, cols = shape
    stmts = ["T1(i,j) = M0(i,k) * M1(k,j)", f"T2(i,j) = {second}",
             "T3(i,j) = relu(T2(i,j) * M3(j))"]
    shapes = {"M0": (rows, mid), "M1": (mid, cols), "M2": (rows, cols), "M3": (cols,)}
    formats = {"M0": "csc", "M1": "dense", "M2": "dense", "T1": "dense", "T2": "dense"}
    p = einsum_program(stmts, shapes, formats)
    rng = np.random.default_rng(3)
    inputs = {n: rand(rng, s, 0.7) for n, s in shapes.items()}
    ops = [("right", "M1"), ("mul" if "*" in second else "add", "M2"), ("relu", "M3")]
    want = numpy_chain(inputs, ops)
    compiled = compile_model(p, Schedule.fused(p))
    for kernel in (k for r in compiled.regions for k in r.kernels):
        fed = {e.src_node for e in kernel.graph.edges}
        assert all(n.id in fed for n in kernel.graph.nodes.values() if n.op == "broadcast")
    run = run_model(compiled, inputs)
    np.testing.assert_allclose(run.outputs["T3"], want, rtol=1e-4, atol=1e-4)


@pytest.mark.cosim
@pytest.mark.skipif(SystemCBackend.unavailable() is not None,
                    reason=str(SystemCBackend.unavailable()))
def test_systemc_backend_agrees_region_by_region():
    p, inputs = _sparse_chain(seed=11)
    for sched in (Schedule.unfused(p), Schedule.fused(p)):
        cm = compile_model(p, sched)
        py, sc = run_model(cm, inputs), run_model(cm, inputs, backend="systemc")
        assert [r.cycles for r in py.regions] == [r.cycles for r in sc.regions]
        np.testing.assert_allclose(sc.outputs["Y"], py.outputs["Y"])


def test_torch_inputs_and_unbounded_fifos():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    p = einsum_program(["T(i,j) = A(i,k) * X(k,j)", "Y(i,j) = A(i,k) * T(k,j)"],
                       {"A": (5, 5), "X": (5, 2)}, {"A": "csr"})
    A, X = rand(rng, (5, 5), 0.4), rand(rng, (5, 2))
    inputs = {"A": torch.from_numpy(A).to_sparse(), "X": torch.from_numpy(X)}
    cm = compile_model(p, Schedule.fused(p))
    bounded, unbounded = run_model(cm, inputs), run_model(cm, inputs, depth=None)
    for run in (bounded, unbounded):
        np.testing.assert_allclose(run.outputs["Y"], A @ A @ X, rtol=1e-4, atol=1e-5)
    assert unbounded.cycles <= bounded.cycles
    assert set(bounded.nodes) == {"all/Y"}


LAYERWISE = """
name: layer-wise
regions:
- {name: layer0, statements: [T1, T2, H1], order: 'i,j'}
- {name: layer1, statements: 'T3, H2', transpose: false}
formats: {H1: dc, W2: 'dd:1,0'}
"""


def test_yaml_schedule_with_formats_and_no_transposes():
    """The docs' YAML example: H1 through memory as CSR, W2 column-major so layer 1 needs
    no transpose."""
    rng = np.random.default_rng(13)
    p = einsum_program(["T1(i,j) = X(i,k) * W1(k,j)", "T2(i,j) = A(i,k) * T1(k,j)",
                        "H1(i,j) = T2(i,j) * b1(j)", "T3(i,j) = H1(i,k) * W2(k,j)",
                        "H2(i,j) = A(i,k) * T3(k,j)"],
                       {"X": (6, 4), "W1": (4, 3), "A": (6, 6), "b1": (3,), "W2": (3, 2)},
                       {"A": "csr"})
    ins = {n: rand(rng, p.tensors[n].shape) for n in p.inputs}
    ins["A"] = rand(rng, (6, 6), 0.4)
    cm = compile_model(p, Schedule.from_yaml(LAYERWISE))
    assert cm.regions[1].kernels[0].transposed == {}
    run = run_model(cm, ins)
    H1 = ins["A"] @ (ins["X"] @ ins["W1"]) * ins["b1"]
    np.testing.assert_allclose(run.outputs["H2"], ins["A"] @ (H1 @ ins["W2"]), rtol=1e-4,
                               atol=1e-5)
    dense_h1 = 4 * 6 * 3
    assert run.regions[0].bytes_written["H1"] == 4 * (7 + 2 * 6 * 3)  # CSR of a full H1
    assert run.regions[0].bytes_written["H1"] > dense_h1


def test_progress_reports_every_region_with_the_time_left():
    p, inputs = _sparse_chain(0)
    compiled = compile_model(p, Schedule.unfused(p))
    seen: list[RegionProgress] = []
    run_model(compiled, inputs, progress=seen.append)
    assert [e.index for e in seen] == [1, 2] and {e.count for e in seen} == {2}
    assert [e.region for e in seen] == [r.name for r in compiled.regions]
    assert seen[0].elapsed <= seen[1].elapsed and seen[-1].remaining == 0.0
    assert seen[0].remaining is not None and seen[0].remaining > 0
    assert str(seen[0]).startswith(f"region 1/2 {seen[0].region} on python: ")


def test_region_weights_follow_the_cost_heuristic():
    """A kernel over a 40x40 dense operand is estimated as more work than over 4x4."""
    small, big = (einsum_program(["y(i) = A(i,j) * x(j)"], {"A": (n, n), "x": (n,)}, {})
                  for n in (4, 40))
    w_small = region_weights(compile_model(small, Schedule.fused(small)), {})
    w_big = region_weights(compile_model(big, Schedule.fused(big)), {})
    assert len(w_small) == 1 and w_big[0] > 10 * w_small[0]


def test_the_json_summary_of_a_blocked_model_prices_its_block_valued_tensors():
    """``model --json`` estimates each region from the tensors the run read; a tensor
    of B x B blocks is priced on its block grid (it crashed the heuristic's nnz count)."""
    import dataclasses

    import torch

    from compiler import from_torch, torch_inputs, torch_weights
    from compiler._blocks import seed_blocks
    from compiler.models import BigBirdAttention
    from cosim import model_json

    m = BigBirdAttention.from_config("small").eval()
    x = m.example_inputs()
    p = from_torch(m, x, formats=m.sparse_formats)
    binds = {**torch_weights(m, p), **torch_inputs(p, x)}
    sched = dataclasses.replace(Schedule.unfused(p), block=seed_blocks(p, 4))
    compiled = compile_model(p, sched, stats=binds)
    run = run_model(compiled, binds, hw="fuseflow")
    summary = model_json(compiled, run)
    with torch.no_grad():
        np.testing.assert_allclose(run.outputs[p.outputs[0]], m(*x).numpy(), rtol=1e-4,
                                   atol=1e-5)
    assert summary["cycles"] == sum(r["cycles"] for r in summary["regions"]) == run.cycles
    assert all(r["est_flops"] > 0 and r["est_dram_bytes"] > 0 for r in summary["regions"])


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("stored", [False, True])
def test_kernel_values_are_what_the_kernels_read(fused, stored):
    """The heuristic's values: the bound tensors and the intermediates a kernel reads
    (``T`` unfused, none fused), numpy's, as arrays or as trees in memory format."""
    from cosim.runs._model_run import kernel_values

    p, inputs = _sparse_chain(3)
    compiled = compile_model(p, Schedule.fused(p) if fused else Schedule.unfused(p))
    got = kernel_values(compiled, inputs, stored=stored)
    want = {**inputs} if fused else {**inputs, "T": inputs["B"] @ inputs["C"]}
    assert set(got) == set(want)
    for name, value in want.items():
        if stored:
            assert isinstance(got[name], FiberTree)
            assert str(got[name].format) == str(FiberTree.from_any(
                value, compiled.formats[name]).format)
        dense = got[name].to_dense() if stored else got[name]
        np.testing.assert_allclose(dense, value, rtol=1e-6, atol=1e-6, err_msg=name)
