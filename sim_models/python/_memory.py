"""The memory system of docs/timing.md ("Memory") for the event-driven engine.

Actors run ahead on their own clocks, so a channel cannot serve bursts as they are
issued: an actor that is behind may still issue an earlier one. A burst is therefore only
*granted* (given its start, end and ready cycles) once no earlier burst can appear on its
channel: every other port's actor has a horizon past its issue cycle (``_safe``), or the
whole graph is blocked, in which case the earliest pending burst anywhere is the next one
(everything that happens later is caused by some grant, and so comes after it). That
argument needs every access to be made at its issue cycle's conditions alone: a
primitive blocked on output space has already issued its access, so it cannot later
issue one dated before the grant.

On-chip buffers (docs/timing.md, "On-chip buffers") are small servers granted the same
way: an access is served once no other port reading the buffer can still issue an earlier
one and the buffer's fill (a burst on its channel) is granted. A buffered access can be
usable in its issue cycle, so an actor waiting on one may issue again in that cycle.

Actors never wait inside an access: :meth:`ReadPort.read` returns a handle at once
(issuing bursts as the window rules say) and the actor blocks on the port until the
handle's burst is granted. Each access is made exactly once, so the window evolves in
the same order as in a lock-step simulator.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from ir import (
    BufferSpec,
    FiberTree,
    Graph,
    Hardware,
    MemPortSpec,
    memory_ports,
    onchip_buffers,
)

from ._results import BufferStats, MemRequest

__all__ = ["MemorySystem", "ReadPort", "WritePort", "BufferPort", "Burst", "Handle"]


class Burst:
    """Consecutive lines of one port, issued in one cycle; ``ready`` once granted."""

    __slots__ = ("cycle", "port", "seq", "first", "lines", "ready")

    def __init__(self, cycle: int, port: _Port, seq: int, first: int, lines: int) -> None:
        self.cycle, self.port, self.seq = cycle, port, seq
        self.first, self.lines = first, lines
        self.ready: list[int] | None = None

    def key(self) -> tuple[int, int, int]:
        return (self.cycle, self.port.spec.no, self.seq)

    def __lt__(self, other: Burst) -> bool:
        return self.key() < other.key()


#: a word's line within a burst: ready cycle = burst.ready[index] once granted
Handle = tuple[Burst, int]


class _Port:
    """What reads and writes share: the channel, the owner actor and the statistics."""

    def __init__(self, spec: MemPortSpec, system: MemorySystem) -> None:
        self.spec = spec
        self.system = system
        self.channel = system.channels[spec.channel]
        if spec.buffer is None:  # a buffered port issues no burst but its fill
            self.channel.ports.append(self)
        self.actor: Any = None
        self.waiting = False          # the actor is blocked on one of this port's bursts
        self.awaited: Burst | None = None
        self.pending = 0              # bursts issued and not yet granted
        self.bursts = 0
        self.lines = 0

    def issue(self, cycle: int, first: int, lines: int) -> Burst:
        sys = self.system
        burst = Burst(cycle, self, sys.next_seq(), first, lines)
        self.pending += 1
        self.bursts += 1
        self.lines += lines
        heapq.heappush(self.channel.queue, burst)
        return burst

    def wait(self, handle: Handle) -> int:
        """Ready cycle of ``handle``, or -1 after marking the actor as blocked on it."""
        burst, i = handle
        ready = burst.ready
        if ready is not None:
            return ready[i]
        self.awaited = burst
        return -1

    def horizon(self) -> tuple[int, int]:
        """(cycle, port) before which this port cannot issue another burst."""
        a = self.actor
        if a.finished:
            return (1 << 62, 0)
        t = a.t
        blocked = a.blocked
        if blocked is not None and blocked.__class__ in _PORTS \
                and blocked.awaited is not None:
            # an actor waiting for a burst issues nothing before that burst's data (a
            # buffered word can be usable in its issue cycle)
            after = blocked.awaited.cycle + (blocked.__class__ is not BufferPort)
            if after > t:
                t = after
        return (t, self.spec.no)


class ReadPort(_Port):
    """A prefetch window of at most ``outstanding`` lines over one stored array."""

    def __init__(self, spec: MemPortSpec, system: MemorySystem, words: int) -> None:
        super().__init__(spec, system)
        hw = system.hw
        self.wpl = hw.words_per_line()
        self.k = hw.dram.outstanding
        self.n = -(-words // self.wpl)
        self.lo = self.hi = 0
        self.where: dict[int, Handle] = {}

    def read(self, word: int, cycle: int) -> Handle:
        """Access ``word`` at issue cycle ``cycle``: bursts as the window rules say."""
        line = word // self.wpl
        if self.lo <= line < self.hi:
            if line > self.lo:
                where = self.where
                for old in range(self.lo, line):
                    del where[old]
                self.lo = line
                top = min(line + self.k, self.n)
                if top > self.hi:
                    self._fetch(cycle, self.hi, top)
        else:  # a miss: continuing the stream refills the window, a jump fetches one line
            end = min(line + self.k, self.n) if line == self.hi else line + 1
            self.where.clear()
            self.lo = line
            self._fetch(cycle, line, end)
        return self.where[line]

    def read_span(self, first: int, words: int, cycle: int) -> Handle:
        """Access ``words`` consecutive words (a block) at issue cycle ``cycle``: each
        line they span in turn, as single-word accesses would; the handle is the last
        line's (one port's lines are granted in order, so it is ready last)."""
        if words == 1:
            return self.read(first, cycle)
        wpl = self.wpl
        h = self.read(first, cycle)
        for line in range(first // wpl + 1, (first + words - 1) // wpl + 1):
            h = self.read(line * wpl, cycle)
        return h

    def _fetch(self, cycle: int, first: int, end: int) -> None:
        burst = self.issue(cycle, first, end - first)
        for i in range(end - first):
            self.where[first + i] = (burst, i)
        self.hi = end


class WritePort(_Port):
    """Write combining: a burst per filled line; ``outstanding`` unacknowledged at most."""

    def __init__(self, spec: MemPortSpec, system: MemorySystem) -> None:
        super().__init__(spec, system)
        self.wpl = system.hw.words_per_line()
        self.k = system.hw.dram.outstanding
        self.words = 0                # words in the line being filled
        self.lines_written = 0
        self.recent: deque[Burst] = deque(maxlen=self.k)  # the last K writes, oldest first

    def slot(self, done: bool, words: int = 1) -> int:
        """Cycle from which the next ``words`` words (a value or a block) may be written
        (0 if they issue no write; ``done``: the token is ``D``, which flushes a partial
        line), or -1 while the write they must wait for is not yet acknowledged: K writes
        back from the last line they complete, and never one they issue themselves."""
        lines = int(self.words > 0) if done else (self.words + words) // self.wpl
        if not lines:
            return 0
        n = self.lines_written
        must = n - 1 if lines > self.k else n + lines - 1 - self.k  # the write to wait for
        if must < 0:
            return 0
        return self.wait((self.recent[must - (n - len(self.recent))], 0))

    def add_word(self, cycle: int, words: int = 1) -> None:
        """Add ``words`` words (a value, or a block's elements); every line they fill is
        written in ``cycle``."""
        total = self.words + words
        for _ in range(total // self.wpl):
            self.words = self.wpl
            self.flush(cycle)
        self.words = total % self.wpl

    def flush(self, cycle: int) -> None:
        """Write the line being filled, if it holds any word."""
        if self.words:
            self.recent.append(self.issue(cycle, self.lines_written, 1))
            self.lines_written += 1
            self.words = 0

    def last_ack(self) -> int:
        """Acknowledgement of the port's last write (0 if none); one channel serves a port
        first come, first served, so its last write is acknowledged last."""
        return self.recent[-1].ready[0] if self.recent else 0


class BufferPort(_Port):
    """A port whose reads an on-chip buffer serves: one access per word read (a value,
    a block included, is one), no window, no burst."""

    def __init__(self, spec: MemPortSpec, system: MemorySystem, buffer: _Buffer) -> None:
        super().__init__(spec, system)
        self.buffer = buffer          # ``pending``: its fill, then its accesses not served
        buffer.readers.append(self)

    def read(self, word: int, cycle: int) -> Handle:
        access = Burst(cycle, self, self.system.next_seq(), word, 1)
        self.pending += 1
        heapq.heappush(self.buffer.queue, access)
        return (access, 0)

    def read_span(self, first: int, words: int, cycle: int) -> Handle:
        return self.read(first, cycle)


_PORTS = (ReadPort, WritePort, BufferPort)


class _Buffer:
    """One on-chip buffer: its fill (a burst of its first port) and its served accesses."""

    def __init__(self, spec: BufferSpec) -> None:
        self.spec = spec
        self.queue: list[Burst] = []
        self.readers: list[BufferPort] = []
        self.fill: Burst | None = None
        self.filled: int | None = 0   # None while the fill is not granted
        self.cycle = self.used = 0    # the latest service cycle and its accesses so far
        self.reads = self.conflict = 0

    def start_fill(self, port: BufferPort, lines: int) -> None:
        if lines:
            self.fill = port.issue(0, 0, lines)
            self.filled = None

    def safe(self, access: Burst) -> bool:
        """The fill is granted and no other reader can still issue an earlier access."""
        return self.filled is not None and _first(access, self.readers)

    def serve(self, access: Burst) -> None:
        a = access.cycle
        if a > self.cycle:
            self.cycle, self.used = a, 0
        if self.used == self.spec.ports:
            self.cycle, self.used = self.cycle + 1, 0
        self.used += 1
        ready = self.cycle + self.spec.latency
        access.ready = [ready if ready > self.filled else self.filled]
        self.reads += 1
        self.conflict += self.cycle - a
        access.port.pending -= 1

    def stats(self, line_bytes: int) -> BufferStats:
        lines = self.fill.lines if self.fill is not None else 0
        return BufferStats(lines * line_bytes, self.filled or 0, self.reads, self.conflict)


class _Channel:
    __slots__ = ("no", "bpc", "line_bytes", "latency", "free", "queue", "ports", "bytes")

    def __init__(self, no: int, hw: Hardware) -> None:
        self.no = no
        self.bpc = hw.dram.bytes_per_cycle
        self.line_bytes = hw.dram.line_bytes
        self.latency = hw.dram.latency_cycles
        self.free = 0
        self.queue: list[Burst] = []
        self.ports: list[_Port] = []
        self.bytes = 0

    def safe(self, burst: Burst) -> bool:
        """No other port of this channel can still issue a burst that goes first."""
        return _first(burst, self.ports)

    def grant(self, burst: Burst) -> None:
        b, lb, free = self.bpc, self.line_bytes, self.free
        start0 = burst.cycle * b
        ready = []
        for _ in range(burst.lines):
            start = start0 if start0 > free else free
            free = start + lb
            ready.append(-(-free // b) + self.latency)
        self.free = free
        self.bytes += lb * burst.lines
        burst.ready = ready


class MemorySystem:
    """The channels and ports of one run; :meth:`advance` grants what is safe."""

    def __init__(self, graph: Graph, hw: Hardware, tensors: Mapping[str, FiberTree],
                 wake: Callable[[Any], None], log: bool = False) -> None:
        self.hw = hw
        self.wake = wake
        self.channels = [_Channel(c, hw) for c in range(hw.dram.channels)]
        self.ports: dict[tuple[str, str], _Port] = {}
        self.log: list[MemRequest] | None = [] if log else None
        self._seq = 0
        specs = memory_ports(graph, hw)
        self.buffers = [_Buffer(b) for b in onchip_buffers(graph, hw, specs)]
        for spec in specs:
            if spec.write:
                port: _Port = WritePort(spec, self)
            elif spec.buffer is not None:
                buf = self.buffers[spec.buffer]
                port = BufferPort(spec, self, buf)
                if spec.no == buf.spec.fill_port and buf.spec.fills:
                    buf.start_fill(port, -(-_words(tensors[spec.tensor], spec)
                                           // hw.words_per_line()))
            else:
                port = ReadPort(spec, self, _words(tensors[spec.tensor], spec))
            self.ports[(spec.node, spec.array)] = port

    def port(self, node: str, array: str) -> Any:
        """The node's port on ``array`` (None when the array is not off-chip)."""
        return self.ports.get((node, array))

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def pending(self) -> bool:
        return any(ch.queue for ch in self.channels) or any(b.queue for b in self.buffers)

    def advance(self) -> None:
        """Grant every safe burst and buffer access; if none is, the earliest pending one
        (the graph is blocked, so nothing can issue before it), or, when that is an
        access waiting for its buffer's fill, the head of the fill's channel (cycle 0;
        what it unblocks happens from cycle 1)."""
        granted = False
        for ch in self.channels:
            q = ch.queue
            while q and ch.safe(q[0]):
                self._grant(ch, heapq.heappop(q))
                granted = True
        for buf in self.buffers:
            q = buf.queue
            while q and buf.safe(q[0]):
                self._serve(buf, heapq.heappop(q))
                granted = True
        if granted:
            return
        heads = [(c.queue[0].key(), c) for c in self.channels if c.queue] + \
                [(b.queue[0].key(), b) for b in self.buffers if b.queue]
        _, first = min(heads, key=lambda h: h[0])
        if first.__class__ is _Buffer:
            if first.filled is not None:
                self._serve(first, heapq.heappop(first.queue))
                return
            first = first.fill.port.channel
        self._grant(first, heapq.heappop(first.queue))

    def _serve(self, buf: _Buffer, access: Burst) -> None:
        buf.serve(access)
        self._done(access)

    def _grant(self, ch: _Channel, burst: Burst) -> None:
        ch.grant(burst)
        port = burst.port
        port.pending -= 1
        if port.__class__ is BufferPort and burst is port.buffer.fill:
            port.buffer.filled = burst.ready[-1]
        if self.log is not None:
            self.log.append(MemRequest(burst.cycle, port.spec.no, burst.first, burst.lines,
                                       port.spec.write))
        self._done(burst)

    def _done(self, item: Burst) -> None:
        """Wake the actor blocked on ``item``, now granted."""
        port = item.port
        if port.waiting and port.awaited is item:
            port.waiting = False
            port.awaited = None
            self.wake(port.actor)

    def finish(self) -> int:
        """Grant what is left (the last writes); the largest write acknowledgement."""
        while self.pending():
            self.advance()
        last = max((p.last_ack() for p in self.ports.values() if isinstance(p, WritePort)),
                   default=0)
        if self.log is not None:
            self.log.sort(key=lambda r: (r.cycle, r.port))
        return last

    def buffer_stats(self) -> dict[str, BufferStats]:
        lb = self.hw.dram.line_bytes
        return {b.spec.name: b.stats(lb) for b in self.buffers}

    def node_bytes(self) -> dict[str, tuple[int, int, int]]:
        """Per node: (read bytes, write bytes, bursts)."""
        out: dict[str, list[int]] = {}
        lb = self.hw.dram.line_bytes
        for (node, _), port in self.ports.items():
            acc = out.setdefault(node, [0, 0, 0])
            acc[1 if port.spec.write else 0] += port.lines * lb
            acc[2] += port.bursts
        return {n: (r, w, b) for n, (r, w, b) in out.items()}


def _first(item: Burst, ports: list) -> bool:
    """No port of ``ports`` but ``item``'s own can still issue one dated before it: each
    has one pending already (its later ones come after it) or a horizon past it."""
    key = (item.cycle, item.port.spec.no)
    for port in ports:
        if port is not item.port and not port.pending and port.horizon() <= key:
            return False
    return True


def _words(tree: FiberTree, spec: MemPortSpec) -> int:
    """Length in words of the array a read port streams."""
    if spec.array == "vals":
        return tree.vals.size  # a blocked tree's blocks are consecutive words
    level = tree.levels[spec.level]
    return len(level.seg if spec.array == "seg" else level.crd)

