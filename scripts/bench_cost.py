#!/usr/bin/env python
"""How well the cost model prices the machine it runs on (issue 27, docs/cost.md).

Every region of every bundled model under every named schedule that compiles (unfused,
partial, full) runs once on the Python model at the test size (``small``) on ``--hw``
(default ``hbm2-u280``); each kernel is then priced by ``compiler.estimate`` and
``compiler.cycle_estimate`` on the same hardware, given the tensors it actually read.
Printed: per region the measured and estimated DRAM bytes and cycles, then the median
and worst relative errors. Simulations are cached in ``--cache`` (a pickle per model ×
schedule × hardware), so a change to the estimator re-prices without re-simulating.

``--orders`` prints, per GCN/GraphSAGE/BigBird kernel, the order the search picks on the
hardware, its simulated cycles, and the best simulated order among the candidates
(``--backend systemc``: on the SystemC model, each candidate but the two picks stopped at
``CAP_FACTOR`` × the best finished so far, which it then cannot be).

    .venv/bin/python scripts/bench_cost.py                   # the error table
    .venv/bin/python scripts/bench_cost.py --hw ideal        # the same on ideal memory
    .venv/bin/python scripts/bench_cost.py --orders          # the order table
    .venv/bin/python scripts/bench_cost.py --buffer auto     # with on-chip buffers
    .venv/bin/python scripts/bench_cost.py --orders --buffer auto  # orders, buffers priced
    .venv/bin/python scripts/bench_cost.py --orders --backend systemc  # on SystemC, capped
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import sys
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from compiler import (  # noqa: E402
    NAMED_SCHEDULES,
    CompileError,
    buffer_model,
    compile_model,
    cycle_estimate,
    estimate,
    from_torch,
    torch_inputs,
    torch_weights,
)
from compiler.models import MODELS  # noqa: E402
from cosim.runs._model_json import _as_stats  # noqa: E402
from cosim.runs._model_run import run_model  # noqa: E402
from ir import load_hw  # noqa: E402

SCHEDULES = ("unfused", "partial", "full")


def model_binds(name: str, config: str = "small", seed: int = 0) -> tuple[Any, dict]:
    """A bundled model's program and bound tensors, as ``samfuse model`` makes them."""
    cls = MODELS[name]
    model = cls.from_config(config, seed=seed).eval()
    example = model.example_inputs(seed=seed)
    program = from_torch(model, example, formats=model.sparse_formats)
    return program, {**torch_weights(model, program), **torch_inputs(program, example)}


def _cached(cache: Path, name: str, schedule: str, hw_name: str, buffer: str) -> Path:
    tail = "" if buffer == "none" else f".buffer-{buffer}"  # runs from before buffers
    return cache / f"{name}.{schedule}.{hw_name}{tail}.pkl"


def measure(name: str, schedule: str, hw_name: str, cache: Path, buffer: str = "none"
            ) -> list[dict] | None:
    """Per kernel: its graph, the trees it read and its measured cycles and bytes (cached);
    None when the schedule does not compile for the model. ``buffer``: the on-chip
    buffer choice (``samfuse model --buffer``)."""
    path = _cached(cache, name, schedule, hw_name, buffer)
    if path.is_file():
        return pickle.loads(path.read_bytes())
    program, binds = model_binds(name)
    try:
        compiled = compile_model(program, NAMED_SCHEDULES[schedule](program))
        compiled = buffer_model(compiled, load_hw(hw_name), buffer, binds)
    except CompileError as exc:
        print(f"# {name} {schedule}: does not compile ({str(exc).splitlines()[0]})")
        return None
    run = run_model(compiled, binds, backend="python", hw=load_hw(hw_name))
    rows = []
    for reg, rr in zip(compiled.regions, run.regions, strict=True):
        for k in reg.kernels:
            res = rr.results[k.target]
            rows.append({"region": reg.name, "kernel": k.target, "graph": k.graph,
                         "inputs": {t: _as_stats(run.memory[k.source(t)]) for t in k.inputs},
                         "cycles": res.cycles,
                         "read": sum(s.dram_read_bytes for s in res.nodes.values()),
                         "written": sum(s.dram_write_bytes for s in res.nodes.values()),
                         "nodes": {n: (s.dram_read_bytes, s.dram_write_bytes)
                                   for n, s in res.nodes.items()}})
    cache.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(rows))
    return rows


def _err(est: float, got: float) -> float:
    return abs(est - got) / got if got else (0.0 if not est else float("inf"))


def error_table(models: list[str], hw_name: str, cache: Path, verbose: bool,
                before: bool = False, schedules: tuple[str, ...] = SCHEDULES,
                cached: bool = False, buffer: str = "none") -> None:
    """``before``: price as the heuristic did before it took the hardware (words, the
    busiest node)."""
    hw = load_hw(hw_name)
    byte_errs, cycle_errs = [], []
    print("| model | schedule | region | bytes meas. | bytes est. | err % | cycles meas. "
          "| cycles est. | err % |\n|---|---|---|---:|---:|---:|---:|---:|---:|")
    for name in models:
        for schedule in schedules:
            if cached and not _cached(cache, name, schedule, hw_name, buffer).is_file():
                print(f"# {name} {schedule}: not in the cache, skipped (--cached)")
                continue
            rows = measure(name, schedule, hw_name, cache, buffer)
            if rows is None:
                continue
            regions: dict[str, list[float]] = {}
            for r in rows:
                est = estimate(r["graph"], r["inputs"], hw=hw)
                acc = regions.setdefault(r["region"], [0, 0.0, 0, 0.0])
                acc[0] += r["read"] + r["written"]
                acc[1] += est.bytes if before else est.dram_bytes
                acc[2] += r["cycles"]
                acc[3] += cycle_estimate(r["graph"], est, None if before else hw)
                if verbose:
                    _explain(r, est)
            for region, (b, eb, c, ec) in regions.items():
                be, ce = _err(eb, b), _err(ec, c)
                byte_errs.append(be)
                cycle_errs.append(ce)
                print(f"| {name} | {schedule} | {region} | {b:,} | {eb:,.0f} | {100 * be:.1f} "
                      f"| {c:,} | {ec:,.0f} | {100 * ce:.1f} |")
    print(f"\n{len(byte_errs)} regions on {hw_name}: DRAM bytes error median "
          f"{100 * statistics.median(byte_errs):.1f} %, worst {100 * max(byte_errs):.1f} %; "
          f"cycles error median {100 * statistics.median(cycle_errs):.1f} %, worst "
          f"{100 * max(cycle_errs):.1f} %")


def _explain(row: dict, est: Any) -> None:
    """Per memory node: measured against estimated bytes (``--verbose``)."""
    lb = 64
    by_node: dict[str, float] = {}
    for (nid, _), c in est.port_costs.items():
        by_node[nid] = by_node.get(nid, 0.0) + c.lines * lb
    for nid, (rd, wr) in row["nodes"].items():
        if rd or wr or by_node.get(nid):
            accs = [a for (n, _), a in est.ports.items() if n == nid]
            print(f"#   {row['region']}/{row['kernel']} {nid}: {rd + wr:,} vs "
                  f"{by_node.get(nid, 0.0):,.0f}  {accs}")


#: the models whose regions the order search must get right (issue 27)
ORDER_MODELS = ("gcn", "graphsage", "bigbird")
#: candidate orders simulated per kernel, in the search's order
MAX_ORDERS = 12
#: a candidate (other than the two picks) stops at this many times the best finished
#: order's cycles: it cannot be the best, and its exact cycles are not needed
CAP_FACTOR = 2


def simulate_capped(graph: Any, inputs: dict, hw: Any, backend: str = "python",
                    max_cycles: int = 0) -> int | None:
    """``graph``'s simulated cycles on ``backend``, or None when the run reached
    ``max_cycles`` unfinished (its cycles are at least that). 0 = no cap. A cap needs
    the SystemC model (cycle-exact with the Python one, which has no cap)."""
    if backend == "python":
        from sim_models.python import simulate
        return simulate(graph, inputs, hw=hw).cycles
    from cosim.backends._systemc import SystemCBackend, SystemCRun

    (res,) = SystemCBackend(max_cycles=max_cycles).run_batch(
        [SystemCRun(graph, inputs, hw=hw)])
    if isinstance(res, Exception):
        if max_cycles and "(limit)" in str(res):
            return None
        raise res
    return res.cycles


def capped_cycles(orders: list[str], must_finish: set[str], cycles_of: Any,
                  extra: dict[str, int], factor: float = CAP_FACTOR) -> dict[str, int | None]:
    """Simulate ``orders`` in turn: ``cycles_of(order, max_cycles)`` (0 = uncapped) plus
    ``extra[order]`` (the re-sort). The orders in ``must_finish`` run first and to the end;
    every other one stops at ``factor`` × the best total so far (None: capped, provably
    slower than the best)."""
    out: dict[str, int | None] = {}
    for order in sorted(orders, key=lambda o: o not in must_finish):  # stable
        best = min((c for c in out.values() if c is not None), default=None)
        cap = 0 if order in must_finish or best is None else \
            max(1, int(factor * best - extra[order]))
        sim = cycles_of(order, cap)
        out[order] = None if sim is None else sim + extra[order]
    return {o: out[o] for o in orders}


def order_table(models: list[str], hw_name: str, cache: Path,
                schedules: tuple[str, ...], buffer: str = "none",
                backend: str = "python") -> None:
    """Per kernel: the order the search picks priced on ``hw_name`` (and on ideal
    memory), each simulated on ``hw_name`` with the kernel's real inputs, against the
    best simulated candidate; each order's cycles include the re-sorting of the inputs
    it transposes, as the search prices it (the simulators bind the permuted copy before
    the run). ``buffer``: the on-chip buffers every order is priced and simulated with
    (``auto``: the compiler's rule per order). A kernel ``compile_expression`` cannot
    take alone (it reads one tensor in two orders) is searched and compiled as its
    region by the model compiler. ``backend="systemc"``: the candidates run on the
    SystemC model and every one but the two picks stops at ``CAP_FACTOR`` × the best
    finished so far (printed as ``> cap``)."""
    from compiler import buffer_graph, order_cost

    hw = load_hw(hw_name)
    print("| model | schedule | kernel | chosen on hw | cycles | chosen on ideal | cycles "
          "| best order | cycles | chosen/best | capped |\n"
          "|---|---|---|---|---:|---|---:|---|---:|---:|---|")
    ratios = []
    for name in models:
        for schedule in schedules:
            for row in measure(name, schedule, hw_name, cache, buffer) or []:
                try:
                    mine, ideal, cands, graph_of = _kernel_orders(row, hw, buffer)
                except CompileError:  # a tensor read in two orders: the region's views
                    mine, ideal, cands, graph_of = _region_orders(name, schedule, row, hw,
                                                                  buffer)
                orders = list(dict.fromkeys([*cands[:MAX_ORDERS], mine, ideal]))
                graphs = {o: graph_of(o) for o in orders}
                extra = {o: sum(order_cost(g, row["inputs"], hw).transposes.values())
                         for o, g in graphs.items()}  # the re-sort the search prices

                def run(order: str, cap: int, graphs: dict = graphs, row: dict = row
                        ) -> int | None:
                    graph = buffer_graph(graphs[order], hw, buffer, row["inputs"])
                    return simulate_capped(graph, row["inputs"], hw, backend, cap)

                cycles = capped_cycles(orders, {mine, ideal}, run, extra) \
                    if backend != "python" else \
                    {o: run(o, 0) + extra[o] for o in orders}
                done = {o: c for o, c in cycles.items() if c is not None}
                best = min(done, key=done.get)
                ratios.append(cycles[mine] / cycles[best])
                capped = ", ".join(f"{o} > {CAP_FACTOR}x" for o, c in cycles.items()
                                   if c is None)
                print(f"| {name} | {schedule} | {row['region']}/{row['kernel']} | {mine} | "
                      f"{cycles[mine]:,.0f} | {ideal} | {cycles[ideal]:,.0f} | {best} | "
                      f"{cycles[best]:,.0f} | {ratios[-1]:.2f} | {capped} |", flush=True)
    within = sum(r <= 1.10 for r in ratios)
    print(f"\n{within} of {len(ratios)} kernels within 10 % of the best simulated order; "
          f"worst {max(ratios):.2f}x")


#: (order picked on the hardware, on ideal memory, the costed candidates, order -> graph)
Orders = tuple[str, str, list[str], Any]


def _kernel_orders(row: dict, hw: Any, buffer: str) -> Orders:
    """The kernel's expression searched alone, given the tensors it read."""
    from compiler import compile_expression

    g = row["graph"]
    moved = g.meta.get("transposed", {})
    formats = {n: moved.get(n, {}).get("requested", t.format) for n, t in g.tensors.items()}
    shapes = {n: t.shape for n, t in g.tensors.items()}
    compiled = partial(compile_expression, g.meta["expression"], formats, shapes)
    on_hw = compiled(stats=row["inputs"], hw=hw, buffer=buffer)
    on_ideal = compiled(stats=row["inputs"])
    cands = [c["order"] for c in on_hw.meta["order_search"]["candidates"] if "cost" in c]
    return (",".join(on_hw.meta["order"]), ",".join(on_ideal.meta["order"]), cands,
            lambda order: compiled(order=order))


def _region_orders(name: str, schedule: str, row: dict, hw: Any, buffer: str) -> Orders:
    """The kernel's region searched by the model compiler (``region_orders``, as the
    tuner sees it), given the model's tensors and intermediates; each order compiled
    as the region's ``order``."""
    from dataclasses import replace

    from compiler import evaluate, region_orders

    program, binds = model_binds(name)
    sched = NAMED_SCHEDULES[schedule](program)
    reg = next(r for r in sched.regions if r.name == row["region"])
    stats = {**binds, **evaluate(program, binds)}
    on_hw = region_orders(program, reg.statements, stats=stats, hw=hw, buffer=buffer)
    on_ideal = region_orders(program, reg.statements, stats=stats)

    def graph_of(order: str) -> Any:
        given = replace(sched, regions=[replace(r, order=order.split(",")) if r is reg
                                        else r for r in sched.regions])
        compiled = compile_model(program, given)
        kernels = next(r for r in compiled.regions if r.name == reg.name).kernels
        return next(k.graph for k in kernels if k.target == row["kernel"])

    return (",".join(on_hw.chosen), ",".join(on_ideal.chosen),
            [",".join(o) for o in on_hw.orders], graph_of)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="gcn,graphsage,bigbird,autoencoder,gpt")
    ap.add_argument("--hw", default="hbm2-u280")
    ap.add_argument("--cache", default="/tmp/samfuse-bench-cost")
    ap.add_argument("--schedules", default=",".join(SCHEDULES))
    ap.add_argument("--verbose", action="store_true", help="per memory node")
    ap.add_argument("--orders", action="store_true", help="the order-search table")
    ap.add_argument("--cached", action="store_true",
                    help="only the model x schedule runs already in the cache")
    ap.add_argument("--buffer", default="none", choices=("none", "auto"),
                    help="on-chip buffers of the measured runs (default none)")
    ap.add_argument("--backend", default="python", choices=("python", "systemc"),
                    help="the order table's simulator (systemc: faster, and candidates "
                    f"stop at {CAP_FACTOR}x the best finished)")
    ap.add_argument("--before", action="store_true",
                    help="price without the hardware (words, busiest node), as before")
    args = ap.parse_args()
    models = args.models.split(",")
    if args.orders:
        order_table([m for m in models if m in ORDER_MODELS], args.hw, Path(args.cache),
                    tuple(s for s in args.schedules.split(",") if s != "full"), args.buffer,
                    args.backend)
        return
    error_table(models, args.hw, Path(args.cache), args.verbose, args.before,
                tuple(args.schedules.split(",")), args.cached, args.buffer)


if __name__ == "__main__":
    main()
