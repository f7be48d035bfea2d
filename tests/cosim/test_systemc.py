"""The SystemC backend's own behaviour: every primitive has a model, a variant with one
process per module gives the same cycles, a failing, crashing or stuck child is reported
(never hung), waveforms, the comparison report, the auto backend and the compiled
library's cache. Parity with the Python model on kernels, blocks, lanes and memory is in
tests/parity/ (test_parity_*.py), on every backend at once.
"""

from __future__ import annotations

import re
import time

import numpy as np
import pytest
import scipy.sparse as sp
from _parity import assert_same_result, check_systemc, python_run

from compiler import compile_expression
from cosim import (
    BACKENDS,
    PythonBackend,
    SystemCBackend,
    SystemCError,
    SystemCRun,
    compare_backends,
)
from ir import CATALOGUE, examples, load_hw
from sim_models.python import InputError, simulate
from tests._block_graphs import BLOCK_HW_OVERRIDES, block_cases
from tests._kernel_graphs import full_range_random as _rand

pytestmark = pytest.mark.cosim

DEPTHS = (1, 2, 4, None)


def _assert_same(graph, inputs, depth, sc) -> None:
    """SystemC result ``sc`` equals the Python model's, down to every token's cycle."""
    assert_same_result(python_run(graph, inputs, depth), sc,
                       f"{graph.name} ({graph.dtype}, depth={depth})")


def _check(systemc, graph, inputs, depths=DEPTHS) -> None:
    results = systemc.run_batch([SystemCRun(graph, inputs, trace=True, depth=d)
                                 for d in depths])
    for depth, sc in zip(depths, results, strict=True):
        _assert_same(graph, inputs, depth, sc)


# -- the catalogue ----------------------------------------------------------------------

def test_every_catalogue_primitive_has_a_systemc_model(systemc):
    from cosim.backends._systemc_child import prepare

    drv = prepare()
    for op, prim in CATALOGUE.items():
        assert [p for p in str(drv.ports(op, True)).split(",") if p] == \
            [p.name for p in prim.inputs], op
        assert [p for p in str(drv.ports(op, False)).split(",") if p] == \
            [p.name for p in prim.outputs], op
    assert str(drv.ports("no_such_primitive", True)) == ""


# -- a SystemC variant: one process per module ------------------------------------------

def test_per_module_processes_give_the_same_cycles():
    """Every primitive as its own SC_METHOD: slower, but the same trace and cycles."""
    backend = SystemCBackend(per_module_processes=True)
    B, C = _rand(3, (5, 6), 0.4, "float32"), _rand(4, (6, 4), 0.5, "float32")
    _check(backend, examples.spmm_ikj(5, 6, 4), {"B": B, "C": C})
    _check(backend, examples.sddmm(5, 4, 6), {"B": _rand(5, (5, 4), 0.5, "float32"),
                                               "C": B, "D": _rand(6, (6, 4), 1.0, "float32")})


def test_per_module_processes_and_vcd_agree(tmp_path):
    """One SC_METHOD per primitive (the pool is committed on the falling edge) gives the
    same block run; a VCD of a block graph is written (din/dout show handles)."""
    if SystemCBackend.unavailable():
        pytest.skip(SystemCBackend.unavailable())
    _, g, inputs, want = next(c for c in block_cases(2) if c[0] == "sddmm")
    hw = load_hw("ideal", BLOCK_HW_OVERRIDES)
    sc = SystemCBackend(per_module_processes=True, vcd=tmp_path / "blocks").run(
        g, inputs, trace=True, hw=hw)
    assert_same_result(python_run(g, inputs, "graph", hw), sc, "per-module")
    np.testing.assert_allclose(sc.dense("X"), want["X"], rtol=1e-5, atol=1e-5)
    assert (tmp_path / "blocks.vcd").stat().st_size > 0



def test_per_module_processes_serve_bursts_in_port_order():
    """Modules evaluated in SystemC's own order still give the FCFS order of the memory
    ports."""
    if SystemCBackend.unavailable():
        pytest.skip(SystemCBackend.unavailable())
    a = sp.random(20, 30, density=0.2, format="csr", random_state=9, dtype=np.float32)
    graph = compile_expression("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d",
                                                                 "y": "d"},
                               shapes={"A": (20, 30)}, depth=2)
    hws = {"contention": load_hw("hbm2-u280", {"dram.channels": 1}),
           "line4": load_hw("hbm2-u280", {"dram.line_bytes": 4, "dram.outstanding": 3})}
    check_systemc(SystemCBackend(per_module_processes=True), graph,
                  {"A": a, "x": np.ones(30, np.float32)}, [(2, "contention"), (2, "line4")],
                  hws)


def test_deep_lane_buffers_are_fast(systemc):
    """8192-deep merge inputs (4 lanes of 2048) on a few thousand rows: the FIFOs grow
    with what they hold, not with their depth, and the run stays quick."""
    a = sp.random(3000, 200, density=0.02, format="csr", random_state=31, dtype=np.float32)
    x = np.random.default_rng(32).standard_normal(200).astype(np.float32)
    g = compile_expression("y(i) = A(i,j) * x(j)", {"A": "csr"}, {"A": a.shape, "x": x.shape},
                           par={"i": 4}, partition="balanced", stats={"A": a, "x": x},
                           lane_buffer=2048)
    inputs = {"A": a, "x": x}
    assert max(e.depth or 0 for e in g.edges) == 2048 * 2
    res = systemc.run(g, inputs)
    assert systemc.last_timings["simulate"] < 10.0
    assert res.cycles == simulate(g, inputs).cycles
    np.testing.assert_allclose(res.dense("y"), a @ x, rtol=1e-4, atol=1e-4)


# -- failures of the child: input errors, SystemC errors, crashes, hangs -----------------

def test_input_errors_are_raised_before_forking(systemc):
    with pytest.raises(InputError, match=r"needs input tensor\(s\) \['B'\]"):
        systemc.run(examples.spmv(3, 4), {"c": np.ones(4, np.float32)})


def test_a_systemc_error_in_the_child_is_a_python_exception(systemc, monkeypatch):
    import cosim.backends._systemc_child as child
    from cosim.backends._systemc_load import load

    child.prepare()  # warm up in this process before _elaborate is changed
    real = child._elaborate
    stray = []

    def with_unbound_port(drv, plan, index):
        net = real(drv, plan, index)
        stray.append(load().Root("stray"))  # a module whose clock port is never bound
        return net

    monkeypatch.setattr(child, "_elaborate", with_unbound_port)
    with pytest.raises(SystemCError, match=r"E109.*port not bound"):
        systemc.run(examples.spmv(2, 2), {"B": np.eye(2, dtype=np.float32),
                                          "c": np.ones(2, np.float32)})


def test_a_crashing_child_is_reported_not_hung(systemc, monkeypatch):
    import cppyy

    import cosim.backends._systemc_child as child

    child.prepare()  # warm up in this process before _elaborate is made to crash
    cppyy.cppdef("namespace samfuse_test { void crash() { *(volatile int*)nullptr = 1; } }")
    monkeypatch.setattr(child, "_elaborate", lambda *a: cppyy.gbl.samfuse_test.crash())
    with pytest.raises(SystemCError, match="died without a result.*SIGSEGV"):
        systemc.run(examples.spmv(2, 2), {"B": np.eye(2, dtype=np.float32),
                                          "c": np.ones(2, np.float32)})


def test_a_stuck_child_times_out(monkeypatch):
    import cosim.backends._systemc_child as child

    child.prepare()  # warm up in this process before _elaborate is made to hang
    # a child that woke up after the sleep would fail elaborating, not time out
    monkeypatch.setattr(child, "_elaborate", lambda *a: time.sleep(30))
    with pytest.raises(SystemCError, match="timed out after 0.5 s"):
        SystemCBackend(timeout=0.5).run(examples.spmv(2, 2), {
            "B": np.eye(2, dtype=np.float32), "c": np.ones(2, np.float32)})


# -- waveforms and the comparison report ---------------------------------------------------

def test_vcd_dump_has_every_edge_handshake(tmp_path):
    g = examples.spmv(3, 4)
    SystemCBackend(vcd=tmp_path / "spmv").run(g, {"B": np.eye(3, 4, dtype=np.float32),
                                                  "c": np.ones(4, np.float32)})
    text = (tmp_path / "spmv.vcd").read_text()
    assert "$enddefinitions" in text
    assert "Bi_crd__rs_i_crd" in text
    for sig in ("empty_n", "read", "full_n", "write"):
        assert re.search(rf"\$var wire\s+1\s+\S+\s+{sig}\s+\$end", text), sig
    for sig in ("dout", "din"):
        assert re.search(rf"\$var wire\s+34\s+\S+\s+{sig} \[33:0\]", text), sig


def test_compare_backends_reports_agreement_and_the_first_difference(systemc, monkeypatch):
    g = examples.spmv(4, 5)
    inputs = {"B": _rand(1, (4, 5), 0.5, "float32"), "c": _rand(2, (5,), 1.0, "float32")}
    report = compare_backends(g, inputs, ["python", "systemc"])
    assert report.ok and report.cycles["python"] == report.cycles["systemc"]
    assert "all backends agree" in str(report)

    class LateBackend(PythonBackend):
        """The reference model with every token on one edge written a cycle late."""

        name = "late"

        def run(self, graph, inputs, *, trace=False, depth="graph", hw=None, mem_trace=False):
            res = super().run(graph, inputs, trace=trace, depth=depth)
            et = res.trace.edges["Bi.crd->xi.crd"]
            et.cycles = [c + 1 for c in et.cycles]
            return res

    monkeypatch.setitem(BACKENDS, "late", LateBackend)
    report = compare_backends(g, inputs, ["systemc", "late"])
    assert not report.ok and report.outputs_agree["late"]
    (mm,) = report.mismatches["late"]
    assert mm.edge == "Bi.crd->xi.crd" and mm.index == 0 and mm.what == "cycle differs"
    assert "late vs systemc: edge Bi.crd->xi.crd: cycle differs at token #0" in str(report)


# -- the auto backend --------------------------------------------------------------------

def _spmm(n: int, density: float):
    return examples.spmm_ikj(n, n, 16, "dc", "dd"), {
        "B": _rand(n, (n, n), density, "float32"), "C": _rand(n + 1, (n, 16), 1.0, "float32")}


def test_auto_runs_large_graphs_on_systemc_and_small_ones_on_python(systemc):
    from compiler import estimate
    from cosim import AUTO_SYSTEMC_TOKENS, get_backend

    auto = get_backend("auto")
    for (graph, inputs), want in ((_spmm(8, 0.3), "python"), (_spmm(200, 0.1), "systemc")):
        tokens = sum(estimate(graph, inputs).tokens.values())
        assert (tokens >= AUTO_SYSTEMC_TOKENS) == (want == "systemc")
        res = auto.run(graph, inputs, trace=True, depth=2)
        assert res.backend == want
        _assert_same(graph, inputs, 2, res)


def test_auto_without_systemc_is_the_python_model(monkeypatch):
    from cosim import get_backend

    monkeypatch.setattr(SystemCBackend, "unavailable", classmethod(lambda cls: "not here"))
    graph, inputs = _spmm(200, 0.1)
    assert get_backend("auto").run(graph, inputs).backend == "python"


# -- the compiled library ----------------------------------------------------------------

def test_concurrent_first_uses_build_the_library_once(systemc, tmp_path):
    """Two processes starting on an empty cache ($XDG_CACHE_HOME): one compiles, under
    the lock, the other waits and loads the same file; nothing half-written is left."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "PYTHONPATH": str(root)}
    env.pop("SAMFUSE_CACHE", None)
    code = ("from cosim.backends._systemc_child import prepare; "
            "from cosim.backends._systemc_load import models_library; prepare(); "
            "print(models_library())")
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, cwd=root, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    paths = {out.strip() for out, _ in outs}
    assert len(paths) == 1
    lib = Path(paths.pop())
    assert lib.parent == tmp_path / "samfuse" / "systemc" and lib.exists()
    assert sum("compiling the SystemC models" in err for _, err in outs) == 1
    assert sorted(p.name for p in lib.parent.iterdir()) == sorted([lib.name,
                                                                   lib.stem + ".lock"])
