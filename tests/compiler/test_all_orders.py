"""Every dataflow order of several 3- and 4-index expressions lowers and matches numpy.

Reductions spanning several levels chain accumulators (a ``spacc`` over ``k`` feeding a
``spacc`` over ``j`` for ``sum(j,k)`` in order ``i,j,k,l``) and a reduced index above
three kept ones is a ``spacc3``, so every permutation of the indices of a 3- or 4-index
expression compiles — transposing discordant operands. (Above four kept ones the lowering
rejects the order; see ``test_lower_kernels``.)
"""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import compile_expression
from sim_models.python import simulate

#: name -> (expression, operand indices, formats, numpy reference)
EXPRESSIONS = {
    "spmm": ("X(i,j) = B(i,k) * C(k,j)", {"B": "ik", "C": "kj"}, {"B": "csr", "C": "csr"},
             lambda a: a["B"] @ a["C"]),
    "nested": ("X(i,l) = A(i,j) * B(j,k) * H(k,l)", {"A": "ij", "B": "jk", "H": "kl"},
               {"A": "csr", "B": "csr"}, lambda a: a["A"] @ a["B"] @ a["H"]),
    "mttkrp": ("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", {"B": "ikl", "C": "kj", "D": "lj"},
               {"B": "csf"}, lambda a: np.einsum("ikl,kj,lj->ij", a["B"], a["C"], a["D"])),
    "ttm": ("X(i,j,l) = B(i,j,k) * C(k,l)", {"B": "ijk", "C": "kl"}, {"B": "csf"},
            lambda a: np.einsum("ijk,kl->ijl", a["B"], a["C"])),
    "outer3": ("X(i,j,l) = B(i,k) * C(k,j,l)", {"B": "ik", "C": "kjl"},
               {"B": "csr", "C": "csf"}, lambda a: np.einsum("ik,kjl->ijl", a["B"], a["C"])),
}
SIZES = {"i": 4, "j": 3, "k": 5, "l": 2}


def _indices(ops: dict[str, str]) -> list[str]:
    return sorted(set("".join(ops.values())))


def _arrays(ops: dict[str, str], density: float, seed: int,
            sizes: dict[str, int] = SIZES) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for t, idx in ops.items():
        shape = [sizes[i] for i in idx]
        out[t] = (rng.uniform(-2, 2, shape) * (rng.random(shape) < density)).astype(
            np.float32)
    return out


def _formats(name: str) -> dict[str, str]:
    return {t: "dcc" if f == "csf" else f for t, f in EXPRESSIONS[name][2].items()}


def _check(name: str, order: str, arrays: dict[str, np.ndarray]) -> None:
    expr, _, _, ref = EXPRESSIONS[name]
    shapes = {t: a.shape for t, a in arrays.items()}
    graph = compile_expression(expr, _formats(name), shapes, order=order)
    assert graph.meta["order"] == list(order)
    out = expr.split("(")[0]
    np.testing.assert_allclose(simulate(graph, arrays).dense(out), ref(arrays),
                               rtol=1e-4, atol=1e-4)


def _cases() -> list[tuple[str, str]]:
    return [(name, "".join(p)) for name, (_, ops, _, _) in EXPRESSIONS.items()
            for p in permutations(_indices(ops))]


@pytest.mark.parametrize("name, order", _cases())
def test_every_order_lowers_and_matches_numpy(name, order):
    _check(name, order, _arrays(EXPRESSIONS[name][1], 0.5, seed=len(order)))


@pytest.mark.parametrize("name", ["ttm", "outer3"])
def test_a_reduced_index_above_three_kept_ones_is_one_spacc3(name):
    expr, ops, _, _ = EXPRESSIONS[name]
    arrays = _arrays(ops, 0.5, seed=3)
    shapes = {t: a.shape for t, a in arrays.items()}
    for p in permutations("ijl"):
        order = "k" + "".join(p)
        graph = compile_expression(expr, _formats(name), shapes, order=order)
        assert graph.meta["reductions"] == ["sum(k): spacc3"], order
        assert [n.op for n in graph.nodes.values()].count("spacc3") == 1


def test_all_24_orders_of_the_nested_matmul_compile():
    expr, ops, fmts, _ = EXPRESSIONS["nested"]
    shapes = {"A": (34, 34), "B": (34, 34), "H": (34, 16)}
    for p in permutations(_indices(ops)):
        compile_expression(expr, fmts, shapes, order=",".join(p))


@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
@settings(max_examples=30, deadline=None)
@given(data=st.data(), density=st.sampled_from([0.0, 0.2, 0.6, 1.0]),
       seed=st.integers(0, 2**16))
def test_random_sparse_inputs_in_any_order(name, data, density, seed):
    ops = EXPRESSIONS[name][1]
    order = "".join(data.draw(st.permutations(_indices(ops)), label="order"))
    sizes = {i: data.draw(st.integers(1, 5), label=f"size {i}") for i in "ijkl"}
    _check(name, order, _arrays(ops, density, seed, sizes))
