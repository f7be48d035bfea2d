"""Hostile and careless input (issue 10): names that would reach file paths, DOT
escaping, inconsistent graphs, huge declared sizes, unwritable output folders. Every
rejection is one line on stderr naming the culprit, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from _parity import rename_node

from cosim.cli import main
from cosim.runs._files import OutputPathError, atomic_path, safe_join, writable_dir, write_atomic
from ir import Graph, GraphError, Schedule, ScheduleError, to_dot

SPMV = "x(i) = B(i,j) * c(j)"
BAD_NAMES = ["..", "../evil", "/abs", "/tmp/x", "a/b", "a\\b", "a\0b", 'a"b', "", "1up",
             "a b", "x..y", "a\nb"]


@pytest.fixture
def spmv(tmp_path: Path) -> dict:
    B = sp.random(6, 5, density=0.4, format="csr", random_state=3, dtype=np.float32)
    scipy.io.mmwrite(tmp_path / "b.mtx", B)
    np.save(tmp_path / "c.npy", np.arange(5, dtype=np.float32))
    graph = tmp_path / "spmv.json"
    assert main(["compile", SPMV, "--format", "B=csr", "--shape", "B=6x5", "--shape", "c=5",
                 "-o", str(graph)]) == 0
    return {"dir": tmp_path, "graph": graph, "json": json.loads(graph.read_text()),
            "B": B, "inputs": ["--input", f"B={tmp_path / 'b.mtx'}", "--input",
                               f"c={tmp_path / 'c.npy'}"]}


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith("samfuse: error: ")
    return err


def _rename_node(data: dict, old: str, new: str) -> dict:
    data = json.loads(json.dumps(data))
    rename_node(data, old, new)
    return data


def _rename_tensor(data: dict, old: str, new: str) -> dict:
    data = json.loads(json.dumps(data))
    for t in data["tensors"]:
        if t["name"] == old:
            t["name"] = new
    for n in data["nodes"]:
        if n["params"].get("tensor") == old:
            n["params"]["tensor"] = new
    return data


# -- names that reach paths ----------------------------------------------------------------

@pytest.mark.parametrize("bad", BAD_NAMES)
def test_bad_graph_names_are_rejected_on_load(spmv, bad):
    data = dict(spmv["json"], name=bad)
    with pytest.raises(GraphError, match="graph name .* is not allowed"):
        Graph.from_dict(data)


@pytest.mark.parametrize("bad", BAD_NAMES)
def test_bad_node_ids_are_rejected_on_load(spmv, bad):
    with pytest.raises(GraphError, match="node name .* is not allowed"):
        Graph.from_dict(_rename_node(spmv["json"], "B_val", bad))


@pytest.mark.parametrize("bad", BAD_NAMES)
def test_bad_tensor_names_are_rejected_on_load(spmv, bad):
    with pytest.raises(GraphError, match="tensor name .* is not allowed"):
        Graph.from_dict(_rename_tensor(spmv["json"], "x", bad))


@pytest.mark.parametrize("bad", ["../g", " 1b", "a/b", ""])
def test_compile_name_is_checked_as_a_user_error(tmp_path, capsys, bad):
    """Found by fuzzing: compile --name ' 1b' was the compiler's AssertionError ("compiler
    produced an invalid graph"), a traceback, instead of a one-line error."""
    out = tmp_path / "g.json"
    assert main(["compile", SPMV, "--shape", "B=6x5", "--shape", "c=5", "--name", bad,
                 "-o", str(out)]) == 1
    assert f"graph name {bad!r} is not allowed" in _one_line_error(capsys)
    assert not out.exists()


def test_good_names_still_load(spmv):
    data = _rename_tensor(_rename_node(dict(spmv["json"], name="layers.0#2+out"), "mul",
                                       "_m-1.x"), "x", "out.y")
    g = Graph.from_dict(data)
    assert "_m-1.x" in g.nodes and "out.y" in g.tensors


@pytest.mark.parametrize("bad", ["../r", "/r", "a/b", "r\0", ".."])
def test_bad_region_names_are_rejected(bad):
    with pytest.raises(ScheduleError, match="region name .* is not allowed"):
        Schedule.from_dict({"regions": [{"name": bad, "statements": ["T"]}]})


def test_sim_trace_of_a_hostile_graph_name_cannot_escape(spmv, capsys):
    """Before names were checked, name '../../escaped' wrote the trace two folders up."""
    hostile = spmv["dir"] / "hostile.json"
    hostile.write_text(json.dumps(dict(spmv["json"], name="../../escaped")))
    traces = spmv["dir"] / "a" / "b" / "traces"
    assert main(["sim", str(hostile), *spmv["inputs"], "--trace", str(traces)]) == 1
    assert "graph name '../../escaped' is not allowed" in _one_line_error(capsys)
    assert not list(spmv["dir"].glob("**/escaped*"))


@pytest.mark.parametrize("part", ["..", "../x", "/etc/passwd", "a/b", "a\\b", "a\0b", ""])
def test_safe_join_refuses_escapes(tmp_path, part):
    with pytest.raises(OutputPathError, match="refusing to write"):
        safe_join(tmp_path, part)


def test_safe_join_joins_plain_names(tmp_path):
    assert safe_join(tmp_path, "g.python.trace") == tmp_path / "g.python.trace"


# -- Graphviz escaping -----------------------------------------------------------------------

def test_show_of_a_node_id_with_a_quote_is_a_one_line_error(spmv, capsys):
    bad = spmv["dir"] / "quote.json"
    bad.write_text(json.dumps(_rename_node(spmv["json"], "mul", 'm"ul')))
    assert main(["show", str(bad), "-o", str(spmv["dir"] / "q.dot")]) == 1
    assert "node name 'm\"ul' is not allowed" in _one_line_error(capsys)


def test_dot_strings_are_escaped():
    from ir._render import _q

    assert _q('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'


def test_dot_source_quotes_every_name(spmv):
    g = Graph.from_dict(_rename_node(dict(spmv["json"], name="g-1.x"), "mul", "m-1.x"))
    dot = to_dot(g)
    assert dot.startswith('digraph "g-1.x" {')
    assert '"m-1.x" [label="m-1.x\\n[alu]' in dot


# -- output folders and atomic writes ------------------------------------------------------

@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
@pytest.mark.parametrize("option", ["--trace", "--output-dir"])
def test_sim_checks_its_output_folder_before_running(spmv, capsys, option):
    locked = spmv["dir"] / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert main(["sim", str(spmv["graph"]), *spmv["inputs"], option,
                     str(locked / "out")]) == 1
    finally:
        locked.chmod(0o700)
    captured = capsys.readouterr()
    assert "cycles" not in captured.out  # refused before the run
    assert captured.err.startswith(f"samfuse: error: {option} ") and \
        "is not a writable folder" in captured.err and "Traceback" not in captured.err


def test_an_output_path_that_is_a_file_is_refused_before_running(spmv, capsys):
    blocker = spmv["dir"] / "file"
    blocker.write_text("x")
    assert main(["sim", str(spmv["graph"]), *spmv["inputs"], "--output-dir",
                 str(blocker)]) == 1
    captured = capsys.readouterr()
    assert "cycles" not in captured.out
    assert "--output-dir" in captured.err and "not a writable folder" in captured.err


@pytest.mark.parametrize("command", ["cosim", "show", "demo", "model", "study"])
def test_every_output_folder_is_checked_before_its_run(spmv, capsys, command):
    """The other writers of the issue's finding: a run must not end in a lost result."""
    blocked = spmv["dir"] / "file" / "out"
    (spmv["dir"] / "file").write_text("x")
    study = spmv["dir"] / "s.yaml"
    study.write_text(json.dumps({"name": "t", "workloads": [
        {"expr": SPMV, "formats": {"B": "csr"}, "shapes": {"B": [6, 5], "c": [5]}}]}))
    argv, option = {
        "cosim": ([str(spmv["graph"]), *spmv["inputs"], "--backends", "python,python",
                   "--trace", str(blocked)], "--trace"),
        "show": ([str(spmv["graph"]), "-o", str(blocked / "g.svg")], "-o"),
        "demo": (["--out", str(blocked)], "--out"),
        "model": (["gcn", "--out", str(blocked)], "--out"),
        "study": ([str(study), "--out", str(blocked)], "--out")}[command]
    assert main([command, *argv]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before anything ran
    assert captured.err.startswith(f"samfuse: error: {option} ")
    assert captured.err.count("\n") == 1 and "not a writable folder" in captured.err


def test_atomic_path_leaves_the_target_alone_on_failure(tmp_path):
    target = tmp_path / "X.npy"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["X.npy"]
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new" and os.listdir(tmp_path) == ["X.npy"]
    assert writable_dir(tmp_path / "d" / "e", "--out").is_dir()


# -- inconsistent graphs ------------------------------------------------------------------

def _set_param(data: dict, node: str, **params) -> dict:
    data = json.loads(json.dumps(data))
    next(n for n in data["nodes"] if n["id"] == node)["params"].update(params)
    return data


def test_an_array_reading_another_tensors_refs_is_rejected(spmv):
    """B_val relabelled to read c: its refs still come from B's scanner."""
    with pytest.raises(GraphError, match=r"node 'B_val' \(array\) reads tensor 'c' but its "
                       r"refs come from level 1 of 'B' \(B_j.ref\); expected level 0 of 'c'"):
        Graph.from_dict(_set_param(spmv["json"], "B_val", tensor="c"))


def test_a_scanner_skipping_a_level_is_rejected(spmv):
    with pytest.raises(GraphError, match=r"node 'B_j' \(scan_compressed\) reads tensor 'B' "
                       r"but its refs come from level 0 of 'B'"):
        Graph.from_dict(_set_param(spmv["json"], "B_j", level=0))
    with pytest.raises(GraphError, match="level 2 of tensor 'B', which has 2 level"):
        Graph.from_dict(_set_param(spmv["json"], "B_j", level=2))


def test_a_level_written_twice_is_rejected(spmv):
    data = _set_param(spmv["json"], "x_i", level=0)
    data["nodes"].append({"id": "x_i2", "op": "level_writer",
                          "params": {"tensor": "x", "level": 0}})
    data["edges"].append({"src": "B_i.crd", "dst": "x_i2.crd"})
    with pytest.raises(GraphError, match="nodes 'x_i' and 'x_i2' both write level 0"):
        Graph.from_dict(data)


@pytest.mark.parametrize("shape", [[-1, 5], [0, 5], [6, True], [6, 2.5], ["6", 5], "65"])
def test_shapes_must_be_positive_ints(spmv, shape):
    data = json.loads(json.dumps(spmv["json"]))
    data["tensors"][0]["shape"] = shape
    with pytest.raises(GraphError, match="tensor 'B': shape .* must be a list of ints >= 1"):
        Graph.from_dict(data)


@pytest.mark.parametrize("depth", [True, False, 0, -2, 1.5, "2"])
def test_edge_depths_must_be_ints_not_bools(spmv, depth):
    data = json.loads(json.dumps(spmv["json"]))
    data["edges"][0]["depth"] = depth
    with pytest.raises(GraphError, match=r"depth .* must be an int >= 1 or null"):
        Graph.from_dict(data)


def _set_tensor(data: dict, name: str, **fields) -> dict:
    data = json.loads(json.dumps(data))
    next(t for t in data["tensors"] if t["name"] == name).update(fields)
    return data


@pytest.mark.parametrize("tensor, fmt, match", [
    ("B", "zz", r"tensor 'B': format 'zz' for a 2-d tensor"),
    ("B", "d", r"tensor 'B': format 'd' for a 2-d tensor: expected 2 level"),
    ("x", "csr", r"tensor 'x': format 'csr'"),
    ("B", ["d", "c"], r"tensor 'B': format \['d', 'c'\] must be a string, not a list")])
def test_formats_are_checked_on_load(spmv, tensor, fmt, match):
    """A bad format used to load and fail at run time (FormatError from the first backend),
    or be coerced by str() into "['d', 'c']"."""
    with pytest.raises(GraphError, match=match):
        Graph.from_dict(_set_tensor(spmv["json"], tensor, format=fmt))


@pytest.mark.parametrize("tensor, fmt, node, kind", [
    ("B", "dd", "B_j", "scan_compressed needs a compressed level"),
    ("B", "cc", "B_i", "scan_dense needs a dense level"),
    ("c", "c", "c_j", "locate needs a dense level")])
def test_a_level_reader_of_the_wrong_kind_is_rejected(spmv, tensor, fmt, node, kind):
    """Found by fuzzing: these loaded and then died in the Python model with
    AttributeError ('DenseLevel' object has no attribute 'seg')."""
    with pytest.raises(GraphError, match=rf"node '{node}' \(\w+\) reads level \d of tensor "
                       rf"'{tensor}', which is \w+ in format '{fmt}'; {kind}"):
        Graph.from_dict(_set_tensor(spmv["json"], tensor, format=fmt))


@pytest.mark.parametrize("where, value, match", [
    ("name", True, r"graph: name True must be a string, not a boolean"),
    ("dtype", None, r"graph: dtype None must be a string, not null"),
    ("meta", 3, r"graph meta 3 must be a JSON object"),
    ("nodes", {"a": 1}, r"graph 'nodes' must be a JSON list, got an object"),
    ("edges", None, r"graph 'edges' must be a JSON list, got null"),
    ("extra", 1, r"graph: unknown key\(s\) \['extra'\]")])
def test_graph_fields_are_type_checked_not_coerced(spmv, where, value, match):
    """Found by fuzzing: name true loaded as the graph "True", meta 3 was a TypeError."""
    data = json.loads(json.dumps(spmv["json"]))
    data[where] = value
    with pytest.raises(GraphError, match=match):
        Graph.from_dict(data)


@pytest.mark.parametrize("part, key, value, match", [
    ("nodes", "id", 5, r"nodes\[0\]: id 5 must be a string, not a number"),
    ("nodes", "params", [1], r"node 'root_B': params \[1\] must be a JSON object"),
    ("nodes", "op", None, r"nodes\[0\]: op None must be a string"),
    ("edges", "dpeth", 1, r"edges\[0\]: unknown key\(s\) \['dpeth'\]"),
    ("edges", "src", ["a"], r"edges\[0\]: src \['a'\] must be a string"),
    ("tensors", "role", "inout", r"tensor 'B': role 'inout' is not one of input, output"),
    ("tensors", "name", None, r"tensors\[0\]: name None must be a string")])
def test_entries_are_type_checked(spmv, part, key, value, match):
    data = json.loads(json.dumps(spmv["json"]))
    data[part][0][key] = value
    with pytest.raises(GraphError, match=match):
        Graph.from_dict(data)


def test_entries_must_be_objects_with_their_keys(spmv):
    data = json.loads(json.dumps(spmv["json"]))
    data["edges"][0] = "root_B.ref->B_i.ref_in"
    with pytest.raises(GraphError, match=r"edges\[0\] must be a JSON object, got a string"):
        Graph.from_dict(data)
    del data["edges"][0]
    del data["nodes"][0]["op"]
    with pytest.raises(GraphError, match=r"nodes\[0\]: missing key\(s\) \['op'\]"):
        Graph.from_dict(data)


def test_a_tensor_declared_twice_is_rejected(spmv):
    """The second declaration used to replace the first silently."""
    data = json.loads(json.dumps(spmv["json"]))
    data["tensors"].append(dict(data["tensors"][0], shape=[7, 5]))
    with pytest.raises(GraphError, match="tensor 'B' is declared twice"):
        Graph.from_dict(data)


def test_a_cycle_is_rejected_on_load(spmv):
    """docs/graph-json.md promises it; cycles used to load and fail in the first run."""
    data = json.loads(json.dumps(spmv["json"]))
    edge = next(e for e in data["edges"] if e["dst"] == "mul.a")
    edge["src"] = "red_j.val"
    data["edges"] = [e for e in data["edges"] if e["src"] != "B_val.val"]
    with pytest.raises(GraphError, match="graph has a cycle through"):
        Graph.from_dict(data)


def test_cosim_fails_when_every_backend_errors(spmv, capsys, monkeypatch):
    """Like all-deadlock (test_cli): backends failing alike must not read as agreement."""
    from cosim import BACKENDS, PythonBackend
    from sim_models.python import SimulationError

    class Broken(PythonBackend):
        name = "broken"

        def run(self, graph, inputs, *, trace=False, depth="graph", hw=None, mem_trace=False):
            raise SimulationError(f"graph {graph.name!r}: node 'mul' at cycle 3: boom")

    monkeypatch.setitem(BACKENDS, "broken", Broken)
    assert main(["cosim", str(spmv["graph"]), *spmv["inputs"], "--backends",
                 "broken,broken"]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "broken failed: graph 'einsum': node 'mul'" in out


# -- one-line errors instead of tracebacks --------------------------------------------------

def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


ROOT = Path(__file__).resolve().parents[2]


def test_model_with_an_unknown_backend_fails_before_importing_torch():
    got = _run("import sys\nfrom cosim.cli import main\n"
               "rc = main(['model', 'gcn', '--backend', 'nosuch'])\n"
               "print(rc, 'torch' in sys.modules)")
    assert got.stdout.split() == ["1", "False"], got.stderr
    assert got.stderr.startswith("samfuse: error: unknown backend 'nosuch'; available: ")
    assert got.stderr.count("\n") == 1


def test_model_with_a_missing_schedule_file_fails_before_the_export(tmp_path, capsys):
    assert main(["model", "gcn", "--schedule", str(tmp_path / "nope.yaml")]) == 1
    assert "--schedule" in _one_line_error(capsys)


def test_cli_import_and_help_stay_free_of_torch_and_the_models():
    got = _run("import sys\nimport cosim.cli\nfrom cosim.cli import main\n"
               "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
               "print(sorted(m for m in ('torch', 'compiler.models', 'ir.datasets', "
               "'scipy.stats') if m in sys.modules))")
    assert got.stdout.strip().splitlines()[-1] == "[]", got.stdout + got.stderr


def test_sim_of_a_small_graph_stays_free_of_torch_scipy_and_plotting(spmv):
    """Start-up of ``samfuse sim`` on .npy inputs: numpy and the project only (scipy comes
    in for .mtx files, torch for ``model``, matplotlib for ``plot``)."""
    np.save(spmv["dir"] / "b.npy", spmv["B"].toarray())
    got = _run("import sys\nfrom cosim.cli import main\n"
               f"rc = main(['sim', {str(spmv['graph'])!r}, '--input', "
               f"'B={spmv['dir'] / 'b.npy'}', '--input', 'c={spmv['dir'] / 'c.npy'}'])\n"
               "print(rc, sorted(m for m in ('torch', 'scipy', 'matplotlib', 'networkx', "
               "'pandas', 'pyarrow', 'cppyy', 'cocotb') if m in sys.modules))")
    assert got.stdout.strip().splitlines()[-1] == "0 []", got.stdout + got.stderr


def test_help_imports_only_what_the_parser_needs():
    """``samfuse --help`` builds the parser only: no study, tuning, nightly or comparison
    code (the package imports those names on first use), no YAML, no scipy."""
    got = _run("import sys\nfrom cosim.cli import main\n"
               "try:\n    rc = main(['--help'])\nexcept SystemExit as exc:\n    rc = exc.code\n"
               "print(rc, sorted(m for m in sys.modules if m in ('yaml', 'scipy', 'torch') "
               "or m.startswith(('cosim.studies', 'cosim.tuning', "
               "'cosim.runs._counts', 'cosim.backends._compare'))))")
    assert got.stdout.strip().splitlines()[-1] == "0 []", got.stdout + got.stderr


def test_every_public_name_of_cosim_resolves():
    import cosim

    assert all(getattr(cosim, name) is not None for name in cosim.__all__)


def test_model_names_match_the_bundled_models():
    from compiler.models import MODELS
    from cosim.cli._model import MODEL_NAMES

    assert list(MODEL_NAMES) == sorted(MODELS)


def _huge_mtx(path: Path, rows: int, cols: int) -> Path:
    path.write_text("%%MatrixMarket matrix coordinate real general\n"
                    f"{rows} {cols} 1\n1 1 1.0\n")
    return path


@pytest.mark.parametrize("fmt, need", [("csr", "7.28 TiB"), ("dense", "PiB")])
def test_a_huge_declared_matrix_is_refused_before_allocating(tmp_path, capsys, fmt, need):
    n = 10**12
    graph = tmp_path / "huge.json"
    assert main(["compile", SPMV, "--format", f"B={fmt}", "--shape", f"B={n}x{n}",
                 "--shape", f"c={n}", "-o", str(graph)]) == 0
    capsys.readouterr()
    np.save(tmp_path / "c.npy", np.zeros(3, np.float32))
    huge = _huge_mtx(tmp_path / "huge.mtx", n, n)
    assert main(["sim", str(graph), "--input", f"B={huge}", "--input",
                 f"c={tmp_path / 'c.npy'}"]) == 1
    err = _one_line_error(capsys)
    assert err.startswith(f"samfuse: error: input 'B': storing {n}x{n} as ")
    assert need in err and "of memory; refusing" in err


@pytest.mark.parametrize("size", [10**12, 2**63])
def test_a_huge_declared_output_is_refused_before_allocating(spmv, capsys, size):
    """Found by fuzzing: x declared with 2^63 (or 6.6e9) entries ran, then died storing the
    result (int64 OverflowError, numpy's MemoryError), a traceback after the whole run.
    An output larger than its index is now refused on load (issue 25), before any run."""
    data = json.loads(json.dumps(spmv["json"]))
    next(t for t in data["tensors"] if t["name"] == "x")["shape"] = [size]
    graph = spmv["dir"] / "huge_out.json"
    graph.write_text(json.dumps(data))
    assert main(["sim", str(graph), *spmv["inputs"]]) == 1
    assert _one_line_error(capsys).startswith(
        f"samfuse: error: output tensor 'x': mode 0 has size {size}, but its coordinates "
        "come from 'B_i'")


def test_a_huge_header_against_a_small_graph_is_a_shape_error(spmv, capsys):
    huge = _huge_mtx(spmv["dir"] / "huge.mtx", 10**12, 10**12)
    assert main(["sim", str(spmv["graph"]), "--input", f"B={huge}", "--input",
                 f"c={spmv['dir'] / 'c.npy'}"]) == 1
    assert _one_line_error(capsys) == (
        f"samfuse: error: tensor 'B': shape ({10**12}, {10**12}) but the graph expects "
        f"(6, 5) (header of {str(huge)!r})\n")


def test_a_3d_array_for_a_vector_names_the_tensor(spmv, capsys):
    np.save(spmv["dir"] / "c3.npy", np.zeros((5, 2, 2), np.float32))
    assert main(["sim", str(spmv["graph"]), "--input", f"B={spmv['dir'] / 'b.mtx'}",
                 "--input", f"c={spmv['dir'] / 'c3.npy'}"]) == 1
    assert _one_line_error(capsys).startswith(
        "samfuse: error: tensor 'c': shape (5, 2, 2) but the graph expects (5,)")


def test_int32_overflow_names_the_tensor(tmp_path, capsys):
    graph = tmp_path / "g.json"
    assert main(["compile", SPMV, "--dtype", "int32", "--format", "B=csr", "--shape",
                 "B=6x5", "--shape", "c=5", "-o", str(graph)]) == 0
    scipy.io.mmwrite(tmp_path / "b.mtx", sp.csr_array(np.arange(30).reshape(6, 5)))
    np.save(tmp_path / "c.npy", np.array([3_000_000_000, 1, 2, 3, 4], np.int64))
    capsys.readouterr()
    assert main(["sim", str(graph), "--input", f"B={tmp_path / 'b.mtx'}", "--input",
                 f"c={tmp_path / 'c.npy'}"]) == 1
    assert _one_line_error(capsys) == (f"samfuse: error: input 'c' "
                                       f"({str(tmp_path / 'c.npy')!r}): values: values "
                                       "outside the int32 range\n")


@pytest.mark.parametrize("suffix", [".bmp", ".txt", ""])
def test_show_refuses_unsupported_formats(spmv, capsys, suffix):
    out = spmv["dir"] / f"g{suffix}"
    assert main(["show", str(spmv["graph"]), "-o", str(out)]) == 1
    assert "unsupported format" in _one_line_error(capsys)
    assert not out.exists()


@pytest.mark.parametrize("features", ["-1", "0", "4097", "10000000000000"])
def test_demo_refuses_a_feature_count_out_of_range(tmp_path, capsys, features):
    """10^13 columns was a MemoryError traceback (found by the CLI fuzzer)."""
    assert main(["demo", "--out", str(tmp_path / "d"), "--features", features]) == 1
    assert _one_line_error(capsys).startswith(
        f"samfuse: error: --features {features}: expected 1..4096 columns")


@pytest.mark.parametrize("argv", [["demo", "--seed", "-1"], ["model", "gcn", "--seed", "-3"],
                                  ["demo", "--seed", "x"]])
def test_a_negative_seed_is_a_usage_error(tmp_path, capsys, argv):
    """Found by fuzzing: demo --seed -1 ended in numpy's ValueError traceback."""
    assert main([*argv, *(["--out", str(tmp_path / "d")] if argv[0] == "demo" else [])]) == 2
    err = capsys.readouterr().err
    assert f"argument --seed: seed {argv[-1]!r}: expected an integer >= 0" in err
    assert not (tmp_path / "d").exists()


# -- SystemC: deep FIFOs and crash reports --------------------------------------------------

@pytest.fixture(scope="module")
def systemc():
    from cosim import SystemCBackend

    reason = SystemCBackend.unavailable()
    if reason:
        pytest.skip(reason)
    return SystemCBackend()


def test_systemc_fifo_depth_is_a_bound_not_an_allocation(systemc):
    """A declared depth of 2^40 tokens allocated 2^40 slots up front (8 TiB) and failed;
    depths are now capped at ir.MAX_DEPTH (refused above it, in one line), and the
    largest allowed one must still cost nothing up front."""
    from ir import MAX_DEPTH, GraphError, examples
    from sim_models.python import simulate

    graph = examples.spmv(3, 4)
    inputs = {"B": np.eye(3, 4, dtype=np.float32), "c": np.arange(4, dtype=np.float32)}
    with pytest.raises(GraphError, match="at most 1,048,576 tokens"):
        systemc.run(graph, inputs, depth=2**40)
    want = simulate(graph, inputs, depth=MAX_DEPTH)
    got = systemc.run(graph, inputs, depth=MAX_DEPTH)
    assert got.cycles == want.cycles
    np.testing.assert_array_equal(got.dense("x"), want.dense("x"))


def test_a_systemc_crash_report_goes_to_a_named_file(systemc, monkeypatch):
    import re

    import cppyy

    import cosim.backends._systemc_child as child
    from cosim import SystemCError
    from ir import examples

    child.prepare()  # warm up in this process before _elaborate is made to crash
    cppyy.cppdef("namespace samfuse_hostile { void crash() { *(volatile int*)nullptr = 1; } }")
    monkeypatch.setattr(child, "_elaborate", lambda *a: cppyy.gbl.samfuse_hostile.crash())
    with pytest.raises(SystemCError) as info:
        systemc.run(examples.spmv(2, 2), {"B": np.eye(2, dtype=np.float32),
                                          "c": np.ones(2, np.float32)})
    text = str(info.value)
    assert "\n" not in text and "SIGSEGV" in text, text
    report = Path(re.search(r"crash report in (\S+)$", text).group(1))
    try:
        assert "Fatal Python error" in report.read_text()
    finally:
        report.unlink()


def test_dense_tensors_of_one_shape_may_share_a_scanner():
    """Refs of a dense level are positions, the same for every dense tensor of that size."""
    from ir import GraphBuilder

    def vec_add(b_fmt: str, b_len: int) -> Graph:
        g = GraphBuilder("add")
        g.tensor("a", (4,), "d")
        g.tensor("b", (b_len,), b_fmt)
        g.tensor("x", (4,), "d", role="output")
        for nid, op, kw in [("r", "root", {}), ("ai", "scan_dense", {"tensor": "a", "level": 0}),
                            ("av", "array", {"tensor": "a"}), ("bv", "array", {"tensor": "b"}),
                            ("f", "alu", {"op": "add"}),
                            ("xi", "level_writer", {"tensor": "x", "level": 0}),
                            ("xv", "value_writer", {"tensor": "x"})]:
            g.node(nid, op, **kw)
        for s, d in [("r.ref", "ai.ref_in"), ("ai.crd", "xi.crd"), ("ai.ref", "av.ref"),
                     ("ai.ref", "bv.ref"), ("av.val", "f.a"), ("bv.val", "f.b"),
                     ("f.val", "xv.val")]:
            g.edge(s, d)
        return g.build()

    assert "bv" in vec_add("d", 4).nodes
    for fmt, n in [("d", 5), ("c", 4)]:
        with pytest.raises(GraphError, match="node 'bv' .array. reads tensor 'b' but its refs"):
            vec_add(fmt, n)


def test_a_binary_file_given_as_a_study_is_a_one_line_error(tmp_path, capsys):
    """Found by the CLI fuzzer: `samfuse study c.npy` was a UnicodeDecodeError traceback."""
    study = tmp_path / "c.npy"
    np.save(study, np.arange(300, dtype=np.float64) * 1e300)
    assert main(["study", str(study), "--out", str(tmp_path / "o")]) == 1
    assert "not a readable YAML text file" in _one_line_error(capsys)
