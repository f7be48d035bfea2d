"""Block tokens in trace files (docs/blocks.md, "Block tokens"): the text keeps every
element's bits except a NaN's sign and payload, which trace text does not carry for
scalars either; comparing a trace with its own text must find no difference."""

from __future__ import annotations

import numpy as np

from ir import Block, Trace, compare_traces
from ir._trace import EdgeTrace


def _trace(tokens) -> Trace:
    t = Trace(graph="g")
    t.edges["v"] = EdgeTrace("v", "val", "float")
    for tok in tokens:
        t.edges["v"].append(tok, None)
    return t


def test_a_block_trace_equals_its_own_text_with_nan_payloads():
    neg_nan = np.array([0xFFC00000, 0x7F800001, 0x80000000, 0x3F800000],
                       dtype=np.uint32).view(np.float32)  # -nan, a signalling nan, -0.0, 1
    trace = _trace([Block(neg_nan), Block([np.inf, -np.inf, 0.0, 2.5])])
    back = Trace.from_text(trace.to_text())
    assert not compare_traces(trace, back, timed=False)


def test_blocks_still_differ_in_zero_signs_and_nan_positions():
    a = _trace([Block([np.nan, 0.0])])
    assert compare_traces(a, _trace([Block([np.nan, -0.0])]), timed=False)
    assert compare_traces(a, _trace([Block([0.0, np.nan])]), timed=False)
    assert compare_traces(a, _trace([Block([np.nan, 0.0, 0.0])]), timed=False)
