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
from dataclasses import replace
from typing import Any

from ir import (
    BUFFER_MODES,
    ENTRY_BYTES,
    LANE_MERGES,
    WORD_BYTES,
    Graph,
    GraphError,
    Hardware,
    buffered_arrays,
    check_buffer,
    elaborate,
    memory_ports,
    onchip_buffers,
    stored_arrays,
)

from ._cost import estimate, grid_shape
from ._errors import CompileError
from ._model import CompiledModel, CompiledRegion
from ._order_cost import input_stats

__all__ = ["BUFFER_MODES", "REREAD_MARGIN", "BufferChoice", "parse_buffer", "buffer_graph",
           "buffer_model", "check_buffer_names"]

#: ``auto`` buffers an array whose ports are expected to move more than (1 + this) times
#: the bytes of its fill: it is re-read or gathered, not streamed once
REREAD_MARGIN = 0.25
#: a choice: ``"auto"``, ``"none"`` or the names of ``TENSOR`` / ``TENSOR.ARRAY``
BufferChoice = str | tuple[str, ...]


def parse_buffer(value: Any, where: str = "--buffer") -> BufferChoice:
    """A ``buffer`` choice (``ir.check_buffer``): ``auto``, ``none`` or names."""
    return check_buffer(where, value)


def check_buffer_names(names: Sequence[str], tensors: Iterable[str],
                       where: str = "buffer") -> None:
    """Every named tensor is one of ``tensors`` (a program's, or a graph's inputs)."""
    known = set(tensors)
    for name in names:
        tensor = name.partition(".")[0]
        if tensor not in known:
            raise CompileError(f"{where}: {tensor!r} is not one of the tensors it can "
                               f"buffer: {', '.join(sorted(known))}")


def buffer_model(compiled: CompiledModel, hw: Hardware | None,
                 default: BufferChoice | None = None,
                 stats: Mapping[str, Any] | None = None) -> CompiledModel:
    """Every kernel of ``compiled`` with its region's buffers on ``hw``: the region's
    ``buffer``, else the schedule's, else ``default``, else none. Named tensors are the
    program's (a kernel's second view of a tensor is buffered with it); ``stats``: the
    tensors' data or statistics, for ``auto``."""
    sched = compiled.schedule
    own = {r.name: r.buffer for r in sched.regions}
    program_tensors = set(compiled.program.tensors)
    regions = []
    for reg in compiled.regions:
        choice = own.get(reg.name) or sched.buffer or default or "none"
        where = f"region {reg.name!r}: buffer"
        if not isinstance(choice, str):
            check_buffer_names(choice, program_tensors, where)
        kernels = []
        for k in reg.kernels:
            names = choice if isinstance(choice, str) else tuple(
                f"{t}{name[len(k.source(t)):]}" for name in choice for t in k.inputs
                if name.partition(".")[0] == k.source(t))
            known = {t: stats[k.source(t)] for t in k.inputs if k.source(t) in (stats or {})}
            graph = buffer_graph(k.graph, hw, names, known) if names else k.graph
            kernels.append(k if graph is k.graph else replace(k, graph=graph))
        regions.append(CompiledRegion(reg.name, reg.statements, kernels))
    return replace(compiled, regions=regions)


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
