"""A run's memory bursts as a trace Ramulator 2 replays (``--mem-trace``).

Format: Ramulator 2's ``LoadStoreTrace`` front end
(``src/ramulator/frontend/impl/memory_trace/loadstore_trace.cpp``): one request per line,
``LD 0x<hex byte address>`` for a read and ``ST 0x<hex byte address>`` for a write, no
blank or comment lines (its reader rejects any line without exactly two tokens), no
timestamps. Each burst becomes one line per ``dram.line_bytes`` line it moves, bursts in
issue order (cycle, then port number), so the trace keeps the order the channels saw.

Layout (docs/memory.md): every stored array (one tensor's ``seg`` or ``crd`` of a level,
or its ``vals``) gets a base address; arrays are placed in ``ir.memory_ports`` order by
first appearance (ports reading the same array share it), each at the next 4 KiB
boundary and taking whole lines (at least one) of its 4-byte words.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ir import WORD_BYTES, CompressedLevel, FiberTree, Graph, Hardware, memory_ports
from sim_models.python import MemRequest

from ._files import atomic_path

__all__ = ["ArrayPlacement", "array_layout", "trace_lines", "write_mem_trace", "PAGE_BYTES"]

#: every array starts on a page boundary, so arrays never share a DRAM row by accident
PAGE_BYTES = 4096

ArrayKey = tuple[str, int | None, str]  # tensor, level (None for vals), seg/crd/vals


@dataclass(frozen=True)
class ArrayPlacement:
    tensor: str
    level: int | None
    array: str
    base: int   # byte address of word 0
    words: int  # the array's length in 4-byte words


def _words(tree: FiberTree, level: int | None, array: str) -> int:
    if array == "vals":
        return tree.vals.size  # blocks are consecutive words
    lvl = tree.levels[level] if level is not None else None
    if not isinstance(lvl, CompressedLevel):
        raise ValueError(f"level {level} of a {tree.format.letters} tensor stores no "
                         f"{array!r} array")
    return len(lvl.seg if array == "seg" else lvl.crd)


def array_layout(graph: Graph, hw: Hardware, tensors: Mapping[str, FiberTree]
                 ) -> dict[ArrayKey, ArrayPlacement]:
    """Base address of every array a memory port touches; ``tensors`` holds the graph's
    inputs as bound and its outputs as written."""
    line = hw.dram.line_bytes
    out: dict[ArrayKey, ArrayPlacement] = {}
    free = 0
    for port in memory_ports(graph, hw):
        key = (port.tensor, port.level, port.array)
        if key in out:
            continue
        base = -(-free // PAGE_BYTES) * PAGE_BYTES
        words = _words(tensors[port.tensor], port.level, port.array)
        out[key] = ArrayPlacement(*key, base, words)
        free = base + max(1, -(-words * WORD_BYTES // line)) * line
    return out


def trace_lines(graph: Graph, hw: Hardware, requests: Iterable[MemRequest],
                tensors: Mapping[str, FiberTree]) -> Iterator[str]:
    """``LD 0x…``/``ST 0x…`` lines, one per line of every burst, in issue order."""
    layout = array_layout(graph, hw, tensors)
    ports = memory_ports(graph, hw)
    base = [layout[(p.tensor, p.level, p.array)].base for p in ports]
    line = hw.dram.line_bytes
    for req in sorted(requests, key=lambda r: (r.cycle, r.port)):
        op = "ST" if req.write else "LD"
        for k in range(req.line, req.line + req.lines):
            yield f"{op} 0x{base[req.port] + k * line:x}"


def write_mem_trace(path: str | Path, graph: Graph, hw: Hardware,
                    requests: Sequence[MemRequest] | None,
                    tensors: Mapping[str, FiberTree]) -> int:
    """Write the trace atomically; returns the number of requests (lines) written."""
    if requests is None:
        raise ValueError(f"no memory requests recorded for {graph.name!r} (run it with "
                         "mem_trace=True)")
    n = 0
    with atomic_path(Path(path)) as tmp, open(tmp, "w") as f:
        for text in trace_lines(graph, hw, requests, tensors):
            f.write(text + "\n")
            n += 1
    return n
