"""cocotb trace-driven bench: every primitive of a graph in isolation, from a recorded trace.

The top is generated with ``open_edges=True``: each edge's consumer side is driven here
from the recorded tokens at their recorded write cycles (a token written in cycle t is
visible from t+1), and each edge's producer side sees ``full_n`` computed from the
recorded read cycles of the downstream consumer (a slot freed in cycle t is visible from
t+1). Every token the primitives write, and its cycle, is recorded and compared against
the plan by the Python side (``plan.json`` in, ``observed.json`` out).
"""

from __future__ import annotations

import json

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge


@cocotb.test()
async def replay(dut) -> None:
    """Drive all edges from plan.json cycle by cycle; record writes and reads."""
    with open("plan.json") as f:
        plan = json.load(f)
    edges = plan["edges"]
    last = plan["last_cycle"] + 4
    h = {}
    for e in edges:
        h[e["sig"]] = {k: getattr(dut, f"{e['sig']}_{k}")
                       for k in ("dout", "empty_n", "read", "din", "write", "full_n")}
    head = {e["sig"]: 0 for e in edges}
    nwr = {e["sig"]: 0 for e in edges}
    obs = {e["sig"]: {"tokens": [], "cycles": [], "reads": []} for e in edges}
    cocotb.start_soon(Clock(dut.ap_clk, 10, unit="ns").start())
    dut.ap_rst.value = 1
    for e in edges:
        h[e["sig"]]["empty_n"].value = 0
        h[e["sig"]]["dout"].value = 0
        h[e["sig"]]["full_n"].value = 1
    await ClockCycles(dut.ap_clk, 2)
    dut.ap_rst.value = 0
    for t in range(last + 1):
        for e in edges:
            s, hd = e["sig"], h[e["sig"]]
            i = head[s]
            vis = i < len(e["tokens"]) and e["writes"][i] + 1 <= t
            hd["empty_n"].value = int(vis)
            hd["dout"].value = e["tokens"][i] if vis else 0
            n = nwr[s]
            freed = sum(1 for r in e["reads"][:n] if r + 1 <= t)
            hd["full_n"].value = int(n - freed < e["depth"])
        await ReadOnly()
        for e in edges:
            s, hd, o = e["sig"], h[e["sig"]], obs[e["sig"]]
            if int(hd["write"].value) and int(hd["full_n"].value):
                o["tokens"].append(int(hd["din"].value))
                o["cycles"].append(t)
                nwr[s] += 1
            if int(hd["read"].value) and int(hd["empty_n"].value):
                o["reads"].append(t)
                head[s] += 1
        await RisingEdge(dut.ap_clk)
    with open("observed.json", "w") as f:
        json.dump(obs, f)
