"""The ``samfuse`` command line, run through ``main([...])`` and once as a subprocess;
every bad input is a pinned one-line error with a non-zero exit, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from cosim.cli import main
from ir import Graph, Trace

SPMV = "x(i) = B(i,j) * c(j)"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    B = sp.random(6, 5, density=0.4, format="csr", random_state=3, dtype=np.float32)
    scipy.io.mmwrite(tmp_path / "b.mtx", B)
    np.save(tmp_path / "c.npy", np.arange(5, dtype=np.float32))
    np.save(tmp_path / "c4.npy", np.arange(4, dtype=np.float32))
    (tmp_path / "bad.mtx").write_text("this is not a matrix market file\n")
    return {"dir": tmp_path, "b": tmp_path / "b.mtx", "c": tmp_path / "c.npy",
            "c4": tmp_path / "c4.npy", "bad": tmp_path / "bad.mtx",
            "graph": tmp_path / "spmv.json"}


def _compile(files, *extra: str) -> int:
    return main(["compile", SPMV, "--format", "B=csr", "--shape", f"B={files['b']}",
                 "--shape", "c=5", "-o", str(files["graph"]), *extra])


def _sim(files, *extra: str) -> int:
    return main(["sim", str(files["graph"]), "--input", f"B={files['b']}", "--input",
                 f"c={files['c']}", *extra])


def _error(capsys) -> str:
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return out.err


def test_compile_writes_a_graph_and_reports_the_order(files, capsys):
    assert _compile(files, "--order", "i,j") == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [f"wrote {files['graph']}: 15 nodes, 18 edges",
                                "order      i,j", "reductions sum(j): reduce",
                                "transposed none"]
    g = Graph.from_json(files["graph"])
    assert g.tensors["B"].format == "dc" and g.tensors["B"].shape == (6, 5)
    assert g.meta["expression"] == SPMV


def test_compile_without_output_prints_json(capsys):
    assert main(["compile", "x = a(i) * b(i)", "--size", "i=4"]) == 0
    g = Graph.from_json(capsys.readouterr().out)
    assert g.tensors["x"].shape == ()


def test_compile_reports_a_transpose(files, capsys):
    assert _compile(files, "--order", "j,i") == 0
    assert capsys.readouterr().out.splitlines()[3] == "transposed B dc→dc:1,0"


def test_sim_prints_cycles_stats_and_writes_outputs_and_traces(files, capsys):
    _compile(files, "--order", "i,j")  # the reducer order (the cost-chosen one is j,i)
    capsys.readouterr()
    out_dir, trace_dir = files["dir"] / "out", files["dir"] / "traces"
    assert _sim(files, "--stats", "--output-dir", str(out_dir), "--trace",
                str(trace_dir)) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "graph      einsum on python"
    assert lines[1].startswith("cycles     ") and int(lines[1].split()[1]) > 0
    assert lines[4].startswith("throughput ") and "firings/s" in lines[4]
    assert any(line.split()[:2] == ["red_j", "reduce"] for line in lines)
    B = scipy.io.mmread(files["b"]).toarray()
    np.testing.assert_allclose(np.load(out_dir / "x.npy"), B @ np.arange(5), rtol=1e-5)
    trace = Trace.read(trace_dir / "einsum.python.trace")
    assert "red_j.val->x_val.val" in trace.edges


def test_sim_on_auto_says_which_backend_ran(files, capsys):
    _compile(files)
    capsys.readouterr()
    assert _sim(files, "--backend", "auto") == 0  # a small graph: the Python model
    assert capsys.readouterr().out.splitlines()[0] == "graph      einsum on python (auto)"


def test_sim_writes_sparse_matrix_outputs_as_mtx(files, capsys):
    graph = files["dir"] / "add.json"
    assert main(["compile", "X(i,j) = B(i,j) + C(i,j)", "--format", "B=csr", "--format",
                 "C=csr", "--format", "X=dcsr", "--shape", "B=6x5", "--shape", "C=6,5",
                 "-o", str(graph)]) == 0
    assert main(["sim", str(graph), "--input", f"B={files['b']}", "--input",
                 f"C={files['b']}", "--output-dir", str(files["dir"])]) == 0
    B = scipy.io.mmread(files["b"]).toarray()
    np.testing.assert_allclose(scipy.io.mmread(files["dir"] / "X.mtx").toarray(), 2 * B)


def test_functional_run_has_no_cycles(files, capsys):
    _compile(files)
    assert _sim(files, "--functional") == 0
    assert "cycles     - (functional run: no timing)" in capsys.readouterr().out


def test_show_renders_svg(files, capsys):
    _compile(files)
    svg = files["dir"] / "g.svg"
    assert main(["show", str(files["graph"]), "-o", str(svg)]) == 0
    assert svg.read_text().lstrip().startswith("<?xml")
    assert "primitives alu×1, array×2" in capsys.readouterr().out


def test_demo_checks_against_scipy_and_writes_the_svg(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path / "demo")]) == 0
    out = capsys.readouterr().out
    assert "inputs     A: karate club adjacency 34x34, 156 nonzeros (csr); H: dense 34x16" \
        in out
    assert "check      PASS" in out
    assert "firings/s" in out and "cycles/s" in out
    for name in ("graph.svg", "graph.json", "X.npy"):
        assert (tmp_path / "demo" / name).is_file()


@pytest.mark.parametrize("argv, message", [
    (["sim", "{graph}", "--input", "B={b}"],
     "graph 'einsum' needs --input for ['c'] (it reads ['B', 'c'])"),
    (["sim", "{graph}", "--input", "B={b}", "--input", "c={c}", "--input", "Z={c}"],
     "graph 'einsum' has no input tensor(s) ['Z']; it reads ['B', 'c']"),
    (["sim", "{graph}", "--input", "B={b}", "--input", "c={c4}"],
     "tensor 'c': shape (4,) but the graph expects (5,)"),
    (["sim", "{graph}", "--input", "B={bad}", "--input", "c={c}"],
     "cannot read Matrix Market file '{bad}': ValueError: Line 1: Not a Matrix Market "
     "file. Missing banner."),
    (["sim", "{graph}", "--input", "B={dir}/nope.mtx", "--input", "c={c}"],
     "input 'B': no such file '{dir}/nope.mtx'"),
    (["sim", "{dir}/nope.json"], "graph file '{dir}/nope.json' does not exist"),
    (["sim", "{c}"], "graph file '{c}' is not text; expected the graph JSON written by "
     "'samfuse compile -o'"),
    (["sim", "{graph}", "--input", "B={b}", "--input", "c={c}", "--backend", "verilog"],
     "unknown backend 'verilog'; available: "),
    (["sim", "{graph}", "--input", "B", "--input", "c={c}"],
     "--input expects NAME=FILE, got 'B'"),
    (["cosim", "{graph}", "--input", "B={b}", "--input", "c={c}", "--backends", "python"],
     "--backends needs at least two backends to compare, got ['python']"),
    (["compile", "X(i,j) = B(i,k) * C(k,j)", "--format", "B=csx", "--size", "i=3",
      "--size", "j=3", "--size", "k=3"],
     "tensor 'B': format 'csx' for a 2-d tensor: level letters must be 'd' or 'c' (or a "
     "name: dense, coo, sparse, csr, csc, dcsr, dcsc, sparse_vec, sv); found 'sx'"),
    (["compile", "X(i,j) = B(i,k) * C(k,j)", "--size", "i=3"],
     "size of index 'j', 'k' unknown: give the shape of 'B' or 'C' or sizes for it"),
    (["compile", "X(i,j,l,m) = B(i,k) * C(k,j,l,m)", "--size", "i=3", "--size", "j=3",
      "--size", "k=3", "--size", "l=3", "--size", "m=2", "--order", "k,i,j,l,m"],
     "column 14: dataflow order k,i,j,l,m puts the sum over 'k' at a position it cannot "
     "be "),
    (["compile", "x(i) = B(i,j) * c(j)", "--shape", "B=3xq"],
     "--shape B=3xq: expected sizes such as 34x16 or a tensor file (.mtx, .npy, .npz) to "
     "read the shape from"),
])
def test_bad_input_is_a_one_line_error(files, capsys, argv, message):
    _compile(files)
    capsys.readouterr()
    subs = {k: str(v) for k, v in files.items()}
    argv = [a.format(**subs) for a in argv]
    assert main(argv) == 1
    err = _error(capsys)
    assert err.startswith("samfuse: error: " + message.format(**subs))
    if not message.startswith("column"):
        assert err.count("\n") == 1


def test_malformed_expression_shows_the_caret(capsys):
    assert main(["compile", "X(i,j) = B(i,k * C(k,j)", "--size", "i=2"]) == 1
    assert _error(capsys) == ("samfuse: error: column 16: expected ',' or ')' in the index "
                              "list of 'B', found '*'\n"
                              "  X(i,j) = B(i,k * C(k,j)\n"
                              "                 ^\n")


def _cosim(files, *extra: str) -> int:
    return main(["cosim", str(files["graph"]), "--input", f"B={files['b']}", "--input",
                 f"c={files['c']}", "--backends", "python,python", *extra])


def test_cosim_writes_each_backends_trace(files, capsys):
    _compile(files)
    trace_dir = files["dir"] / "cosim-traces"
    assert _cosim(files, "--trace", str(trace_dir)) == 0
    assert "all backends agree" in capsys.readouterr().out
    trace = Trace.read(trace_dir / "einsum.python.trace")
    assert "red_j.val->x_val.val" in trace.edges


def test_cosim_of_a_deadlocking_graph_fails(tmp_path, capsys):
    """Both backends deadlock the same way: the report must not call that agreement."""
    from ir import examples

    examples.reconvergent_fork().to_json(tmp_path / "fork.json")
    np.save(tmp_path / "a.npy", np.ones((1, 8), np.float32))
    assert main(["cosim", str(tmp_path / "fork.json"), "--input", f"A={tmp_path / 'a.npy'}",
                 "--backends", "python,python"]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "python failed: deadlock" in out


def test_usage_errors_exit_2(capsys):
    assert main(["sim"]) == 2
    assert main(["sim", "g.json", "--depth", "0"]) == 2
    assert "depth '0': expected an int >= 1, 'inf' or 'graph'" in capsys.readouterr().err


def test_entry_point_in_a_subprocess(files, tmp_path):
    cmd = [sys.executable, "-m", "cosim.cli"]
    ok = subprocess.run([*cmd, "compile", SPMV, "--shape", "B=6x5", "--shape", "c=5",
                         "-o", str(files["graph"])], capture_output=True, text=True,
                        cwd=Path(__file__).resolve().parents[2], timeout=120)
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run([*cmd, "sim", str(files["graph"]), "--input", f"B={files['b']}",
                          "--input", f"c={files['c4']}"], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[2], timeout=120)
    assert bad.returncode == 1
    assert bad.stdout == ""
    assert bad.stderr == ("samfuse: error: tensor 'c': shape (4,) but the graph expects "
                          f"(5,) (header of {str(files['c4'])!r})\n")


def test_model_runs_a_bundled_model_under_a_schedule_and_checks_it(tmp_path, capsys):
    sched = tmp_path / "s.yaml"
    assert main(["model", "autoencoder", "--schedule", "unfused", "--out",
                 str(tmp_path / "g")]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "check      PASS" in out and "region" in out
    assert list((tmp_path / "g").glob("*.json"))
    progress = [ln for ln in captured.err.splitlines() if ln.startswith("samfuse: region ")]
    assert progress and progress[-1].startswith(f"samfuse: region {len(progress)}/"
                                                f"{len(progress)} ")
    assert all(" on python: " in ln and " s left)" in ln for ln in progress)
    sched.write_text("regions: 3\n")
    assert main(["model", "autoencoder", "--schedule", str(sched)]) == 1
    assert _error(capsys).count("\n") == 1
    assert main(["model", "autoencoder", "--schedule", "halfway"]) == 1
    assert "expected one of unfused, partial, full or a YAML file" in _error(capsys)


def test_model_runs_on_parallel_lanes(tmp_path, capsys):
    assert main(["model", "gcn", "--config", "tiny", "--par", "i=2", "--partition",
                 "balanced", "--hw", "ideal", "--out", str(tmp_path)]) == 0
    assert "check      PASS" in capsys.readouterr().out
    graphs = [Graph.from_json(p) for p in tmp_path.glob("*.json")]
    assert graphs and all(g.meta["parallel"]["par"] == {"i": 2} for g in graphs)
    assert all(g.meta["parallel"]["partition"] == "balanced" for g in graphs)
    assert main(["model", "gcn", "--config", "tiny", "--par", "i=65"]) == 1
    assert "lanes from 1 to 64" in _error(capsys)
    assert main(["model", "gcn", "--config", "tiny", "--par", "i"]) == 1
    assert "--par 'i': expected INDEX=LANES" in _error(capsys)


def test_model_takes_fuseflow_settings_as_a_config(capsys):
    assert main(["model", "graphsage", "--config", "tiny-fuseflow", "--schedule",
                 "unfused", "--program"]) == 0
    out = capsys.readouterr().out
    assert "check      PASS" in out and "layers_0_self_lin_weight" in out
    assert main(["model", "gcn", "--config", "cora-fuseflw"]) == 1
    err = _error(capsys)
    assert err.count("\n") == 1 and "cora-fuseflow" in err and "mag-fuseflow" in err


def test_compile_and_model_take_blocks(tmp_path, capsys):
    """``--block`` on compile (per index) and model (the model's sparse tensors, or one
    named): blocked graphs whose runs pass the model's check; bad values are one line."""
    out = tmp_path / "g.json"
    assert main(["compile", "X(i,j)=A(i,k)*B(k,j)", "--format", "A=csr", "--shape",
                 "A=16,16", "--shape", "B=16,8", "--block", "i=4", "--block", "k=4",
                 "--block", "j=4", "-o", str(out)]) == 0
    assert "block      i=4, k=4, j=4" in capsys.readouterr().out
    assert Graph.from_json(out).tensors["A"].block == (4, 4)
    assert main(["compile", "y(i)=A(i,j)*x(j)", "--shape", "A=6,6", "--block", "i=4"]) != 0
    assert "not a multiple of 4" in _error(capsys)
    assert main(["model", "bigbird", "--config", "small", "--block", "4", "--hw",
                 "ideal"]) == 0
    assert "check      PASS" in capsys.readouterr().out
    assert main(["model", "bigbird", "--config", "small", "--block", "x=y"]) != 0
    assert "expected EXTENT, TENSOR=EXTENT" in _error(capsys)
    assert main(["model", "bigbird", "--config", "small", "--block", "*=4", "--hw", "ideal",
                 "--schedule", "unfused"]) == 0
    assert "check      PASS" in capsys.readouterr().out
