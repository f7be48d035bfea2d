"""cocotb whole-graph bench: reset, run the generated top until ``ap_done``, report cycles.

Works on any top with the samfuse port convention (``ap_clk``, ``ap_rst``, ``ap_done``,
``cycles``), including RTL exported by Vitis HLS from the generated C++. The writers' dumps
(in the working directory) carry the recorded output; this bench writes ``result.json``
(with the memory nodes' ``mem_stall`` counters named in ``$SAMFUSE_MEM_NODES`` and the
sparse accumulators' ``peak`` entry counts at the instance paths in ``$SAMFUSE_ACC_NODES``
and the on-chip buffers' statistics from the instances in ``$SAMFUSE_BUF_NODES``).

``ap_done`` and ``cycles`` are read once the time step has settled (``ReadOnly``): a rise
of ``ap_done`` that is gone by then is a delta-cycle glitch of a combinational ``ap_done``
(registers changing at one edge in some order), not the end of the run, and fails the
bench rather than recording a cycle count the hardware never reaches.
"""

from __future__ import annotations

import functools
import json
import os
import time

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, First, ReadOnly, RisingEdge, Timer


@cocotb.test()
async def run_graph(dut) -> None:
    """Reset two cycles, release, wait for ap_done (bounded), record the cycle count."""
    max_cycles = int(os.environ.get("SAMFUSE_MAX_CYCLES", "1000000"))
    cocotb.start_soon(Clock(dut.ap_clk, 10, unit="ns").start())
    dut.ap_rst.value = 1
    await ClockCycles(dut.ap_clk, 2)
    dut.ap_rst.value = 0
    start = time.perf_counter()
    await ReadOnly()
    idle = None
    if not int(dut.ap_done.value):
        idle = await _wait_done(dut, max_cycles,
                                int(os.environ.get("SAMFUSE_IDLE_CYCLES", "0")))
        rose = int(dut.ap_done.value)
        await ReadOnly()
        assert not rose or int(dut.ap_done.value), (
            "ap_done glitched high for a delta cycle (a combinational done from registers "
            "that change at the same edge); the top must drive a glitch-free ap_done")
    wall = time.perf_counter() - start
    done = int(dut.ap_done.value)
    cycles = int(dut.cycles.value)
    # memory system: each memory node's simulation-only stall counter, by instance name
    stall = {node: int(getattr(dut, inst).mem_stall.value) for node, inst in
             json.loads(os.environ.get("SAMFUSE_MEM_NODES", "{}")).items()}
    # on-chip buffer: each sparse accumulator's simulation-only peak entry count
    # (a dotted path: spacc2 and spacc3 keep it in their core instance)
    peaks = {node: int(functools.reduce(getattr, path.split("."), dut).peak.value)
             for node, path in json.loads(os.environ.get("SAMFUSE_ACC_NODES", "{}")).items()}
    # on-chip buffers: each one's ready cycle of its fill, reads and cycles lost to ports
    buffers = {name: [int(getattr(getattr(dut, inst), sig).value)
                      for sig in ("filled_r", "reads", "conflict")]
               for name, inst in json.loads(os.environ.get("SAMFUSE_BUF_NODES", "{}")).items()}
    with open("result.json", "w") as f:
        json.dump({"done": bool(done), "cycles": cycles, "wall_seconds": wall,
                   "mem_stall": stall, "acc_peaks": peaks, "buffers": buffers,
                   "deadlock": idle}, f)
    assert done or idle is not None, (f"no ap_done within {max_cycles} cycles (deadlock "
                                      "or a too-small bound)")


async def _wait_done(dut, max_cycles: int, window: int) -> list[int] | None:
    """Wait for ``ap_done`` (at most ``max_cycles``). With a ``window`` and the top's
    ``samfuse_moves`` counter, stop once no FIFO was written for a whole window: the run
    is deadlocked. Returns ``[first idle cycle, window]`` then, else None."""
    moves = getattr(dut, "samfuse_moves", None) if window else None
    if moves is None:  # a top without the counter (Vitis HLS export): the cycle bound
        await First(RisingEdge(dut.ap_done), Timer(10 * (max_cycles + 2), unit="ns"))
        return None
    waited, last = 0, int(moves.value)
    while waited < max_cycles + 2:
        step = min(window, max_cycles + 2 - waited)
        await First(RisingEdge(dut.ap_done), ClockCycles(dut.ap_clk, step))
        if int(dut.ap_done.value):
            return None
        waited += step
        now = int(moves.value)
        if now == last:
            return [waited - step, window]
        last = now
    return None
