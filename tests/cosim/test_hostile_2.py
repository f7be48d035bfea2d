"""Hostile and careless input, round two (issue 25): wrong results and lost work, hangs and
memory, tracebacks. Each test reproduces one finding as the issue wrote it; every
rejection is one clear line naming the key, the value and what was expected."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.io
import scipy.sparse as sp

from compiler import CompileError, compile_expression
from compiler._parse import MAX_EXPR_DEPTH
from cosim.cli import main
from cosim.studies._runner import run_configs, run_study
from cosim.studies._spec import MAX_RUNS, StudyError, load_study
from cosim.tuning._space import TuneError
from ir import MAX_DEPTH, Graph, GraphError, HwError, Schedule, ScheduleError, load_hw

SPMV = "x(i) = B(i,j) * c(j)"
ROOT = Path(__file__).resolve().parents[2]


def _one_line_error(capsys, prefix: str = "samfuse: error: ") -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith(prefix), err
    return err


@pytest.fixture
def spmv(tmp_path: Path) -> dict:
    B = sp.random(12, 8, density=0.5, format="csr", random_state=1, dtype=np.float32)
    scipy.io.mmwrite(tmp_path / "b.mtx", B)
    np.save(tmp_path / "c.npy", np.arange(8, dtype=np.float32))
    graph = tmp_path / "spmv.json"
    assert main(["compile", SPMV, "--format", "B=csr", "--shape", "B=12x8", "--shape",
                 "c=8", "-o", str(graph)]) == 0
    return {"dir": tmp_path, "graph": graph, "B": B,
            "inputs": ["--input", f"B={tmp_path / 'b.mtx'}",
                       "--input", f"c={tmp_path / 'c.npy'}"]}


def _study(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(json.dumps(doc))
    return path


# -- wrong results and lost work ----------------------------------------------------------

def _balanced_lanes(spmv) -> dict:
    out = spmv["dir"] / "lanes.json"
    assert main(["compile", SPMV, "--format", "B=csr", *spmv["inputs"], "--par", "i=4",
                 "--partition", "balanced", "-o", str(out)]) == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize("lo, what", [(6, "give coordinate 4 to 0 lane"),
                                      (3, "give coordinate 0 to 1 lane(s) and others to 2")])
def test_lane_ranges_with_a_gap_or_an_overlap_are_refused_on_load(spmv, lo, what):
    """A gap (split_li1 moved from lo 4 to 6) ran with exit 0 and dropped rows 4 and 5."""
    data = _balanced_lanes(spmv)
    split = next(n for n in data["nodes"] if n["id"] == "split_li1")
    assert split["params"]["lo"] == 4
    Graph.from_dict(data)  # as compiled: the ranges cover 0..11
    split["params"]["lo"] = lo
    with pytest.raises(GraphError, match=r"lane splits \['split_li0', 'split_li1', "
                       r"'split_li2', 'split_li3'\] of level 0 of tensor 'B' " + what.replace(
                           "(", r"\(").replace(")", r"\)")):
        Graph.from_dict(data)


def test_nested_round_robin_lanes_still_load(tmp_path):
    """Nested lanes copy the inner splits per outer lane: every coordinate is kept by the
    same number of splits, which is not an overlap."""
    g = compile_expression("X(i,j) = B(i,k) * C(k,j)", {"B": "csr", "C": "csr"},
                           {"B": (12, 8), "C": (8, 6)}, par={"i": 2, "j": 3})
    assert sum(n.op == "lane_split" for n in g.nodes.values()) == 12
    Graph.from_json(g.to_json())


_KERNEL_STUDY = {"name": "k", "workloads": [{"kernel": "spmv", "size": 4}],
                 "axes": {"seed": [0, 1, 2]}}


@pytest.mark.parametrize("damage", ["[]", '{"hello": 1}', "truncated", ""])
def test_a_damaged_cache_entry_is_run_again(tmp_path, damage, capsys):
    spec = load_study(_KERNEL_STUDY)
    configs = spec.expand()
    first, ran = run_configs(configs, tmp_path, workers=1, progress=False)
    assert ran == 3
    entry = sorted((tmp_path / "runs").glob("*.json"))[0]
    good = entry.read_text()
    entry.write_text(good[: len(good) // 2] if damage == "truncated" else damage)
    again, ran = run_configs(configs, tmp_path, workers=1, progress=False)
    assert ran == 1, "the damaged entry must be run again, the others read from the cache"
    def kept(rows_of):  # what a run computes (not its wall time)
        return [[(r["key"], r["status"], r["cycles"], r["correct"]) for r in rows_of[c]]
                for c in configs]

    assert kept(again) == kept(first) and all(r["status"] == "ok" for c in configs
                                              for r in again[c])
    assert [r["cycles"] for r in json.loads(entry.read_text())] == \
        [r["cycles"] for r in json.loads(good)]
    assert f"cache entry {entry} is damaged; running it again" in capsys.readouterr().err


@pytest.mark.parametrize("text, key", [
    ("name: a\nname: b\nworkloads: [{kernel: spmv, size: 4}]\n", "name"),
    ("name: a\nworkloads: [{kernel: spmv, size: 4}]\naxes: {depth: [2]}\n"
     "axes: {seed: [1]}\n", "axes")])
def test_duplicate_keys_in_a_study_are_refused(tmp_path, capsys, text, key):
    path = tmp_path / "dup.yaml"
    path.write_text(text)
    with pytest.raises(StudyError, match=f"key '{key}' is given twice"):
        load_study(path)
    assert main(["study", str(path), "--out", str(tmp_path / "o")]) == 1
    assert f"key '{key}' is given twice" in _one_line_error(capsys)


def test_duplicate_keys_in_hardware_and_schedules_are_refused(tmp_path):
    hw = tmp_path / "hw.yaml"
    hw.write_text("name: x\ndram:\n  channels: 2\n  channels: 4\n")
    with pytest.raises(HwError, match=r"key 'channels' is given twice \(lines 3 and 4\)"):
        load_hw(hw)
    with pytest.raises(ScheduleError, match="key 'regions' is given twice"):
        Schedule.from_yaml("regions: [{name: a, statements: [T]}]\nregions: []\n")


def test_tune_refuses_a_folder_holding_another_tuning_run(tmp_path):
    from cosim.tuning._run import _claim

    settings = {"workload": ["gcn-small", "gcn", "small"], "objective": "cycles"}
    _claim(tmp_path, settings)
    _claim(tmp_path, dict(settings))  # the same run again resumes
    with pytest.raises(TuneError, match=r"holds the results of another tuning run "
                       r"\(objective: 'cycles' there, 'bytes_moved' now\)"):
        _claim(tmp_path, {**settings, "objective": "bytes_moved"})
    older = tmp_path / "older"
    older.mkdir()
    (older / "history.csv").write_text("n,cycles\n")
    with pytest.raises(TuneError, match="holds the results of another tuning run"):
        _claim(older, settings)


@pytest.mark.parametrize("value, shown", [(1e40, "inf"), (np.nan, "nan"),
                                          (-np.inf, "-inf")])
def test_non_finite_inputs_are_refused(spmv, capsys, value, shown):
    c = np.arange(8, dtype=np.float64)
    c[3] = value
    np.save(spmv["dir"] / "c.npy", c)
    assert main(["sim", str(spmv["graph"]), *spmv["inputs"]]) == 1
    err = _one_line_error(capsys)
    assert f"input 'c' ({str(spmv['dir'] / 'c.npy')!r}): 1 value(s) are NaN, infinite or " \
        f"beyond float32's range (+-3.4e38), the first {shown}; give --allow-nonfinite" in err
    assert "RuntimeWarning" not in err
    assert main(["sim", str(spmv["graph"]), *spmv["inputs"], "--allow-nonfinite"]) == 0


@pytest.mark.parametrize("command", ["model", "compile"])
@pytest.mark.parametrize("value, shown", [(1e40, "inf"), (np.nan, "nan")])
def test_non_finite_inputs_of_an_mlir_model_are_refused(tmp_path, capsys, command, value,
                                                         shown):
    """model ran the program and reported 'check FAIL: max |out - numpy| = nan' (with
    numpy's overflow warning) instead of naming the input."""
    a = np.ones((8, 5))
    a[1, 2] = value
    np.save(tmp_path / "a.npy", a)
    mlir = str(ROOT / "tests" / "compiler" / "mlir" / "sddmm.mlir")
    extra = ["--hw", "ideal"] if command == "model" else ["--par", "i=2"]
    assert main([command, mlir, "--schedule", "full", "--input",
                 f"a={tmp_path / 'a.npy'}", *extra]) == 1
    assert _one_line_error(capsys) == (
        f"samfuse: error: --input a={tmp_path / 'a.npy'}: 1 value(s) are NaN, infinite or "
        f"beyond float32's range (+-3.4e38), the first {shown}; an MLIR program's float32 "
        "tensors cannot hold them\n")


def test_model_lanes_on_an_index_it_lacks_are_an_error(capsys):
    assert main(["model", "gcn", "--config", "tiny", "--par", "q=4"]) == 1
    err = _one_line_error(capsys)
    assert "par q=4: no kernel of gcn has an output index 'q', so nothing would run on " \
        "those lanes (its kernels' output indices: i, j)" in err, err


def test_a_schedule_axis_on_expressions_alone_is_an_error():
    doc = {"name": "e", "workloads": [{"expr": SPMV, "shapes": {"B": [4, 4], "c": [4]}}],
           "axes": {"schedule": ["unfused", "partial"]}}
    with pytest.raises(StudyError, match="schedule 'partial' applies to models"):
        load_study(doc)
    # beside a model the axis applies (the expression's rows show '-')
    doc["workloads"].append({"model": "gcn", "config": "tiny"})
    assert {c.schedule for c in load_study(doc).expand()} == {"-", "unfused", "partial"}


@pytest.mark.parametrize("prune", ["-1", "nan", "0.5", "inf"])
def test_tune_prune_must_be_off_or_a_factor(tmp_path, capsys, prune):
    assert main(["tune", "gcn", "--prune", prune, "--out", str(tmp_path / "t")]) == 1
    assert f"--prune {float(prune):g}: expected 0 (off) or a factor >= 1" in \
        _one_line_error(capsys)
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("option", ["--output-dir", "--trace", "--mem-trace"])
def test_an_empty_output_path_is_a_usage_error(spmv, capsys, option):
    assert main(["sim", str(spmv["graph"]), *spmv["inputs"], option, ""]) == 2
    assert f"argument {option}: '': expected a path, not an empty string" in \
        capsys.readouterr().err


def test_an_all_failing_study_keeps_the_result_columns(tmp_path):
    spec = load_study({"name": "f", "workloads": [
        {"expr": SPMV, "shapes": {"B": [4, 4], "c": [4]}}], "axes": {"order": ["i,k"]}})
    result = run_study(spec, tmp_path, workers=1, progress=False)
    assert [r["status"] for r in result.rows] == ["compile-error"]
    table = pd.read_parquet(tmp_path / "results.parquet")
    for col in ("cycles", "correct", "firings", "bytes_moved", "dram_read_bytes",
                "imbalance", "est_bytes"):
        assert col in table.columns and table[col].isna().all()
    assert table["cycles"].dtype == np.float64


# -- hangs and memory -----------------------------------------------------------------------

def test_a_study_of_ten_million_runs_is_refused_before_expanding():
    axes = {"seed": list(range(100)), "depth": list(range(1, 101)),
            "lane_buffer": list(range(2, 1002))}
    with pytest.raises(StudyError, match=rf"the study has 10,000,000 runs \(1 workload\(s\) "
                       rf"x depth 100 x seed 100 x lane_buffer 1000\), more than the "
                       rf"{MAX_RUNS:,} a study may"):
        load_study({"name": "big", "workloads": [{"kernel": "spmv", "size": 4}],
                    "axes": axes})


@pytest.mark.parametrize("argv", [["study", "smoke"], ["tune", "gcn"]])
@pytest.mark.parametrize("workers", ["100000", "257", "0"])
def test_workers_are_bounded(tmp_path, capsys, argv, workers):
    """--workers 100000 was accepted: a pool of that many processes for a large study."""
    from cosim.studies._executors import MAX_WORKERS

    out = tmp_path / "o"
    assert main([*argv, "--workers", workers, "--out", str(out)]) == 1
    assert _one_line_error(capsys) == (f"samfuse: error: --workers {workers}: expected 1 to "
                                       f"{MAX_WORKERS} (parallel runs, each a process of its "
                                       "own)\n")
    assert not out.exists()


def test_a_pool_starts_no_more_processes_than_runs(tmp_path, monkeypatch):
    import concurrent.futures as cf

    sizes = []
    real = cf.ProcessPoolExecutor

    def recording(*args, max_workers, **kwargs):
        sizes.append(max_workers)
        return real(*args, max_workers=max_workers, **kwargs)

    monkeypatch.setattr(cf, "ProcessPoolExecutor", recording)
    configs = load_study(_KERNEL_STUDY).expand()
    rows, ran = run_configs(configs, tmp_path, workers=64, progress=False)
    assert ran == 3 and sizes == [3]
    assert all(r["status"] == "ok" for c in configs for r in rows[c])


@pytest.mark.parametrize("item, match", [
    ("dram.channels=281474976710656", r"dram.channels = 281474976710656 is above 1,024, "
     "the largest a simulated machine can have"),
    ("dram.outstanding=100000", r"dram.outstanding = 100000 is above 4,096"),
    ("dram.line_bytes=1048576", r"dram.line_bytes = 1048576 is above 65,536"),
    ("dram.latency_cycles=2000000", r"dram.latency_cycles = 2000000 is above 1,048,576"),
    ("compute.macs_per_cycle=2000000", r"compute.macs_per_cycle = 2000000 is above")])
def test_hardware_sizes_are_bounded_by_what_can_be_built(item, match):
    with pytest.raises(HwError, match=match):
        load_hw("hbm2-u280", [item])


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_a_non_finite_hardware_number_is_one_line(tmp_path, capsys, value):
    hw = tmp_path / "nan.yaml"
    hw.write_text(f"name: x\ndram:\n  channels: {value}\n")
    assert main(["hw", str(hw)]) == 1
    assert "dram.channels = " in _one_line_error(capsys)
    with pytest.raises(HwError, match="dram.channels = .* must be a finite number"):
        load_hw(hw)


@pytest.mark.parametrize("dataset, match", [
    ("rmat:10:100000", r"1 <= EDGE_FACTOR <= 64"),
    ("rmat:12:65", r"1 <= EDGE_FACTOR <= 64")])
def test_rmat_edge_factor_is_bounded(dataset, match):
    with pytest.raises(StudyError, match=match):
        load_study({"name": "r", "workloads": [
            {"expr": "y(i) = A(i,j) * x(j)", "formats": {"A": "csr"},
             "shapes": {"A": [1024, 1024], "x": [1024]}, "datasets": {"A": dataset}}]})


def test_study_tensor_sizes_are_bounded():
    with pytest.raises(StudyError, match=r"tensor 'B' of shape \[100000, 100000\] has "
                       r"10,000,000,000 entries, more than the 16,777,216"):
        load_study({"name": "t", "workloads": [
            {"expr": SPMV, "shapes": {"B": [100000, 100000], "c": [100000]}}]})


@pytest.mark.parametrize("rhs", [" + ".join(["B(i)"] * 400), "(" * 3000 + "B(i)" + ")" * 3000,
                                 "relu(" * 200 + "B(i)" + ")" * 200, "-" * 500 + "B(i)"])
def test_a_deep_expression_is_a_parse_error_not_a_recursion_error(rhs):
    with pytest.raises(CompileError, match=f"nests more than {MAX_EXPR_DEPTH} levels deep"):
        compile_expression("x(i) = " + rhs, {}, {"B": (4,)})


def test_an_expression_at_the_depth_bound_compiles():
    rhs = " + ".join(["B(i)"] * MAX_EXPR_DEPTH)
    g = compile_expression("x(i) = " + rhs, {}, {"B": (4,)})
    assert g.tensors["x"].shape == (4,)


def test_a_deep_expression_on_the_command_line_is_one_error(capsys):
    assert main(["compile", "x(i) = " + "(" * 3000 + "B(i)" + ")" * 3000,
                 "--shape", "B=4"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("samfuse: error: column ") and "Traceback" not in err
    assert "nests more than 100 levels deep" in err


@pytest.mark.parametrize("depth", [10**30, 2**31, MAX_DEPTH + 1])
def test_fifo_depth_is_bounded_in_graph_json(spmv, depth):
    data = json.loads(spmv["graph"].read_text())
    data["edges"][0]["depth"] = depth
    with pytest.raises(GraphError, match=rf"depth {depth} must be an int >= 1 or null "
                       rf"\(unbounded\); a FIFO holds at most {MAX_DEPTH:,} tokens"):
        Graph.from_dict(data)
    data["edges"][0]["depth"] = MAX_DEPTH
    Graph.from_dict(data)


@pytest.mark.parametrize("command", ["compile", "sim"])
def test_fifo_depth_is_bounded_on_the_command_line(spmv, capsys, command):
    argv = ["compile", SPMV, "--shape", "B=12x8", "--shape", "c=8"] if command == "compile" \
        else ["sim", str(spmv["graph"]), *spmv["inputs"]]
    assert main([*argv, "--depth", str(10**30)]) == 2
    assert f"(a FIFO holds at most {MAX_DEPTH:,} tokens)" in capsys.readouterr().err


@pytest.mark.parametrize("axis, value", [("depth", 2**64), ("depth", MAX_DEPTH + 1),
                                         ("seed", 2**64), ("seed", 2**63)])
def test_study_axis_values_beyond_int64_are_refused(axis, value):
    """A depth or seed of 2^64 ran, cached, then overflowed the Parquet write on every
    re-run."""
    with pytest.raises(StudyError, match=f"{axis} {value}: expected an int from "):
        load_study({"name": "s", "workloads": [{"kernel": "spmv", "size": 4}],
                    "axes": {axis: [value]}})


def test_cosim_does_not_call_a_backend_that_never_ran_different(spmv, capsys, monkeypatch):
    from cosim import BACKENDS, PythonBackend
    from sim_models.python import SimulationError

    class Broken(PythonBackend):
        name = "broken"

        def run(self, graph, inputs, *, trace=False, depth="graph", hw=None, mem_trace=False):
            raise SimulationError("boom")

    monkeypatch.setitem(BACKENDS, "broken", Broken)
    assert main(["cosim", str(spmv["graph"]), *spmv["inputs"], "--backends",
                 "python,broken"]) == 1
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("broken "))
    assert "not run" in row and "DIFFER" not in out


def test_rtl_deadlock_is_found_by_the_watch_and_names_no_deleted_file(tmp_path):
    from cosim import RtlBackend
    from ir import examples
    from sim_models.python import SimulationError

    reason = RtlBackend.unavailable()
    if reason:
        pytest.skip(reason)
    with pytest.raises(SimulationError, match=r"graph 'fork_deadlock': rtl: deadlock: no "
                       r"FIFO was written from cycle \d+ for 1004 cycles"):
        RtlBackend().run(examples.reconvergent_fork(), {"A": np.ones((1, 8), np.float32)})


def test_rtl_idle_window_outlasts_every_memory_wait():
    from ir import examples
    from rtl_hls.rtl.bench import idle_window

    g = examples.spmv(3, 4)
    assert idle_window(g, None) == 1004
    slow = load_hw("hbm2-u280", ["dram.latency_cycles=5000", "dram.bytes_per_cycle=1"])
    assert idle_window(g, slow) > 4 * 5000 + 16 * 64


def test_a_failed_rtl_run_keeps_the_directory_its_message_names():
    from rtl_hls.rtl.bench import _run_dir

    with pytest.raises(RuntimeError), _run_dir(keep=False) as d:
        (d / "sim.log").write_text("x")
        raise RuntimeError(f"see {d / 'sim.log'}")
    try:
        assert (d / "sim.log").exists()
    finally:
        (d / "sim.log").unlink()
        d.rmdir()
    with _run_dir(keep=False) as ok:
        pass
    assert not ok.exists()


def _npy_claiming(path: Path, shape: tuple[int, ...]) -> Path:
    np.save(path, np.zeros((3, 5), np.float32))
    raw = path.read_bytes().replace(b"(3, 5)", repr(shape).encode())
    path.write_bytes(raw[:128])  # the header alone, padded as numpy pads it
    return path


def test_a_huge_npy_header_is_refused_before_allocating(spmv, capsys):
    huge = _npy_claiming(spmv["dir"] / "huge.npy", (15000, 1000000000))
    assert main(["sim", str(spmv["graph"]), "--input", f"B={huge}", "--input",
                 f"c={spmv['dir'] / 'c.npy'}"]) == 1
    assert _one_line_error(capsys) == (
        f"samfuse: error: cannot read .npy file {str(huge)!r}: its header declares shape "
        "(15000, 1000000000) (float32), 60,000,000,000,128 bytes, but the file holds 128\n")


def test_compile_shape_from_a_file_reads_only_its_header(tmp_path, capsys, monkeypatch):
    import ir._interop

    np.save(tmp_path / "b.npy", np.ones((6, 5), np.float32))

    def no_data(*args, **kwargs):
        raise AssertionError("the data was read")

    monkeypatch.setattr(np, "load", no_data)
    monkeypatch.setattr(ir._interop, "from_path", no_data)
    assert main(["compile", SPMV, "--shape", f"B={tmp_path / 'b.npy'}", "--shape", "c=5",
                 "-o", str(tmp_path / "g.json")]) == 0
    assert Graph.from_json(tmp_path / "g.json").tensors["B"].shape == (6, 5)


# -- tracebacks ------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["model", "gcn", "--seed", str(10**23)],
                                  ["tune", "gcn", "--seed", str(2**63)],
                                  ["demo", "--seed", str(2**64)]])
def test_a_seed_beyond_64_bits_is_a_usage_error(capsys, argv):
    assert main(argv) == 2
    assert f"seed '{argv[-1]}': expected an integer below 2^63" in capsys.readouterr().err


@pytest.mark.parametrize("argv, match", [
    (["--shape", "B=0x10", "--shape", "c=10"], "--shape B=0x10: every size must be an "
     "integer >= 1"),
    (["--size", "i=6", "--size", "j=0"], "--size j=0: expected an integer >= 1")])
def test_zero_sizes_are_one_line(capsys, argv, match):
    """Both were the compiler's AssertionError ("compiler produced an invalid graph")."""
    assert main(["compile", SPMV, *argv]) == 1
    assert match in _one_line_error(capsys)


def test_a_zero_size_is_a_compile_error_in_the_library():
    with pytest.raises(CompileError, match=r"size 0 must be an int >= 1"):
        compile_expression(SPMV, {}, {"B": (0, 10), "c": (10,)})
    with pytest.raises(CompileError, match=r"size 0 must be an int >= 1"):
        compile_expression(SPMV, {}, {}, sizes={"i": 6, "j": 0})


def _tables(tmp_path: Path) -> dict[str, Path]:
    good = tmp_path / "good.parquet"
    pd.DataFrame({"workload": ["a"], "schedule": ["-"], "depth": [2], "status": ["ok"],
                  "cycles": [10]}).to_parquet(good)
    out = {"truncated.parquet": good.read_bytes()[:100], "empty.parquet": b"",
           "corrupt.parquet": b"garbage\n", "empty.csv": b"",
           "nostatus.csv": b"workload,schedule,depth,cycles\na,-,2,3\n",
           "strcycles.csv": b"workload,schedule,depth,status,cycles\na,-,2,ok,abc\n"}
    for name, data in out.items():
        (tmp_path / name).write_bytes(data)
    return {name: tmp_path / name for name in out}


@pytest.mark.parametrize("name, match", [
    ("truncated.parquet", "not a readable results table (Could not open Parquet"),
    ("empty.parquet", "not a readable results table"),
    ("corrupt.parquet", "not a readable results table"),
    ("empty.csv", "not a readable results table (No columns to parse from file)"),
    ("nostatus.csv", "--kind depth: the table has no column(s) ['status']"),
    ("strcycles.csv", "--kind depth: column 'cycles' holds 'abc', not a number")])
def test_plot_of_a_bad_table_is_one_line(tmp_path, capsys, name, match):
    path = _tables(tmp_path)[name]
    assert main(["plot", str(path), "--kind", "depth", "-o", str(tmp_path / "f.png")]) == 1
    assert match in _one_line_error(capsys)
    assert not (tmp_path / "f.png").exists()


_KINDS = ["speedup", "fig12", "orders", "heuristic", "depth", "bandwidth", "latency",
          "lanes", "block"]


@pytest.fixture(scope="module")
def model_table(tmp_path_factory) -> Path:
    """A results table every figure can draw from: a tiny GCN unfused and partial."""
    out = tmp_path_factory.mktemp("gcn-table")
    spec = load_study({"name": "t", "workloads": [{"model": "gcn", "config": "tiny"}],
                       "axes": {"schedule": ["unfused", "partial"]}})
    run_study(spec, out, workers=1, progress=False)
    return out / "results.parquet"


@pytest.mark.parametrize("kind", _KINDS)
@pytest.mark.parametrize("edit, match", [
    ("cycles=abc", "column 'cycles' holds 'abc', not a number"),
    ("-kind", "the table has no column(s) ['kind'"),
    ("-status", "the table has no column(s) ["),
    ("-cycles", "the table has no column(s) [")])
def test_every_figure_of_an_edited_table_is_one_line(model_table, tmp_path, capsys, kind,
                                                     edit, match):
    """fig12 divided the strings of a hand-edited cycles column (TypeError), and speedup,
    fig12 and orders indexed a dropped 'kind' column (KeyError)."""
    table = pd.read_parquet(model_table)
    if edit.startswith("-"):
        table = table.drop(columns=[edit[1:]])
    else:
        col, value = edit.split("=")
        table[col] = table[col].astype(object)
        table.loc[table.index[0], col] = value
    path = tmp_path / "edited.csv"
    table.to_csv(path, index=False)
    code = main(["plot", str(path), "--kind", kind, "-o", str(tmp_path / "f.png")])
    if code == 0:  # a figure that does not read the edited column still draws
        assert edit == "-kind" and kind not in ("speedup", "fig12", "orders")
        return
    assert code == 1
    err = _one_line_error(capsys)
    assert f"samfuse: error: --kind {kind}: " in err
    if edit != "-kind" or kind in ("speedup", "fig12", "orders"):
        assert match in err
    assert not (tmp_path / "f.png").exists()


def test_the_unedited_table_draws_the_model_figures(model_table, tmp_path):
    for kind in ("speedup", "fig12"):
        assert main(["plot", str(model_table), "--kind", kind, "-o",
                     str(tmp_path / f"{kind}.png")]) == 0
        assert (tmp_path / f"{kind}.png").stat().st_size > 0


def _python(code: str, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def test_sigterm_ends_a_command_like_ctrl_c():
    """SIGTERM used to kill the command at once: exit -15."""
    proc = _python("import os, signal, sys, time\nfrom cosim import cli\n"
                   "from cosim.cli import _show\n"
                   "def term(args):\n    os.kill(os.getpid(), signal.SIGTERM)\n"
                   "    time.sleep(30)\n    return 0\n"
                   "_show.cmd_show = term\nsys.exit(cli.main(['show', 'g.json']))\n")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err == "samfuse: interrupted\n"


def test_sigterm_stops_a_study_keeping_its_finished_runs(tmp_path):
    """A study on two workers, terminated once it has finished a run: exit 130, no leaked
    semaphores, and a re-run reads the finished runs from the cache."""
    study = _study(tmp_path, {"name": "slow", "workloads": [
        {"kernel": "spmm_ijk", "size": 48, "density": 0.5}],
        "axes": {"seed": list(range(12))}})
    out = tmp_path / "o"
    proc = _python(f"import sys\nfrom cosim.cli import main\n"
                   f"sys.exit(main(['study', {str(study)!r}, '--out', {str(out)!r}, "
                   "'--workers', '2']))\n")
    seen = ""  # progress goes to a pipe as a line every 30 s: watch the cache instead
    deadline = time.monotonic() + 300
    while not list((out / "runs").glob("*.json")) if (out / "runs").is_dir() else True:
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, seen + err
    assert err.endswith("samfuse: interrupted\n") and "leaked" not in err, err
    done = len(list((out / "runs").glob("*.json")))
    assert 1 <= done < 12
    spec = load_study(study)
    _, ran = run_configs(spec.expand(), out, workers=1, progress=False)
    assert ran == 12 - done
