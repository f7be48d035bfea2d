"""The compiled core (sim_models/python/_core.py) against the pure-Python reference.

Both cores run the same suite in their own processes (a process imports one of them);
every output, cycle count, node statistic, occupancy, work count and trace must agree.
Run as a script, this file prints the suite's results (pickled, hex) for the core that
``SAMFUSE_SIM_CORE`` selects.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _inputs(graph, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for name, t in graph.tensors.items():
        if t.role != "input":
            continue
        a = rng.random(tuple(t.shape)).astype(np.float32)
        if len(t.shape) >= 2:
            a[rng.random(a.shape) > (0.3 if t.format.endswith("d") else 0.15)] = 0
        out[name] = a
    return out


def _suite() -> dict:
    """Results of every run of the suite, as plain data."""
    from ir import examples, load_hw
    from sim_models.python import CORE, SimulationError, simulate

    graphs = {
        "spmm_ikj": examples.spmm_ikj(60, 80, 8, "dc", "dd"),  # channels past compaction
        "spmm_ijk": examples.spmm_ijk(30, 40, 20, "dc"),
        "spmm_kij": examples.spmm_kij(30, 40, 20),
        "spmv": examples.spmv(200, 150, "dc"),
        "sddmm": examples.sddmm(30, 20, 12),
        "union": examples.elementwise(40, 30, "add"),
        "row_max": examples.row_reduce(30, 20, "max", "exp"),
        "ttv": examples.ttv(12, 10, 8),
        "row_scale": examples.row_scale(30, 20),
        "locate": examples.masked_dense(30, 20),
        "blocks": examples.spmm_ikj(12, 10, 8, "dc", "dc", block=2),
    }
    hw = load_hw("hbm2-u280")
    runs = {"depth 2": {}, "depth 1": {"depth": 1}, "unbounded": {"depth": None},
            "trace": {"trace": True}, "functional": {"functional": True},
            "memory": {"hw": hw, "mem_trace": True}}
    results: dict = {"core": CORE}
    for gname, graph in graphs.items():
        inputs = _inputs(graph, 7)
        for rname, kw in runs.items():
            try:
                r = simulate(graph, inputs, **kw)
            except SimulationError as exc:  # a deadlock report must agree too
                results[gname, rname] = str(exc)
                continue
            results[gname, rname] = {
                "outputs": {k: r.dense(k).tobytes() for k in r.outputs},
                "cycles": r.cycles, "nodes": r.nodes, "occupancy": r.max_occupancy,
                "data": r.data_tokens, "channel_bytes": r.channel_bytes,
                "requests": repr(r.mem_requests),
                "trace": None if r.trace is None else r.trace.to_text(),
                "reads": None if r.trace is None else
                {k: e.read_cycles for k, e in r.trace.edges.items()}}
    return results


def _run_suite(core: str, cache: str | None = None) -> dict:
    env = {**os.environ, "SAMFUSE_SIM_CORE": core, "PYTHONPATH": str(ROOT)}
    if cache is not None:
        env["SAMFUSE_CACHE"] = cache
    done = subprocess.run([sys.executable, __file__], env=env, capture_output=True,
                          text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return pickle.loads(bytes.fromhex(done.stdout.strip().splitlines()[-1]))


def test_compiled_core_equals_the_pure_model():
    pytest.importorskip("Cython")
    from sim_models.python import _core

    _core.build()  # cached in the user cache; a no-op after scripts/setup.sh
    pure, compiled = _run_suite("pure"), _run_suite("compiled")
    assert (pure.pop("core"), compiled.pop("core")) == ("pure", "compiled")
    assert pure.keys() == compiled.keys()
    for key in pure:
        assert compiled[key] == pure[key], key


def test_auto_runs_pure_without_a_core_for_these_sources(tmp_path):
    code = ("import sim_models.python as m, sim_models.python._channel as c; "
            "print(m.CORE, c.__file__.endswith('.py'))")
    env = {**os.environ, "SAMFUSE_SIM_CORE": "auto", "SAMFUSE_CACHE": str(tmp_path),
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, cwd=ROOT)
    assert done.stdout.split() == ["pure", "True"], done.stderr[-2000:]


def test_a_bad_core_choice_is_one_clear_error(monkeypatch):
    from sim_models.python import _core

    monkeypatch.setenv("SAMFUSE_SIM_CORE", "fast")
    with pytest.raises(_core.CoreError, match=r"SAMFUSE_SIM_CORE='fast' is not a core "
                                              r"choice; expected 'auto', 'pure' or"):
        _core.mode()


def test_the_core_key_follows_every_module_and_declaration():
    from sim_models.python import _core

    names = {p.name for p in _core.core_modules() + _core._declarations()}
    assert {"_engine.py", "_channel.py", "_channel.pxd", "_actor.pxd"} <= names
    assert not names & {"__init__.py", "_core.py"}


if __name__ == "__main__":
    print(pickle.dumps(_suite()).hex())
