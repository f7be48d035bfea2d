"""``samfuse calibrate``: the fit recovers the knobs of reference RTL generated with
non-default ones (0 % error after it, visible error before), writes a hardware description
``--hw`` reads back, seeds from a Vitis synthesis report, and refuses bad input in one
line. The RTL runs are few and small (``--suite-size small``, a few ``--kernels``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cosim.cli import main
from cosim.runs._calibrate import FIFO_CHOICES, Knobs, bundled_suite, fit, model_cycles
from cosim.runs._csynth import CsynthError, read_solution, seed_from_solution
from ir import CATALOGUE, load_hw
from rtl_hls.rtl.bench import simulator_missing

SOLUTION = Path(__file__).parent / "data" / "vitis_solution"

#: the reference RTL's machine: Vitis FIFOs at depth 4 (RAM: read at t+2, capacity 5),
#: pipelined scanners and joins, an ALU at latency 4 and II 2
RTL_HW = """name: vitis-standin
dram: {enabled: false}
fifo: {depth: 4, latency: vitis}
timing:
  scan_compressed: {latency: 3}
  intersect: {latency: 2}
  alu: {latency: 4, ii: 2}
  repeat: {latency: 2}
"""
KERNELS = "spmv,elementwise_mul,row_scale,fused2"


def test_bundled_suite_has_twenty_kernels_with_fused_regions():
    suite = bundled_suite("small")
    names = [k.name for k in suite]
    assert len(suite) >= 20 and len(set(names)) == len(names)
    assert sum(n.startswith("fused") for n in names) >= 5
    assert all(n.op in CATALOGUE for k in suite for n in k.graph.nodes.values())


def test_fit_recovers_knobs_the_python_model_itself_was_given():
    """No RTL: the target is the model's own cycles at known knobs, so the fit must reach
    them exactly from the defaults (coordinate descent from every fifo.latency)."""
    suite = [k for k in bundled_suite("small") if k.name in ("spmv", "elementwise_add")]
    base = load_hw("ideal")
    truth = Knobs({"scan_compressed": 2}, {"alu": 2}, "vitis")
    target = model_cycles(suite, base.with_overrides(truth.overrides() | {"fifo.depth": 3}))
    got = fit(suite, target, base.with_overrides({"fifo.depth": 3}), max_latency=3, max_ii=2)
    assert got.cycles == target
    assert got.knobs.fifo in FIFO_CHOICES


def test_csynth_report_gives_each_primitive_its_ii_and_depth():
    procs = {p.name: p for p in read_solution(SOLUTION)}
    assert set(procs) == {"samfuse_scan_compressed_1", "samfuse_scan_compressed_2",
                          "samfuse_alu_U0", "samfuse_root", "samfuse_reduce_3"}
    assert (procs["samfuse_alu_U0"].primitive, procs["samfuse_alu_U0"].ii,
            procs["samfuse_alu_U0"].depth) == ("alu", 2, 4)
    lat, ii = seed_from_solution(SOLUTION)
    assert lat == {"alu": 4, "reduce": 5, "root": 1, "scan_compressed": 3}
    assert ii == {"alu": 2, "reduce": 2, "root": 1, "scan_compressed": 1}


def test_a_folder_without_a_synthesis_report_is_one_clear_error(tmp_path):
    with pytest.raises(CsynthError, match="no synthesis report"):
        read_solution(tmp_path)


@pytest.mark.parametrize(("args", "message"), [
    (["--rtl-dir", "nowhere"], "no such folder"),
    (["--rtl-hw", "ideal", "--kernels", "spmv,nope"], "unknown kernel 'nope'"),
    (["--rtl-hw", "ideal", "--max-ii", "0"], "--max-ii 0: expected >= 1"),
])
def test_bad_input_is_one_line(args, message, capsys, tmp_path):
    assert main(["calibrate", *args, "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.cosim
def test_calibrate_recovers_reference_rtl_knobs(tmp_path, capsys):
    if simulator_missing("icarus"):
        pytest.skip(simulator_missing("icarus"))
    rtl_hw = tmp_path / "rtl.yaml"
    rtl_hw.write_text(RTL_HW)
    out = tmp_path / "out"
    assert main(["calibrate", "--rtl-hw", str(rtl_hw), "--suite-size", "small",
                 "--kernels", KERNELS, "--vitis-solution", str(SOLUTION),
                 "--max-latency", "4", "--max-ii", "2", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    rows = report["kernels"]
    assert [r["kernel"] for r in rows] == KERNELS.split(",")
    assert all(r["model_after"] == r["rtl_cycles"] for r in rows)  # 0 % after the fit
    assert report["before"]["max_abs_error_pct"] > 10  # what the defaults miss
    assert report["after"]["max_abs_error_pct"] == 0
    assert "| spmv |" in (out / "report.md").read_text()
    # calibrated.yaml is a hardware description: the model under it gives the RTL's cycles
    suite = [k for k in bundled_suite("small") if k.name in KERNELS.split(",")]
    calibrated = load_hw(str(out / "calibrated.yaml"))
    assert model_cycles(suite, calibrated) == [r["rtl_cycles"] for r in rows]
