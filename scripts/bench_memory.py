"""The memory goals of issue 27 on ``hbm2-u280``: SpMV of a 1,500 x 1,500 CSR matrix (2 %
dense) with a dense vector, and SpMM A.X with X dense, per ``dram.load_queue`` and
on-chip buffer choice: cycles against max(ideal cycles, must-move bytes / usable
bandwidth), DRAM bytes against the must-move bytes (docs/timing.md, "Memory", "Loads in
flight" and "On-chip buffers").

    python scripts/bench_memory.py --queues 1,4,16,64 [--buffers none,auto]
                                   [--spmm-cols 16] [--hw-set KEY=V ...]

``--buffers``: ``none`` (every array in DRAM), ``auto`` (the compiler's rule,
``compiler.buffer_graph``) or tensor names (``x``, ``A.crd1``), comma separated per
choice and ``;`` between choices.

*Must move*: every stored word the kernel reads or writes, once (A's seg, crd and vals,
the dense operand, the output). *Usable bandwidth*: ``bytes_per_cycle`` times the
channels the kernel's memory ports are on (port k on channel k mod channels). Each line
is one JSON object; outputs are checked against scipy.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from compiler import buffer_graph, compile_expression, parse_buffer  # noqa: E402
from ir import WORD_BYTES, buffered_arrays, load_hw, memory_ports  # noqa: E402
from sim_models.python import simulate  # noqa: E402


def _kernels(n: int, density: float, cols: int, seed: int):
    a = sp.random(n, n, density=density, format="csr", random_state=seed, dtype=np.float32)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(np.float32)
    spmv = compile_expression("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"},
                              shapes={"A": (n, n)})
    yield "spmv", spmv, {"A": a, "x": x}, {"y": a @ x}, n
    if cols:
        xm = rng.standard_normal((n, cols)).astype(np.float32)
        spmm = compile_expression("Y(i,j) = A(i,k) * X(k,j)",
                                  formats={"A": "csr", "X": "dd", "Y": "dd"},
                                  shapes={"A": (n, n), "X": (n, cols)})
        yield "spmm", spmm, {"A": a, "X": xm}, {"Y": a @ xm}, n * cols


def _must_move(a: sp.csr_matrix, dense_words: int, out_words: int) -> int:
    return WORD_BYTES * (len(a.indptr) + a.nnz + a.nnz + dense_words + out_words)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1500)
    ap.add_argument("--density", type=float, default=0.02)
    ap.add_argument("--spmm-cols", type=int, default=16, help="0 = SpMV only")
    ap.add_argument("--queues", default="1,4,16,64")
    ap.add_argument("--buffers", default="none;auto",
                    help="on-chip buffer choices, ';' between them (default none;auto)")
    ap.add_argument("--hw", default="hbm2-u280")
    ap.add_argument("--hw-set", action="append", default=[])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    queues = [int(q) for q in args.queues.split(",")]
    for name, graph, inputs, gold, out_words in _kernels(args.n, args.density,
                                                         args.spmm_cols, args.seed):
        ideal = simulate(graph, inputs, stats=False).cycles
        dense = next(v for k, v in inputs.items() if k != "A")
        must = _must_move(inputs["A"], dense.size, out_words)
        for q, buffer in ((q, b) for b in args.buffers.split(";") for q in queues):
            hw = load_hw(args.hw, [*args.hw_set, f"dram.load_queue={q}"])
            run = buffer_graph(graph, hw, parse_buffer(buffer), inputs)
            channels = {p.channel for p in memory_ports(graph, hw)}
            bw = len(channels) * hw.dram.bytes_per_cycle
            bound = max(ideal, -(-must // bw))
            t0 = time.perf_counter()
            res = simulate(run, inputs, hw=hw)
            for out, want in gold.items():
                np.testing.assert_allclose(res.dense(out), want, rtol=1e-4, atol=1e-4)
            moved = res.dram_read_bytes + res.dram_write_bytes
            print(json.dumps({
                "kernel": name, "hw": hw.name, "load_queue": q, "buffer": buffer,
                "buffered": [f"{t.name}.{a}" for t in run.tensors.values()
                             for a in buffered_arrays(t)],
                "cycles": res.cycles,
                "ideal_cycles": ideal, "bound_cycles": bound,
                "cycles_over_bound": round(res.cycles / bound, 3),
                "dram_bytes": moved, "must_move_bytes": must,
                "bytes_over_must": round(moved / must, 2),
                "wall_s": round(time.perf_counter() - t0, 2)}), flush=True)


if __name__ == "__main__":
    main()
