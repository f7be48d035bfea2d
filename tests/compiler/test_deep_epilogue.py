"""Deep epilogue joins (docs/compiler.md, rule 5): accumulator rows meeting operands that
go on iterating after the join — GraphSAGE's layer associated as (Â·X)·W, a union of a
plain product sum with a nested one — on the reference model against numpy and torch."""

from __future__ import annotations

import dataclasses
import functools
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import (
    LoweringError,
    _compile,
    compile_expression,
    compile_model,
    from_torch,
    torch_inputs,
    torch_weights,
)
from compiler import models as M
from cosim import run_model
from ir import Schedule
from sim_models.python import simulate

warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")

#: X·Sᵀ (+ b) + (A·Z)·Nᵀ, optionally under relu; Z may be X itself (GraphSAGE)
SAGE = "Y(i,j) = {open}sum(k) X(i,k) * S(j,k){bias} + sum(k2) (sum(k3) A(i,k3) * {z}(k3,k2))" \
       " * N(j,k2){close}"
#: FuseFlow's GCN layer (Â·X)·Wᵀ + b in its own order i,k3,k2,j: a row accumulator over
#: k3, the row times W's columns, a second accumulator over k2
GCN = "Y(i,j) = relu(sum(k2) (sum(k3) A(i,k3) * X(k3,k2)) * N(j,k2) + b(j))"
FORMATS = st.sampled_from(["dense", "csr", "dcsr"])
DENSITY = st.sampled_from([0.0, 0.3, 0.7, 1.0])


def _rand(rng: np.random.Generator, shape: tuple[int, ...], density: float) -> np.ndarray:
    return (rng.uniform(-2, 2, shape) * (rng.random(shape) < density)).astype(np.float32)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 5), f=st.integers(1, 4), h=st.integers(1, 4),
       dens=st.tuples(DENSITY, DENSITY, DENSITY, DENSITY),
       fmts=st.tuples(FORMATS, FORMATS, FORMATS, FORMATS), bias=st.booleans(),
       relu=st.booleans(), same_x=st.booleans(), seed=st.integers(0, 2**16))
def test_union_of_a_product_sum_and_a_nested_product_matches_numpy(n, f, h, dens, fmts,
                                                                   bias, relu, same_x,
                                                                   seed):
    rng = np.random.default_rng(seed)
    z = "X" if same_x else "Z"
    a = {"A": _rand(rng, (n, n), dens[0]), "X": _rand(rng, (n, f), dens[1]),
         "S": _rand(rng, (h, f), dens[2]), "N": _rand(rng, (h, f), dens[3])}
    if not same_x:
        a["Z"] = _rand(rng, (n, f), dens[1])
    if bias:
        a["b"] = _rand(rng, (h,), 1.0)
    expr = SAGE.format(open="relu(" if relu else "", close=")" if relu else "", z=z,
                       bias=" + b(j)" if bias else "")
    formats = {"A": fmts[0], "X": fmts[1], "S": fmts[2], "N": fmts[3]}
    if bias and fmts[1] == "dcsr":  # X·Sᵀ + b(j) is nonzero in every row of X
        formats["X"] = "csr"
    g = compile_expression(expr, formats, {t: x.shape for t, x in a.items()})
    want = a["X"] @ a["S"].T + (a["A"] @ a[z]) @ a["N"].T + (a["b"] if bias else 0)
    if relu:
        want = np.maximum(want, 0)
    np.testing.assert_allclose(simulate(g, a).dense("Y"), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("w_format", ["csr", "dense"])
def test_fuseflow_gcn_order_streams_the_row_of_a_times_x(w_format):
    rng = np.random.default_rng(3)
    a = {"A": _rand(rng, (9, 9), 0.3), "X": _rand(rng, (9, 6), 1.0),
         "N": _rand(rng, (4, 6), 0.4), "b": _rand(rng, (4,), 1.0)}
    g = compile_expression(GCN, {"A": "csr", "N": w_format}, {t: x.shape for t, x in a.items()},
                           order="i,k3,k2,j")
    assert g.meta["reductions"] == ["sum(k3): spacc", "sum(k2): spacc"]
    want = np.maximum((a["A"] @ a["X"]) @ a["N"].T + a["b"], 0)
    np.testing.assert_allclose(simulate(g, a).dense("Y"), want, rtol=1e-4, atol=1e-5)


def test_graphsage_layer_lowers_in_fuseflows_order():
    expr = SAGE.format(open="relu(", close=")", z="X", bias=" + b(j)")
    shapes = {"A": (6, 6), "X": (6, 5), "S": (4, 5), "N": (4, 5), "b": (4,)}
    g = compile_expression(expr, {"A": "csr", "S": "csr", "N": "csr"}, shapes)
    assert g.meta["order"] == ["i", "k3", "k2", "j", "k"]
    assert g.meta["reductions"] == ["sum(k3): spacc", "sum(k2): spacc", "sum(k): reduce"]


@pytest.mark.parametrize("s_format", ["csr", "dcsr"])
@pytest.mark.parametrize("empty_rows", [(), (1,), (0, 3)])
def test_graphsage_self_term_locates_the_dense_features(s_format, empty_rows):
    """After the union of the two terms at j, S(j,:) may be absent (its crds can carry
    N), yet the dense X(i,:) is located by S's crds instead of scanned and intersected:
    the self term costs a firing per stored S(j,k) and row i, not one per feature (as
    the unfused X·Sᵀ does; FuseFlow's GraphSAGE runs its self term at that cost). Rows
    of S left empty make N flow through the locate."""
    rng = np.random.default_rng(11)
    a = {"A": _rand(rng, (7, 7), 0.4), "X": _rand(rng, (7, 9), 1.0),
         "S": _rand(rng, (4, 9), 0.3), "N": _rand(rng, (4, 9), 0.5), "b": _rand(rng, (4,), 1.0)}
    a["S"][list(empty_rows)] = 0.0
    expr = SAGE.format(open="relu(", close=")", z="X", bias=" + b(j)")
    g = compile_expression(expr, {"A": "csr", "S": s_format, "N": "csr"},
                           {t: x.shape for t, x in a.items()})
    assert g.meta["order"] == ["i", "k3", "k2", "j", "k"]
    (x_k,) = [nid for nid, n in g.nodes.items() if n.params.get("tensor") == "X"
              and n.params.get("level") == 1 and n.op in ("locate", "scan_dense")
              and nid.startswith("X_")]
    assert g.nodes[x_k].op == "locate"
    res = simulate(g, a)
    want = np.maximum(a["X"] @ a["S"].T + (a["A"] @ a["X"]) @ a["N"].T + a["b"], 0)
    np.testing.assert_allclose(res.dense("Y"), want, rtol=1e-4, atol=1e-5)
    rows, feats = a["X"].shape
    hidden = a["S"].shape[0]
    # per row i: one firing per stored S(j,k) plus one control token per j (a stop, or N)
    assert res.nodes[x_k].fires <= rows * (np.count_nonzero(a["S"]) + 2 * hidden) + 1
    assert res.nodes[x_k].fires < rows * hidden * feats


def _spied_passes(monkeypatch) -> list[tuple[bool, object, object]]:
    """Every pass of the order search as it returns: (deep, its OrderSearch, its best
    (key, graph) then, before a later pass merges into it)."""
    passes: list[tuple[bool, object, object]] = []
    search = _compile._search_orders

    def spy(job, stats, deep, **kw):
        out = search(job, stats, deep, **kw)
        passes.append((deep, out, out.best))
        return out

    monkeypatch.setattr(_compile, "_search_orders", spy)
    return passes


def test_the_search_finds_fuseflows_gcn_order_with_its_deep_epilogue(monkeypatch):
    """GCN's layer in (Â·X)·W form: the first pass lowers without deep epilogues, the
    second tries the orders it rejected and FuseFlow's i,k3,k2,j (a row accumulator,
    then the row times W) prices cheaper, so it is chosen; the GraphSAGE layer, which
    lowers only with a deep epilogue, takes the full second pass as before."""
    passes = _spied_passes(monkeypatch)
    rng = np.random.default_rng(5)
    a = {"A": _rand(rng, (6, 6), 0.4), "X": _rand(rng, (6, 5), 1.0),
         "N": _rand(rng, (4, 5), 0.5), "b": _rand(rng, (4,), 1.0)}
    g = compile_expression(GCN, {"A": "csr", "N": "csr"}, {t: x.shape for t, x in a.items()})
    assert [p[0] for p in passes] == [False, True]
    assert g.meta["order"] == ["i", "k3", "k2", "j"]
    plain = passes[0][2][0][1]
    chosen = {r["order"]: r for r in g.meta["order_search"]["candidates"]}["i,k3,k2,j"]
    assert chosen["cost"] < plain
    want = np.maximum((a["A"] @ a["X"]) @ a["N"].T + a["b"], 0)
    np.testing.assert_allclose(simulate(g, a).dense("Y"), want, rtol=1e-4, atol=1e-5)
    passes.clear()
    compile_expression(SAGE.format(open="", close="", z="X", bias=""),
                       {"A": "csr", "S": "csr", "N": "csr"},
                       {"A": (6, 6), "X": (6, 5), "S": (4, 5), "N": (4, 5)})
    assert [p[0] for p in passes] == [False, True]
    assert passes[1][1].rows and len(passes[1][1].rows) == 120  # every order, not a few


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 6), f=st.integers(1, 5), h=st.integers(1, 4),
       dens=st.tuples(DENSITY, DENSITY),
       fmts=st.tuples(st.sampled_from(["dense", "csr"]), FORMATS))  # the bias needs A's rows dense
def test_a_deep_order_wins_only_when_strictly_cheaper(n, f, h, dens, fmts):
    """Over random GCN layers: the chosen order is the cheapest costed one; where it is
    not the first pass's choice, it costs strictly less (ties keep the order a graph had
    before deep orders were searched); the result equals numpy."""
    import pytest as _pytest

    with _pytest.MonkeyPatch.context() as mp:
        passes = _spied_passes(mp)
        rng = np.random.default_rng(n * 100 + f * 10 + h)
        a = {"A": _rand(rng, (n, n), dens[0]), "X": _rand(rng, (n, f), 1.0),
             "N": _rand(rng, (h, f), dens[1]), "b": _rand(rng, (h,), 1.0)}
        g = compile_expression(GCN, {"A": fmts[0], "N": fmts[1]},
                               {t: x.shape for t, x in a.items()}, stats=a)
    costs = {r["order"]: r["cost"] for r in g.meta["order_search"]["candidates"]
             if "cost" in r}
    chosen = ",".join(g.meta["order"])
    assert costs[chosen] == min(costs.values())
    first = passes[0][2]
    if first is not None and chosen != ",".join(first[1].meta["order"]):
        assert costs[chosen] < first[0][1]
    want = np.maximum((a["A"] @ a["X"]) @ a["N"].T + a["b"], 0)
    np.testing.assert_allclose(simulate(g, a).dense("Y"), want, rtol=1e-4, atol=1e-4)


def test_an_order_no_epilogue_can_take_is_one_clear_error():
    expr = SAGE.format(open="relu(", close=")", z="X", bias=" + b(j)")
    shapes = {"A": (6, 6), "X": (6, 5), "S": (4, 5), "N": (4, 5), "b": (4,)}
    with pytest.raises(LoweringError, match="dataflow order j,k,i,k2,k3"):
        compile_expression(expr, {"A": "csr", "S": "csr", "N": "csr"}, shapes,
                           order="j,k,i,k2,k3")


@functools.cache
def _graphsage(config: str):
    model = M.MODELS["graphsage"].from_config(config).eval()
    args = model.example_inputs()
    program = from_torch(model, args, formats=model.sparse_formats)
    with torch.no_grad():
        gold = model(*args).numpy()
    return program, {**torch_weights(model, program), **torch_inputs(program, args)}, gold


@pytest.mark.parametrize("config", ["tiny", "small", "small-fuseflow"])
def test_graphsage_partial_fusion_associated_left_matches_torch_eager(config):
    program, tensors, gold = _graphsage(config)
    schedule = dataclasses.replace(Schedule.by_scope(program), assoc="left")
    compiled = compile_model(program, schedule)
    for reg in compiled.regions:
        (kernel,) = reg.kernels
        assert kernel.order[:4] == ["i", "k3", "k2", "j"], (reg.name, kernel.order)
    run = run_model(compiled, tensors)
    (out,) = program.outputs
    np.testing.assert_allclose(run.outputs[out], gold, rtol=1e-4, atol=1e-5)


def test_two_gcn_layers_nest_their_epilogues():
    """Two GCN layers in (Â·X)·W form, fused, in FuseFlow's order: the first layer's row
    H(k,:) = relu((Â·X)(k,:)·W0ᵀ + b0) is built per neighbour k (epilogues over k22 and
    k2 nested in the accumulator over k), scaled by Â(i,k) and summed, then meets W1."""
    rng = np.random.default_rng(5)
    a = {"A": _rand(rng, (8, 8), 0.3), "X": _rand(rng, (8, 5), 1.0),
         "W0": _rand(rng, (4, 5), 0.6), "b0": _rand(rng, (4,), 1.0),
         "W1": _rand(rng, (3, 4), 0.6), "b1": _rand(rng, (3,), 1.0)}
    expr = ("Y(i,j) = sum(k2) (sum(k) A(i,k) * relu(sum(k22) (sum(k3) A(k,k3) * X(k3,k22))"
            " * W0(k2,k22) + b0(k2))) * W1(j,k2) + b1(j)")
    g = compile_expression(expr, {"A": "csr", "W0": "csr", "W1": "csr"},
                           {t: x.shape for t, x in a.items()}, order="i,k,k3,k22,k2,j")
    assert g.meta["reductions"] == ["sum(k3): spacc", "sum(k22): spacc", "sum(k): spacc",
                                    "sum(k2): spacc"]
    h = np.maximum((a["A"] @ a["X"]) @ a["W0"].T + a["b0"], 0)
    want = (a["A"] @ h) @ a["W1"].T + a["b1"]
    np.testing.assert_allclose(simulate(g, a).dense("Y"), want, rtol=1e-4, atol=1e-5)
