"""Smoke test of scripts/bench_mlir.py: a tiny model through the MLIR path, timed, with
its output compared with the torch.export program's."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch_mlir")

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_mlir.py"


def test_tiny_gcn_row():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--models", "gcn", "--configs",
                           "gcn=tiny", "--schedules", "unfused", "--repeat", "1"],
                          capture_output=True, text=True, timeout=300, cwd=SCRIPT.parents[1])
    assert proc.returncode == 0, proc.stderr[-3000:]
    row = next(ln for ln in proc.stdout.splitlines() if ln.startswith("| gcn | tiny |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[5] == "unfused" and cells[-2] == "yes" and float(cells[-1]) == 0.0
