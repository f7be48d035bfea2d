"""``samfuse fifo-size`` and the FIFO report of ``samfuse sim``: the sized graph keeps the
cycles within the tolerance of unbounded FIFOs (checked by an independent simulation of
the written graph) with no depth above what the unbounded run needed, outputs against
scipy; errors are one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cosim.cli import main
from cosim.runs._fifo_size import size_fifos
from ir import Graph, examples, load_hw
from sim_models.python import simulate


def _inputs(seed: int, m: int, k: int, n: int):
    b = sp.random(m, k, density=0.3, random_state=seed, format="csr", dtype=np.float32)
    c = sp.random(k, n, density=0.3, random_state=seed + 1, format="csr", dtype=np.float32)
    return b, c


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 999), tol=st.sampled_from([0.0, 0.01, 0.1]),
       hw=st.sampled_from([[], ["timing.alu.latency=3", "timing.intersect.ii=2"]]))
def test_sized_depths_keep_the_budget(seed, tol, hw):
    b, c = _inputs(seed, 8, 9, 7)
    g = examples.spmm_ikj(8, 9, 7)
    machine = load_hw("ideal", hw)
    found = size_fifos(g, {"B": b, "C": c}, machine, tol)
    ref = simulate(g, {"B": b, "C": c}, depth=None, hw=machine)
    assert found.reference_cycles == ref.cycles
    assert found.budget == int(np.floor(ref.cycles * (1 + tol)))
    again = simulate(Graph.from_dict(found.graph.to_dict()), {"B": b, "C": c}, hw=machine)
    assert again.cycles == found.cycles <= found.budget
    np.testing.assert_allclose(again.dense("X"), (b @ c).toarray(), rtol=1e-5, atol=1e-6)
    assert {e.name: e.depth for e in found.graph.edges} == found.depths
    for name, d in found.depths.items():
        assert 1 <= d <= ref.max_occupancy[name] + 1, name


@pytest.fixture
def spmm_files(tmp_path: Path) -> list[str]:
    b, c = _inputs(3, 12, 10, 9)
    scipy.io.mmwrite(tmp_path / "b.mtx", b)
    scipy.io.mmwrite(tmp_path / "c.mtx", c)
    graph = tmp_path / "g.json"
    examples.spmm_ikj(12, 10, 9).to_json(graph)
    return [str(graph), "--input", f"B={tmp_path / 'b.mtx'}", "--input",
            f"C={tmp_path / 'c.mtx'}"]


def test_cli_writes_the_sized_graph(spmm_files, tmp_path, capsys):
    out = tmp_path / "sized.json"
    assert main(["fifo-size", *spmm_files, "--tolerance", "0.05", "-o", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    sized = Graph.from_json(out)
    assert {e.name: e.depth for e in sized.edges} == doc["depths"]
    assert doc["cycles"] <= doc["budget"] == int(doc["reference_cycles"] * 1.05)
    assert main(["fifo-size", *spmm_files, "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "reference" in text and "sized" in text and str(out) in text


def test_cli_errors(spmm_files, capsys):
    assert main(["fifo-size", *spmm_files, "--hw-set", "timing.alu.latncy=2"]) == 1
    err = capsys.readouterr().err
    assert "unknown timing knob 'latncy'" in err and err.count("\n") == 1, err
    assert main(["fifo-size", *spmm_files, "--tolerance", "-1"]) == 2  # argparse: usage
    err = capsys.readouterr().err
    assert err.splitlines()[-1].endswith("tolerance '-1': expected a number >= 0, e.g. 0.01 "
                                         "for 1 %") and "Traceback" not in err


def test_sim_reports_the_fifos(spmm_files, capsys):
    assert main(["sim", *spmm_files, "--json", "--hw", "vitis-like", "--depth", "4"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["fifos"]) == {e.name for e in Graph.from_json(spmm_files[0]).edges}
    for f in doc["fifos"].values():
        assert set(f) == {"peak", "full_cycles", "empty_cycles"}
        assert 0 <= f["peak"] <= 5 and f["full_cycles"] + f["empty_cycles"] <= doc["cycles"]
    assert main(["sim", *spmm_files, "--stats"]) == 0
    out = capsys.readouterr().out
    assert "edge" in out and "full" in out and "empty" in out
