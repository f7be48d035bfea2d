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


def test_fit_recovers_a_startup_from_traces_the_model_itself_wrote():
    """No RTL: traced model runs at known knobs with a start-up stand in for the RTL's
    FIFO recordings; the trace seeds and the descent find the start-up exactly and reset
    the start-ups the suite cannot see (every other kind's stays 0)."""
    from cosim.backends._backend import get_backend
    from cosim.runs._calibrate import seed_from_traces

    suite = [k for k in bundled_suite("small") if k.name in KERNELS.split(",")]
    base = load_hw("ideal", ["fifo.depth=4"])
    truth = Knobs({"scan_compressed": 3, "alu": 4}, {"alu": 2}, "vitis",
                  {"scan_compressed": 12})
    runs = [get_backend("python").run(k.graph, k.inputs, hw=base.with_overrides(
        truth.overrides()), trace=True) for k in suite]
    target = [r.cycles for r in runs]
    assert target != model_cycles(suite, base.with_overrides(
        truth.with_knob("startup", "scan_compressed", 0).overrides()))  # visible
    seeds = [seed_from_traces(suite, runs, f, base) for f in FIFO_CHOICES]
    got = fit(suite, target, base, seeds, max_latency=4, max_ii=2, max_startup=14)
    assert got.cycles == target
    assert {p: v for p, v in got.knobs.startup.items() if v} == {"scan_compressed": 12}


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
    (["--rtl-dir", "nowhere", "--hw", "ideal"], "no such folder"),
    (["--rtl-dir", "."], "--rtl-dir needs --hw"),
    (["--rtl-dir", ".", "--hw", "ideal", "--export-rtl-dir", "x"],
     "--export-rtl-dir writes the reference RTL of --rtl-hw"),
    (["--rtl-hw", "ideal", "--kernels", "spmv,nope"], "unknown kernel 'nope'"),
    (["--rtl-hw", "ideal", "--max-ii", "0"], "--max-ii 0: expected >= 1"),
    (["--rtl-hw", "ideal", "--max-startup", "-1"], "--max-startup -1: expected >= 0"),
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
    # SystemC re-runs the suite under calibrated.yaml and equals the Python model
    from cosim.backends._systemc import SystemCBackend

    if not SystemCBackend.unavailable():
        assert [r["systemc_after"] for r in rows] == [r["model_after"] for r in rows]
        assert report["systemc"] == "equals the Python model on every kernel"
        assert "SystemC after" in (out / "report.md").read_text()
    # calibrated.yaml is a hardware description: the model under it gives the RTL's cycles
    suite = [k for k in bundled_suite("small") if k.name in KERNELS.split(",")]
    calibrated = load_hw(str(out / "calibrated.yaml"))
    assert model_cycles(suite, calibrated) == [r["rtl_cycles"] for r in rows]


def _export(tmp_path: Path, kernels: str) -> tuple[Path, Path]:
    """The reference RTL under RTL_HW exported in the --rtl-dir convention, and the same
    machine at the default knobs (what the model starts from)."""
    rtl_hw = tmp_path / "rtl.yaml"
    rtl_hw.write_text(RTL_HW)
    base = tmp_path / "base.yaml"
    base.write_text("name: vitis-standin\ndram: {enabled: false}\nfifo: {depth: 4}\n")
    assert main(["calibrate", "--rtl-hw", str(rtl_hw), "--suite-size", "small", "--kernels",
                 kernels, "--export-rtl-dir", str(tmp_path / "rtl")]) == 0
    return rtl_hw, base


@pytest.mark.parametrize(("breakage", "message"), [
    ("folder", "no folder spmv/ for kernel 'spmv'"),
    ("top", "no module spmv_top in"),
    ("port", "module spmv_top has no port ap_done"),
])
def test_rtl_dir_that_breaks_the_convention_is_one_line(breakage, message, tmp_path,
                                                        capsys):
    _, base = _export(tmp_path, "spmv")
    top = tmp_path / "rtl" / "spmv" / "spmv_top.sv"
    if breakage == "folder":
        (tmp_path / "rtl" / "spmv").rename(tmp_path / "rtl" / "other")
    elif breakage == "top":
        top.write_text(top.read_text().replace("module spmv_top", "module other_top"))
    else:
        top.write_text(top.read_text().replace("ap_done", "done_o"))
    capsys.readouterr()
    assert main(["calibrate", "--rtl-dir", str(tmp_path / "rtl"), "--hw", str(base),
                 "--suite-size", "small", "--kernels", "spmv",
                 "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err


@pytest.mark.cosim
def test_rtl_dir_gives_the_report_rtl_hw_gives(tmp_path):
    """Exported reference RTL run from its folder is the same hardware: the same RTL
    cycles, seeds, fit and report as --rtl-hw (all but the line naming the RTL)."""
    if simulator_missing("icarus"):
        pytest.skip(simulator_missing("icarus"))
    kernels = "spmv,fused2"
    rtl_hw, base = _export(tmp_path, kernels)
    common = ["--hw", str(base), "--suite-size", "small", "--kernels", kernels,
              "--max-latency", "4", "--max-ii", "2"]
    assert main(["calibrate", "--rtl-hw", str(rtl_hw), *common,
                 "--out", str(tmp_path / "hw")]) == 0
    assert main(["calibrate", "--rtl-dir", str(tmp_path / "rtl"), *common,
                 "--out", str(tmp_path / "dir")]) == 0
    by_hw, by_dir = (json.loads((tmp_path / d / "report.json").read_text())
                     for d in ("hw", "dir"))
    assert by_dir.pop("rtl") != by_hw.pop("rtl")
    assert by_dir == by_hw
    assert all(r["model_after"] == r["rtl_cycles"] for r in by_dir["kernels"])
    assert by_dir["before"]["max_abs_error_pct"] > 10


@pytest.mark.cosim
def test_calibrate_recovers_a_startup_of_reference_rtl(tmp_path):
    """Reference RTL whose level scanners start 12 cycles late (and the latencies, II and
    RAM FIFOs of RTL_HW): the fit gives 0 % on every kernel and names that start-up, and
    only it."""
    if simulator_missing("icarus"):
        pytest.skip(simulator_missing("icarus"))
    rtl_hw = tmp_path / "rtl.yaml"
    rtl_hw.write_text(RTL_HW.replace("scan_compressed: {latency: 3}",
                                     "scan_compressed: {latency: 3, startup: 12}"))
    out = tmp_path / "out"
    assert main(["calibrate", "--rtl-hw", str(rtl_hw), "--suite-size", "small",
                 "--kernels", KERNELS, "--max-latency", "4", "--max-ii", "2",
                 "--max-startup", "14", "--no-systemc", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert all(r["model_after"] == r["rtl_cycles"] for r in report["kernels"])
    assert "systemc" not in report and "systemc_after" not in report["kernels"][0]
    startups = {k: v for k, v in report["knobs"].items() if k.endswith(".startup")}
    assert startups == {"timing.scan_compressed.startup": 12}
    assert load_hw(str(out / "calibrated.yaml")).to_dict()["timing"]["knobs"][
        "scan_compressed.startup"] == 12
