#!/usr/bin/env python
"""The FuseFlow "Measured" list for samfuse's models: compile time, simulated cycles
under each fusion schedule, and the FLOPs/bytes heuristic's error per region.

Three sections, each a Markdown table (``docs/results.md`` holds a full run):

1. **Compile time** of every model (GCN, GraphSAGE, SparseAutoencoder, BigBirdAttention,
   GPTDecoderLayer) at its evaluation size under ``unfused`` / ``partial``
   (``Schedule.by_scope``: one region per layer) / ``full`` (``Schedule.fused``): the
   frontend (torch.export + translation, warm process) separately from
   ``compiler.compile_model`` (best of ``--repeat``). ``--schedules`` may add
   ``epilogue`` (:func:`epilogue_schedule`: each contraction fused with its elementwise
   tail only, nothing inlined into a reduction).
2. **Simulated cycles**, bytes moved and firings of GCN and GraphSAGE on a Cora-like graph
   (``ir.datasets.cora_like``; features stored CSR) and of a BigBird attention block, on
   ``--backend``. Before a schedule runs, the heuristic (``compiler.estimate`` on every
   kernel graph, fed the numpy oracle's intermediates) predicts its FLOPs and stream
   tokens; the tokens predict the wall time (one firing per token, within ~20 % on these
   models), and a schedule predicted over ``--budget`` seconds is reported as skipped.
3. **Heuristic error** per region: estimated vs measured FLOPs and bytes
   (``cosim.model_counts``: traced Python runs, so at the small sizes).

``--programs`` adds the compile times of three hand-written einsum programs.

    .venv/bin/python scripts/bench_models.py --backend systemc            # docs/results.md
    .venv/bin/python scripts/bench_models.py --quick                      # < 1 min, tiny
    .venv/bin/python scripts/bench_models.py --models gcn --schedules unfused,partial
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from _bench_workloads import (  # noqa: E402
    COMPILE_CONFIGS,
    COMPILE_TARGET,
    EXPECTED,
    MODEL_NAMES,
    PER_KERNEL,
    RATE,
    SCHEDULES,
    SIM_MODELS,
    Workload,
    attention_core_workload,
    bigbird_workload,
    frontend,
    graph_workload,
    named_workload,
)

from compiler import (  # noqa: E402
    CompiledModel,
    compile_model,
    einsum_program,
    estimate,
    evaluate,
)
from ir import Program  # noqa: E402

# -- section 1: compile time -----------------------------------------------------------------

def compile_section(names: list[str], schedules: list[str], quick: bool, repeat: int
                    ) -> None:
    print("## Compile time\n")
    print(f"Frontend = torch.export + translation (warm process); compile = "
          f"`compile_model`, best of {repeat}; target < {COMPILE_TARGET * 1e3:.0f} ms.\n")
    print("| model | config | stmts | frontend ms | schedule | regions | kernels | nodes "
          "| orders tried | compile ms | < target |")
    print("|---|---|---:|---:|---|---:|---:|---:|---:|---:|---|")
    warm = named_workload("gcn", "small")  # pays torch.export's one-off start-up
    frontend(warm)
    for name in names:
        w = named_workload(name, "small" if quick else COMPILE_CONFIGS[name])
        prog, t_front = frontend(w)
        for sname in schedules:
            row = f"| {name} | {w.size} | {len(prog.statements)} | {t_front * 1e3:.0f} "
            try:
                best, cm = math.inf, None
                for _ in range(repeat):
                    start = time.perf_counter()
                    cm = compile_model(prog, SCHEDULES[sname](prog))
                    best = min(best, time.perf_counter() - start)
            except Exception as exc:  # noqa: BLE001 — reported, not fatal
                print(_cells(row + f"| {sname} ", f"compile failed: {_short(exc)}", 11))
                continue
            assert cm is not None
            kernels = [k for r in cm.regions for k in r.kernels]
            nodes = sum(len(k.graph.nodes) for k in kernels)
            tried = sum(len(k.tried) + k.costed for k in kernels)
            ok = "yes" if best < COMPILE_TARGET else "**no**"
            print(row + f"| {sname} | {len(cm.regions)} | {len(kernels)} | {nodes} | "
                  f"{tried} | {best * 1e3:.1f} | {ok} |")
    print()


# -- section 2: simulated cycles -------------------------------------------------------------

@dataclass
class Prediction:
    """The heuristic's view of a compiled model before running it."""

    flops: float
    bytes: float
    tokens: float
    kernels: int

    def seconds(self, backend: str, factor: float = 1.0) -> float:
        return factor * self.tokens / RATE[backend] + self.kernels * PER_KERNEL[backend]


def oracle_values(prog: Program, binds: dict[str, Any]) -> dict[str, Any]:
    """Every tensor of the program (inputs and the numpy oracle's intermediates)."""
    return {**binds, **evaluate(prog, binds)}


def predict(cm: CompiledModel, values: dict[str, Any]) -> Prediction:
    flops = nbytes = tokens = 0.0
    n = 0
    for reg in cm.regions:
        for k in reg.kernels:
            est = estimate(k.graph, {t: values[k.source(t)] for t in k.inputs})
            flops, nbytes = flops + est.flops, nbytes + est.bytes
            tokens += sum(est.tokens.values())
            n += 1
    return Prediction(flops, nbytes, tokens, n)


def simulate_section(workloads: list[Workload], schedules: list[str], backend: str,
                     budget: float, hws: list[str]) -> dict[str, dict[str, int]]:
    from cosim import run_model
    from ir import load_hw

    if backend == "systemc":  # a kernel that outruns the budget is killed, not waited on
        os.environ["SAMFUSE_SYSTEMC_TIMEOUT"] = str(max(60.0, 2 * budget))
    print("## Simulated cycles\n")
    print(f"Backend `{backend}`; hardware {', '.join(f'`{h}`' for h in hws)}; budget "
          f"{budget:g} s per schedule (predicted from the heuristic's stream tokens at "
          f"{RATE[backend]:.0e} tokens/s). est. = `compiler.estimate` summed over kernels; "
          "DRAM = bytes the memory system moved (0 on `ideal`).\n")
    for w in workloads:
        print(f"- {w.name}: {w.size}")
    print("\n| model | schedule | regions | kernels | nodes | est. FLOPs | est. tokens "
          "| hw | cycles | DRAM bytes | bytes moved | firings | wall s "
          "| speed-up vs unfused |")
    print("|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    hardware = [load_hw(h) for h in hws]
    cycles: dict[str, dict[str, int]] = {f"{w.name} @ {h.name}": {} for w in workloads
                                         for h in hardware}
    runs: list[tuple[str, str, Any, Any, dict[str, Any]]] = []
    for w, sname, head, (prog, binds, values), cm in _compiled(workloads, schedules, 14):
        pred = predict(cm, values)
        nodes = sum(len(k.graph.nodes) for r in cm.regions for k in r.kernels)
        head += (f"| {len(cm.regions)} | {pred.kernels} | {nodes} | {pred.flops:.3g} | "
                 f"{pred.tokens:.3g} ")
        need = pred.seconds(backend)
        if need > budget:
            print(_cells(head, f"skipped: predicted {_dur(need)} > budget {budget:g} s", 14))
            continue
        for hw in hardware:
            key = f"{w.name} @ {hw.name}"
            try:
                start = time.perf_counter()
                run = run_model(cm, binds, backend=backend, hw=hw)
                wall = time.perf_counter() - start
            except Exception as exc:  # noqa: BLE001
                print(_cells(head + f"| {hw.name} ", f"run failed: {_short(exc)}", 13))
                continue
            _check(w, prog, values, run)
            firings = sum(r.firings for rr in run.regions for r in rr.results.values())
            dram = sum(r.dram_read_bytes + r.dram_write_bytes for r in run.regions)
            cycles[key][sname] = run.cycles
            runs.append((w.name, sname, run, cm, values))
            base = cycles[key].get("unfused")
            ratio = f"{base / run.cycles:.2f}×" if base and run.cycles else "–"
            print(head + f"| {hw.name} | {run.cycles:,} | {dram:,} | {run.bytes_moved:,} | "
                  f"{firings:,} | {wall:.1f} | {ratio} |")
    print()
    region_table([r[:3] for r in runs])
    dram_estimate_table(runs)
    trend(cycles, schedules)
    return cycles


def dram_estimate_table(runs: list[tuple[str, str, Any, Any, dict[str, Any]]]) -> None:
    """The heuristic's bytes per region against the DRAM bytes the memory system moved
    (FuseFlow reports 5.7-11.5 % for its FLOPs/bytes model against its simulator)."""
    memory_runs = [r for r in runs if r[2].hw.memory]
    if not memory_runs:
        return
    print("Heuristic bytes (`compiler.estimate`: words x 4) against measured DRAM bytes "
          "(whole lines) per region, on the memory preset:\n")
    print("| model | schedule | hw | region | est. bytes | DRAM bytes | error |")
    print("|---|---|---|---|---:|---:|---:|")
    errors = []
    for name, sname, run, cm, values in memory_runs:
        for reg, rr in zip(cm.regions, run.regions, strict=True):
            est = sum(estimate(k.graph, {t: values[k.source(t)] for t in k.inputs}).bytes
                      for k in reg.kernels)
            dram = rr.dram_read_bytes + rr.dram_write_bytes
            if not dram:
                continue
            err = (est - dram) / dram
            errors.append(abs(err))
            print(f"| {name} | {sname} | {run.hw.name} | {rr.name} | {est:,.0f} | "
                  f"{dram:,} | {100 * err:+.1f} % |")
    if errors:
        errors.sort()
        print(f"\nMedian |error| {100 * errors[len(errors) // 2]:.1f} %, largest "
              f"{100 * errors[-1]:.1f} % over {len(errors)} regions.\n")


def region_table(runs: list[tuple[str, str, Any]]) -> None:
    """Where the cycles go: every region with at least 1 % of its run's cycles."""
    if not runs:
        return
    print("Regions with ≥ 1 % of their run's cycles:\n")
    print("| model | schedule | region | kernels | cycles | % | bytes moved |")
    print("|---|---|---|---:|---:|---:|---:|")
    for name, sname, run in runs:
        for r in run.regions:
            share = r.cycles / run.cycles if run.cycles else 0.0
            if share >= 0.01:
                print(f"| {name} | {sname} | {r.name} | {len(r.results)} | {r.cycles:,} | "
                      f"{100 * share:.0f} | {r.bytes_moved:,} |")
    print()


def _check(w: Workload, prog: Program, values: dict[str, Any], run: Any) -> None:
    """The simulated outputs must match the numpy oracle (a benchmark of a wrong
    result is worthless)."""
    for name in prog.outputs:
        got, want = run.outputs[name], np.asarray(values[name])
        if not np.allclose(got, want, rtol=1e-3, atol=1e-4):
            err = float(np.max(np.abs(got - want)))
            raise AssertionError(f"{w.name}: output {name!r} differs from the oracle "
                                 f"(max abs error {err:.3g})")


def trend(cycles: dict[str, dict[str, int]], schedules: list[str]) -> None:
    print("Trend (published: partial fastest for GCN/GraphSAGE, full fastest for "
          "BigBird attention):\n")
    for name, by in cycles.items():
        if not by:
            print(f"- {name}: nothing ran")
            continue
        best = min(by, key=by.__getitem__)
        want = EXPECTED.get(name.split(" @ ")[0])
        missing = [s for s in schedules if s not in by]
        note = f" (not run: {', '.join(missing)})" if missing else ""
        verdict = "matches" if best == want else "differs from"
        print(f"- {name}: fastest measured = {best}{note}; {verdict} the published "
              f"trend ({want} fastest)")
    print()


# -- section 3: heuristic error --------------------------------------------------------------

def heuristic_section(workloads: list[Workload], schedules: list[str], budget: float
                      ) -> None:
    from cosim import model_counts

    print("## Heuristic error\n")
    print("Per region: `compiler.estimate` (given the kernel's actual inputs) vs counts "
          "from traced Python runs (`cosim.model_counts`); error = |est − meas| / meas.\n")
    for w in workloads:
        print(f"- {w.name}: {w.size}")
    print("\n| model | schedule | region | FLOPs meas. | FLOPs est. | err % | bytes meas. "
          "| bytes est. | err % |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    worst: list[tuple[float, str]] = []
    totals: list[tuple[str, str, list[float], float, str]] = []
    for w, sname, head, (_, binds, values), cm in _compiled(workloads, schedules, 9):
        need = predict(cm, values).seconds("python", factor=3.0)  # run + traced run
        if need > budget:
            print(_cells(head, f"skipped: predicted {_dur(need)} traced > budget "
                         f"{budget:g} s", 9))
            continue
        by_region: dict[str, list[float]] = {}
        for kc in model_counts(cm, binds):
            acc = by_region.setdefault(kc.region, [0.0, 0.0, 0.0, 0.0])
            acc[0] += kc.measured.flops
            acc[1] += kc.estimate.flops
            acc[2] += kc.measured.bytes
            acc[3] += kc.estimate.bytes
        run_worst = (0.0, "")
        for region, (fm, fe, bm, be) in by_region.items():
            ef, eb = _rel(fe, fm), _rel(be, bm)
            worst.append((max(ef, eb), f"{w.name}/{sname}/{region}"))
            run_worst = max(run_worst, (max(ef, eb), region))
            print(head + f"| {region} | {fm:,.0f} | {fe:,.0f} | {100 * ef:.1f} | "
                  f"{bm:,.0f} | {be:,.0f} | {100 * eb:.1f} |")
        sums = [sum(v[i] for v in by_region.values()) for i in range(4)]
        totals.append((w.name, sname, sums, *run_worst))
    print()
    if totals:
        print("Per model and schedule (sums over regions):\n")
        print("| model | schedule | FLOPs meas. | FLOPs est. | err % | bytes meas. "
              "| bytes est. | err % | worst region (err %) |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---|")
        for name, sname, (fm, fe, bm, be), err, region in totals:
            print(f"| {name} | {sname} | {fm:,.0f} | {fe:,.0f} | {100 * _rel(fe, fm):.1f} "
                  f"| {bm:,.0f} | {be:,.0f} | {100 * _rel(be, bm):.1f} | {region} "
                  f"({100 * err:.1f}) |")
        print()
    if worst:
        errs = sorted(e for e, _ in worst)
        top = max(worst)
        print(f"{len(worst)} regions: median error {100 * errs[len(errs) // 2]:.1f} %, "
              f"worst {100 * top[0]:.1f} % ({top[1]}).\n")


def _rel(est: float, meas: float) -> float:
    return 0.0 if est == meas else abs(est - meas) / meas if meas else math.inf


# -- hand-written programs (compile time of einsum-text programs) ----------------------------

def _gcn_text(n: int = 16, f: int = 8, h: int = 6, c: int = 3) -> Program:
    """Two GCN layers: relu(A (X W1) + b1), then A (H1 W2)."""
    return einsum_program(
        ["T1(i,j) = X(i,k) * W1(k,j)", "T2(i,j) = A(i,k) * T1(k,j)",
         "H1(i,j) = relu(T2(i,j) + b1(j))", "T3(i,j) = H1(i,k) * W2(k,j)",
         "H2(i,j) = A(i,k) * T3(k,j)"],
        {"X": (n, f), "W1": (f, h), "A": (n, n), "b1": (h,), "W2": (h, c)}, {"A": "csr"},
        scopes=["layer0"] * 3 + ["layer1"] * 2, name="gcn")


def _spmm_chain(n: int = 16) -> Program:
    """Three sparse matmuls in a row: ((A B) C) D."""
    return einsum_program(
        ["T1(i,j) = A(i,k) * B(k,j)", "T2(i,j) = T1(i,k) * C(k,j)",
         "Y(i,j) = T2(i,k) * D(k,j)"],
        {"A": (n, n), "B": (n, n), "C": (n, n), "D": (n, 4)},
        {"A": "csr", "B": "csr", "C": "csr"}, scopes=["a", "a", "b"], name="spmm_chain")


def _nested(n: int = 16) -> Program:
    """The nested matmul A (B C)."""
    return einsum_program(["T(i,j) = B(i,k) * C(k,j)", "Y(i,j) = A(i,l) * T(l,j)"],
                          {"A": (n, n), "B": (n, n), "C": (n, 4)}, {"A": "csr", "B": "csr"},
                          name="nested")


PROGRAMS: dict[str, Callable[[], Program]] = {"gcn": _gcn_text, "spmm_chain": _spmm_chain,
                                              "nested": _nested}


def _program_inputs(p: Program, seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {}
    for name in p.inputs:
        decl = p.tensors[name]
        if decl.format == "csr":
            out[name] = sp.random(*decl.shape, density=0.2, random_state=seed,
                                  format="csr", dtype=np.float32)
        else:
            out[name] = rng.standard_normal(decl.shape).astype(np.float32)
    return out


def programs_section(schedules: list[str], repeat: int) -> None:
    from cosim import run_model

    print("## Hand-written programs\n")
    print("| program | schedule | kernels | orders tried | compile ms | cycles (python) "
          "| bytes moved |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for pname, build in PROGRAMS.items():
        p = build()
        for sname in schedules:
            best, cm = math.inf, None
            for _ in range(repeat):
                start = time.perf_counter()
                cm = compile_model(p, SCHEDULES[sname](p))
                best = min(best, time.perf_counter() - start)
            assert cm is not None
            kernels = [k for r in cm.regions for k in r.kernels]
            tried = sum(len(k.tried) + k.costed for k in kernels)
            run = run_model(cm, _program_inputs(p))
            print(f"| {pname} | {sname} | {len(kernels)} | {tried} | {best * 1e3:.1f} | "
                  f"{run.cycles:,} | {run.bytes_moved:,} |")
    print()


# -- driver ----------------------------------------------------------------------------------

def _compiled(workloads: list[Workload], schedules: list[str], columns: int):
    """Each workload's (program, bound inputs, oracle values) compiled under each
    schedule, with the row head ``| model | schedule ``; a schedule that fails to compile
    prints its row (``columns`` cells after the head) and is left out."""
    for w in workloads:
        prog, _ = frontend(w)
        binds = w.bind(prog)
        data = (prog, binds, oracle_values(prog, binds))
        for sname in schedules:
            head = f"| {w.name} | {sname} "
            try:
                # the bound inputs and weights steer the cost-chosen orders
                cm = compile_model(prog, SCHEDULES[sname](prog), stats=binds)
            except Exception as exc:  # noqa: BLE001
                print(_cells(head, f"compile failed: {_short(exc)}", columns))
                continue
            yield w, sname, head, data, cm


def _cells(head: str, text: str, columns: int) -> str:
    """A table row: ``head`` (its cells), then ``text`` in the next cell, padded to
    ``columns`` cells."""
    used = head.count("|")
    return head + f"| {text} |" + " |" * max(0, columns - used - 1)


def _short(exc: BaseException, n: int = 90) -> str:
    text = " ".join(str(exc).split()).replace("|", "/")
    return f"{type(exc).__name__}: {text[:n]}{'…' if len(text) > n else ''}"


def _dur(seconds: float) -> str:
    if seconds < 600:
        return f"{seconds:.0f} s"
    if seconds < 86400 * 3:
        return f"{seconds / 3600:.1f} h"
    if seconds < 86400 * 730:
        return f"{seconds / 86400:.0f} days"
    return f"{seconds / 86400 / 365:.2g} years"


def _list(text: str, known: tuple[str, ...] | list[str], what: str) -> list[str]:
    items = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in items if s not in known]
    if bad:
        raise SystemExit(f"unknown {what} {bad}; expected a comma-separated subset of "
                         f"{', '.join(known)}")
    return items


def _bigbird_size(text: str) -> tuple[int, int, int]:
    try:
        seq, d, block = (int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--bigbird {text!r}: expected SEQ,D_MODEL,BLOCK "
                                         "(e.g. 256,64,16)") from None
    return seq, d, block


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="tiny sizes (the models' 'small' configs), Python model; < 1 min")
    ap.add_argument("--models", default=",".join(MODEL_NAMES),
                    help=f"comma-separated subset of {', '.join(MODEL_NAMES)}")
    ap.add_argument("--schedules", default="unfused,partial,full",
                    help="comma-separated subset of unfused, partial, full, epilogue "
                         "(default: the first three)")
    ap.add_argument("--backend", default="python", choices=sorted(RATE),
                    help="simulator for section 2 (section 3 always traces on Python)")
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds per schedule run; predicted-longer runs are skipped "
                         "(default 300, --quick 5)")
    ap.add_argument("--heuristic-budget", type=float, default=None,
                    help="seconds per traced run in section 3 (default 120, --quick 5)")
    ap.add_argument("--cora-scale", type=float, default=1.0,
                    help="shrink the Cora-like graph (nodes, edges, features) by this "
                         "factor (default 1: full Cora size)")
    ap.add_argument("--bigbird", type=_bigbird_size, default=(256, 64, 16),
                    metavar="SEQ,D,BLOCK", help="BigBird block size for section 2 "
                    "(default 256,64,16)")
    ap.add_argument("--sections", default="compile,cycles,heuristic",
                    help="comma-separated subset of compile, cycles, heuristic")
    ap.add_argument("--repeat", type=int, default=None,
                    help="compile_model repeats (best of; default 3, --quick 1)")
    ap.add_argument("--hw", default="ideal,hbm2-u280",
                    help="comma-separated hardware presets or YAML files for section 2 "
                         "(default: ideal and the realistic preset)")
    ap.add_argument("--programs", action="store_true",
                    help="also the hand-written einsum programs")
    args = ap.parse_args(argv)
    args.models = _list(args.models, MODEL_NAMES, "models")
    args.schedules = _list(args.schedules, tuple(SCHEDULES), "schedules")
    args.sections = _list(args.sections, ("compile", "cycles", "heuristic"), "sections")
    if not 0.0 < args.cora_scale <= 1.0:
        ap.error(f"--cora-scale {args.cora_scale!r}: expected a factor in (0, 1]")
    if args.budget is None:
        args.budget = 5.0 if args.quick else 300.0
    if args.heuristic_budget is None:
        args.heuristic_budget = 5.0 if args.quick else 120.0
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    return args


def _build(builders: list[tuple[Callable[..., Workload], tuple[Any, ...]]]
           ) -> list[Workload]:
    """Build workloads; one that fails (a model whose constructor changed, say) is
    reported and left out instead of ending the run."""
    out = []
    for make, args in builders:
        try:
            out.append(make(*args))
        except Exception as exc:  # noqa: BLE001
            print(f"(workload {make.__name__}{args!r} could not be built: {_short(exc)})\n")
    return out


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support is in beta")
    start = time.perf_counter()
    print(f"# samfuse model benchmarks ({'quick' if args.quick else 'full'}; "
          f"{os.cpu_count()} cores)\n")
    if "compile" in args.sections:
        compile_section(args.models, args.schedules, args.quick, args.repeat)
    small = _build([(named_workload, (n, "small")) for n in SIM_MODELS
                    if n in args.models])
    core = [(attention_core_workload, (32, 16, 4))] if "bigbird" in args.models else []
    if "cycles" in args.sections:
        if args.quick:
            sim = small + _build(core)
        else:
            builders = [(graph_workload, (n, args.cora_scale))
                        for n in ("gcn", "graphsage") if n in args.models]
            if "bigbird" in args.models:
                builders += [(bigbird_workload, args.bigbird),
                             (attention_core_workload, args.bigbird)]
            sim = _build(builders)
        simulate_section(sim, args.schedules, "python" if args.quick else args.backend,
                         args.budget, [h for h in args.hw.split(",") if h])
    if "heuristic" in args.sections:
        # --quick: the graph models share their kernels, so GCN stands for both
        heur = [w for w in small if not args.quick or w.name == "gcn"] + _build(core)
        if "autoencoder" in args.models:
            heur += _build([(named_workload, ("autoencoder", "small"))])
        heuristic_section(heur, args.schedules, args.heuristic_budget)
    if args.programs:
        programs_section(args.schedules, args.repeat)
    print(f"Total wall time {time.perf_counter() - start:.0f} s.")


if __name__ == "__main__":
    main()
