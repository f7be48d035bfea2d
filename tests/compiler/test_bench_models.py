"""Smoke test of scripts/bench_models.py: ``--quick`` runs end to end and prints its
three tables (compile time, simulated cycles, heuristic error)."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_models.py"


def test_quick_prints_every_table():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick"], capture_output=True,
                          text=True, timeout=120, cwd=SCRIPT.parents[1])
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    for heading in ("## Compile time", "## Simulated cycles", "## Heuristic error"):
        assert heading in out, out[-3000:]
    assert "| model | config | stmts | frontend ms | schedule |" in out
    assert "| model | schedule | regions | kernels | nodes | est. FLOPs |" in out
    assert "| model | schedule | region | FLOPs meas. | FLOPs est. | err % |" in out
    # every model compiled under the unfused schedule, and the small GCN ran
    for model in ("gcn", "graphsage", "autoencoder", "bigbird", "gpt"):
        assert f"| {model} | small |" in out
    cycles = out.split("## Simulated cycles")[1].split("## Heuristic error")[0]
    row = next(ln for ln in cycles.splitlines() if ln.startswith("| gcn | unfused |"))
    assert "skipped" not in row and "failed" not in row, row
    assert "Trend (published:" in out


def test_rejects_unknown_model():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--models", "resnet"],
                          capture_output=True, text=True, timeout=60, cwd=SCRIPT.parents[1])
    assert proc.returncode != 0
    assert "unknown models ['resnet']" in proc.stderr
