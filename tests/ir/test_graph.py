"""Graph validation, JSON round trip, rendering; tokens and the catalogue."""

from __future__ import annotations

import json

import pytest

from ir import (
    CATALOGUE,
    DONE,
    EMPTY,
    Graph,
    GraphError,
    Stop,
    examples,
    parse_token,
    render,
    stop,
    to_dot,
    to_f32,
    token_text,
)


def _spmv_dict():
    return json.loads(examples.spmv(3, 4).to_json())


def test_json_round_trip_is_stable():
    g = examples.spmm_ikj(3, 4, 5)
    again = Graph.from_json(g.to_json())
    assert again.to_dict() == g.to_dict()


def _node(d, node_id):
    return next(n for n in d["nodes"] if n["id"] == node_id)


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d.update(schema="samfuse-graph/0"), "graph schema 'samfuse-graph/0' is not"),
    (lambda d: _node(d, "Bi").update(op="scan_magic"), "unknown primitive 'scan_magic'"),
    (lambda d: d["edges"].append({"src": "Bi.crd", "dst": "mul.a"}),
     "stream kind mismatch, Bi.crd is crd but mul.a expects val"),
    (lambda d: d["edges"].append({"src": "Bv.val", "dst": "mul.a"}),
     "input port mul.a is driven twice"),
    (lambda d: d.update(edges=[e for e in d["edges"] if e["dst"] != "mul.b"]),
     "dangling input port mul.b"),
    (lambda d: d["edges"].append({"src": "Bi.nope", "dst": "xi.crd"}),
     "scan_dense has no output port 'nope'"),
    (lambda d: d["edges"][0].update(depth=0), "depth 0 must be an int >= 1"),
    (lambda d: _node(d, "mul")["params"].update(op="pow"), "'pow' is not one of"),
    (lambda d: _node(d, "Bi")["params"].pop("level"), "missing parameter 'level'"),
    (lambda d: _node(d, "Bi")["params"].update(tensor="Q"), "tensor 'Q', which the graph"),
    (lambda d: _node(d, "Bi")["params"].update(level="one"), "should be a int"),
])
def test_malformed_graphs_are_rejected_with_the_culprit_named(mutate, message):
    data = _spmv_dict()
    mutate(data)
    with pytest.raises(GraphError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Graph.from_dict(data)


def test_unreadable_and_invalid_json_files(tmp_path):
    with pytest.raises(GraphError, match="cannot read graph file"):
        Graph.from_json(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(GraphError, match="not valid JSON"):
        Graph.from_json(bad)
    binary = tmp_path / "c.npy"
    binary.write_bytes(b"\x93NUMPY\xff\xfe")
    with pytest.raises(GraphError, match="is not text"):
        Graph.from_json(binary)


def test_render_svg_and_dot(tmp_path):
    g = examples.spmv(3, 4)
    assert "scan_dense" in to_dot(g)
    out = render(g, tmp_path / "g.svg")
    assert out.read_text().lstrip().startswith(("<?xml", "<svg"))


def test_tokens_are_types_with_round_trip_text():
    assert stop(2) == Stop(2) and stop(2) is stop(2) and stop(1) != stop(2)
    for tok in (0, 17, stop(0), stop(3), EMPTY, DONE):
        assert parse_token(token_text(tok)) == tok
    f = to_f32(0.1)  # streams hold binary32 values
    assert parse_token(token_text(f), float) == f
    with pytest.raises(ValueError):
        Stop(-1)


def test_catalogue_entries_are_well_formed():
    for prim in CATALOGUE.values():
        for ports in (prim.inputs, prim.outputs):
            names = [p.name for p in ports]
            assert len(names) == len(set(names)), prim.name
        for p in prim.inputs + prim.outputs:
            assert p.kind in ("crd", "ref", "val", "repsig")
