"""``samfuse hw`` and the ``--hw``/``--hw-set``/``--depth`` options of ``sim``, ``cosim``
and ``model``.

Every number of the simulated machine is documented once, in ``ir.HW_KEYS``; this command
prints it, so what a user can set and what it means never drift apart.
"""

from __future__ import annotations

import argparse
import dataclasses

from ir import (
    HW_KEYS,
    HW_PRESETS,
    MAX_DEPTH,
    NODE_DEFAULTS,
    FifoSpec,
    Hardware,
    HwError,
    hw_key_doc,
    load_hw,
)

from ..runs._hw_spec import hw_items

__all__ = ["add_hw_parser", "add_hw_options", "hw_from_args", "check_overrides_apply",
           "describe_hw", "list_presets", "depth_arg", "add_depth_option", "depth_and_hw"]


def add_hw_options(p: argparse.ArgumentParser, default: str) -> None:
    """``--hw NAME|FILE`` (default ``default``) and repeatable ``--hw-set KEY=VALUE``."""
    p.add_argument("--hw", default=default, metavar="NAME|FILE",
                   help=f"simulated hardware: a preset ({', '.join(HW_PRESETS)}) or a YAML "
                   f"file (default {default}; 'samfuse hw' lists them)")
    p.add_argument("--hw-set", action="append", metavar="KEY=VALUE",
                   help="override one hardware key, e.g. dram.latency_cycles=100 "
                   "(repeatable; 'samfuse hw NAME' lists the keys)")


def hw_from_args(args: argparse.Namespace) -> Hardware:
    """The hardware the options name; a bad name, file or override raises ``ir.HwError``,
    and so does an override that would change nothing (``check_overrides_apply``)."""
    hw = load_hw(args.hw, args.hw_set)
    check_overrides_apply(hw, args.hw_set)
    return hw


def check_overrides_apply(hw: Hardware, overrides: list[str] | None) -> None:
    """Refuse ``--hw-set dram.KEY=…`` on a hardware without memory: the key would change
    nothing, and a run that silently ignores what it was asked to vary misleads."""
    dead = [item for item in overrides or ()
            if item.partition("=")[0].strip().startswith("dram.")
            and item.partition("=")[0].strip() != "dram.enabled"]
    if dead and not hw.memory:
        raise HwError(f"--hw-set {dead[0]} changes nothing: hardware {hw.name!r} has no "
                      "memory system (dram.enabled is false); give a preset with "
                      "memory, e.g. --hw hbm2-u280")


def depth_arg(text: str) -> int | None | str:
    """An argparse type for ``--depth``: an int >= 1, ``inf`` (``None``, unbounded) or
    ``graph`` (the depths compiled into the graph)."""
    if text == "graph":
        return "graph"
    if text.lower() in ("inf", "none", "unbounded"):
        return None
    if text.isdigit() and 1 <= int(text) <= MAX_DEPTH:
        return int(text)
    raise argparse.ArgumentTypeError(f"depth {text!r}: expected an int >= 1, 'inf' or 'graph' "
                                     f"(a FIFO holds at most {MAX_DEPTH:,} tokens)")


def add_depth_option(p: argparse.ArgumentParser) -> None:
    """``--depth N|inf|graph``; left out, the hardware's ``fifo.depth`` decides."""
    p.add_argument("--depth", type=depth_arg, default=argparse.SUPPRESS, metavar="N|inf|graph",
                   help="FIFO depth of every edge, the lanes' output buffers included: N, "
                   "inf (unbounded) or graph (the compiled depths); default: the hardware's "
                   "fifo.depth (graph on every preset but fuseflow and comal-hbm)")


def depth_and_hw(args: argparse.Namespace) -> tuple[int | None | str, Hardware]:
    """The run's depth and hardware (docs/timing.md, "Which FIFO depth a run uses"): a
    given ``--depth`` wins over ``fifo.depth``; ``--depth graph`` keeps the compiled
    depths even on a hardware that sets one."""
    hw = hw_from_args(args)
    depth = getattr(args, "depth", "graph")
    if depth == "graph" and hasattr(args, "depth"):
        hw = dataclasses.replace(hw, fifo=FifoSpec())
    return depth, hw


def add_hw_parser(sub: argparse._SubParsersAction) -> None:
    h = sub.add_parser("hw", help="list the hardware presets, or show one with every key")
    h.add_argument("name", nargs="?", metavar="NAME|FILE",
                   help="a preset or a hardware YAML file to show in full")
    h.add_argument("--hw-set", action="append", metavar="KEY=VALUE",
                   help="show the hardware with this override applied (repeatable)")
    h.set_defaults(func=cmd_hw)


def cmd_hw(args: argparse.Namespace) -> int:
    if args.name is None and not args.hw_set:
        print("\n".join(list_presets()))
    else:
        hw = load_hw(args.name or "ideal", args.hw_set)
        check_overrides_apply(hw, args.hw_set)
        print("\n".join(describe_hw(hw)))
    return 0


def _channel_gbps(hw: Hardware) -> float:
    return hw.dram.bytes_per_cycle * hw.clock_mhz * 1e6 / 1e9


def _bandwidth(hw: Hardware) -> str:
    if not hw.memory:
        return "no memory cost"
    return (f"{hw.dram.channels} × {_channel_gbps(hw):.1f} GB/s = {hw.peak_gbps():.1f} GB/s,"
            f" latency {hw.dram.latency_cycles} cycles "
            f"({hw.dram.latency_cycles / hw.clock_mhz * 1e3:.0f} ns)")


def _fifos(hw: Hardware) -> str:
    d = hw.fifo.depth
    text = {"graph": "FIFOs as compiled", "inf": "FIFOs unbounded"}.get(str(d), f"FIFOs {d} deep")
    return text if hw.fifo.latency == 1 else f"{text}, read latency {hw.fifo.latency}"


def list_presets() -> list[str]:
    """One line per preset: name, channels × GB/s, latency, FIFO depth, source."""
    hws = [load_hw(name) for name in HW_PRESETS]
    name_w = max(len(h.name) for h in hws)
    bw_w = max(len(_bandwidth(h)) for h in hws)
    fifo_w = max(len(_fifos(h)) for h in hws)
    return [f"{h.name:<{name_w}}  {_bandwidth(h):<{bw_w}}  {_fifos(h):<{fifo_w}}  {h.source}"
            for h in hws]


def describe_hw(hw: Hardware) -> list[str]:
    """Every key with its value, unit and meaning, after a line with the peak bandwidth."""
    d = hw.dram
    head = f"{hw.name}: " + (f"peak {hw.peak_gbps():.1f} GB/s ({d.channels} channels × "
                             f"{_channel_gbps(hw):.1f} GB/s at {hw.clock_mhz:g} MHz), latency "
                             f"{d.latency_cycles} cycles" if hw.memory else "no memory cost") \
        + f", {_fifos(hw)}"
    items = hw_items(hw)
    key_w = max(len(k) for k in (*items, *HW_KEYS))
    val_w = max(len(_show(v)) for k, v in items.items() if k != "source")
    rows = [head, f"{'key':<{key_w}}  {'value':<{val_w}}  {'unit':<8} meaning"]
    for key, value in items.items():
        _, unit, meaning = hw_key_doc(key)
        rows.append(f"{key:<{key_w}}  {_show(value):<{val_w}}  {unit:<8} {meaning}")
    for key in (k for k in HW_KEYS if "<" in k):  # the timing patterns, with defaults
        _, unit, meaning = HW_KEYS[key]
        default = NODE_DEFAULTS[key.rsplit(".", 1)[1]]
        rows.append(f"{key:<{key_w}}  {default:<{val_w}}  {unit:<8} {meaning}")
    return [r.rstrip() for r in rows]


def _show(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
