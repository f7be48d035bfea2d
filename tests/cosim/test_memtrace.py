"""``cosim.runs._memtrace``: a run's bursts as a Ramulator 2 LoadStoreTrace, read back and
checked against a layout computed here from scipy's CSR arrays."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from compiler import compile_expression
from cosim.runs._memtrace import array_layout, write_mem_trace
from ir import load_hw, memory_ports
from sim_models.python import MemRequest, bind_inputs, simulate

HW = load_hw("hbm2-u280", ["dram.channels=2", "dram.outstanding=4"])
LINE = 64


def _spmv():
    B = sp.random(40, 30, density=0.3, format="csr", random_state=7, dtype=np.float32)
    c = np.arange(30, dtype=np.float32)
    graph = compile_expression("x(i) = B(i,j) * c(j)", {"B": "csr"},
                               {"B": (40, 30), "c": (30,)}, order="i,j")
    return graph, B, c


def _expected_bases(graph, B, c):
    """Base of each array from scipy's lengths: page-aligned, whole lines, in port order."""
    words = {("B", 1, "seg"): len(B.indptr), ("B", 1, "crd"): len(B.indices),
             ("B", None, "vals"): len(B.data), ("c", None, "vals"): len(c),
             ("x", None, "vals"): B.shape[0]}
    bases, end = {}, 0
    for p in memory_ports(graph, HW):
        key = (p.tensor, p.level, p.array)
        if key not in bases:
            bases[key] = (end + 4095) // 4096 * 4096
            end = bases[key] + max(1, int(np.ceil(words[key] * 4 / LINE))) * LINE
    assert set(bases) == set(words)  # every stored array has a port
    return bases


def _read(path) -> list[tuple[str, int]]:
    out = []
    for line in path.read_text().splitlines():
        op, addr = line.split(" ")  # Ramulator's reader wants exactly two tokens
        assert op in ("LD", "ST") and addr.startswith("0x")
        out.append((op, int(addr, 16)))
    return out


def test_the_trace_replays_every_burst_line_by_line_at_its_array(tmp_path):
    graph, B, c = _spmv()
    res = simulate(graph, {"B": B, "c": c}, hw=HW, mem_trace=True)
    tensors = {**bind_inputs(graph, {"B": B, "c": c}), **res.outputs}
    bases = _expected_bases(graph, B, c)
    assert {k: v.base for k, v in array_layout(graph, HW, tensors).items()} == bases
    n = write_mem_trace(tmp_path / "t.trace", graph, HW, res.mem_requests, tensors)
    got = _read(tmp_path / "t.trace")
    ports = memory_ports(graph, HW)
    want = [("ST" if r.write else "LD",
             bases[(ports[r.port].tensor, ports[r.port].level, ports[r.port].array)]
             + (r.line + k) * LINE)
            for r in sorted(res.mem_requests, key=lambda r: (r.cycle, r.port))
            for k in range(r.lines)]
    assert got == want and n == len(got)
    assert sum(op == "LD" for op, _ in got) * LINE == res.dram_read_bytes
    assert sum(op == "ST" for op, _ in got) * LINE == res.dram_write_bytes
    # streaming reads touch every line of B's crd array at least once
    crd = bases[("B", 1, "crd")]
    lines = {(a - crd) // LINE for op, a in got if op == "LD" and crd <= a < crd + 4096}
    assert lines == set(range(int(np.ceil(len(B.indices) * 4 / LINE))))


def test_bursts_are_written_in_issue_order(tmp_path):
    graph, B, c = _spmv()
    tensors = {**bind_inputs(graph, {"B": B, "c": c}),
               **simulate(graph, {"B": B, "c": c}, hw=HW).outputs}
    bases = _expected_bases(graph, B, c)
    ports = memory_ports(graph, HW)
    x = next(p.no for p in ports if p.write)
    reqs = [MemRequest(9, 1, 2, 2, False), MemRequest(3, x, 0, 1, True),
            MemRequest(9, 0, 0, 1, False)]
    write_mem_trace(tmp_path / "t.trace", graph, HW, reqs, tensors)
    at = [bases[(p.tensor, p.level, p.array)] for p in ports]
    assert _read(tmp_path / "t.trace") == [
        ("ST", at[x]), ("LD", at[0]), ("LD", at[1] + 2 * LINE), ("LD", at[1] + 3 * LINE)]
