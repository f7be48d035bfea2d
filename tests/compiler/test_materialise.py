"""Materialised intermediates (docs/fusion.md, "Materialised intermediates"): a region's
``materialise: [T]`` computes T once into an on-chip buffer its consumers read, instead of
inlining T's expression into them. Results equal numpy over random GCN-like chains; T
moves no DRAM bytes; the graphs, schedules and graph JSON carry the choice; misuse is one
line."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import CompileError, compile_model, einsum_program
from cosim.runs._model_run import run_model
from ir import (
    Graph,
    GraphError,
    Region,
    Schedule,
    ScheduleError,
    elaborate,
    load_hw,
    onchip_buffers,
    written_buffers,
)
from tests._materialised import STATEMENTS, gcn_chain

HBM = load_hw("hbm2-u280")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 9), f=st.integers(1, 5), h=st.integers(1, 4),
       density=st.floats(0.0, 0.7), seed=st.integers(0, 2**16),
       a_format=st.sampled_from(("csr", "dcsr", "dense")),
       x_format=st.sampled_from(("dense", "csr")), hw=st.sampled_from(("ideal", "hbm2-u280")))
def test_materialised_chain_equals_numpy(n, f, h, density, seed, a_format, x_format, hw):
    compiled, inputs, gold = gcn_chain(n, f, h, density, seed, a_format=a_format,
                                       x_format=x_format)
    (region,) = compiled.regions
    assert [k.target for k in region.kernels] == ["T", "Y"]
    run = run_model(compiled, inputs, hw=hw)
    np.testing.assert_allclose(run.outputs["Y"], gold["Y"], rtol=1e-4, atol=1e-4)
    (rr,) = run.regions
    assert "T" not in rr.bytes_read and "T" not in rr.bytes_written  # it stays on chip
    if hw != "ideal":  # and moves no DRAM byte: its kernels' traffic is the inputs' alone
        producer, consumer = rr.results["T"], rr.results["Y"]
        assert sum(s.dram_write_bytes for s in producer.nodes.values()) == 0
        assert consumer.buffers["T.vals"].fill_bytes == 0
        assert consumer.buffers["T.vals"].filled == 0


def test_the_graphs_mark_the_tensor_on_chip_and_round_trip():
    compiled, _, _ = gcn_chain(6, 3, 2, 0.4, 1)
    producer, consumer = (k.graph for k in compiled.regions[0].kernels)
    assert producer.tensors["T"].role == "output" and producer.tensors["T"].onchip
    assert consumer.tensors["T"].role == "input" and consumer.tensors["T"].onchip
    assert not consumer.tensors["A"].onchip
    again = Graph.from_json(consumer.to_json())
    assert again.tensors["T"].onchip and '"onchip": true' in consumer.to_json()
    (buf,) = onchip_buffers(consumer, HBM)
    assert (buf.name, buf.source, buf.fills, buf.words) == ("T.vals", "onchip", False, 12)
    assert written_buffers(producer, HBM) == [("T.vals", 48)]
    assert not written_buffers(producer, load_hw("ideal"))
    assert not [p for p in elaborate(producer, HBM).mem_ports if p.tensor == "T"]
    assert compiled.regions[0].inputs == ["X", "W", "A"]


def test_materialising_moves_fewer_dram_bytes_than_recomputing():
    """The GCN row (X·W)(k,:) recomputed per edge reads X and W per edge; materialised,
    once (the cycles are the study's figure, docs/results.md)."""
    runs = {}
    for mat in (False, True):
        compiled, inputs, gold = gcn_chain(40, 16, 8, 0.1, 3, materialise=mat)
        runs[mat] = run_model(compiled, inputs, hw=HBM)
        np.testing.assert_allclose(runs[mat].outputs["Y"], gold["Y"], rtol=1e-4, atol=1e-4)
    moved = {m: sum(r.dram_read_bytes for r in run.regions) for m, run in runs.items()}
    assert moved[True] < moved[False]


def test_schedule_materialise_round_trips_and_is_checked():
    prog = einsum_program(STATEMENTS, {"A": (4, 4), "X": (4, 3), "W": (3, 2)}, {"A": "csr"})
    sched = Schedule([Region("all", ["T", "Y"], materialise=("T",))])
    again = Schedule.from_yaml(sched.to_yaml())
    assert again.regions[0].materialise == ("T",)
    assert "materialise T" in str(again)
    assert Schedule.from_dict({"regions": [{"statements": ["T", "Y"],
                                            "materialise": "T"}]}).regions[0].materialise \
        == ("T",)
    with pytest.raises(ScheduleError, match="not one of its statements") as err:
        Schedule([Region("a", ["T"]), Region("b", ["Y"], materialise=("T",))]).validate(prog)
    assert "\n" not in str(err.value)
    with pytest.raises(ScheduleError, match="expected a list of tensors"):
        Region("a", ["T"], materialise=(3,))


def test_materialising_an_exported_or_sparse_tensor_is_one_error():
    prog = einsum_program(STATEMENTS, {"A": (4, 4), "X": (4, 3), "W": (3, 2)}, {"A": "csr"},
                          outputs=["T", "Y"])
    with pytest.raises(CompileError, match="later regions or the caller read it") as err:
        compile_model(prog, Schedule([Region("all", ["T", "Y"], materialise=("T",))]))
    assert "\n" not in str(err.value)
    prog = einsum_program(STATEMENTS, {"A": (4, 4), "X": (4, 3), "W": (3, 2)},
                          {"A": "csr", "T": "csr"})
    with pytest.raises(CompileError, match="is not dense") as err:
        compile_model(prog, Schedule([Region("all", ["T", "Y"], materialise=("T",))]))
    assert "\n" not in str(err.value)


def test_a_materialised_tensor_counts_towards_onchip_bytes():
    """T's 48 bytes fit or not, in the producer (which writes it) and the consumer."""
    compiled, inputs, _ = gcn_chain(6, 3, 2, 0.4, 1)
    producer, consumer = (k.graph for k in compiled.regions[0].kernels)
    small = load_hw("hbm2-u280", {"onchip.bytes": 47})
    for graph in (producer, consumer):
        with pytest.raises(GraphError, match=r"T\.vals 48 bytes") as err:
            elaborate(graph, small)
        assert "\n" not in str(err.value)
    elaborate(consumer, load_hw("hbm2-u280", {"onchip.bytes": 48}))


def test_onchip_beside_a_partial_buffer_list_is_refused():
    compiled, _, _ = gcn_chain(4, 2, 2, 0.5, 1)
    consumer = compiled.regions[0].kernels[1].graph
    data = consumer.to_dict()
    spec = next(t for t in data["tensors"] if t["name"] == "T")
    spec["onchip"] = "yes"
    with pytest.raises(GraphError, match="onchip 'yes' must be true or false"):
        Graph.from_dict(data)
    spec["onchip"], spec["buffer"] = True, ["vals"]
    with pytest.raises(GraphError, match="holds every array it stores"):
        Graph.from_dict(data)


def test_the_heuristic_prices_a_materialised_tensor_on_chip():
    """The producer writes no DRAM line of T and each consumer loads none; the estimate
    of the consumer's DRAM bytes is then the simulated bytes of its other operands."""
    from compiler import estimate
    from sim_models.python import simulate
    from tests._materialised import kernel_cases

    compiled, inputs, _ = gcn_chain(30, 12, 6, 0.1, 4)
    (producer, p_in, _), (consumer, c_in, _) = kernel_cases(compiled, inputs)
    est = estimate(producer, p_in, HBM)
    assert est.dram_write_bytes == 0 and simulate(producer, p_in, hw=HBM).dram_write_bytes == 0
    est = estimate(consumer, c_in, HBM)
    t_ports = [k for k in est.ports if consumer.nodes[k[0]].params["tensor"] == "T"]
    assert t_ports and all(est.port_costs[k].lines == 0 for k in t_ports)
    sim = simulate(consumer, c_in, hw=HBM)
    assert est.dram_bytes == pytest.approx(sim.dram_read_bytes + sim.dram_write_bytes,
                                           rel=0.1)
