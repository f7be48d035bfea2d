"""Association as a compiler choice (compiler/_assoc.py, docs/fusion.md "Association").

Every association computes the same chain: checked against numpy (scipy for the sparse
operands) on random chains of 2–4 products written in random associations, through the
numpy oracle of the rewritten program and through the simulated graphs; the bundled GCN
and GraphSAGE against eager PyTorch under every association and schedule.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import (
    compile_expression,
    compile_model,
    einsum_program,
    evaluate,
    from_torch,
    torch_inputs,
    torch_weights,
)
from compiler import models as M
from compiler._assoc import (
    expression_associations,
    left_tree,
    product_chains,
    right_tree,
    trees,
)
from cosim import run_model
from ir import ASSOCIATIONS, FiberTree, Region, Schedule, ScheduleError
from sim_models.python import simulate

warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")

FORMATS = ("dense", "csr", "dcsr", "csc")


# -- the schedule field --------------------------------------------------------------

def test_assoc_round_trips_through_yaml_per_schedule_and_per_region():
    sched = Schedule([Region("a", ["x", "y"], assoc="left"), Region("b", ["z"])],
                     assoc="cost", name="s")
    back = Schedule.from_yaml(sched.to_yaml())
    assert back.to_dict() == sched.to_dict()
    assert back.assoc == "cost" and back.regions[0].assoc == "left"
    assert back.regions[1].assoc is None
    assert back.assoc_of(back.regions[1]) == "cost"
    assert "assoc" not in Schedule([Region("a", ["x"])]).to_dict()  # the default: unchanged


@pytest.mark.parametrize("bad", ["lft", "Left", 3, None])
def test_a_bad_assoc_is_one_clear_line(bad):
    with pytest.raises(ScheduleError) as exc:
        Schedule.from_yaml(f"regions: [{{statements: [x], assoc: {bad!r}}}]"
                           if bad is not None else "regions: [{statements: [x]}]\n"
                           "assoc: null")
    msg = str(exc.value)
    assert "\n" not in msg and "assoc" in msg and ", ".join(ASSOCIATIONS) in msg


# -- chains ---------------------------------------------------------------------------

def test_trees_are_every_association():
    assert [len(trees(n)) for n in range(1, 6)] == [1, 1, 2, 5, 14]  # Catalan numbers
    assert left_tree(4) == (((0, 1), 2), 3) and right_tree(4) == (0, (1, (2, 3)))


def _chain_program(dims: list[int], flips: list[bool], fmts: list[str], tree: Any,
                   extra: bool = False):
    """Statements computing the product of factors F0..Fn-1 in association ``tree``;
    factor n is stored transposed when ``flips[n]`` (read as Fn(col,row))."""
    shapes = {f"F{n}": (dims[n + 1], dims[n]) if flips[n] else (dims[n], dims[n + 1])
              for n in range(len(flips))}
    statements: list[str] = []

    def emit(t: Any) -> tuple[str, bool]:
        if isinstance(t, int):
            return f"F{t}", flips[t]
        (a, fa), (b, fb) = emit(t[0]), emit(t[1])
        name = f"P{len(statements)}"
        left = f"{a}(k,i)" if fa else f"{a}(i,k)"
        right = f"{b}(j,k)" if fb else f"{b}(k,j)"
        statements.append(f"{name}(i,j) = sum(k) {left} * {right}")
        return name, False

    out, _ = emit(tree)
    outputs = [out]
    if extra:  # a consumer outside the chain: relu of the product
        statements.append(f"R(i,j) = relu({out}(i,j))")
        outputs = ["R"]
    return einsum_program(statements, shapes, dict(zip(shapes, fmts, strict=True)),
                          outputs=outputs)


def _operands(dims, flips, fmts, seed) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for n, (flip, fmt) in enumerate(zip(flips, fmts, strict=True)):
        shape = (dims[n + 1], dims[n]) if flip else (dims[n], dims[n + 1])
        if fmt == "dense":
            out[f"F{n}"] = rng.integers(-3, 4, size=shape).astype(np.float32)
        else:
            m = sp.random(*shape, density=0.4, random_state=rng,
                          data_rvs=lambda k: rng.integers(1, 4, size=k))
            out[f"F{n}"] = m.toarray().astype(np.float32)
    return out


def _gold(ops: dict[str, np.ndarray], flips: list[bool]) -> np.ndarray:
    """The chain product by scipy/numpy, left to right."""
    acc = None
    for n, flip in enumerate(flips):
        m = sp.csr_matrix(ops[f"F{n}"].astype(np.float64))
        m = m.T if flip else m
        acc = m if acc is None else acc @ m
    return acc.toarray()


def _assoc_tree(program, root: str) -> Any:
    """The association the rewritten program computes for the chain ending at ``root``."""
    chains = product_chains(program)
    chain = next(c for c in chains if c.root == root)
    return chain.written


@st.composite
def chains(draw) -> tuple:
    n = draw(st.integers(3, 5))  # 2-4 products
    dims = draw(st.lists(st.integers(1, 5), min_size=n + 1, max_size=n + 1))
    flips = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    fmts = draw(st.lists(st.sampled_from(FORMATS), min_size=n, max_size=n))
    tree = draw(st.sampled_from(trees(n)))
    schedule = draw(st.sampled_from(["unfused", "fused", "by_scope"]))
    extra = draw(st.booleans())
    return dims, flips, fmts, tree, schedule, extra, draw(st.integers(0, 2**16))


_SCHEDULES = {"unfused": Schedule.unfused, "fused": Schedule.fused,
              "by_scope": Schedule.by_scope}


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(chains(), st.sampled_from(ASSOCIATIONS))
def test_every_association_computes_the_chain(case, assoc):
    """The rewritten program equals scipy's product, has as many statements per region
    as before, and (left/right) computes the association asked for."""
    dims, flips, fmts, tree, sched_name, extra, seed = case
    program = _chain_program(dims, flips, fmts, tree, extra)
    schedule = _SCHEDULES[sched_name](program)
    schedule.assoc = assoc
    compiled = compile_model(program, schedule)
    ops = _operands(dims, flips, fmts, seed)
    got = evaluate(compiled.program, ops)
    root = program.statements[-2 if extra else -1].target
    np.testing.assert_allclose(got[root], _gold(ops, flips), rtol=1e-5, atol=1e-5)
    assert [len(r.statements) for r in compiled.schedule.regions] == \
        [len(r.statements) for r in schedule.regions]
    if assoc in ("left", "right"):
        want = (left_tree if assoc == "left" else right_tree)(len(flips))
        assert _binary(_assoc_tree(compiled.program, root)) == want
    if assoc == "as-written":
        assert compiled.program is program


def _binary(written: Any) -> Any:
    return written if isinstance(written, int) else tuple(_binary(w) for w in written)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains(), st.sampled_from(["left", "right", "cost"]))
def test_every_association_simulates_to_the_chain(case, assoc):
    """The compiled graphs of the rewritten program, run on the Python model."""
    dims, flips, fmts, tree, sched_name, extra, seed = case
    program = _chain_program(dims, flips, fmts, tree)
    schedule = _SCHEDULES[sched_name](program)
    schedule.assoc = assoc
    ops = _operands(dims, flips, fmts, seed)
    run = run_model(compile_model(program, schedule, stats=ops), ops)
    np.testing.assert_allclose(run.outputs[program.outputs[0]], _gold(ops, flips),
                               rtol=1e-5, atol=1e-5)


def test_an_intermediate_with_another_reader_is_kept():
    """P0 = F0·F1 is also read by R: the chain F0·F1·F2 is not merged through it."""
    program = einsum_program(
        ["P0(i,j) = sum(k) F0(i,k) * F1(k,j)", "P1(i,j) = sum(k) P0(i,k) * F2(k,j)",
         "R(i,j) = P1(i,j) + P0(i,j)"],
        {"F0": (3, 3), "F1": (3, 3), "F2": (3, 3)}, outputs=["R"])
    assert product_chains(program) == []
    sched = Schedule.fused(program)
    sched.assoc = "right"
    assert compile_model(program, sched).program is program


def test_a_region_assoc_rewrites_only_its_chains():
    """Two chains; only the region that asks re-associates, the other stays written."""
    program = einsum_program(
        ["A1(i,j) = sum(k) F0(i,k) * F1(k,j)", "A2(i,j) = sum(k) A1(i,k) * F2(k,j)",
         "B1(i,j) = sum(k) F0(i,k) * F1(k,j)", "B2(i,j) = sum(k) B1(i,k) * F2(k,j)",
         "R(i,j) = A2(i,j) + B2(i,j)"],
        {"F0": (3, 4), "F1": (4, 5), "F2": (5, 2)}, outputs=["R"])
    sched = Schedule([Region("a", ["A1", "A2"], assoc="right"), Region("b", ["B1", "B2"]),
                      Region("r", ["R"])])
    new = compile_model(program, sched).program
    assert [s.target for s in new.statements] == ["A2_p", "A2", "B1", "B2", "R"]
    assert new.statement("A2_p").text == "A2_p(i,j) = sum(k) F1(i,k) * F2(k,j)"
    assert new.statement("B2").text == program.statement("B2").text
    ops = _operands([3, 4, 5, 2], [False] * 3, ["dense"] * 3, 0)
    gold = 2 * _gold(ops, [False] * 3)
    np.testing.assert_allclose(evaluate(new, ops)["R"], gold, rtol=1e-5)


def test_a_chain_across_regions_of_different_assoc_is_not_merged():
    program = einsum_program(
        ["A1(i,j) = sum(k) F0(i,k) * F1(k,j)", "A2(i,j) = sum(k) A1(i,k) * F2(k,j)"],
        {"F0": (3, 4), "F1": (4, 5), "F2": (5, 2)})
    sched = Schedule([Region("a", ["A1"], assoc="as-written"),
                      Region("b", ["A2"], assoc="left")])
    assert compile_model(program, sched).program is program


def test_cost_picks_the_cheaper_association():
    """A·B·v with a tall dense A: right (A·(B·v)) does matrix-vector work only."""
    program = einsum_program(
        ["P(i,j) = sum(k) A(i,k) * B(k,j)", "Y(i,j) = sum(k) P(i,k) * V(k,j)"],
        {"A": (40, 30), "B": (30, 30), "V": (30, 1)})
    sched = Schedule.unfused(program)
    sched.assoc = "cost"
    new = compile_model(program, sched).program
    assert new.statement("Y").text == "Y(i,j) = sum(k) A(i,k) * Y_p(k,j)"


def test_a_new_intermediate_is_stored_like_a_product_of_its_factors():
    program = einsum_program(
        ["P(i,j) = sum(k) A(i,k) * B(k,j)", "Y(i,j) = sum(k) P(i,k) * V(k,j)"],
        {"A": (4, 4), "B": (4, 4), "V": (4, 4)}, {"A": "csr", "B": "csr"})
    sched = Schedule.unfused(program)
    sched.assoc = "right"
    new = compile_model(program, sched).program
    assert new.tensors["Y_p"].format == "dense"  # B·V: V is dense
    sched.assoc = "left"
    program2 = einsum_program(
        ["P(i,j) = sum(k) A(i,k) * B(k,j)", "Y(i,j) = sum(k) V(i,k) * P(k,j)"],
        {"A": (4, 4), "B": (4, 4), "V": (4, 4)}, {"A": "csr", "B": "csr"})
    sched2 = Schedule.unfused(program2)
    sched2.assoc = "right"
    assert compile_model(program2, sched2).program is program2  # already right
    sched2.assoc = "left"
    assert compile_model(program2, sched2).program.tensors["Y_p"].format == "dense"


# -- one expression -------------------------------------------------------------------

def test_an_expression_nests_its_chain():
    e = "X(i,j) = A(i,k)*B(k,l)*C(l,j)"
    assert expression_associations(e, "as-written") == [e]
    assert expression_associations(e, "left") == [
        "X(i,j) = sum(k) (sum(k2) A(i,k2) * B(k2,k)) * C(k,j)"]
    assert expression_associations(e, "right") == [
        "X(i,j) = sum(k) A(i,k) * sum(k2) B(k,k2) * C(k2,j)"]
    assert len(expression_associations(e, "cost")) == 3
    assert expression_associations("X(i,j) = A(i,k)*B(k,j)", "left") == \
        ["X(i,j) = A(i,k)*B(k,j)"]
    with pytest.raises(ScheduleError, match="assoc 'up' is not one of"):
        expression_associations(e, "up")


@pytest.mark.parametrize("assoc", ASSOCIATIONS)
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_an_expression_simulates_in_every_association(assoc, fmt):
    rng = np.random.default_rng(3)
    a = (rng.random((5, 4)) < 0.5) * rng.integers(1, 4, (5, 4))
    b = rng.integers(-2, 3, (4, 6))
    c = rng.integers(-2, 3, (3, 6))  # read transposed
    graph = compile_expression("X(i,j) = A(i,k)*B(k,l)*C(j,l)", {"A": fmt},
                               {"A": a.shape, "B": b.shape, "C": c.shape}, assoc=assoc)
    ins = {"A": FiberTree.from_any(a.astype(np.float32), graph.tensors["A"].format),
           "B": FiberTree.from_any(b.astype(np.float32), graph.tensors["B"].format),
           "C": FiberTree.from_any(c.astype(np.float32), graph.tensors["C"].format)}
    res = simulate(graph, ins)
    np.testing.assert_allclose(res.outputs["X"].to_dense(), a @ b @ c.T, rtol=1e-6)


# -- the bundled models against eager PyTorch -------------------------------------------

@functools.cache
def _model(name: str, config: str):
    model = M.MODELS[name].from_config(config).eval()
    args = model.example_inputs()
    program = from_torch(model, args, formats=model.sparse_formats)
    with torch.no_grad():
        gold = model(*args).numpy()
    return program, {**torch_weights(model, program), **torch_inputs(program, args)}, gold


@pytest.mark.parametrize("assoc", ASSOCIATIONS)
@pytest.mark.parametrize("schedule", ["unfused", "by_scope"])
@pytest.mark.parametrize(("name", "config"), [("gcn", "tiny"), ("graphsage", "tiny"),
                                              ("gcn", "small"), ("graphsage", "small")])
def test_gnn_models_match_torch_in_every_association(name, config, schedule, assoc):
    program, tensors, gold = _model(name, config)
    sched = _SCHEDULES[schedule](program)
    sched.assoc = assoc
    compiled = compile_model(program, sched,
                             stats=tensors if assoc == "cost" else None)
    if assoc == "left":  # (Â·X)·W: the adjacency meets the features first
        texts = [st.text for st in compiled.program.statements]
        assert any("adj(i,k) * x(k,j)" in t for t in texts), texts
    run = run_model(compiled, tensors)
    np.testing.assert_allclose(run.outputs[program.outputs[0]], gold, rtol=1e-4, atol=1e-5)


def test_gcn_left_no_longer_recomputes_xw_per_edge():
    """Partial fusion of Â·(X·W) inlines X·W into the adjacency product; written
    (Â·X)·W, the fused layer holds the adjacency-features product inside the weight one."""
    program, _, _ = _model("gcn", "small")
    written = compile_model(program, Schedule.by_scope(program))
    sched = Schedule.by_scope(program)
    sched.assoc = "left"
    left = compile_model(program, sched)
    layer = {r.name: r.kernels[0].text for r in written.regions}["layers.0"]
    assert "sum(k) adj(i,k) * sum(k2) x(k,k2)" in layer
    layer = {r.name: r.kernels[0].text for r in left.regions}["layers.0"]
    assert "(sum(k2) adj(i,k2) * x(k2,k)) * layers_0_lin_weight(j,k)" in layer


def test_two_chains_in_one_statement_are_both_rewritten():
    program = einsum_program(
        ["P(i,j) = sum(k) A(i,k) * B(k,j)", "Q(i,j) = sum(k) C(i,k) * D(k,j)",
         "R(i,j) = sum(k) P(i,k) * E(k,j) + sum(k) Q(i,k) * F(k,j)"],
        {n: (3, 3) for n in "ABCDEF"})
    sched = Schedule.fused(program)
    sched.assoc = "right"
    new = compile_model(program, sched).program
    assert [st.target for st in new.statements] == ["R_p", "R_p2", "R"]
    ops = {n: np.random.default_rng(ord(n)).integers(-3, 4, (3, 3)).astype(np.float32)
           for n in "ABCDEF"}
    want = ops["A"] @ ops["B"] @ ops["E"] + ops["C"] @ ops["D"] @ ops["F"]
    np.testing.assert_allclose(evaluate(new, ops)["R"], want, rtol=1e-5)
    assert "B(i,k) * E(k,j)" in new.statement("R_p").text
