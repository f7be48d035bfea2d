"""FIFO depth as a hardware key (``fifo.depth``), FuseFlow's machines (``fuseflow``,
``comal-hbm``) and ``samfuse model --json``: which depth wins, on every backend, and the
work the simulator counts."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _parity import assert_same_result, python_run
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import compile_expression, compile_model, cycle_estimate, estimate
from cosim import SystemCRun, get_backend, run_model
from cosim.cli import main
from cosim.studies._spec import StudyError, _axis_value
from ir import HW_PRESETS, HwError, compare_traces, examples, load_hw, run_depth
from sim_models.python import simulate

SPMM = "X(i,j) = B(i,k) * C(k,j)"


def _spmm(m: int = 12, k: int = 10, n: int = 8):
    """A compiled SpMM in order i,k,j: its spacc and the repeated C rows stall at the
    compiled depth 2 (the stalls are checked where it matters)."""
    return compile_expression(SPMM, {"B": "csr", "C": "csr", "X": "dc"},
                              {"B": (m, k), "C": (k, n)}, order="i,k,j")


def _inputs(seed: int, density: float, m: int = 12, k: int = 10, n: int = 8) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in (("B", (m, k)), ("C", (k, n))):
        a = rng.uniform(0.5, 1.5, shape).astype(np.float32)
        a[rng.random(shape) >= density] = 0
        out[name] = a
    return out


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err


# -- the presets and the key -------------------------------------------------------------

def test_presets_load_and_list(capsys):
    assert {"fuseflow", "comal-hbm"} <= set(HW_PRESETS)
    ff, hbm = load_hw("fuseflow"), load_hw("comal-hbm")
    assert (ff.memory, ff.fifo_depth, ff.compute.macs_per_cycle) == (False, None, 0)
    d = hbm.dram
    assert (hbm.memory, d.channels, d.line_bytes, d.bytes_per_cycle, d.outstanding,
            hbm.fifo_depth) == (True, 8, 4, 2, 8, None)
    for name in ("ideal", "hbm2-u280", "ddr4-u250"):  # every other preset keeps its graphs
        assert load_hw(name).fifo_depth == "graph"
    assert main(["hw"]) == 0
    lines = {ln.split()[0]: ln for ln in capsys.readouterr().out.splitlines()}
    assert "FIFOs unbounded" in lines["fuseflow"] and "no memory cost" in lines["fuseflow"]
    assert "FIFOs unbounded" in lines["comal-hbm"] and "8 × 2.0 GB/s" in lines["comal-hbm"]
    assert "FIFOs as compiled" in lines["hbm2-u280"]
    assert main(["hw", "fuseflow"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == "fuseflow: no memory cost, FIFOs unbounded"
    assert next(r for r in rows if r.startswith("fifo.depth")).split()[1:3] == ["inf",
                                                                                "tokens"]


@pytest.mark.parametrize("value", ["0", "-1", "x", "2.5", "true", ""])
def test_bad_fifo_depth_is_one_line(value, capsys):
    assert main(["hw", "ideal", "--hw-set", f"fifo.depth={value}"]) == 1
    assert "fifo.depth" in _one_line_error(capsys)


@pytest.mark.parametrize("text", ["0", "-1", '"x"', "null", "[2]"])
def test_bad_fifo_depth_in_a_file_is_one_line(text, tmp_path, capsys):
    f = tmp_path / "mine.yaml"
    f.write_text(f"fifo:\n  depth: {text}\n")
    assert main(["hw", str(f)]) == 1
    assert "fifo.depth" in _one_line_error(capsys)


def test_fifo_depth_spellings():
    assert load_hw("ideal", ["fifo.depth=INF"]).fifo_depth is None
    assert load_hw("ideal", {"fifo.depth": float("inf")}).fifo_depth is None
    assert load_hw("ideal", ["fifo.depth=16"]).fifo_depth == 16
    assert load_hw("fuseflow", ["fifo.depth=graph"]).fifo_depth == "graph"


def test_which_depth_wins():
    ff = load_hw("fuseflow")
    assert run_depth("graph", ff) is None          # the hardware over the compiled depths
    assert run_depth(3, ff) == 3                   # the run's own depth over the hardware
    assert run_depth(None, load_hw("ideal")) is None
    assert run_depth("graph", load_hw("ideal")) == "graph"
    assert run_depth("graph", None) == "graph"


# -- fuseflow on the Python and SystemC models -----------------------------------------

@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), density=st.sampled_from([0.2, 0.5, 1.0]),
       m=st.integers(3, 12), n=st.integers(2, 9))
def test_fuseflow_is_unbounded_and_never_slower(seed, density, m, n):
    g = _spmm(m, 10, n)
    ins = _inputs(seed, density, m, 10, n)
    ff = simulate(g, ins, hw=load_hw("fuseflow"))
    compiled = simulate(g, ins, hw=load_hw("ideal"))
    assert ff.cycles == simulate(g, ins, depth=None).cycles
    assert ff.cycles <= compiled.cycles
    np.testing.assert_allclose(ff.dense("X"), ins["B"] @ ins["C"], rtol=1e-5)


def test_fuseflow_beats_depth_2_where_it_stalls():
    g, ins = _spmm(), _inputs(3, 0.5)
    compiled = simulate(g, ins, hw=load_hw("ideal"))
    assert sum(s.stall_out for s in compiled.nodes.values()) > 0  # it does stall at 2
    ff = simulate(g, ins, hw=load_hw("fuseflow"))
    assert ff.cycles < compiled.cycles
    assert sum(s.stall_out for s in ff.nodes.values()) == 0       # nothing is ever full


def test_fuseflow_systemc_parity(systemc):
    """SystemC under fuseflow (and a finite hardware depth, and a run depth over the
    hardware's) equals the Python model token for token and cycle for cycle."""
    g = _spmm()
    hws = {"fuseflow": load_hw("fuseflow"), "ideal3": load_hw("ideal", ["fifo.depth=3"]),
           "comal-hbm": load_hw("comal-hbm")}
    configs = [("graph", "fuseflow"), ("graph", "ideal3"), (2, "fuseflow"),
               ("graph", "comal-hbm")]
    for seed in (0, 1):
        ins = _inputs(seed, 0.4)
        runs = [SystemCRun(g, ins, trace=True, depth=d, hw=hws[h], mem_trace=hws[h].memory)
                for d, h in configs]
        for (d, h), sc in zip(configs, systemc.run_batch(runs), strict=True):
            assert_same_result(python_run(g, ins, d, hws[h]), sc, f"{h} depth={d}")
        py_ff = python_run(g, ins, "graph", hws["fuseflow"])
        assert py_ff.cycles == python_run(g, ins, None).cycles
        assert python_run(g, ins, 2, hws["fuseflow"]).cycles == python_run(g, ins, 2).cycles


# -- the hardware depth equals --depth N on every backend ------------------------------

def _backend_or_skip(name: str):
    from cosim.backends._backend import BACKENDS, _load_optional

    _load_optional()
    reason = BACKENDS[name].unavailable()
    if reason:
        pytest.skip(reason)
    return get_backend(name)


@pytest.mark.parametrize("backend", ["python", "systemc", "hls-csim", "rtl"])
def test_hardware_depth_equals_run_depth(backend):
    """``--hw-set fifo.depth=N`` runs exactly as ``--depth N``: the same tokens (HLS
    C-simulation has no clock) and, on timed backends, the same cycles, which differ from
    the compiled depth's, so the depth really reached the FIFOs."""
    runner = _backend_or_skip(backend)
    g, ins = _spmm(6, 5, 4), _inputs(5, 0.6, 6, 5, 4)
    cycles = {}
    for n in (3, 8):
        by_hw = runner.run(g, ins, trace=True, hw=load_hw("ideal", [f"fifo.depth={n}"]))
        by_run = runner.run(g, ins, trace=True, depth=n, hw=load_hw("ideal"))
        assert not compare_traces(by_run.trace, by_hw.trace, timed=runner.timed)
        assert by_hw.cycles == by_run.cycles
        np.testing.assert_allclose(by_hw.dense("X"), ins["B"] @ ins["C"], rtol=1e-5)
        cycles[n] = by_hw.cycles
    # the work every backend counts (counters or, for RTL and HLS, the trace) is the
    # Python model's; FLOPs are one multiply and one add per scalar product
    work = by_hw.work(g)
    assert work == simulate(g, ins).work(g)
    products = int(((ins["B"] != 0).sum(0) * (ins["C"] != 0).sum(1)).sum())
    assert work.flops == 2 * products
    if runner.timed:
        assert cycles[3] == simulate(g, ins, depth=3).cycles  # and equal the model's
        assert cycles[3] < runner.run(g, ins, hw=load_hw("ideal")).cycles


def test_rtl_refuses_unbounded_fifos_in_one_line(tmp_path, capsys):
    runner = _backend_or_skip("rtl")
    g = examples.spmv(4, 4)
    ins = {"B": np.eye(4, dtype=np.float32), "c": np.ones(4, np.float32)}
    with pytest.raises(HwError, match=r"backend 'rtl' needs bounded FIFOs, but hardware "
                                      r"'fuseflow' sets fifo.depth = inf"):
        runner.run(g, ins, hw=load_hw("fuseflow"))
    assert runner.run(g, ins, depth=2, hw=load_hw("fuseflow")).cycles == \
        runner.run(g, ins, hw=load_hw("ideal")).cycles
    path = tmp_path / "g.json"
    path.write_text(g.to_json())
    np.save(tmp_path / "b.npy", ins["B"])
    np.save(tmp_path / "c.npy", ins["c"])
    argv = ["sim", str(path), "--input", f"B={tmp_path / 'b.npy'}", "--input",
            f"c={tmp_path / 'c.npy'}", "--backend", "rtl"]
    assert main([*argv, "--hw", "fuseflow"]) == 1
    err = _one_line_error(capsys)
    assert "backend 'rtl'" in err and "fifo.depth" in err


def test_sim_depth_graph_keeps_the_compiled_depths(tmp_path, capsys):
    g, ins = _spmm(), _inputs(3, 0.5)
    path = tmp_path / "g.json"
    path.write_text(g.to_json())
    for name, a in ins.items():
        np.save(tmp_path / f"{name}.npy", a)
    argv = ["sim", str(path), "--input", f"B={tmp_path / 'B.npy'}", "--input",
            f"C={tmp_path / 'C.npy'}", "--json"]

    def cycles(*extra: str) -> int:
        capsys.readouterr()
        assert main([*argv, *extra]) == 0
        return json.loads(capsys.readouterr().out)["cycles"]

    compiled, unbounded = simulate(g, ins).cycles, simulate(g, ins, depth=None).cycles
    assert cycles() == cycles("--hw", "fuseflow", "--depth", "graph") == compiled
    assert cycles("--hw", "fuseflow") == cycles("--depth", "inf") == unbounded
    assert cycles("--hw", "fuseflow", "--depth", "2") == compiled  # every edge is 2 here


# -- model --depth and --json -----------------------------------------------------------

@pytest.fixture(scope="module")
def gcn():
    torch = pytest.importorskip("torch")
    from compiler import from_torch, torch_inputs, torch_weights
    from compiler.models import MODELS

    model = MODELS["gcn"].from_config("small", seed=0).eval()
    example = model.example_inputs(seed=0)
    program = from_torch(model, example, formats=model.sparse_formats)
    binds = {**torch_weights(model, program), **torch_inputs(program, example)}
    with torch.no_grad():
        want = model(*example).numpy()
    return program, binds, want


def _model_json(capsys, *argv: str) -> tuple[dict, list[str]]:
    capsys.readouterr()
    assert main(["model", "gcn", "--json", *argv]) == 0
    lines = capsys.readouterr().out.splitlines()
    return json.loads(lines[-1]), lines


def _table_row(lines: list[str], name: str) -> list[str]:
    return next(ln.split() for ln in lines if ln.split()[:1] == [name])


@pytest.mark.parametrize("argv", [["--hw", "fuseflow", "--schedule", "unfused"],
                                  ["--hw", "hbm2-u280", "--schedule", "partial"]])
def test_model_json(argv, capsys, gcn):
    doc, lines = _model_json(capsys, *argv)
    fields = ("cycles", "dram_read_bytes", "dram_write_bytes", "flops", "mem_accesses")
    regions = doc["regions"]
    for f in fields:  # totals are the sums of the regions
        assert doc[f] == sum(r[f] for r in regions)
    assert doc["correct"] is True
    assert int(_table_row(lines, "total")[2]) == doc["cycles"]  # the table's total row
    for r in regions:
        row = _table_row(lines, r["name"])
        assert int(row[2]) == r["cycles"]
        if doc["hw"] == "hbm2-u280":
            assert (int(row[5]), int(row[6])) == (r["dram_read_bytes"], r["dram_write_bytes"])
        assert r["flops"] > 0 and r["mem_accesses"] > 0
        assert {"est_cycles", "est_dram_bytes", "est_flops"} <= set(r)
    assert doc["depth"] == ("inf" if doc["hw"] == "fuseflow" else "graph")
    assert doc["dram_read_bytes"] > 0 if doc["hw"] == "hbm2-u280" else \
        doc["dram_read_bytes"] == 0
    # the same counts and estimates computed here, from each kernel's trace
    program, binds, _ = gcn
    from compiler import NAMED_SCHEDULES

    hw = load_hw(argv[1])
    from compiler import buffer_model  # the on-chip buffers model --buffer auto chooses

    compiled = buffer_model(compile_model(program, NAMED_SCHEDULES[argv[3]](program)), hw,
                            "auto", binds)
    run = run_model(compiled, binds, hw=hw, trace=True)
    for reg, rr, r in zip(compiled.regions, run.regions, regions, strict=True):
        flops = accesses = 0
        est_flops = est_bytes = est_cycles = 0.0
        for k in reg.kernels:
            res = rr.results[k.target]
            res.data_tokens = {}  # count the streams themselves
            work = res.work(k.graph)
            flops, accesses = flops + work.flops, accesses + work.mem_accesses
            g = k.graph if hw.fifo_depth == "graph" else k.graph.with_depth(hw.fifo_depth)
            est = estimate(g, {t: run.memory[t] for t in k.inputs}, hw=hw)
            # priced on the run's hardware: DRAM lines and their round trips
            est_flops, est_bytes = est_flops + est.flops, est_bytes + est.dram_bytes
            est_cycles += cycle_estimate(g, est, hw)
        assert (r["name"], r["cycles"], r["flops"], r["mem_accesses"]) == \
            (reg.name, rr.cycles, flops, accesses)
        assert r["est_flops"] == pytest.approx(est_flops)
        assert r["est_dram_bytes"] == pytest.approx(est_bytes)
        assert r["est_cycles"] == pytest.approx(est_cycles)


def test_model_depth(capsys, gcn):
    """``model --depth`` like ``sim``: fuseflow at the compiled depths is ideal, ideal
    with unbounded FIFOs is fuseflow, and unbounded is never slower."""
    ideal, _ = _model_json(capsys, "--hw", "ideal")
    ff, _ = _model_json(capsys, "--hw", "fuseflow")
    assert _model_json(capsys, "--hw", "fuseflow", "--depth", "graph")[0]["cycles"] == \
        ideal["cycles"]
    assert _model_json(capsys, "--hw", "ideal", "--depth", "inf")[0]["cycles"] == \
        ff["cycles"]
    assert ff["cycles"] <= ideal["cycles"]
    assert (ff["flops"], ff["mem_accesses"]) == (ideal["flops"], ideal["mem_accesses"])
    assert main(["model", "gcn", "--depth", "0"]) == 2  # argparse's usage error


def test_model_json_counts_agree_across_backends(systemc, gcn):
    """The SystemC counters equal the Python model's: the streams are the same."""
    program, binds, want = gcn
    compiled = compile_model(program)
    hw = load_hw("fuseflow")
    runs = [run_model(compiled, binds, backend=b, hw=hw) for b in ("python", "systemc")]
    for a, b in zip(runs[0].regions, runs[1].regions, strict=True):
        for t in a.results:
            assert a.results[t].data_tokens == b.results[t].data_tokens
            assert a.results[t].cycles == b.results[t].cycles
    np.testing.assert_allclose(runs[1].outputs[program.outputs[0]], want, rtol=1e-4,
                               atol=1e-5)


# -- studies ---------------------------------------------------------------------------

def test_study_depth_axis_takes_inf():
    assert _axis_value("depth", "inf", None) is None
    assert _axis_value("depth", float("inf"), None) is None
    assert _axis_value("depth", None, None) is None
    assert _axis_value("depth", 4, None) == 4
    for bad in (0, "x", True, 2.5):
        with pytest.raises(StudyError, match="expected an int from 1 to .*, inf or null"):
            _axis_value("depth", bad, None)
