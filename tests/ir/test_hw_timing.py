"""The timing knobs in the hardware description, the graph's node parameters and the
elaboration (docs/timing.md, "Latency, II and start-up"): keys validated against the
catalogue with one clear line, round trips, and each node's and edge's resolved knobs."""

from __future__ import annotations

import pytest

from ir import (
    DEFAULT_NODE_TIMING,
    Graph,
    GraphError,
    HwError,
    NodeTiming,
    elaborate,
    examples,
    load_hw,
)
from ir._timing import edge_timing


def test_defaults_are_todays_contract():
    hw = load_hw("ideal")
    assert hw.fifo.latency == 1 and not hw.timing.knobs
    el = elaborate(examples.spmv(4, 5), hw)
    assert all(n.timing == DEFAULT_NODE_TIMING for n in el.nodes.values())
    assert all((e.read_latency, e.visibility, e.capacity) == (1, 1, 2)
               for e in el.edges.values())
    assert el.knobs_used() == set()


def test_keys_by_override_and_yaml(tmp_path):
    hw = load_hw("ideal", ["timing.alu.latency=3", "timing.scan_compressed.ii=2",
                           "timing.intersect.startup=0", "fifo.latency=vitis"])
    assert hw.timing.of("alu") == NodeTiming(3, 1, 0)
    assert hw.timing.of("scan_compressed") == NodeTiming(1, 2, 0)
    assert hw.timing.of("repeat") == DEFAULT_NODE_TIMING
    f = tmp_path / "m.yaml"
    f.write_text("name: m\nfifo: {latency: 2}\ntiming:\n  alu: {latency: 4, ii: 2}\n")
    m = load_hw(f)
    assert m.fifo.latency == 2 and m.timing.of("alu") == NodeTiming(4, 2, 0)
    # overriding a file's key keeps its others, and a hardware hashes (study caches)
    m2 = m.with_overrides(["timing.alu.ii=1"])
    assert m2.timing.of("alu") == NodeTiming(4, 1, 0)
    assert hash(m2) != hash(m)


def test_hw_json_round_trip():
    from cosim.runs._hw_spec import hw_from_json, hw_items, hw_to_json

    hw = load_hw("vitis-like", ["timing.repeat.ii=2"])
    items = hw_items(hw)
    assert items["timing.repeat.ii"] == 2 and items["fifo.latency"] == "vitis"
    back = hw_from_json(hw_to_json(hw))
    assert (back.timing, back.fifo) == (hw.timing, hw.fifo)


@pytest.mark.parametrize("item, message", [
    ("timing.nosuch.latency=2", "timing.nosuch.latency: unknown primitive 'nosuch'; known: "),
    ("timing.alu.lat=2", "timing.alu.lat: unknown timing knob 'lat'; expected one of "
                         "latency, ii, startup"),
    ("timing.alu=2", "timing key 'timing.alu' must be timing.<primitive>.<knob>"),
    ("timing.alu.latency=0", "timing.alu.latency = 0 must be a whole number from 1 to"),
    ("timing.alu.ii=1.5", "timing.alu.ii = '1.5' must be a whole number from 1 to"),
    ("timing.alu.startup=-1", "timing.alu.startup = -1 must be a whole number from 0 to"),
    ("fifo.latency=3", "fifo.latency = '3' must be 1, 2 or vitis"),
])
def test_bad_keys_are_one_clear_line(item, message):
    with pytest.raises(HwError) as exc:
        load_hw("ideal", [item])
    text = str(exc.value)
    assert message in text and "\n" not in text


def test_bad_yaml_timing_section(tmp_path):
    f = tmp_path / "m.yaml"
    f.write_text("name: m\ntiming: 3\n")
    with pytest.raises(HwError, match="timing = 3 must be a mapping of primitives"):
        load_hw(f)
    f.write_text("name: m\ntiming: {alu: {speed: 2}}\n")
    with pytest.raises(HwError, match="unknown timing knob 'speed'"):
        load_hw(f)


def _with_node_params(graph: Graph, node: str, **params) -> Graph:
    doc = graph.to_dict()
    for n in doc["nodes"]:
        if n["id"] == node:
            n["params"] = {**n["params"], **params}
    return Graph.from_dict(doc)


def test_node_parameters_win_over_the_hardware():
    g = _with_node_params(examples.spmv(4, 5), "mul", latency=5, startup=3)
    hw = load_hw("ideal", ["timing.alu.latency=2", "timing.alu.ii=2"])
    el = elaborate(g, hw)
    assert el.nodes["mul"].timing == NodeTiming(5, 2, 3)
    assert el.edges["mul.val->red.val_in"].visibility == 5
    assert el.knobs_used() == {"latency", "ii", "startup"}
    # without hardware the node's own parameters still hold
    assert elaborate(g).nodes["mul"].timing == NodeTiming(5, 1, 3)


@pytest.mark.parametrize("value", [0, "2", 1.5, True])
def test_bad_node_parameter(value):
    with pytest.raises(GraphError) as exc:
        _with_node_params(examples.spmv(4, 5), "mul", latency=value)
    assert "node 'mul' (alu): parameter latency = " in str(exc.value)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("depth, fifo, want", [
    (1, "vitis", (1, 1)), (2, "vitis", (1, 2)), (3, "vitis", (2, 4)), (16, "vitis", (2, 17)),
    (None, "vitis", (1, None)), (3, 1, (1, 3)), (3, 2, (2, 3)), (None, 2, (2, None)),
])
def test_edge_read_latency_and_capacity(depth, fifo, want):
    for writer_latency in (1, 3):
        e = edge_timing(depth, fifo, writer_latency)
        assert (e.read_latency, e.capacity) == want
        assert e.visibility == writer_latency - 1 + want[0]


def test_elaboration_at_the_run_depth():
    hw = load_hw("ideal", ["fifo.latency=vitis"])
    el = elaborate(examples.spmv(4, 5), hw, 4)
    assert {(e.read_latency, e.capacity) for e in el.edges.values()} == {(2, 5)}
    assert el.knobs_used() == {"fifo.latency"}
