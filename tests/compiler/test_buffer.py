"""The compiler's on-chip buffer choice (compiler/_buffer.py): ``auto`` buffers what a
graph re-reads or gathers and never more than fits, names force, ``none`` and ideal
memory change nothing; schedules, the study axis and the tuner carry the choice."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from compiler import (
    CompileError,
    buffer_graph,
    buffer_model,
    compile_expression,
    compile_model,
    einsum_program,
    evaluate,
)
from ir import Region, Schedule, ScheduleError, load_hw
from sim_models.python import simulate

HBM = load_hw("hbm2-u280")


def _spmv(n: int = 300, density: float = 0.05, seed: int = 0):
    a = sp.random(n, n, density=density, format="csr", random_state=seed, dtype=np.float32)
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
    g = compile_expression("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"},
                           shapes={"A": (n, n)}, stats={"A": a, "x": x})
    return g, {"A": a, "x": x}


def _buffers(graph) -> dict:
    return {n: t.buffer for n, t in graph.tensors.items() if t.buffer}


def test_auto_buffers_the_gathered_vector_and_not_the_streamed_matrix():
    g, ins = _spmv()
    chosen = buffer_graph(g, HBM, "auto", ins)
    assert _buffers(chosen) == {"x": ("vals",)}
    plain, onchip = simulate(g, ins, hw=HBM), simulate(chosen, ins, hw=HBM)
    np.testing.assert_allclose(onchip.dense("y"), ins["A"] @ ins["x"], rtol=1e-4, atol=1e-4)
    assert onchip.cycles < plain.cycles / 2
    dram = sum(n.dram_read_bytes for n in onchip.nodes.values())
    assert dram < sum(n.dram_read_bytes for n in plain.nodes.values()) / 4


def test_auto_never_exceeds_the_capacity():
    g, ins = _spmv()
    tight = load_hw("hbm2-u280", {"onchip.bytes": 300 * 4 - 1})  # x needs 1,200 bytes
    assert not _buffers(buffer_graph(g, tight, "auto", ins))
    assert _buffers(buffer_graph(g, load_hw("hbm2-u280", {"onchip.bytes": 1200}), "auto", ins))


def test_auto_leaves_room_for_the_accumulators():
    """SpMM's spacc holds up to one output row on chip; X (dense) is gathered."""
    b = sp.random(20, 30, density=0.2, format="csr", random_state=1, dtype=np.float32)
    c = np.random.default_rng(1).standard_normal((30, 16)).astype(np.float32)
    g = compile_expression("Y(i,j) = B(i,k) * C(k,j)", formats={"B": "csr", "Y": "csr"},
                           shapes={"B": (20, 30), "C": (30, 16)}, order="i,k,j")
    assert "C" in _buffers(buffer_graph(g, HBM, "auto", {"B": b, "C": c}))
    acc = 8 * 30  # the spacc's dense capacity (max dimension) at 8 bytes an entry
    room = load_hw("hbm2-u280", {"onchip.bytes": 30 * 16 * 4 + acc - 1})
    assert "C" not in _buffers(buffer_graph(g, room, "auto", {"B": b, "C": c}))


def test_ideal_memory_and_none_change_nothing():
    g, ins = _spmv(40)
    assert buffer_graph(g, None, "auto", ins) is g
    assert buffer_graph(g, load_hw("ideal"), "auto", ins) is g
    assert buffer_graph(g, HBM, "none", ins) is g


def test_names_force_and_are_checked():
    g, ins = _spmv(40)
    assert _buffers(buffer_graph(g, HBM, ("A.crd1", "x"), ins)) == {"A": ("crd1",),
                                                                     "x": ("vals",)}
    with pytest.raises(CompileError, match="stores seg1, crd1, vals"):
        buffer_graph(g, HBM, ("A.crd0",), ins)
    with pytest.raises(CompileError, match=r"A\.crd1 6400 bytes") as err:
        buffer_graph(g, load_hw("hbm2-u280", {"onchip.bytes": 100}), ("A.crd1",), ins)
    assert "\n" not in str(err.value)


def _chain():
    p = einsum_program(["T(i,j) = A(i,k) * X(k,j)", "H(i,j) = relu(T(i,j))"],
                       {"A": (12, 12), "X": (12, 4)}, {"A": "csr"}, name="chain")
    rng = np.random.default_rng(2)
    ins = {"A": (rng.random((12, 12)) < 0.3) * rng.standard_normal((12, 12)),
           "X": rng.standard_normal((12, 4))}
    return p, {k: v.astype(np.float32) for k, v in ins.items()}


def test_a_region_s_own_choice_wins_over_the_schedule_s_and_the_default():
    p, ins = _chain()
    sched = Schedule([Region("mm", ["T"], buffer="none"), Region("act", ["H"])],
                     buffer=("X", "T"))
    cm = buffer_model(compile_model(p, sched), HBM, "auto", ins)
    graphs = {r.name: r.kernels[0].graph for r in cm.regions}
    assert not _buffers(graphs["mm"])
    assert _buffers(graphs["act"]) == {"T": ("vals",)}
    cm = buffer_model(compile_model(p, Schedule.unfused(p)), HBM, "auto", ins)
    assert "X" in _buffers(cm.regions[0].kernels[0].graph)
    values = {**ins, **evaluate(p, ins)}
    for reg in cm.regions:  # every buffered kernel still computes its tensor
        k = reg.kernels[0]
        res = simulate(k.graph, {t: values[t] for t in k.inputs}, hw=HBM)
        np.testing.assert_allclose(res.dense(k.target), values[k.target], rtol=1e-4,
                                   atol=1e-4)


def test_a_schedule_naming_an_unknown_tensor_is_one_error():
    p, ins = _chain()
    with pytest.raises(CompileError, match="'Q' is not one of"):
        buffer_model(compile_model(p, Schedule.unfused(p)), HBM, ("Q",), ins)


def test_schedule_buffer_round_trips_and_is_checked():
    sched = Schedule([Region("mm", ["T"], buffer="A.crd1,X"), Region("act", ["H"])],
                     buffer="auto")
    back = Schedule.from_yaml(sched.to_yaml())
    assert back.buffer == "auto" and back.regions[0].buffer == ("A.crd1", "X")
    for bad in (7, "", ["a..b"], ".vals"):
        with pytest.raises(ScheduleError, match="buffer") as err:
            Schedule([Region("mm", ["T"])], buffer=bad)
        assert "\n" not in str(err.value)


def test_the_study_axis_takes_choices_and_refuses_others(tmp_path):
    from cosim.studies._spec import StudyError, load_study

    def study(values):
        path = tmp_path / "s.yaml"
        path.write_text("name: s\nworkloads:\n  - {expr: 'y(i) = A(i,j) * x(j)', "
                        "formats: {A: csr, x: d, y: d}, shapes: {A: [8, 8]}}\n"
                        f"axes:\n  hw: [hbm2-u280]\n  buffer: {values}\n")
        return load_study(path)

    runs = study("[none, auto, 'x']").expand()
    assert [r.buffer for r in runs] == ["none", "auto", "x"]
    assert "buffer" not in runs[0].to_json() and runs[1].to_json()["buffer"] == "auto"
    with pytest.raises(StudyError, match="buffer"):
        study("[7]")


def test_the_tuner_searches_the_buffer_knob():
    pytest.importorskip("botorch")
    from cosim import TuneSpace

    p, ins = _chain()
    one = TuneSpace.build(p, stats=ins)
    both = TuneSpace.build(p, stats=ins, buffers=("none", "auto"))
    assert both.size() == 2 * one.size()
    autos = [q for q in both.all_points() if q.buffer == "auto"]
    assert autos and both.schedule(autos[0]).buffer == "auto"
    assert both.schedule(one.all_points()[0]).buffer == "none"  # explicit: best.yaml
    assert "buffer=auto" in both.describe(autos[0])


def test_the_heuristic_prices_a_buffer_as_loaded_once():
    """SpMV with the vector on chip: the estimate's DRAM bytes are the run's (the vector's
    fill, the matrix streamed once), and its cycles are the ideal-memory estimate's plus
    the fill, as the run's are the ideal run's."""
    from compiler import cycle_estimate, estimate

    g, ins = _spmv(400, 0.03, 5)
    onchip = g.with_buffers({"x": True})
    est, est_plain = estimate(onchip, ins, hw=HBM), estimate(g, ins, hw=HBM)
    run = simulate(onchip, ins, hw=HBM)
    measured = sum(n.dram_read_bytes for n in run.nodes.values())
    assert est.dram_read_bytes == pytest.approx(measured, rel=0.05)
    assert est_plain.dram_read_bytes > 4 * est.dram_read_bytes
    # priced as on ideal memory plus the fill, as the run costs what ideal memory does
    cycles, ideal = cycle_estimate(onchip, est, HBM), cycle_estimate(g, estimate(g, ins))
    assert ideal < cycles < 1.05 * ideal
    assert run.cycles < 1.05 * simulate(g, ins).cycles
    assert cycles < cycle_estimate(g, est_plain, HBM) / 2
