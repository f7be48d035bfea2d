"""A simulated hardware as flat ``KEY → value`` items (the keys of ``ir.HW_KEYS``).

``samfuse hw`` prints these items, and a study stores a hardware read from a file as their
canonical JSON, so a run carries its machine with it (a Dask worker needs no copy of the
file) and its cache key changes whenever a number of the machine does.
"""

from __future__ import annotations

import json
from typing import Any

from ir import HW_KEYS, Hardware, load_hw

__all__ = ["hw_items", "hw_to_json", "hw_from_json", "hw_label"]


def hw_items(hw: Hardware) -> dict[str, Any]:
    """Every key of ``HW_KEYS`` (``dram.channels`` …) with its value, in that order, then
    the ``timing.<primitive>.<knob>`` keys the hardware sets."""
    nested = hw.to_dict()
    out = {}
    for key in HW_KEYS:
        if "<" in key:  # a pattern (timing.<primitive>.latency): its set keys follow
            continue
        head, _, tail = key.partition(".")
        out[key] = nested[head][tail] if tail else nested[head]
    out.update(hw.timing.flat())
    return out


def hw_to_json(hw: Hardware) -> str:
    return json.dumps(hw_items(hw), sort_keys=True)


def hw_from_json(text: str) -> Hardware:
    """The inverse of :func:`hw_to_json`: every key overrides the ``ideal`` preset."""
    return load_hw("ideal", json.loads(text))


def hw_label(value: str) -> str:
    """What a table shows for a stored hardware value: a preset's name, or the ``name`` of
    a hardware stored as JSON."""
    return json.loads(value)["name"] if value.startswith("{") else value
