"""The simulated hardware on the command line and in studies: ``samfuse hw``, ``--hw`` and
``--hw-set`` on sim/cosim/model, ``sim --json`` and the memory columns, ``--mem-trace``,
and the study axes ``hw`` and ``hw_set``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.io
import scipy.sparse as sp

from cosim.cli import main
from cosim.studies._runner import code_version, run_study
from cosim.studies._spec import StudyError, load_study
from ir import HW_KEYS, HW_PRESETS, load_hw

SPMV = "x(i) = B(i,j) * c(j)"


@pytest.fixture
def spmv(tmp_path: Path) -> list[str]:
    """``sim`` arguments for a compiled 30x20 SpMV with its inputs."""
    B = sp.random(30, 20, density=0.3, format="csr", random_state=1, dtype=np.float32)
    scipy.io.mmwrite(tmp_path / "b.mtx", B)
    np.save(tmp_path / "c.npy", np.arange(20, dtype=np.float32))
    graph = tmp_path / "spmv.json"
    assert main(["compile", SPMV, "--format", "B=csr", "--shape", "B=30x20", "--shape",
                 "c=20", "--order", "i,j", "-o", str(graph)]) == 0
    return [str(graph), "--input", f"B={tmp_path / 'b.mtx'}", "--input",
            f"c={tmp_path / 'c.npy'}"]


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err


def _json_run(capsys, argv: list[str]) -> dict:
    capsys.readouterr()
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)  # the whole of stdout is one object


# -- samfuse hw ----------------------------------------------------------------------

def test_hw_lists_every_preset_on_one_line(capsys):
    assert main(["hw"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in lines] == list(HW_PRESETS)
    hbm = lines[HW_PRESETS.index("hbm2-u280")]
    assert "32 × 14.4 GB/s = 460.8 GB/s" in hbm and "latency 48 cycles" in hbm
    assert load_hw("hbm2-u280").source in hbm
    assert "no memory cost" in lines[HW_PRESETS.index("ideal")]


def test_hw_name_prints_every_key_with_value_unit_and_meaning(capsys):
    assert main(["hw", "hbm2-u280"]) == 0
    head, columns, *rows = capsys.readouterr().out.splitlines()
    assert head.startswith("hbm2-u280: peak 460.8 GB/s (32 channels × 14.4 GB/s at 300 MHz)")
    assert columns.split() == ["key", "value", "unit", "meaning"]
    assert [r.split()[0] for r in rows] == list(HW_KEYS)
    for row, (key, (_, unit, meaning)) in zip(rows, HW_KEYS.items(), strict=True):
        assert row.endswith(meaning) and (not unit or f" {unit} " in row), key
    assert rows[list(HW_KEYS).index("dram.latency_cycles")].split()[1:3] == ["48", "cycles"]


def test_hw_shows_a_file_and_overrides(tmp_path, capsys):
    f = tmp_path / "mine.yaml"
    f.write_text("clock_mhz: 200\ndram: {enabled: true, channels: 2, bytes_per_cycle: 16}\n")
    assert main(["hw", str(f), "--hw-set", "dram.channels=4"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("mine: peak 12.8 GB/s (4 channels × 3.2 GB/s at 200 MHz)")


@pytest.mark.parametrize("argv, message", [
    (["hw", "nosuch"], "unknown hardware 'nosuch': give a preset (comal-hbm, ddr4-u250, "
                       "fuseflow, hbm2-u280, ideal, vitis-like) or a .yaml file"),
    (["hw", "ideal", "--hw-set", "dram.colour=red"], "unknown key 'dram.colour'"),
    (["hw", "ideal", "--hw-set", "dram.channels=two"],
     "dram.channels = 'two' must be a number"),
    (["hw", "ideal", "--hw-set", "dram.channels"],
     "--hw-set 'dram.channels': expected KEY=VALUE, e.g. dram.latency_cycles=100"),
    (["hw", "ideal", "--hw-set", "dram.line_bytes=10"], "must be a multiple of the 4-byte"),
])
def test_hw_errors_are_one_line(argv, message, capsys):
    assert main(argv) == 1
    assert message in _one_line_error(capsys)


def test_a_bad_hardware_file_is_a_one_line_error(tmp_path, capsys):
    f = tmp_path / "bad.yaml"
    f.write_text("dram: {channels: [1, 2]\n")
    assert main(["hw", str(f)]) == 1
    assert "cannot read the hardware description" in _one_line_error(capsys)
    f.write_text("dram: {banks: 4}\n")
    assert main(["hw", str(f)]) == 1
    assert "unknown hardware key 'dram.banks'" in _one_line_error(capsys)


# -- --hw on sim, cosim, model -------------------------------------------------------------

@pytest.mark.parametrize("setting, message", [
    ("dram.colour=red", "unknown key 'dram.colour'"),
    ("dram.latency_cycles=-3", "dram.latency_cycles = -3 must be positive"),
    ("dram.enabled=maybe", "dram.enabled = 'maybe' must be true or false"),
    ("latency", "--hw-set 'latency': expected KEY=VALUE"),
])
def test_sim_hw_set_errors_are_one_line_before_the_run(spmv, setting, message, capsys):
    assert main(["sim", *spmv, "--hw-set", setting]) == 1
    assert message in _one_line_error(capsys)


def test_sim_defaults_to_ideal_hardware(spmv, capsys):
    plain = _json_run(capsys, ["sim", *spmv, "--json"])
    ideal = _json_run(capsys, ["sim", *spmv, "--json", "--hw", "ideal"])
    assert plain["hw"] == ideal["hw"] == "ideal" and plain["cycles"] == ideal["cycles"]
    assert plain["dram_read_bytes"] == plain["dram_write_bytes"] == 0
    assert main(["sim", *spmv, "--stats"]) == 0
    out = capsys.readouterr().out
    assert "dram " not in out and "stall_mem" not in out  # the report without memory


def test_sim_json_is_one_object_with_the_run(spmv, tmp_path, capsys):
    doc = _json_run(capsys, ["sim", *spmv, "--json", "--stats", "--hw", "hbm2-u280",
                             "--output-dir", str(tmp_path / "o")])
    for key in ("graph", "backend", "hw", "cycles", "dram_read_bytes", "dram_write_bytes",
                "achieved_gbps", "seconds", "wall_seconds", "firings", "nodes"):
        assert key in doc, key
    assert (doc["graph"], doc["backend"], doc["hw"]) == ("einsum", "python", "hbm2-u280")
    assert doc["seconds"] == pytest.approx(doc["cycles"] / 300e6)
    moved = doc["dram_read_bytes"] + doc["dram_write_bytes"]
    assert doc["dram_read_bytes"] > 0 and doc["dram_write_bytes"] > 0
    assert doc["achieved_gbps"] == pytest.approx(moved / doc["seconds"] / 1e9)
    nodes = doc["nodes"]
    assert sum(n["dram_read_bytes"] for n in nodes.values()) == doc["dram_read_bytes"]
    assert sum(n["mem_requests"] for n in nodes.values()) == doc["mem_requests"] > 0
    assert sum(n["fires"] for n in nodes.values()) == doc["firings"]
    assert sum(doc["channel_bytes"]) == moved
    assert Path(doc["outputs"]["x"]).is_file()


def test_sim_text_report_with_memory(spmv, capsys):
    assert main(["sim", *spmv, "--stats", "--hw", "hbm2-u280"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(ln.startswith("hw         hbm2-u280: 300 MHz, 32 channel(s)") for ln in lines)
    dram = next(ln for ln in lines if ln.startswith("dram       "))
    assert "B read" in dram and "GB/s" in dram
    head = next(ln for ln in lines if ln.startswith("node "))
    assert head.split()[-4:] == ["stall_mem", "dram_rd_B", "dram_wr_B", "bursts"]
    row = next(ln.split() for ln in lines if ln.split()[:2] == ["B_val", "array"])
    assert int(row[-3]) > 0 and int(row[-1]) > 0  # the values array reads DRAM


def test_more_latency_costs_cycles_and_cosim_agrees_on_the_hardware(spmv, capsys):
    base = _json_run(capsys, ["sim", *spmv, "--json", "--hw", "hbm2-u280"])
    slow = _json_run(capsys, ["sim", *spmv, "--json", "--hw", "hbm2-u280",
                              "--hw-set", "dram.latency_cycles=400"])
    assert slow["cycles"] > base["cycles"] > _json_run(capsys, ["sim", *spmv,
                                                               "--json"])["cycles"]
    assert (slow["hw"], slow["hw_set"]) == ("hbm2-u280", ["dram.latency_cycles=400"])
    assert main(["cosim", *spmv, "--backends", "python,python", "--hw", "hbm2-u280"]) == 0
    out = capsys.readouterr().out
    assert "all backends agree" in out and f" {base['cycles']} " in out


def test_mem_trace_needs_memory(spmv, tmp_path, capsys):
    assert main(["sim", *spmv, "--mem-trace", str(tmp_path / "t.trace")]) == 1
    assert "hardware 'ideal' has no memory system" in _one_line_error(capsys)


def test_mem_trace_holds_one_line_per_dram_line(spmv, tmp_path, capsys):
    trace = tmp_path / "t" / "spmv.trace"
    doc = _json_run(capsys, ["sim", *spmv, "--json", "--hw", "hbm2-u280", "--mem-trace",
                             str(trace)])
    ops = [ln.split() for ln in trace.read_text().splitlines()]
    assert all(len(t) == 2 and t[0] in ("LD", "ST") and t[1].startswith("0x") for t in ops)
    loads = sum(op == "LD" for op, _ in ops)
    assert loads * 64 == doc["dram_read_bytes"]
    assert (len(ops) - loads) * 64 == doc["dram_write_bytes"]
    assert doc["mem_trace_requests"] == len(ops)
    assert all(int(a, 16) % 64 == 0 for _, a in ops)


def test_model_reports_dram_per_region_on_the_default_hardware(tmp_path, capsys):
    assert main(["model", "autoencoder", "--config", "tiny", "--schedule", "unfused",
                 "--mem-trace", str(tmp_path / "mt")]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.split()[:2] == ["region", "kernels"])
    assert lines[head].split()[-9:] == ["DRAM", "rd", "B", "DRAM", "wr", "B", "requests",
                                        "stall_mem", "GB/s"]
    assert ", hw hbm2-u280" in lines[head - 1]
    total = next(ln.split() for ln in lines if ln.startswith("total "))
    assert int(total[5]) > 0 and int(total[7]) > 0  # DRAM bytes read, requests
    traces = sorted((tmp_path / "mt").glob("*.trace"))
    assert len(traces) == int(total[1])  # one per kernel
    loads = sum(ln.startswith("LD ") for t in traces for ln in t.read_text().splitlines())
    assert loads * 64 == int(total[5])


# -- studies ----------------------------------------------------------------------

SPMV_KERNEL = {"kernel": "spmv", "size": 8, "density": 0.5}


def test_study_hw_axis_gives_one_row_per_hardware(tmp_path):
    mine = tmp_path / "mine.yaml"
    mine.write_text("name: slow\nclock_mhz: 200\ndram: {enabled: true, channels: 1, "
                    "bytes_per_cycle: 8, latency_cycles: 90}\n")
    spec = load_study({"name": "hw", "workloads": [SPMV_KERNEL],
                       "axes": {"hw": ["ideal", "hbm2-u280", str(mine)],
                                "hw_set": [[], {"dram.latency_cycles": 200}]}})
    configs = spec.expand()
    assert len({c.key(code_version()) for c in configs}) == 6
    run_study(spec, tmp_path / "out", workers=1, progress=False)
    frame = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert len(frame) == 6 and set(frame["status"]) == {"ok"}
    assert sorted(frame["hw"]) == ["hbm2-u280", "hbm2-u280", "ideal", "ideal", "slow", "slow"]
    frame["hw_set"] = frame["hw_set"].fillna("")
    assert set(frame["hw_set"]) == {"", "dram.latency_cycles=200"}
    cycles = {(r.hw, r.hw_set): r.cycles for r in frame.itertuples()}
    assert cycles[("hbm2-u280", "dram.latency_cycles=200")] > cycles[("hbm2-u280", "")] > \
        cycles[("ideal", "")] == cycles[("ideal", "dram.latency_cycles=200")]
    slow = frame[frame["hw"] == "slow"].iloc[0]
    assert json.loads(slow["hw_spec"])["dram.bytes_per_cycle"] == 8
    assert slow["seconds"] == pytest.approx(slow["cycles"] / 200e6)


def test_study_default_hardware_is_the_realistic_preset():
    (cfg,) = load_study({"name": "d", "workloads": [SPMV_KERNEL]}).expand()
    assert cfg.hw == "hbm2-u280" and cfg.hw_set == ()


def test_a_hardware_file_change_changes_the_cache_key(tmp_path):
    mine = tmp_path / "mine.yaml"
    doc = {"name": "k", "workloads": [SPMV_KERNEL], "axes": {"hw": [str(mine)]}}
    mine.write_text("dram: {enabled: true, latency_cycles: 10}\n")
    (a,) = load_study(doc).expand()
    mine.write_text("dram: {enabled: true, latency_cycles: 11}\n")
    (b,) = load_study(doc).expand()
    assert a.key("v") != b.key("v")


@pytest.mark.parametrize("axes, message", [
    ({"hw": ["nosuch"]}, "hw 'nosuch': expected a preset"),
    ({"hw": ["missing.yaml"]}, "hw 'missing.yaml': unknown hardware"),
    ({"hw_set": [{"dram.colour": 1}]}, "unknown key 'dram.colour'"),
    ({"hw_set": [["dram.channels"]]}, "expected KEY=VALUE"),
    ({"hw_set": [{"dram.channels": "two"}]}, "must be a number"),
    ({"hw_set": ["dram.channels=2"]}, "expected a mapping of hardware keys"),
])
def test_bad_hardware_axes_are_rejected_at_load(axes, message):
    with pytest.raises(StudyError, match=message):
        load_study({"name": "b", "workloads": [SPMV_KERNEL], "axes": axes})
