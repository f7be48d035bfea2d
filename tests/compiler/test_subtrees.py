"""The one-walk views of an expression (``Subtrees``, ``accesses_under``,
``reduction_groups``) against the plain walks they replace, on random expressions."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import parse
from compiler._ast import Reduction, Subtrees, accesses, children, free_indices, walk
from compiler._factor import accesses_under, reduction_groups

_INDICES = ("i", "j", "k", "l")


def _expressions() -> st.SearchStrategy[str]:
    """Random right-hand sides: accesses, constants, negation, functions, reductions
    and the four operators, nested."""
    access = st.builds(lambda t, idx: f"{t}({','.join(idx)})" if idx else t,
                       st.sampled_from("ABCD"),
                       st.lists(st.sampled_from(_INDICES), max_size=3, unique=True))
    leaf = access | st.sampled_from(["2", "0.5"])

    def grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return (st.builds(lambda a, op, b: f"({a} {op} {b})", inner,
                          st.sampled_from("+-*/"), inner)
                | st.builds(lambda a: f"-({a})", inner)
                | st.builds(lambda f, a: f"{f}({a})", st.sampled_from(["exp", "relu"]),
                            inner)
                | st.builds(lambda r, v, a: f"({r}({v}) {a})", st.sampled_from(["sum", "max"]),
                            st.sampled_from(_INDICES), inner))

    return st.recursive(leaf, grow, max_leaves=30)


@settings(max_examples=200, deadline=None)
@given(_expressions())
def test_subtrees_give_every_nodes_accesses_and_indices(text):
    rhs = parse(f"X = {text}").rhs
    sub = Subtrees(rhs)
    assert sub.nodes == list(walk(rhs))
    for node in walk(rhs):
        want = accesses(node)
        got = sub.under(node)
        assert [id(a) for a in got] == [id(a) for a in want]
        assert sub.indices[id(node)] == {i for a in want for i in a.indices}


@settings(max_examples=200, deadline=None)
@given(_expressions())
def test_accesses_under_and_reduction_groups_match_their_walks(text):
    rhs = parse(f"X = {text}").rhs
    reductions = [e for e in walk(rhs) if isinstance(e, Reduction)]
    assert accesses_under(rhs) == {id(r): frozenset(map(id, accesses(r))) for r in reductions}

    def depth_of(target, e=rhs, depth=0):
        if e is target:
            return depth
        inner = depth + isinstance(e, Reduction)
        found = [depth_of(target, c, inner) for c in children(e)]
        return next((d for d in found if d is not None), None)

    groups = reduction_groups(rhs)
    assert [(g.indices, g.free, g.depth) for g in groups] == [
        (frozenset(r.indices), frozenset(free_indices(r)), depth_of(r)) for r in reductions]


def test_an_expression_outside_the_tree_is_walked():
    sub = Subtrees(parse("X(i) = A(i) * B(i)").rhs)
    other = parse("Y(i) = C(i) + D(i)").rhs
    assert [a.tensor for a in sub.under(other)] == ["C", "D"]
