"""Which input arrays live in on-chip buffers (docs/timing.md, "On-chip buffers").

A graph on hardware with memory reads its inputs' arrays from DRAM; an array it re-reads
or gathers (a dense operand reached through a locate, a small vector, a weight row) moves
many times the bytes it holds, and each gather is a round trip. A buffer loads the array
once and serves its reads on chip. The choice (:func:`buffer_graph`):

- ``auto``: every input array whose expected DRAM bytes (the heuristic's per-port
  pricing, ``_cost_memory``) exceed its fill by more than :data:`REREAD_MARGIN`, greedily
  by bytes saved, within ``onchip.bytes`` left after the accumulators' allocation (their
  dense capacity, as the RTL and HLS allocate it) and the lane buffers;
- ``none``: no buffer (the graph as compiled);
- a list of ``TENSOR`` (every array it stores) or ``TENSOR.ARRAY`` (``X.vals``,
  ``A.crd1``): those, when the graph reads them; buffers that do not fit are an error.

On ideal memory nothing changes: there is no DRAM to save.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ir import (
    ENTRY_BYTES,
    LANE_MERGES,
    WORD_BYTES,
    Graph,
    GraphError,
    Hardware,
    buffered_arrays,
    elaborate,
    memory_ports,
    onchip_buffers,
    stored_arrays,
)

from ._cost import estimate, grid_shape
from ._errors import CompileError
from ._order_cost import input_stats

__all__ = ["BUFFER_MODES", "REREAD_MARGIN", "BufferChoice", "parse_buffer", "buffer_graph",
           "check_buffer_names"]

#: the choices that are not a list of names
BUFFER_MODES = ("auto", "none")
#: ``auto`` buffers an array whose ports are expected to move more than (1 + this) times
#: the bytes of its fill: it is re-read or gathered, not streamed once
REREAD_MARGIN = 0.25
#: a choice: ``"auto"``, ``"none"`` or the names of ``TENSOR`` / ``TENSOR.ARRAY``
BufferChoice = str | tuple[str, ...]


def parse_buffer(value: Any, where: str = "buffer") -> BufferChoice:
    """A schedule's or the CLI's ``buffer``: ``auto``, ``none``, a list of names or one
    comma-separated string of them; anything else is one error line."""
    if isinstance(value, str):
        if value.strip() in BUFFER_MODES:
            return value.strip()
        value = [p for p in value.replace(" ", "").split(",") if p]
    if not isinstance(value, (list, tuple)) or not value or \
            not all(isinstance(v, str) and v and v.count(".") <= 1 for v in value):
        raise CompileError(f"{where} {value!r}: expected auto, none, or a list of tensors "
                           "or tensor.array names such as [X, A.crd1]")
    return tuple(value)


def check_buffer_names(names: Sequence[str], tensors: Mapping[str, Any],
                       where: str = "buffer") -> None:
    """Every named tensor exists and is read; a named array is one it stores."""
    for name in names:
        tensor, _, array = name.partition(".")
        spec = tensors.get(tensor)
        if spec is None:
            raise CompileError(f"{where}: {tensor!r} is not a tensor of the program; "
                               f"tensors: {', '.join(sorted(tensors))}")
        if array and hasattr(spec, "format") and hasattr(spec, "role") and \
                array not in stored_arrays(spec):
            raise CompileError(f"{where}: {name!r}: tensor {tensor!r} stores "
                               f"{', '.join(stored_arrays(spec))}")


def buffer_graph(graph: Graph, hw: Hardware | None, choice: BufferChoice,
                 stats: Mapping[str, Any] | None = None) -> Graph:
    """``graph`` with the buffers ``choice`` selects on ``hw`` (module docstring);
    ``stats``: the inputs' statistics for ``auto`` (as :func:`compiler.estimate` takes
    them; missing inputs are priced at the heuristic's default density)."""
    if hw is None or not hw.memory or choice == "none":
        return graph
    if choice == "auto":
        chosen = _auto(graph, hw, stats or {})
    else:
        chosen = _named(graph, choice)
    if not chosen:
        return graph
    out = graph.with_buffers({t: tuple(a) for t, a in chosen.items()})
    try:
        elaborate(out, hw)  # forced buffers that cannot fit: the one error naming them
    except GraphError as exc:
        raise CompileError(str(exc)) from None
    return out


def _named(graph: Graph, names: Iterable[str]) -> dict[str, list[str]]:
    chosen: dict[str, list[str]] = {}
    for name in names:
        tensor, _, array = name.partition(".")
        spec = graph.tensors.get(tensor)
        if spec is None or spec.role != "input":
            continue  # another region's tensor
        arrays = stored_arrays(spec)
        if array and array not in arrays:
            raise CompileError(f"buffer {name!r}: tensor {tensor!r} stores "
                               f"{', '.join(arrays)}")
        keep = chosen.setdefault(tensor, list(buffered_arrays(spec)))
        keep += [a for a in ([array] if array else arrays) if a not in keep]
    return chosen


def _auto(graph: Graph, hw: Hardware, stats: Mapping[str, Any]) -> dict[str, list[str]]:
    """Arrays re-read or gathered, greedily by DRAM bytes saved, within the capacity."""
    known = {n: stats[n] if n in stats else
             input_stats(None, grid_shape(t), t.format, f"graph {graph.name!r}", n)
             for n, t in graph.tensors.items() if t.role == "input"}
    est = estimate(graph, known, hw)
    lb, wpl = hw.dram.line_bytes, hw.words_per_line()
    moved: dict[tuple[str, str], float] = {}
    words: dict[tuple[str, str], float] = {}
    for spec in memory_ports(graph, hw):
        if spec.write or spec.buffer is not None:
            continue
        key = (spec.tensor, spec.array_name)
        cost = est.port_costs.get((spec.node, spec.array))
        acc = est.ports.get((spec.node, spec.array))
        if cost is None or acc is None:
            continue
        moved[key] = moved.get(key, 0.0) + cost.bytes(hw)
        words[key] = max(words.get(key, 0.0), acc.array_words)
    gains = []
    for key, dram in moved.items():
        fill = math.ceil(words[key] / wpl) * lb
        if dram > (1.0 + REREAD_MARGIN) * fill:
            gains.append((dram - fill, key))
    left = hw.onchip.bytes - _allocated(graph, hw)
    capacity = _capacities(graph, hw)
    chosen: dict[str, list[str]] = {}
    for _, (tensor, array) in sorted(gains, key=lambda g: (-g[0], g[1])):
        need = capacity[(tensor, array)]
        if need <= left:
            left -= need
            chosen.setdefault(tensor, list(buffered_arrays(graph.tensors[tensor]))).append(
                array)
    return chosen


def _capacities(graph: Graph, hw: Hardware) -> dict[tuple[str, str], int]:
    """Bytes each input array's buffer would take (``ir.onchip_buffers``' capacity)."""
    every = graph.with_buffers({n: True for n, t in graph.tensors.items()
                                if t.role == "input"})
    return {(b.tensor, b.name.split(".", 1)[1]): b.bytes for b in onchip_buffers(every, hw)}


def _allocated(graph: Graph, hw: Hardware) -> int:
    """On-chip bytes already taken: the accumulators at their dense capacity, the lane
    buffers, the graph's own buffers."""
    elab = elaborate(graph, hw)
    accs = sum(ENTRY_BYTES[graph.nodes[nid].op] * math.prod(n.acc_bounds)
               for nid, n in elab.nodes.items() if graph.nodes[nid].op in ENTRY_BYTES)
    lanes = sum(e.depth * WORD_BYTES for e in graph.edges
                if e.depth is not None and graph.nodes[e.dst_node].op in LANE_MERGES)
    return accs + lanes + sum(b.bytes for b in elab.buffers)
