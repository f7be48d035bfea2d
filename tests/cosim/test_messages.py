"""Messages that name the real problem (issue 25): each careless input below once got a
message about something else (or none); each test pins the one line it gets now."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.io
import scipy.sparse as sp

from cosim.cli import main

SPMV = "x(i) = B(i,j) * c(j)"


def _error(capsys) -> str:
    """The one line a refused command prints (no traceback), without its prefix."""
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith("samfuse: error: "), err
    return err.removeprefix("samfuse: error: ").rstrip("\n")


# -- hardware numbers ------------------------------------------------------------------

@pytest.mark.parametrize("setting, channels", [("dram.channels=32.0", 32),
                                               ("dram.channels=1e3", 1000),
                                               ("dram.channels= 8", 8)])
def test_whole_numbers_written_as_floats_are_accepted(capsys, setting, channels):
    """Was "'32.0' must be a number", while YAML's quoted "32" was accepted."""
    assert main(["hw", "hbm2-u280", "--hw-set", setting]) == 0
    assert f"({channels} channels ×" in capsys.readouterr().out


@pytest.mark.parametrize("setting", ["dram.bytes_per_cycle=0.5", "dram.channels=2.5"])
def test_a_fraction_for_a_count_is_named_as_such(capsys, setting):
    assert main(["hw", "hbm2-u280", "--hw-set", setting]) == 1
    key, _, value = setting.partition("=")
    assert _error(capsys).endswith(f"{key} = {value} must be a whole number")


def test_a_hardware_file_with_only_a_name_is_refused(tmp_path, capsys):
    """Was a machine of undocumented defaults (1 channel of 64 B at 1000 MHz)."""
    f = tmp_path / "mine.yaml"
    f.write_text("name: mine\n")
    assert main(["hw", str(f)]) == 1
    assert _error(capsys) == (
        f"{f}: sets no hardware key (only name); a file describes a machine: start from a "
        "preset's keys (`samfuse hw hbm2-u280`) and change the ones that differ")


@pytest.mark.parametrize("argv", [
    ["hw", "ideal"],
    ["sim", "{graph}", "--input", "B={dir}/b.mtx", "--input", "c={dir}/c.npy"],
    ["cosim", "{graph}", "--backends", "python,python", "--input", "B={dir}/b.mtx",
     "--input", "c={dir}/c.npy", "--hw", "ideal"],
    ["sim", "{graph}", "--input", "B={dir}/b.mtx", "--input", "c={dir}/c.npy", "--hw",
     "hbm2-u280", "--hw-set", "dram.enabled=false"],
])
def test_a_memory_override_on_hardware_without_memory_is_refused(spmv, capsys, argv):
    """Was a run on ideal memory, as if the override had not been given."""
    argv = [a.format(graph=spmv["graph"], dir=spmv["dir"]) for a in argv]
    assert main([*argv, "--hw-set", "dram.latency_cycles=100"]) == 1
    name = "hbm2-u280" if "hbm2-u280" in argv else "ideal"
    assert _error(capsys) == (
        f"--hw-set dram.latency_cycles=100 changes nothing: hardware {name!r} has no memory "
        "system (dram.enabled is false); give a preset with memory, e.g. --hw hbm2-u280")


def test_tune_refuses_a_memory_override_on_ideal_before_running(tmp_path, capsys):
    assert main(["tune", "gcn", "--config", "tiny", "--hw", "ideal", "--hw-set",
                 "dram.channels=4", "--out", str(tmp_path / "t")]) == 1
    assert _error(capsys).startswith("--hw-set dram.channels=4 changes nothing")
    assert not (tmp_path / "t" / "history.csv").exists()


def test_a_functional_run_refuses_hardware(spmv, capsys):
    """Was a report with a hardware line and 0 bytes of DRAM traffic."""
    assert main(["sim", str(spmv["graph"]), *spmv["inputs"], "--functional", "--hw",
                 "hbm2-u280"]) == 1
    assert _error(capsys).startswith("--functional runs carry no timing and no memory "
                                     "system, so --hw and --hw-set would change nothing")


# -- the graph file ----------------------------------------------------------------------

@pytest.mark.parametrize("path, message", [
    ("{dir}", "graph file '{dir}' is a folder; give the graph JSON written by 'samfuse "
              "compile -o'"),
    ("/dev/zero", "graph file '/dev/zero' is not a regular file (a device or a pipe); give "
                  "the graph JSON written by 'samfuse compile -o'"),
    ("{dir}/nope.json", "graph file '{dir}/nope.json' does not exist"),
])
def test_a_graph_path_that_is_no_file_says_what_it_is(spmv, capsys, path, message):
    """A folder and /dev/zero were reported as not existing."""
    d = str(spmv["dir"])
    assert main(["sim", path.format(dir=d)]) == 1
    assert _error(capsys) == message.format(dir=d)


def test_a_graph_without_schema_says_so(spmv, capsys):
    """Was "expected a JSON object" (or "schema None is not supported")."""
    data = dict(spmv["json"])
    del data["schema"]
    f = spmv["dir"] / "noschema.json"
    f.write_text(json.dumps(data, indent=1))
    assert main(["sim", str(f), *spmv["inputs"]]) == 1
    assert _error(capsys).startswith(f"graph file {str(f)!r} has no 'schema' key, so it is "
                                     "not samfuse graph JSON")


@pytest.mark.parametrize("text, what", [("[1, 2]", "holds a JSON list, not an object"),
                                        ('{"a": ', "is not valid JSON (Expecting value")])
def test_json_that_is_no_graph_says_why(spmv, capsys, text, what):
    f = spmv["dir"] / "bad.json"
    f.write_text(text)
    assert main(["sim", str(f)]) == 1
    assert _error(capsys).startswith(f"graph file {str(f)!r} {what}")


# -- tensor files ------------------------------------------------------------------------

def test_a_missing_shape_file_is_named_missing(tmp_path, capsys):
    """Was "expected sizes such as 34x16"."""
    missing = tmp_path / "b.mtx"
    assert main(["compile", SPMV, "--shape", f"B={missing}", "--shape", "c=5"]) == 1
    assert _error(capsys) == f"--shape B={missing}: no such file"


@pytest.mark.parametrize("argv", [
    ["compile", SPMV, "--shape", "B=6x5", "--shape", "c={npy}"],
    ["sim", "{graph}", "--input", "B={dir}/b.mtx", "--input", "c={npy}"],
])
def test_a_text_file_named_npy_is_not_called_pickled(spmv, capsys, argv):
    """Was numpy's "This file contains pickled (object) data"."""
    npy = spmv["dir"] / "text.npy"
    npy.write_text("1 2 3 4 5\n")
    argv = [a.format(graph=spmv["graph"], dir=spmv["dir"], npy=npy) for a in argv]
    assert main(argv) == 1
    err = _error(capsys)
    assert err.endswith(f".npy file {str(npy)!r} is not a NumPy array file (it does not start "
                        "with NumPy's header); write arrays with numpy.save")
    assert "pickled" not in err


def test_a_dataset_for_a_tensor_the_expression_lacks_names_the_tensor(tmp_path, capsys):
    """Was "tensor 'Z' holds the karate adjacency, so its shape must be [34, 34]"."""
    f = tmp_path / "ds.yaml"
    f.write_text('name: ds\nworkloads:\n  - expr: "X(i,j) = A(i,k) * B(k,j)"\n'
                 "    shapes: {A: [34, 34], B: [34, 4]}\n    datasets: {Z: karate}\n")
    assert main(["study", str(f), "--out", str(tmp_path / "out")]) == 1
    assert _error(capsys) == (f"{f}: workloads[0]: 'datasets' gives 'Z', which the "
                              "expression does not use; its tensors are A, B, X")


# -- output shapes -----------------------------------------------------------------------

@pytest.mark.parametrize("size", [3, 10])
def test_an_output_shape_other_than_its_index_is_refused_on_load(spmv, capsys, size):
    """Too small was a level error naming no tensor; too large was padded with zeros."""
    data = json.loads(json.dumps(spmv["json"]))
    next(t for t in data["tensors"] if t["name"] == "x")["shape"] = [size]
    f = spmv["dir"] / "x.json"
    f.write_text(json.dumps(data))
    out = spmv["dir"] / "out"
    assert main(["sim", str(f), *spmv["inputs"], "--output-dir", str(out)]) == 1
    assert _error(capsys) == (
        f"output tensor 'x': mode 0 has size {size}, but its coordinates come from 'B_i', "
        "which scans mode 0 of 'B' (size 6); declare 'x' with size 6 there")
    assert not (out / "x.npy").exists()


# -- plot -o -----------------------------------------------------------------------------

@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "results.parquet"
    pd.DataFrame({"status": ["ok", "ok"], "cycles": [10, 20], "est_bytes": [100.0, 210.0],
                  "bytes_moved": [110.0, 200.0], "workload": ["a", "b"]}).to_parquet(path)
    return path


def test_plot_to_an_existing_file_without_suffix_is_refused(table, capsys):
    """``-o /dev/null`` wrote /dev/null.png and /dev/null.pdf."""
    target = table.parent / "fig"
    target.write_text("keep")
    assert main(["plot", str(table), "--kind", "heuristic", "-o", str(target)]) == 1
    assert _error(capsys).startswith(f"-o {str(target)!r} is an existing file without a "
                                     "suffix")
    assert sorted(p.name for p in table.parent.iterdir()) == ["fig", "results.parquet"]


def test_plot_into_a_folder_names_the_figure_after_its_kind(table, capsys):
    folder = table.parent / "figs"
    folder.mkdir()
    assert main(["plot", str(table), "--kind", "heuristic", "-o", str(folder)]) == 0
    assert sorted(p.name for p in folder.iterdir()) == ["heuristic.pdf", "heuristic.png"]
    assert not (table.parent / "figs.png").exists()


# -- Matrix Market vectors ---------------------------------------------------------------

def _vector_files(tmp_path: Path, c: np.ndarray) -> dict[str, Path]:
    """c as the four Matrix Market vectors: array and coordinate, n x 1 and 1 x n."""
    out = {}
    for form in ("array", "coordinate"):
        for orient, shape in (("col", (len(c), 1)), ("row", (1, len(c)))):
            path = tmp_path / f"c_{form}_{orient}.mtx"
            m = c.reshape(shape)
            scipy.io.mmwrite(path, m if form == "array" else sp.coo_matrix(m))
            assert scipy.io.mminfo(path)[3] == form
            out[f"{form}-{orient}"] = path
    return out


@pytest.mark.parametrize("cfmt", ["d", "c"])
@pytest.mark.parametrize("which", ["array-col", "array-row", "coordinate-col",
                                   "coordinate-row"])
def test_a_matrix_market_vector_is_accepted_for_a_1d_tensor(spmv, capsys, which, cfmt):
    """Was "shape (5, 1) but the graph expects (5,)": the format stores vectors so."""
    c = spmv["c"].copy()
    c[2] = 0.0  # a coordinate file then stores four entries
    path = _vector_files(spmv["dir"], c)[which]
    graph = spmv["dir"] / "g.json"
    assert main(["compile", SPMV, "--format", "B=csr", "--format", f"c={cfmt}",
                 "--input", f"B={spmv['dir'] / 'b.mtx'}", "--input", f"c={path}",
                 "-o", str(graph)]) == 0
    out = spmv["dir"] / "out"
    assert main(["sim", str(graph), "--input", f"B={spmv['dir'] / 'b.mtx'}", "--input",
                 f"c={path}", "--output-dir", str(out)]) == 0
    np.testing.assert_allclose(np.load(out / "x.npy"), spmv["B"].toarray() @ c, rtol=1e-5)


@pytest.mark.parametrize("fmt", ["c", "d"])
def test_a_sparse_vector_file_fills_a_compressed_or_dense_vector(spmv, fmt):
    from ir import from_path

    c = np.array([0, 2, 0, 0, 5], np.float32)
    path = _vector_files(spmv["dir"], c)["coordinate-row"]
    tree = from_path(path, fmt, ndim=1)
    assert tree.shape == (5,)
    np.testing.assert_array_equal(tree.to_dense(), c)


def test_a_matrix_where_a_vector_is_expected_is_still_refused(spmv, capsys):
    assert main(["sim", str(spmv["graph"]), "--input", f"B={spmv['dir'] / 'b.mtx'}",
                 "--input", f"c={spmv['dir'] / 'b.mtx'}"]) == 1
    assert _error(capsys) == (f"tensor 'c': shape (6, 5) but the graph expects (5,) (header "
                              f"of {str(spmv['dir'] / 'b.mtx')!r})")


def test_shape_from_a_vector_file(spmv, capsys):
    path = _vector_files(spmv["dir"], spmv["c"])["coordinate-col"]
    assert main(["compile", SPMV, "--shape", "B=6x5", "--shape", f"c={path}"]) == 0
    graph = json.loads(capsys.readouterr().out)
    assert next(t for t in graph["tensors"] if t["name"] == "c")["shape"] == [5]
