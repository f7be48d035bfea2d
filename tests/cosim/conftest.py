"""Fixtures of the cosim tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from cosim import SystemCBackend
from cosim.cli import main

SPMV = "x(i) = B(i,j) * c(j)"


@pytest.fixture(scope="module")
def systemc() -> SystemCBackend:
    """The SystemC backend, compiled once per module (skipped where SystemC is missing)."""
    reason = SystemCBackend.unavailable()
    if reason:
        pytest.skip(reason)
    return SystemCBackend()


@pytest.fixture
def spmv(tmp_path: Path) -> dict:
    """An SpMV graph (B 6x5 CSR, c of 5) compiled by the CLI, with its input files."""
    B = sp.random(6, 5, density=0.4, format="csr", random_state=3, dtype=np.float32)
    scipy.io.mmwrite(tmp_path / "b.mtx", B)
    c = np.arange(1, 6, dtype=np.float32)
    np.save(tmp_path / "c.npy", c)
    graph = tmp_path / "spmv.json"
    assert main(["compile", SPMV, "--format", "B=csr", "--shape", "B=6x5", "--shape", "c=5",
                 "-o", str(graph)]) == 0
    return {"dir": tmp_path, "graph": graph, "json": json.loads(graph.read_text()),
            "B": B, "c": c, "inputs": ["--input", f"B={tmp_path / 'b.mtx'}", "--input",
                                       f"c={tmp_path / 'c.npy'}"]}
