"""``samfuse compile FILE.mlir`` and ``samfuse model FILE.mlir``: the MLIR files of
tests/compiler/mlir through the command line, checked against the numpy oracle."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

pytest.importorskip("torch_mlir")

from cosim.cli import main  # noqa: E402

MLIR = Path(__file__).parents[1] / "compiler" / "mlir"


@pytest.mark.parametrize("schedule", ["unfused", "partial", "full"])
def test_model_runs_an_mlir_file_and_checks_it(capsys, schedule):
    assert main(["model", str(MLIR / "gcn_layer.mlir"), "--schedule", schedule,
                 "--seed", "4", "--program"]) == 0
    out = capsys.readouterr().out
    assert "read       gcn_layer.mlir to 4 statements" in out
    assert "weight weight[4, 6]: dc" in out
    assert "check      PASS: max |out - numpy|" in out


def test_model_takes_inputs_from_files(tmp_path, capsys):
    adj = sp.random_array((8, 7), density=0.4, rng=np.random.default_rng(0),
                          dtype=np.float32, format="coo")
    scipy.io.mmwrite(tmp_path / "s.mtx", sp.coo_matrix(adj))
    np.save(tmp_path / "a.npy", np.ones((8, 5), np.float32))
    np.save(tmp_path / "b.npy", np.full((5, 7), 2, np.float32))
    assert main(["model", str(MLIR / "sddmm.mlir"), "--input", f"s={tmp_path / 's.mtx'}",
                 "--input", f"a={tmp_path / 'a.npy'}", "--input", f"b={tmp_path / 'b.npy'}",
                 "--out", str(tmp_path / "graphs")]) == 0
    assert "PASS" in capsys.readouterr().out
    graph = json.loads((tmp_path / "graphs" / "main.x.json").read_text())
    assert {t["name"]: t["format"] for t in graph["tensors"]}["x"] == "dc"


def test_compile_writes_every_kernel(tmp_path, capsys):
    assert main(["compile", str(MLIR / "softmax.mlir"), "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "rowmax(i) = max(j) scores(i,j)" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "exps.exps.json", "probs.probs.json", "rowmax.rowmax.json", "rowsum.rowsum.json",
        "shifted.shifted.json"]


@pytest.mark.parametrize(("argv", "message"), [
    (["compile", "MLIR/softmax.mlir", "--order", "i,j"], "--order applies to an expression"),
    (["compile", "MLIR/softmax.mlir", "--schedule", "halfway"], "--schedule 'halfway'"),
    (["model", "MLIR/softmax.mlir", "--input", "q=x.npy"], "--input q=x.npy: no such file"),
    (["model", "MLIR/softmax.mlir", "--config", "tiny"], "--config names a bundled model"),
    (["model", "gcn", "--input", "x=y.npy"], "--input and --func apply to MLIR files"),
    (["model", "MLIR/sddmm.mlir", "--input", "a=MLIR/../../ir/data/bad.npy"], "no such file"),
    (["model", "MLIR/nope.mlir"], "no such file"),
    (["model", "MLIR/softmax.mlir", "--func", "g"], "no function @g"),
])
def test_bad_mlir_commands_give_one_line(capsys, argv, message):
    argv = [a.replace("MLIR", str(MLIR)) for a in argv]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("samfuse: error: ") and message in err and err.count("\n") == 1


def test_input_of_the_wrong_shape_is_refused(tmp_path, capsys):
    np.save(tmp_path / "a.npy", np.ones((5, 8), np.float32))
    assert main(["model", str(MLIR / "sddmm.mlir"), "--input", f"a={tmp_path / 'a.npy'}"]) == 1
    err = capsys.readouterr().err
    assert "tensor 'a' is declared [8, 5]; the value given has shape [5, 8]" in err


def test_unsupported_op_is_one_line_with_its_location(tmp_path, capsys):
    bad = tmp_path / "tanh.mlir"
    bad.write_text((MLIR / "softmax.mlir").read_text().replace("math.exp", "math.tanh"))
    assert main(["model", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("samfuse: error: tanh.mlir:25:12: math.tanh: not supported")
    assert err.count("\n") == 1


def test_an_elided_weight_is_taken_from_input(tmp_path, capsys):
    """gcn_layer.mlir's weight is exported elided: --input gives its values, and the
    kernel that reads it reads exactly those (the file written by --out)."""
    w = sp.random_array((4, 6), density=0.5, rng=np.random.default_rng(1), dtype=np.float32,
                        format="coo")
    scipy.io.mmwrite(tmp_path / "w.mtx", sp.coo_matrix(w))
    assert main(["model", str(MLIR / "gcn_layer.mlir"), "--input", f"weight={tmp_path / 'w.mtx'}",
                 "--out", str(tmp_path / "out")]) == 0
    assert "check      PASS" in capsys.readouterr().out
    (read,) = (tmp_path / "out").glob("*.weight.mtx")
    np.testing.assert_array_equal(scipy.io.mmread(read).toarray(), w.toarray())


def test_model_runs_an_mlir_file_on_simulated_hardware_with_lanes(capsys):
    """--hw and --par apply to an MLIR file as to a bundled model."""
    assert main(["model", str(MLIR / "graphsage_layer.mlir"), "--schedule", "full",
                 "--hw", "comal-hbm", "--par", "i=2", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "hw         comal-hbm: " in out and "DRAM" in out
    assert "check      PASS: max |out - numpy|" in out


def test_every_result_of_the_function_is_checked() -> None:
    """named_ops.mlir returns five results: the check covers each, not only the first."""
    import argparse

    from cosim.cli._mlir import mlir_frontend
    from cosim.runs._model_run import compare_outputs

    args = argparse.Namespace(model=str(MLIR / "named_ops.mlir"), config="small", function=None,
                              seed=0, input=[])
    _, program, _, gold, _ = mlir_frontend(args, SystemExit)
    assert len(program.outputs) == 5 and set(gold) == set(program.outputs)
    right = {name: value.copy() for name, value in gold.items()}
    assert compare_outputs(right, gold) == (0.0, True)
    last = program.outputs[-1]
    wrong = {**right, last: right[last] + 1.0}
    err, ok = compare_outputs(wrong, gold)
    assert not ok and err == pytest.approx(1.0)
