"""Functions (relu, exp, rsqrt) and the fused ML expressions a fusion pass produces, on the
reference model against numpy, with the sparse "stored entries only" semantics applied."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import FUNCTIONS, LoweringError, compile_expression
from ir import Format
from sim_models.python import simulate

SETTINGS = settings(max_examples=15, deadline=None)
DIM = st.integers(1, 5)
DENSITY = st.sampled_from([0.0, 0.3, 0.7, 1.0])
SEED = st.integers(0, 2**16)

NUMPY = {"relu": lambda x: np.maximum(x, 0),
         "exp": np.exp,
         "rsqrt": lambda x: 1 / np.sqrt(x)}


def _rand(seed: int, shape, density: float, low: float = -2.0, high: float = 2.0):
    rng = np.random.default_rng(seed)
    vals = rng.uniform(low, high, size=shape)
    return (vals * (rng.random(shape) < density)).astype(np.float32)


def stored(a: np.ndarray, spec: str) -> np.ndarray:
    """Which entries of ``a`` a fiber tree in format ``spec`` stores (numpy only).

    A dense level stores every coordinate under a stored parent; a compressed level only
    those whose subtree holds a nonzero.
    """
    fmt = Format.parse(spec, a.ndim)
    t = np.transpose(a != 0, fmt.mode_order)
    mask = np.ones((), bool)
    for lvl, kind in enumerate(fmt.levels):
        mask = np.repeat(mask[..., None], t.shape[lvl], axis=-1)
        if kind == "compressed":
            mask &= t.any(axis=tuple(range(lvl + 1, t.ndim))) if lvl + 1 < t.ndim else t
    return np.transpose(mask, np.argsort(fmt.mode_order))


@st.composite
def formats(draw, rank: int) -> str:
    letters = "".join(draw(st.sampled_from("dc")) for _ in range(rank))
    order = draw(st.permutations(range(rank)))
    return letters if list(order) == sorted(order) else f"{letters}:{','.join(map(str, order))}"


def _run(expr: str, fmts: dict, arrays: dict, out: str, **kw) -> tuple:
    graph = compile_expression(expr, fmts, {k: v.shape for k, v in arrays.items()}, **kw)
    return graph, simulate(graph, arrays).dense(out)


def _close(got, want) -> None:
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5)


def test_stored_pattern_helper_follows_the_level_formats():
    a = np.array([[0, 2, 0], [0, 0, 0]], np.float32)
    assert stored(a, "dc").tolist() == [[False, True, False], [False, False, False]]
    assert stored(a, "cd").tolist() == [[True, True, True], [False, False, False]]
    assert stored(a, "dd").all()
    assert stored(a, "cd:1,0").tolist() == [[False, True, False], [False, True, False]]


# -- one function, any format: computed at the stored entries only ----------------------

#: name → (expression with {f}, inputs, numpy reference given f and the stored masks)
ELEMENTWISE = {
    "f(B)": ("Y(i,j) = {f}(B(i,j))", ("B",),
             lambda f, a, s: np.where(s["B"], f(a["B"]), 0)),
    "f(B*C)": ("Y(i,j) = {f}(B(i,j) * C(i,j))", ("B", "C"),
               lambda f, a, s: np.where(s["B"] & s["C"], f(a["B"] * a["C"]), 0)),
    "f(B)*C": ("Y(i,j) = {f}(B(i,j)) * C(i,j)", ("B", "C"),
               lambda f, a, s: np.where(s["B"] & s["C"], f(a["B"]) * a["C"], 0)),
}


@pytest.mark.parametrize("fn", FUNCTIONS)
@pytest.mark.parametrize("kernel", sorted(ELEMENTWISE))
@SETTINGS
@given(data=st.data(), m=DIM, n=DIM, density=DENSITY, seed=SEED)
def test_function_applies_to_the_stored_entries_of_its_argument(fn, kernel, data, m, n,
                                                                 density, seed):
    expr, names, ref = ELEMENTWISE[kernel]
    low = 0.25 if fn == "rsqrt" else -2.0  # rsqrt of stored entries > 0 (zeros give inf)
    arrays = {t: _rand(seed + k, (m, n), density, low) for k, t in enumerate(names)}
    fmts = {t: data.draw(formats(2), label=f"format {t}") for t in names}
    if data.draw(st.booleans(), label="output format given"):
        fmts["Y"] = data.draw(formats(2), label="format Y")
    graph, got = _run(expr.format(f=fn), fmts, arrays, "Y")
    # stored = in the format the tensor is bound in (a transpose may permute its levels)
    masks = {t: stored(arrays[t], graph.meta["formats"][t]) for t in names}
    with np.errstate(all="ignore"):
        _close(got, ref(NUMPY[fn], arrays, masks))
    ops = [nd.params["op"] for nd in graph.nodes.values() if nd.op == "unary"]
    assert fn in ops


@SETTINGS
@given(data=st.data(), m=DIM, n=DIM, density=DENSITY, seed=SEED)
def test_relu_may_be_united_with_anything(data, m, n, density, seed):
    arrays = {"B": _rand(seed, (m, n), density), "C": _rand(seed + 1, (m, n), density)}
    fmts = {t: data.draw(formats(2), label=f"format {t}") for t in arrays}
    _, got = _run("Y(i,j) = relu(B(i,j)) + C(i,j)", fmts, arrays, "Y")
    _close(got, np.maximum(arrays["B"], 0) + arrays["C"])


@pytest.mark.parametrize("fn", ["exp", "rsqrt"])
@SETTINGS
@given(data=st.data(), m=DIM, n=DIM, seed=SEED)
def test_exp_of_a_sparse_operand_cannot_join_a_union(fn, data, m, n, seed):
    arrays = {"B": _rand(seed, (m, n), 0.5, 0.25), "C": _rand(seed + 1, (m, n), 0.5)}
    fmts = {t: data.draw(formats(2), label=f"format {t}") for t in arrays}
    expr = f"Y(i,j) = {fn}(B(i,j)) + C(i,j)"
    if "c" not in fmts["B"].split(":")[0]:  # B dense: its function is dense too
        _, got = _run(expr, fmts, arrays, "Y")
        with np.errstate(all="ignore"):
            _close(got, NUMPY[fn](arrays["B"]) + arrays["C"])
        return
    with pytest.raises(LoweringError) as err:
        compile_expression(expr, fmts, {"B": (m, n), "C": (m, n)})
    assert err.value.message.startswith(f"{fn}(B(i,j)) is sparse in index ")
    assert f"{fn} applies to stored entries only" in err.value.message
    assert err.value.col == 10


@SETTINGS
@given(data=st.data(), m=DIM, n=DIM, density=DENSITY, seed=SEED)
def test_a_union_never_computes_exp_where_its_argument_is_absent(data, m, n, density,
                                                                 seed):
    """exp(S)*b(i) + C: at a coordinate of C alone, b (broadcast over j) keeps its value,
    so order i,j with S sparse in j must be rejected; where it lowers it is exact."""
    arrays = {"S": _rand(seed, (m, n), density), "b": _rand(seed + 1, (m,), 1.0),
              "C": _rand(seed + 2, (m, n), density)}
    fmts = {t: data.draw(formats(2), label=f"format {t}") for t in ("S", "C")}
    order = data.draw(st.sampled_from(["ij", "ji"]), label="order")
    expr = "Y(i,j) = exp(S(i,j)) * b(i) + C(i,j)"
    try:
        graph, got = _run(expr, fmts, arrays, "Y", order=order)
    except LoweringError as err:
        assert err.message.startswith("exp(S(i,j)) is sparse in index ") or \
            "does not depend on index" in err.message, err.message
        return
    s = stored(arrays["S"], graph.meta["formats"]["S"])
    _close(got, np.where(s, np.exp(arrays["S"]) * arrays["b"][:, None], 0) + arrays["C"])


@SETTINGS
@given(data=st.data(), m=DIM, n=DIM, density=DENSITY, seed=SEED)
def test_a_sparse_factor_restricts_a_shifted_sum_to_its_coordinates(data, m, n, density,
                                                                    seed):
    """P·exp(S − mx(i)) — the masked softmax in its SDDMM form: the shift lacks j, so the
    difference is dense in j, but only P's coordinates matter; S is united with them (0
    where S stores nothing), whatever the formats and the order."""
    arrays = {"P": _rand(seed, (m, n), density), "S": _rand(seed + 1, (m, n), density),
              "mx": _rand(seed + 2, (m,), 1.0)}
    fmts = {"P": data.draw(st.sampled_from(["dc", "cc", "dc:1,0"]), label="format P"),
            "S": data.draw(formats(2), label="format S")}
    op = data.draw(st.sampled_from(["-", "+"]), label="op")
    order = data.draw(st.sampled_from(["ij", "ji"]), label="order")
    graph, got = _run(f"Y(i,j) = P(i,j) * exp(S(i,j) {op} mx(i))", fmts, arrays, "Y",
                      order=order)
    shifted = arrays["S"] + (-1 if op == "-" else 1) * arrays["mx"][:, None]
    _close(got, arrays["P"] * np.exp(shifted))


def test_int32_graphs_take_relu_but_reject_exp_and_rsqrt():
    b = np.array([[-3, 0, 2], [4, -1, 0]], np.int32)
    graph = compile_expression("Y(i,j) = relu(B(i,j)) * 2", {"B": "csr"}, {"B": b.shape},
                               dtype="int32")
    np.testing.assert_array_equal(simulate(graph, {"B": b}).dense("Y"), np.maximum(b, 0) * 2)
    for fn in ("exp", "rsqrt"):
        with pytest.raises(LoweringError) as err:
            compile_expression(f"Y(i,j) = {fn}(B(i,j))", {}, {"B": b.shape}, dtype="int32")
        assert err.value.message == (f"{fn}() is not available in an int32 graph (its "
                                     "result is not an integer); use dtype float32, or relu")
        assert err.value.col == 10


def test_functions_of_constants_fold_in_float32():
    b = np.array([1.0, -2.0, 3.0], np.float32)
    graph = compile_expression("y(i) = exp(0) * B(i) + relu(-1) + B(i) * (rsqrt(4) "
                               "* exp(1))", {}, {"B": b.shape})
    unary = sorted((n.params["op"], n.params["const"]) for n in graph.nodes.values()
                   if n.op == "unary")
    assert unary == [("mul_const", pytest.approx(float(np.float32(0.5) * np.float32(np.e)),
                                                 rel=1e-6))]
    want = b + b * np.float32(0.5) * np.float32(np.exp(np.float32(1)))
    _close(simulate(graph, {"B": b}).dense("y"), want)


@pytest.mark.parametrize("text, message", [
    ("y(i) = rsqrt(0) * B(i)", "rsqrt(0.0) of a constant is inf; expected a finite value"),
    ("y(i) = rsqrt(-4) * B(i)", "rsqrt(-4.0) of a constant is nan; expected a finite value"),
    ("y(i) = exp(100) * B(i)", "exp(100.0) of a constant is inf; expected a finite value"),
])
def test_non_finite_constant_functions_are_rejected(text, message):
    with pytest.raises(LoweringError) as err:
        compile_expression(text, {}, {"B": (3,)})
    assert err.value.message == message
    assert err.value.col == 8


def test_reduction_inside_a_function_is_computed_before_it():
    b = _rand(7, (4, 5), 0.6)
    _, got = _run("y(i) = exp(sum(k) B(i,k))", {"B": "csr"}, {"B": b}, "y")
    _close(got, np.exp(b.sum(axis=1)))
    # the einsum reading: an implicit sum stays outside the function
    _, got = _run("y(i) = relu(B(i,k))", {"B": "csr"}, {"B": b}, "y")
    _close(got, np.maximum(b, 0).sum(axis=1))


# -- the fused expressions a fusion pass hands the compiler -----------------------------

def _relu(x):
    return np.maximum(x, 0)


def _masked_softmax(s: np.ndarray, pattern: np.ndarray) -> np.ndarray:
    """Row softmax over the stored entries only; a row without entries stays 0."""
    e = np.where(pattern, np.exp(np.where(pattern, s, 0)), 0)
    total = e.sum(axis=1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total != 0)


def _layer_norm(x: np.ndarray) -> np.ndarray:
    mu = x.mean(axis=1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=1, keepdims=True) + 1e-5)


GCN = "H(i,j) = relu(sum(k) A(i,k) * sum(l) X(k,l) * W(l,j) + b(j))"
SAGE = ("H(i,j) = relu(sum(l) X(i,l) * Ws(l,j) + sum(k) A(i,k) * sum(l2) X(k,l2) * "
        "Wn(l2,j) + b(j))")
SOFTMAX = ("Y(i,j) = exp(Z(i,j) - max(j2) Z(i,j2)) / sum(j3) exp(Z(i,j3) - max(j4) "
           "Z(i,j4))")
MASKED_SCORES = "S(i,j) = M(i,j) * sum(k) Q(i,k) * K(j,k) * 0.125"
SPARSE_SOFTMAX = "P(i,j) = exp(S(i,j)) / sum(j2) exp(S(i,j2))"
ATTENTION = ("O(i,d) = sum(j) (exp(M(i,j) * sum(k) Q(i,k)*K(j,k)*0.125) / sum(j2) "
             "exp(M(i,j2) * sum(k2) Q(i,k2)*K(j2,k2)*0.125)) * V(j,d)")
LAYER = "H(i,j) = relu(sum(k) X(i,k) * W1(k,j) + b1(j))"
TWO_LAYERS = "H(i,j) = relu(sum(m) relu(sum(k) X(i,k) * W1(k,m) + b1(m)) * W2(m,j) + b2(j))"


def _layer_norm_text(n: int) -> str:
    c = repr(1 / n)
    return (f"Y(i,j) = (X(i,j) - sum(j2) X(i,j2) * {c}) * rsqrt(sum(j3) (X(i,j3) - sum(j4) "
            f"X(i,j4) * {c}) * (X(i,j3) - sum(j5) X(i,j5) * {c}) * {c} + 1e-5) * g(j) + c(j)")


def _softmax_orders() -> set[str]:
    """Orders of softmax's loops that lower: ``i`` first, then any order of j,j2,j3,j4
    except those running the output loop ``j`` inside the sum over ``j3`` but outside
    the max ``j4`` in its body (the sum is then neither innermost nor hoisted)."""
    ok = set()
    for p in permutations(["j", "j2", "j3", "j4"]):
        pos = {v: n for n, v in enumerate(p)}
        if not pos["j3"] < pos["j"] < pos["j4"]:
            ok.add(",".join(["i", *p]))
    return ok


#: name → (expression, operand → (index letters, format choices, density or None = drawn),
#:         numpy reference, the orders it lowers in)
FUSED = {
    "gcn": (GCN, {"A": ("ik", ["csr", "csc", "dense"], None),
                  "X": ("kl", ["csr", "csc", "dense"], None),
                  "W": ("lj", ["dense"], 1.0), "b": ("j", ["dense"], 1.0)},
            lambda a: _relu(a["A"] @ (a["X"] @ a["W"]) + a["b"]),
            {"i,j,k,l", "j,i,k,l", "i,k,j,l", "i,k,l,j"}),
    "graphsage": (SAGE, {"A": ("ik", ["csr", "dcsr", "dense"], None),
                         "X": ("il", ["csr", "dense"], None),
                         "Ws": ("lj", ["dense"], 1.0), "Wn": ("lj", ["dense"], 1.0),
                         "b": ("j", ["dense"], 1.0)},
                  lambda a: _relu(a["X"] @ a["Ws"] + a["A"] @ (a["X"] @ a["Wn"]) + a["b"]),
                  {"i,j,l,k,l2", "i,j,k,l,l2", "i,j,k,l2,l", "j,i,l,k,l2", "j,i,k,l,l2",
                   "j,i,k,l2,l"}),
    "softmax": (SOFTMAX, {"Z": ("ij", ["dense"], 1.0)},
                lambda a: _masked_softmax(a["Z"], np.ones(a["Z"].shape, bool)),
                _softmax_orders()),
    "masked_scores": (MASKED_SCORES, {"M": ("ij", ["csr", "dcsr"], None),
                                      "Q": ("ik", ["dense"], 1.0),
                                      "K": ("jk", ["dense"], 1.0)},
                      lambda a: a["M"] * (a["Q"] @ a["K"].T) * 0.125,
                      {"i,j,k", "j,i,k", "i,k,j", "j,k,i"}),
    "sparse_softmax": (SPARSE_SOFTMAX, {"S": ("ij", ["csr", "dcsr"], None)},
                       lambda a: _masked_softmax(a["S"], a["S"] != 0),
                       {"i,j,j2", "i,j2,j", "j,j2,i"}),
    "attention": (ATTENTION, {"M": ("ij", ["csr", "dcsr"], None),
                              "Q": ("ik", ["dense"], 1.0), "K": ("jk", ["dense"], 1.0),
                              "V": ("jd", ["dense"], 1.0)},
                  lambda a: _masked_softmax(a["M"] * (a["Q"] @ a["K"].T) * 0.125,
                                            a["M"] != 0) @ a["V"],
                  # the softmax denominator's loops j2,k2 after j: it is recomputed per
                  # (i,j); before j: hoisted (computed once per row, broadcast over j)
                  {"i,j,d,k,j2,k2", "i,j,d,j2,k,k2", "i,j,d,j2,k2,k", "i,d,j,k,j2,k2",
                   "i,d,j,j2,k,k2", "i,d,j,j2,k2,k", "d,i,j,k,j2,k2", "d,i,j,j2,k,k2",
                   "d,i,j,j2,k2,k", "d,i,j2,k2,j,k", "i,d,j2,k2,j,k", "i,j,j2,k,k2,d",
                   "i,j,j2,k2,d,k", "i,j,j2,k2,k,d", "i,j,k,d,j2,k2", "i,j,k,j2,k2,d",
                   "i,j2,k2,d,j,k", "i,j2,k2,j,d,k", "i,j2,k2,j,k,d"}),
    "autoencoder_layer": (LAYER, {"X": ("ik", ["dense", "csr"], None),
                                  "W1": ("kj", ["csr", "csc"], None),
                                  "b1": ("j", ["dense"], 1.0)},
                          lambda a: _relu(a["X"] @ a["W1"] + a["b1"]),
                          {"i,j,k", "j,i,k", "i,k,j"}),
    "autoencoder_two_layers": (TWO_LAYERS, {"X": ("ik", ["dense", "csr"], None),
                                            "W1": ("km", ["csr", "csc"], None),
                                            "b1": ("m", ["dense"], 1.0),
                                            "W2": ("mj", ["csr", "csc"], None),
                                            "b2": ("j", ["dense"], 1.0)},
                               lambda a: _relu(_relu(a["X"] @ a["W1"] + a["b1"]) @ a["W2"]
                                               + a["b2"]),
                               {"i,j,m,k", "j,i,m,k", "i,m,j,k", "i,m,k,j"}),
}
#: weights of the sparse autoencoder hold 50-90 % zeros
SPARSE_WEIGHTS = st.sampled_from([0.1, 0.25, 0.5])


def _fused_inputs(data, name: str, seed: int) -> tuple[dict, dict]:
    _, operands, _, _ = FUSED[name]
    sizes = {i: data.draw(DIM, label=f"size {i}") for i in "ijklmd"}
    if name == "graphsage":  # X is read as X(i,l) and X(k,l2): A is square
        sizes["k"] = sizes["i"]
    arrays, fmts = {}, {}
    for n, (t, (idx, choices, density)) in enumerate(operands.items()):
        if density is None:
            density = data.draw(SPARSE_WEIGHTS if t.startswith("W") else DENSITY,
                                label=f"density {t}")
        arrays[t] = _rand(seed + n, [sizes[i] for i in idx], density)
        if t == "M":
            arrays[t] = (arrays[t] != 0).astype(np.float32)  # a pattern of ones
        fmts[t] = data.draw(st.sampled_from(choices), label=f"format {t}")
    return arrays, fmts


@pytest.mark.parametrize("name", sorted(FUSED))
@SETTINGS
@given(data=st.data(), seed=SEED)
def test_fused_expression_matches_numpy_in_the_default_order(name, data, seed):
    expr, _, ref, orders = FUSED[name]
    arrays, fmts = _fused_inputs(data, name, seed)
    out = expr.split("(")[0]
    graph, got = _run(expr, fmts, arrays, out)
    _close(got, ref(arrays))
    if all(fmts[t] in ("csr", "dcsr", "dense") for t in fmts):  # no transposes needed
        chosen = ",".join(graph.meta["order"])
        if chosen not in orders:  # only a deep epilogue strictly cheaper (compiler.md rule 5)
            rows = graph.meta["order_search"]["candidates"]
            row = next(r for r in rows if r["order"] == chosen)
            plain = [r["cost"] for r in rows if "cost" in r and not r.get("deep")]
            assert row.get("deep") and (not plain or row["cost"] < min(plain)), chosen


@pytest.mark.parametrize("name", sorted(FUSED))
@settings(max_examples=4, deadline=None)
@given(data=st.data(), seed=SEED)
def test_fused_expression_lowers_in_exactly_the_documented_orders(name, data, seed):
    """Every order whose reductions are all plain reducers or one final accumulator, or
    whose accumulator's rows meet the operands outside it in an epilogue join."""
    expr, operands, ref, orders = FUSED[name]
    arrays, fmts = _fused_inputs(data, name, seed)
    fmts = {t: operands[t][1][0] for t in operands}
    out = expr.split("(")[0]
    order = ",".join(data.draw(st.permutations(sorted(orders)[0].split(",")), label="order"))
    if order not in orders:
        with pytest.raises(LoweringError, match="cannot share the loop|need different "
                                                "storage orders|which is neither"):
            _run(expr, fmts, arrays, out, order=order)
        return
    graph, got = _run(expr, fmts, arrays, out, order=order)
    assert ",".join(graph.meta["order"]) == order
    _close(got, ref(arrays))


@pytest.mark.parametrize("n", [1, 2, 4, 5])
@SETTINGS
@given(m=DIM, seed=SEED)
def test_fused_layer_norm_matches_numpy(n, m, seed):
    arrays = {"X": _rand(seed, (m, n), 1.0), "g": _rand(seed + 1, (n,), 1.0),
              "c": _rand(seed + 2, (n,), 1.0)}
    graph, got = _run(_layer_norm_text(n), {}, arrays, "Y")
    _close(got, _layer_norm(arrays["X"]) * arrays["g"] + arrays["c"])
    if n == 1:  # a one-column row costs the same in every order
        return
    # every row statistic is hoisted out of the output loop j (and the means inside the
    # variance out of its loop j3): computed once per row, then broadcast
    assert graph.meta["order"] == ["i", "j2", "j4", "j5", "j3", "j"]
    assert sorted(v for v in graph.nodes if graph.nodes[v].op == "broadcast") == \
        ["bcast_j", "bcast_j3", "bcast_j3_2", "bcast_j_2"]


def test_gcn_with_empty_rows_dropped_needs_a_dense_row_level():
    """relu(A·XW + b) is relu(b) on a row A lacks: a dcsr A cannot give every row."""
    with pytest.raises(LoweringError) as err:
        compile_expression(GCN, {"A": "dcsr"}, {"A": (4, 4), "X": (4, 3), "W": (3, 2)})
    assert err.value.message.startswith("'+' adds b(j), which does not depend on index "
                                        "'i', to an operand that is sparse in 'i'")


def test_dense_softmax_of_a_sparse_operand_names_the_problem():
    with pytest.raises(LoweringError) as err:
        compile_expression(SOFTMAX, {"Z": "csr"}, {"Z": (3, 4)})
    assert err.value.message.startswith("'-' adds max(j2) Z(i,j2), which does not depend on "
                                        "index 'j', to an operand that is sparse in 'j'")


def test_fused_expressions_search_a_bounded_number_of_orders(monkeypatch):
    """The order search's work stays bounded on the biggest fused expressions: of their
    720 orders it costs at most COST_TRIES and lowers at most three times as many, and
    accounts for every other one as skipped (docs/compiler.md). Their compile time is
    measured by scripts/bench_compile.py, not asserted here."""
    from compiler import _compile

    lowered = []
    build = _compile._Job.build

    def counting_build(self, *args, **kwargs):
        lowered.append(args[0])
        return build(self, *args, **kwargs)

    monkeypatch.setattr(_compile._Job, "build", counting_build)
    shapes = {"M": (8, 8), "Q": (8, 4), "K": (8, 4), "V": (8, 4)}
    for expr, fmts, shp in ((ATTENTION, {"M": "csr"}, shapes),
                            (_layer_norm_text(4), {}, {"X": (8, 4), "g": (4,), "c": (4,)})):
        lowered.clear()
        search = compile_expression(expr, fmts, shp).meta["order_search"]
        costed = [c for c in search["candidates"] if "cost" in c]
        assert 0 < len(costed) <= _compile.COST_TRIES, expr
        assert 0 < len(lowered) <= 3 * _compile.COST_TRIES, expr
        assert search["not_costed"] > 0, expr  # the budget, not exhaustion, ended the search
        assert len(search["candidates"]) + search["not_costed"] == 720, expr
