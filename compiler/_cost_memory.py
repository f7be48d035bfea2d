"""What a memory port costs on a hardware description: DRAM lines, jumps, cycles.

The heuristic (``_cost.py``) describes each memory port of a graph by its expected
accesses (:class:`PortAccess`): how many words it reads, in how many *sweeps* (a sweep
is one pass in increasing address order; an outer loop over another tensor restarts
it), over what span of the array, in runs of how many consecutive words. This module
prices that description with the read window of docs/timing.md ("Memory"): a port that
continues its stream tops its window up to ``dram.outstanding`` lines ahead, a jump
fetches one line, a jump followed by the next line restarts a full window. The lines
touched in a sweep are modelled as independent (line gaps geometric), and the window as
a two-state chain: *jumping* (the last access was a jump) or *streaming*. Written arrays
are written once in order: ``⌈words / W⌉`` lines. A tensor in an on-chip buffer is
loaded once, every line of each of its arrays; a materialised intermediate (``onchip``)
moves none: its producer writes it on chip, its consumers find it there.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from ir import Graph, Hardware, memory_ports

__all__ = ["PortAccess", "PortCost", "port_cost", "loads_in_flight", "round_trip",
           "memory_cycles"]

#: steps of the window chain followed exactly before its stationary rates take over
_CHAIN_STEPS = 256


def loads_in_flight(hw: Hardware) -> int:
    """Gathers (window jumps) one port may have in flight: the hardware's load queue
    (``dram.load_queue``, docs/timing.md "Loads in flight"); at 1 a jump's firing waits
    for its line."""
    return max(1, hw.dram.load_queue)


def round_trip(hw: Hardware) -> int:
    """Cycles from issuing a lone line to using it: ``⌈line / B⌉ + latency``."""
    d = hw.dram
    return -(-d.line_bytes // d.bytes_per_cycle) + d.latency_cycles


@dataclass(frozen=True)
class PortAccess:
    """Expected accesses of one memory port.

    ``words``: words accessed (distinct consecutive accesses; a re-read of the word just
    read is free); ``array_words``: the array's length; ``sweeps``: passes in increasing
    address order; ``span_words``: the part of the array one sweep ranges over; ``run``:
    consecutive words per run (a fiber, a dense row, a block); ``write``: a written array
    (always one sequential pass); ``buffered``: the tensor lives in an on-chip buffer;
    ``onchip``: a materialised intermediate's buffer, written by an earlier kernel (no
    fill, no DRAM line);
    ``aligned``: runs start at multiples of their length (dense rows), not anywhere
    (fibers); ``again``: the same port when a sweep that re-reads the part of the
    array the previous one read finds it still in the window (that part fits in a
    line), which :func:`port_cost` weighs by how likely that is; ``rereads``: reads of
    a two-word pair (a scanner's ``seg[r]``, ``seg[r + 1]``) right after the same pair
    (a repeat below the reference re-opens the fiber): free in the window unless the
    pair straddles two lines.
    """

    node: str
    array: str
    words: float
    array_words: float
    sweeps: float = 1.0
    span_words: float | None = None
    run: float = 1.0
    write: bool = False
    buffered: bool = False
    aligned: bool = False
    again: PortAccess | None = None
    onchip: bool = False
    rereads: float = 0.0


@dataclass(frozen=True)
class PortCost:
    """Expected ``lines`` fetched or written and ``misses``: accesses outside the window
    (a jump, or the stream restarted at the window's end), each a round trip its node
    waits for."""

    lines: float
    misses: float

    def bytes(self, hw: Hardware) -> float:
        return self.lines * hw.dram.line_bytes


def port_cost(acc: PortAccess, hw: Hardware) -> PortCost:
    """Lines and jumps of ``acc`` on ``hw`` (module docstring)."""
    wpl = hw.words_per_line()
    n = max(1.0, math.ceil(acc.array_words / wpl)) if acc.array_words > 0 else 0.0
    if acc.words <= 0 or n == 0 or acc.onchip:
        return PortCost(0.0, 0.0)
    if acc.write:
        return PortCost(math.ceil(acc.words / wpl), 0.0)
    if acc.buffered or n == 1:  # loaded once; a one-line array stays in the window
        return PortCost(n, 0.0)
    k = max(1, hw.dram.outstanding)
    if acc.rereads > 0:  # a seg pair read again under a repeat
        once = port_cost(replace(acc, rereads=0.0), hw)
        lines, misses = _rereads(acc.rereads, 2.0, n, wpl, k, aligned=False)
        return PortCost(once.lines + lines, once.misses + misses)
    span = min(acc.array_words, acc.span_words or acc.array_words)
    if acc.again is not None:
        # the first sweep over each part continues the stream of the parts before it;
        # each further sweep re-reads the part just read
        first = port_cost(acc.again, hw)
        count = acc.sweeps * (1.0 - acc.again.words / acc.words)
        lines, misses = _rereads(count, span, n, wpl, k, acc.aligned, fiber=not acc.aligned)
        return PortCost(first.lines + lines, first.misses + misses)
    # a part of the array starts anywhere in a line
    span_lines = n if span >= acc.array_words else (span + wpl - 1) / wpl
    sweeps = max(1.0, acc.sweeps)
    run = max(1.0, acc.run)
    rho = min(1.0, acc.words / (sweeps * span))
    lines_per_run = _lines_spanned(run, wpl, acc.aligned)
    # a line is touched when one of the runs that reach it is visited
    tau = min(1.0, 1.0 - (1.0 - rho) ** (lines_per_run * wpl / run))
    q1 = max(tau, 1.0 - 1.0 / lines_per_run)  # the next touched line is the adjacent one
    touched = max(1.0, min(tau * span_lines, acc.words / sweeps * lines_per_run / run))
    first_streams = sweeps == 1.0 and tau >= 0.5
    # a window after a jump is cut short by the array's end
    k_jump = k - k * (k - 1) / (2 * n) if n > k else (n + 1) / 2
    lines, misses, streaming = _sweep(touched, q1, tau, k, first_streams, k_jump)
    waste = k - 1.0
    if span >= acc.array_words:  # a window's lead past the array's end is not fetched
        after_last = (1.0 - tau) / tau if tau > 0 else float(k)  # lines after the last
        lines -= streaming * max(0.0, k - 1.0 - after_last)
        waste = 0.0
    lines = max(touched, min(lines, span_lines + waste))
    return PortCost(sweeps * lines, sweeps * misses)


def _rereads(count: float, part: float, n: float, wpl: int, k: int, aligned: bool,
             fiber: bool = False) -> tuple[float, float]:
    """Lines and misses of ``count`` re-reads of a part of ``part`` consecutive words
    (a fiber, a dense row, a ``seg`` pair) right after it was read. The read left the
    window at the part's last line, so a part in one line is read again from the window;
    a part over ``L >= 2`` lines from line ``l`` jumps back to ``l`` (one line), restarts
    the stream at ``l + 1`` (``K`` lines ahead) and tops it up to the part's end: ``1 +
    min(n - 1 - l, K + L - 2)`` lines and two misses, ``l`` uniform where the part fits.
    ``fiber``: ``part`` is the mean of a Poisson length (a sparse fiber), so a part
    spans a line boundary with probability ``E[(len - 1)+] / W``, not ``(part - 1) / W``."""
    if count <= 0 or n <= 1:
        return 0.0, 0.0
    if fiber:
        over = (part - 1.0 + math.exp(-part)) / wpl  # expected line boundaries inside
        one, spanned = max(0.0, 1.0 - over), 1.0 + over
    else:
        one, spanned = _in_one_line(part, wpl, aligned), _lines_spanned(part, wpl, aligned)
    if one >= 1.0:
        return 0.0, 0.0
    spread = 1.0 - one  # P(the part spans two lines or more)
    lines = max(2.0, (spanned - one) / spread)
    lo, hi, cap = lines - 1.0, n - 1.0, k + lines - 2.0  # n - 1 - l over [lo, hi]
    if hi <= lo:
        ahead = lo
    elif hi <= cap:
        ahead = (lo + hi) / 2
    elif lo >= cap:
        ahead = cap
    else:
        ahead = ((cap * cap - lo * lo) / 2 + cap * (hi - cap)) / (hi - lo)
    return count * spread * (1.0 + ahead), 2.0 * count * spread


def _lines_spanned(run: float, wpl: int, aligned: bool) -> float:
    """Expected lines a run of ``run`` words spans: started anywhere in a line, or at a
    multiple of its (whole) length."""
    if aligned and float(run).is_integer():
        r = int(run)
        return (r + wpl - math.gcd(r, wpl)) / wpl
    return (run + wpl - 1) / wpl


def _in_one_line(span: float, wpl: int, aligned: bool) -> float:
    """Probability that ``span`` consecutive words lie in one line."""
    if aligned and float(span).is_integer() and span <= wpl:
        return 1.0 if wpl % int(span) == 0 else max(0.0, (wpl - span + 1) / wpl)
    return max(0.0, (wpl - span + 1) / wpl)


def _sweep(touched: float, q1: float, tau: float, k: int, first_streams: bool,
           k_jump: float) -> tuple[float, float, float]:
    """Expected (lines, misses, P(streaming at the end)) of a sweep over ``touched``
    lines: the first access
    streams (a full window) or jumps, then each next touched line lies ``g`` lines on,
    ``P(g = 1) = q1`` and geometric (``tau``) beyond."""
    far = 1.0 - q1  # P(g >= 2)
    # P(g > k) and E[g; 2 <= g <= k-1] for the geometric tail
    beyond_k = far * (1.0 - tau) ** (k - 1) if k >= 2 else 0.0
    p_k = far * tau * (1.0 - tau) ** (k - 2) if k >= 2 else 0.0
    mid = sum(g * far * tau * (1.0 - tau) ** (g - 2) for g in range(2, k))
    lines_s = q1 * 1 + mid + p_k * k + beyond_k * 1  # streaming: top up g lines
    lines_j = q1 * k_jump + far * 1                   # jumping: a window, or one line
    jump_s, jump_j = beyond_k + p_k, 1.0  # after a jump every next line misses
    to_s, to_j = q1, beyond_k
    if k == 1:  # a one-line window: every step fetches its line
        lines_s = lines_j = 1.0
    p_s = 1.0 if first_streams else 0.0
    lines = float(k) if first_streams else 1.0
    jumps = 1.0
    steps = max(0.0, touched - 1.0)
    exact = min(steps, float(_CHAIN_STEPS))
    done = 0.0
    while done < exact:
        part = min(1.0, exact - done)  # the last step of a fractional count: in part
        lines += part * (p_s * lines_s + (1 - p_s) * lines_j)
        jumps += part * (p_s * jump_s + (1 - p_s) * jump_j)
        p_s = p_s * (1 - to_j) + (1 - p_s) * to_s
        done += part
    rest = steps - exact
    if rest > 0:
        total = to_s + to_j
        pi_s = to_s / total if total > 0 else p_s
        lines += rest * (pi_s * lines_s + (1 - pi_s) * lines_j)
        jumps += rest * (pi_s * jump_s + (1 - pi_s) * jump_j)
        p_s = pi_s
    return lines, jumps, p_s


def memory_cycles(graph: Graph, node_busy: Mapping[str, float],
                  accesses: Mapping[tuple[str, str], PortAccess],
                  costs: Mapping[tuple[str, str], PortCost], hw: Hardware) -> float:
    """Expected cycles of a pipelined graph on memory: the slowest of

    - the busiest node plus the longest memory wait of any node: a round trip per
      window miss of its ports (``loads in flight`` of them overlapping), and the time
      its ports' lines take at ``outstanding`` lines per round trip beyond its own busy
      count (a node that waits starves the nodes downstream of it);
    - each channel: its ports' bytes at ``bytes_per_cycle``;

    - each on-chip buffer: its reads at ``onchip.ports`` a cycle;

    plus the pipeline's fill: a round trip per memory node on the longest chain of
    them (an address read before the next), one for the last write's ack, and the
    longest buffer fill (its lines at the channel's bandwidth: nothing reads a buffer
    before it is filled)."""
    rt, q, k = round_trip(hw), loads_in_flight(hw), max(1, hw.dram.outstanding)
    wait: dict[str, float] = {}
    stream: dict[str, float] = {}
    for key, cost in costs.items():
        nid = key[0]
        wait[nid] = wait.get(nid, 0.0) + cost.misses * rt / q
        # a buffered port's lines are its fill, loaded once, not waited for per line
        lines = 0.0 if accesses[key].buffered else cost.lines
        stream[nid] = stream.get(nid, 0.0) + lines * rt / k
    # a node waiting for memory starves every node downstream of it: its waits (misses,
    # and the lines its window cannot bring as fast as it consumes them) add to the
    # pipeline's busiest node, not only to its own count
    extra = [w + max(0.0, stream[n] - node_busy.get(n, 0.0)) for n, w in wait.items()]
    node = [max(node_busy.values(), default=0.0) + max(extra, default=0.0)]
    channel: dict[int, float] = {}
    reads: dict[int, float] = {}   # per on-chip buffer: its ports' accesses
    fills = [0.0]
    for spec in memory_ports(graph, hw):
        key = (spec.node, spec.array)
        cost = costs.get(key)
        if cost is None:
            continue
        if spec.buffer is not None:
            reads[spec.buffer] = reads.get(spec.buffer, 0.0) + accesses[key].words
            if accesses[key].buffered and cost.lines:
                fills.append(cost.lines * hw.dram.line_bytes / hw.dram.bytes_per_cycle + rt)
        channel[spec.channel] = channel.get(spec.channel, 0.0) + \
            cost.lines * hw.dram.line_bytes / hw.dram.bytes_per_cycle
    node += [r / hw.onchip.ports for r in reads.values()]
    readers = {n for (n, _), a in accesses.items() if not a.write}
    depth: dict[str, int] = {}
    for nid in graph.topological_order():
        before = [depth[e.src.rpartition(".")[0]] for e in graph.in_edges[nid].values()]
        depth[nid] = max(before, default=0) + (nid in readers)
    writes = any(a.write for a in accesses.values())
    fill = rt * (max(depth.values(), default=0) + writes) + max(fills)
    return max([*node, *channel.values()]) + fill
