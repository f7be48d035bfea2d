"""The partial order graph: mode-order edges, user chains, conflicts and enumeration."""

from itertools import permutations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import OrderError, order_graph

SPMM = "X(i,j) = B(i,k) * C(k,j)"


def brute_force(graph, names):
    """Orders satisfying every edge, by checking all permutations (independent count)."""
    return [list(p) for p in permutations(names)
            if all(p.index(a) < p.index(b) for a, b in graph.edges)]


@pytest.mark.parametrize(("fb", "fc", "first"), [
    ("csr", "csr", ["i", "k", "j"]),    # Gustavson
    ("csr", "csc", ["i", "j", "k"]),    # inner product
    ("csc", "csr", ["k", "i", "j"]),    # outer product
])
def test_mode_order_edges_and_first_order(fb, fc, first):
    g = order_graph(SPMM, {"B": fb, "C": fc})
    assert not g.permuted
    levels = {"csr": (0, 1), "csc": (1, 0)}
    for acc, fmt in (("ik", fb), ("kj", fc)):
        a, b = (acc[m] for m in levels[fmt])
        assert (a, b) in g.edges
    assert g.first_order() == first
    assert first in brute_force(g, "ijk")


def test_first_order_prefers_output_then_reduced():
    g = order_graph(SPMM, {"B": "csr", "C": "csc"})
    assert g.first_order() == ["i", "j", "k"]
    g = order_graph(SPMM, {"B": "csc", "C": "csr"})
    assert g.first_order() == ["k", "i", "j"]


def test_user_order_comes_first():
    g = order_graph(SPMM, {"B": "csc", "C": "csc"}, "j")
    assert g.first_order()[0] == "j"
    assert g.first_order() == ["j", "k", "i"]


def test_conflict_makes_a_permuted_copy():
    g = order_graph(SPMM, {"B": "csr", "C": "csr"}, "j,i")
    assert set(g.permuted) == {"C"}
    c = g.permuted["C"]
    assert c.access == "C(k,j)" and set(c.cycle) == {"i", "j", "k"}
    assert g.first_order() == ["j", "i", "k"]
    assert g.transposes(g.first_order()) == ["C"]


def test_conflict_without_transposes_is_an_error_naming_tensor_and_indices():
    with pytest.raises(OrderError) as exc:
        order_graph(SPMM, {"B": "csr", "C": "csr"}, "j,i", transpose=False)
    msg = str(exc.value)
    assert msg.startswith("conflicting ordering constraints: tensor 'C' read as C(k,j)")
    assert "indices i, j, k cannot all be ordered" in msg
    assert "dataflow order j,i" in msg


def test_conflict_between_two_tensors():
    with pytest.raises(OrderError, match=r"conflicting ordering constraints: tensor 'C' "
                                         r"read as C\(j,i\)"):
        order_graph("X(i,j) = B(i,j) * C(j,i)", {"B": "csr", "C": "csr"}, transpose=False)
    g = order_graph("X(i,j) = B(i,j) * C(j,i)", {"B": "csr", "C": "csr"})
    assert list(g.permuted) == ["C"] and g.first_order() == ["i", "j"]


@pytest.mark.parametrize(("order", "match"), [
    ("i,j,i", r"order 'i,j,i' is a cycle: it puts i both before and after"),
    ("i,z", r"order 'i,z' names 'z', which is not an index of the expression; its "
            r"indices are i,j,k"),
])
def test_bad_user_orders(order, match):
    with pytest.raises(OrderError, match=match):
        order_graph(SPMM, {}, order)


def test_all_orders_cap_is_reported():
    g = order_graph("X(i,j,k,l) = B(i,j,k,l) + C(l,k,j,i)", {"B": "cccc", "C": "cccc"})
    assert list(g.permuted) == ["C"]
    unconstrained = order_graph("x = B(i) * C(j) * D(k) * E(l)", {})
    orders = unconstrained.all_orders(cap=5)
    assert orders.capped and orders.count == 5 and "capped at 5" in str(orders)
    assert unconstrained.all_orders().count == 24


FORMATS = ["d", "c", "dd", "dc", "cd", "cc", "dc:1,0", "cc:1,0"]


@settings(max_examples=60, deadline=None)
@given(fb=st.sampled_from(FORMATS[2:]), fc=st.sampled_from(FORMATS[2:]),
       fd=st.sampled_from(FORMATS[:2]),
       user=st.lists(st.sampled_from("ijkl"), unique=True, max_size=3))
def test_all_orders_equals_brute_force(fb, fc, fd, user):
    expr = "X(i,j) = sum(k,l) B(i,k) * C(k,j) * D(l) * E(j,l)"
    g = order_graph(expr, {"B": fb, "C": fc, "D": fd, "E": "dc"}, user)
    expected = brute_force(g, "ijkl")
    got = g.all_orders()
    assert not got.capped and got.count == len(expected)
    assert sorted(got.orders) == sorted(expected)
    assert got.orders[0] == g.first_order()
    # the user's chain holds in every order, and each kept tensor is concordant
    for order in got.orders:
        assert [v for v in order if v in user] == user
        assert set(g.transposes(order)) <= set(g.permuted)
