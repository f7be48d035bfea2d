"""Pinned FIFO depths (ir.Edge.pinned, docs/timing.md "Which FIFO depth a run uses"): a
depth the graph needs to run, which a run's depth raises but never lowers, kept through
JSON and every depth override."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ir import Edge, Graph, GraphError, at_run_depth, examples, load_hw


def _pinned(graph: Graph, depth: int) -> tuple[Graph, str]:
    """``graph`` with its first edge pinned at ``depth``, and that edge's name."""
    first = graph.edges[0]
    edges = [Edge(first.src, first.dst, depth, first.kind, True), *graph.edges[1:]]
    return Graph(graph.name, graph.nodes.values(), edges, graph.tensors.values(),
                 graph.dtype, graph.meta), first.name


@settings(deadline=None, max_examples=40)
@given(st.integers(1, 64), st.one_of(st.none(), st.integers(1, 64)))
def test_a_run_depth_raises_a_pinned_fifo_but_never_lowers_it(pin, run):
    graph, name = _pinned(examples.spmv(4, 5), pin)
    over = {e.name: e.depth for e in graph.with_depth(run).edges}
    assert over[name] == (None if run is None else max(pin, run))
    assert all(d == run for n, d in over.items() if n != name)
    assert all(e.pinned == (e.name == name) for e in graph.with_depth(run).edges)


def test_the_hardware_fifo_depth_keeps_a_pinned_fifo():
    graph, name = _pinned(examples.spmv(4, 5), 40)
    hw = load_hw("ideal", {"fifo.depth": 2})
    assert hw.fifo_depth == 2
    for run in (2, "graph"):
        depths = {e.name: e.depth for e in at_run_depth(graph, run, hw).edges}
        assert depths[name] == 40 and {d for n, d in depths.items() if n != name} == {2}


def test_pinned_round_trips_through_json_and_is_omitted_when_false():
    graph, name = _pinned(examples.spmv(4, 5), 9)
    data = graph.to_dict()
    marked = [e for e in data["edges"] if "pinned" in e]
    assert marked == [{"src": graph.edges[0].src, "dst": graph.edges[0].dst, "depth": 9,
                       "pinned": True}]
    back = Graph.from_json(json.dumps(data))
    assert [(e.name, e.depth, e.pinned) for e in back.edges] == \
        [(e.name, e.depth, e.pinned) for e in graph.edges]


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_a_pinned_that_is_not_a_boolean_is_one_clear_line(bad):
    data = examples.spmv(4, 5).to_dict()
    data["edges"][0]["pinned"] = bad
    with pytest.raises(GraphError) as exc:
        Graph.from_dict(data)
    msg = str(exc.value)
    assert "\n" not in msg and "pinned" in msg and "true or false" in msg
