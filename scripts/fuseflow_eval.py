#!/usr/bin/env python
"""FuseFlow's evaluation as FuseFlow ran it: Figure 12, Figure 14 and Table 3 side by side.

Runs the bundled studies ``cosim/studies/bundled/fig12-gnn.yaml`` (GCN and GraphSAGE on
Table 2's data sets with the artifact's settings, ``assoc: left``, on ``fuseflow`` and
``hbm2-u280``) and ``cosim/studies/bundled/fig12-attention.yaml`` (BigBird at blocks
16/32/64 and the sparse autoencoder), cached and resumable like any study, then prints
Markdown tables beside FuseFlow's published figures (``cosim.studies._published``) and
draws ``docs/figures/fig12-<study>.png``:

- Figure 12: speed-up of partial and full fusion over unfused (cycles);
- Figure 14: FLOPs and memory accesses counted by the simulator, as ratios to unfused
  (accesses also as FuseFlow's artifact counts them: without crd/seg reads);
- Table 3: the heuristic's mean FLOPs and bytes error over each model's regions, at the
  largest data set run (FuseFlow's: OGB-Collab), on the memory-less machine.

    .venv/bin/python scripts/fuseflow_eval.py                   # both studies (~1 h)
    .venv/bin/python scripts/fuseflow_eval.py --studies gnn --workers 2
    .venv/bin/python scripts/fuseflow_eval.py --quick           # tiny sizes, Python, < 2 min
    .venv/bin/python scripts/fuseflow_eval.py --studies attention --predict   # heuristic only
    .venv/bin/python scripts/fuseflow_eval.py --studies mag --predict   # OGB-MAG, ~2 min a model

``fig12-mag`` (OGB-MAG) is a study of its own: its prediction alone peaks at 9.6 GB of
memory and each run takes hours of simulation (run it with ``--workers 1``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from cosim.studies._plot import plot, published_key  # noqa: E402
from cosim.studies._published import FIG12_SPEEDUP, FIG14_COLLAB_GCN, TABLE3_ERROR  # noqa: E402
from cosim.studies._runner import StudyResult, run_configs, write_table  # noqa: E402
from cosim.studies._spec import load_study, study_path  # noqa: E402
from ir import WORD_BYTES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: --studies name -> the bundled study it runs (cosim/studies/)
STUDIES = {"gnn": "fig12-gnn", "attention": "fig12-attention", "collab-s16": "fig14-collab",
           "mag": "fig12-mag"}
#: --quick: the same studies at test sizes on the Python model
QUICK_CONFIG = {"gcn": "small-fuseflow", "graphsage": "small-fuseflow",
                "bigbird": "small", "autoencoder": "small"}


def _quick(doc: dict[str, Any]) -> dict[str, Any]:
    """A study at test sizes: one workload per model (blocks of 4), the Python model, no
    budget."""
    keep: dict[str, dict[str, Any]] = {}
    for w in doc["workloads"]:
        keep.setdefault(w["model"], {**w, "config": QUICK_CONFIG[w["model"]]})
    labels = {w.get("label", f"{w['model']}-{w['config']}"): w["model"]
              for w in doc["workloads"]}
    runs = []
    for r in doc.get("runs", []):
        quick = dict(r)
        if "workloads" in r:  # a run of one workload: of its model's quick one
            model = labels[r["workloads"]]
            quick["workloads"] = keep[model].get("label", f"{model}-{QUICK_CONFIG[model]}")
        if "block" in quick:
            quick["block"] = min(quick["block"], 4)
        if quick not in runs:
            runs.append(quick)
    out = {**doc, "name": doc["name"] + "-quick", "workloads": list(keep.values()),
           "axes": {**doc["axes"], "backends": [["python"]]}, "budget": None}
    if runs:
        out["runs"] = runs
    return out


def _cell(x: float | None, fmt: str = "{:.2f}×") -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else fmt.format(x)


def _runs(frame: Any) -> dict[tuple[Any, ...], dict[str, Any]]:
    """(model, data set, hw, schedule) -> the row of that run."""
    out = {}
    for row in frame.to_dict("records"):
        if row.get("kind") != "model":
            continue
        model, data = published_key(row["model"], row["config"], row.get("block", 1))
        out[(model, data, row["hw"], row["schedule"])] = row
    return out


def _cycles(r: dict[str, Any] | None) -> str:
    """A run's cycles, or its status and why."""
    if r is None:
        return "–"
    if r["status"] != "ok":
        return f"{r['status']}: {str(r.get('error') or '')[:70]}"
    return f"{int(r['cycles']):,}"


def fig12_table(frame: Any) -> str:
    """Markdown: cycles per schedule and speed-ups over unfused beside FuseFlow's."""
    runs = _runs(frame)
    head = ("| model | data set | hw | unfused cycles | partial cycles | full cycles | "
            "partial × | full × | FuseFlow partial × | FuseFlow full × |\n"
            "|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    lines = [head]
    for model, data, hw in sorted({k[:3] for k in runs}):
        row = {s: runs.get((model, data, hw, s)) for s in ("unfused", "partial", "full")}
        cyc = {s: r["cycles"] if r and r["status"] == "ok" else None for s, r in row.items()}

        speed = {s: cyc["unfused"] / cyc[s] if cyc["unfused"] and cyc[s] else None
                 for s in ("partial", "full")}
        paper = FIG12_SPEEDUP.get((model, data), (None, None))
        lines.append(f"| {model} | {data} | {hw} | {_cycles(row['unfused'])} | "
                     f"{_cycles(row['partial'])} | {_cycles(row['full'])} | "
                     f"{_cell(speed['partial'])} | {_cell(speed['full'])} | "
                     f"{_cell(paper[0])} | {_cell(paper[1])} |")
    return "\n".join(lines)


def _ratio(row: dict[str, Any], base: dict[str, Any], key: str) -> str:
    """``row[key] / base[key]``, or – where a row has no such column (an older cache)."""
    num, den = row.get(key), base.get(key)
    if num is None or not den or (isinstance(num, float) and math.isnan(num)):
        return "–"
    return f"{num / den:.3f}×"


def fig14_table(frame: Any) -> str:
    """Markdown: FLOPs and memory accesses of each schedule over unfused's, the accesses
    counted both ways: every word the scanners, arrays and writers touch, and as
    FuseFlow's artifact sums Comal's counters (no crd/seg reads; ``ir._work``)."""
    runs = _runs(frame)
    lines = ["| model | data set | hw | schedule | FLOPs / unfused | accesses / unfused | "
             "accesses, FuseFlow's counting | FuseFlow (GCN, Collab) |",
             "|---|---|---|---|---:|---:|---:|---|"]
    for model, data, hw in sorted({k[:3] for k in runs}):
        base = runs.get((model, data, hw, "unfused"))
        if not base or base["status"] != "ok" or not base.get("flops"):
            continue
        for s in ("partial", "full"):
            r = runs.get((model, data, hw, s))
            if not r or r["status"] != "ok" or r.get("flops") is None:
                continue
            paper = FIG14_COLLAB_GCN.get(s) if (model, data) == ("gcn", "collab") else None
            lines.append(f"| {model} | {data} | {hw} | {s} | "
                         f"{r['flops'] / base['flops']:.4f}× | "
                         f"{r['mem_accesses'] / base['mem_accesses']:.3f}× | "
                         f"{_ratio(r, base, 'fuseflow_mem_accesses')} | "
                         f"{f'{paper[0]}× / {paper[1]}×' if paper else ''} |")
    return "\n".join(lines)


def heuristic_errors(row: dict[str, Any]) -> list[tuple[float, float]]:
    """Per region of a run: (|est − measured| / measured) of FLOPs and of bytes, where the
    measured bytes are the simulator's memory accesses in words (FuseFlow's counters)."""
    out = []
    for reg in json.loads(row["regions_json"]):
        flops, words = reg["flops"], reg["mem_accesses"]
        if not flops or not words:
            continue
        out.append((abs(reg["est_flops"] - flops) / flops,
                    abs(reg["est_dram_bytes"] - WORD_BYTES * words) / (WORD_BYTES * words)))
    return out


def table3(frame: Any) -> str:
    """Markdown: the heuristic's mean error per model over every region of every schedule
    run, at the largest data set of the table, on memory-less hardware."""
    runs = _runs(frame)
    lines = ["| model | data set | regions | FLOPs error | bytes error | FuseFlow FLOPs / bytes |",
             "|---|---|---:|---:|---:|---|"]
    for model in sorted({k[0] for k in runs}):
        ok = [(k, r) for k, r in runs.items() if k[0] == model and r["status"] == "ok"
              and r.get("regions_json") and not r.get("dram_read_bytes")]
        if not ok:
            continue
        largest = max(ok, key=lambda kr: kr[1]["cycles"])[0][1]
        errs = [e for k, r in ok if k[1] == largest for e in heuristic_errors(r)]
        if not errs:
            continue
        paper = TABLE3_ERROR.get(model)
        lines.append(f"| {model} | {largest} | {len(errs)} | "
                     f"{100 * sum(e[0] for e in errs) / len(errs):.1f} % | "
                     f"{100 * sum(e[1] for e in errs) / len(errs):.1f} % | "
                     f"{f'{paper[0]} % / {paper[1]} %' if paper else ''} |")
    return "\n".join(lines)


def predict(cfg: Any) -> dict[str, float]:
    """The cost heuristic's cycles, FLOPs and bytes for one model run of a study, without
    simulating it: compiled as the run would (``compile_config``), each
    kernel priced on the data it reads, at the FIFO depth the run's hardware gives
    (``fuseflow``: unbounded). What a run skipped over the budget would have taken."""
    from compiler import cycle_estimate, estimate
    from cosim.runs._config_run import _program_frontend, compile_config
    from cosim.runs._model_run import kernel_values
    from ir import run_depth

    program, binds, _ = _program_frontend(cfg, gold=False)
    compiled = compile_config(cfg, program, binds)
    hw = cfg.hardware()
    used = run_depth("graph", hw)
    # as a run holds them (block 1): each tensor in its memory format
    values = kernel_values(compiled, binds, stored=cfg.block == 1)
    out = {"est_cycles": 0.0, "est_flops": 0.0, "est_bytes": 0.0}
    for reg in compiled.regions:
        for k in reg.kernels:
            graph = k.graph if used == "graph" else k.graph.with_depth(used)
            est = estimate(graph, {t: values[k.source(t)] for t in k.inputs}, hw=hw)
            out["est_cycles"] += cycle_estimate(graph, est, hw)
            out["est_flops"] += est.flops
            out["est_bytes"] += est.dram_bytes
    return out


def predicted_table(configs: list[Any]) -> str:
    """Markdown: the heuristic's cycles per schedule and its predicted speed-ups, then its
    FLOPs and words (bytes / 4) per schedule as ratios to unfused (Figure 14, predicted)."""
    preds: dict[tuple[Any, ...], dict[str, float]] = {}
    for cfg in configs:
        if not cfg.workload.is_program:
            continue
        model, data = published_key(cfg.workload.model, cfg.workload.config, cfg.block)
        preds[(model, data, cfg.hw, cfg.schedule)] = predict(cfg)
    est = {k: v["est_cycles"] for k, v in preds.items()}
    lines = ["| model | data set | hw | unfused est. cycles | partial est. | full est. | "
             "partial × | full × | FuseFlow partial × | FuseFlow full × |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    work = ["", "| model | data set | hw | schedule | est. FLOPs / unfused | "
            "est. bytes / unfused |", "|---|---|---|---|---:|---:|"]
    for model, data, hw in sorted({k[:3] for k in est}):
        base = preds.get((model, data, hw, "unfused"))
        for s in ("partial", "full"):
            got = preds.get((model, data, hw, s))
            if base and got and base["est_flops"] and base["est_bytes"]:
                work.append(f"| {model} | {data} | {hw} | {s} | "
                            f"{got['est_flops'] / base['est_flops']:.4f}× | "
                            f"{got['est_bytes'] / base['est_bytes']:.3f}× |")
        cyc = {s: est.get((model, data, hw, s)) for s in ("unfused", "partial", "full")}
        speed = {s: cyc["unfused"] / cyc[s] if cyc["unfused"] and cyc[s] else None
                 for s in ("partial", "full")}
        paper = FIG12_SPEEDUP.get((model, data), (None, None))
        lines.append(f"| {model} | {data} | {hw} | "
                     + " | ".join(_cell(cyc[s], "{:,.0f}") for s in ("unfused", "partial",
                                                                      "full"))
                     + f" | {_cell(speed['partial'], '{:.3g}×')} | "
                     f"{_cell(speed['full'], '{:.3g}×')} | "
                     f"{_cell(paper[0])} | {_cell(paper[1])} |")
    return "\n".join(lines + work)


def _selected(cfg: Any, args: argparse.Namespace) -> bool:
    """Whether a run of the study is asked for by ``--data-sets`` / ``--hw-data-sets``."""
    model, data = published_key(cfg.workload.model, cfg.workload.config, cfg.block)
    if args.data_sets and model in ("gcn", "graphsage") and \
            data not in args.data_sets.split(","):
        return False
    for item in args.hw_data_sets:
        hw, _, names = item.partition("=")
        if cfg.hw == hw and model in ("gcn", "graphsage") and data not in names.split(","):
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--studies", default="gnn,attention",
                    help="comma-separated: gnn, attention, collab-s16, mag (default gnn,attention)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "studies" / "out"),
                    help="folder of the studies' outputs (cache and tables)")
    ap.add_argument("--figures", default=str(ROOT / "docs" / "figures"),
                    help="folder for fig12-<study>.png")
    ap.add_argument("--data-sets", default=None,
                    help="comma-separated data sets (configs without '-fuseflow') to run; "
                    "default every workload of the study")
    ap.add_argument("--hw-data-sets", action="append", default=[], metavar="HW=DS,DS",
                    help="run hardware HW only on these data sets (repeatable), e.g. "
                    "hbm2-u280=cora to keep the slow memory runs small")
    ap.add_argument("--quick", action="store_true",
                    help="test sizes on the Python model (a smoke run, < 2 minutes)")
    ap.add_argument("--no-run", action="store_true",
                    help="run nothing: the tables and figure from every run each study "
                    "has finished in --out (runs/*.json; e.g. a study still running, or "
                    "run at another commit)")
    ap.add_argument("--predict", action="store_true",
                    help="simulate nothing: print the cost heuristic's cycles and speed-ups "
                    "for the selected runs (what runs skipped over the budget would take)")
    args = ap.parse_args(argv)
    for name in [s for s in args.studies.split(",") if s]:
        if name not in STUDIES:
            ap.error(f"--studies {name!r}: expected {', '.join(STUDIES)}")
        import yaml

        doc = yaml.safe_load(study_path(STUDIES[name]).read_text())
        if args.quick:
            doc = _quick(doc)
        spec = load_study(doc)
        out = Path(args.out) / spec.name
        configs = [c for c in spec.expand() if _selected(c, args)]
        if args.predict:
            print(f"\n## {spec.name}: the heuristic's prediction (nothing simulated)\n")
            print(predicted_table(configs))
            continue
        if args.no_run:
            import pandas as pd

            frame = pd.DataFrame([row for path in sorted((out / "runs").glob("*.json"))
                                  for row in json.loads(path.read_text())])
            print(f"\n## {spec.name}: {len(frame)} finished rows read from {out}/runs\n")
        else:
            start = time.perf_counter()
            rows_of, ran = run_configs(configs, out, workers=args.workers, label=spec.name)
            rows = [r for c in configs for r in rows_of[c]]
            write_table(rows, out)
            result = StudyResult(rows, ran, len(configs) - ran, time.perf_counter() - start)
            frame = result.frame()
            print(f"\n## {spec.name}: {len(result.rows)} rows ({result.ran} run, "
                  f"{result.cached} cached) in {result.seconds:.0f} s -> {out}\n")
        print("### Figure 12: speed-up over unfused\n")
        print(fig12_table(frame))
        print("\n### Figure 14: work over unfused (simulator counts)\n")
        print(fig14_table(frame))
        print("\n### Table 3: heuristic error (mean over regions)\n")
        print(table3(frame))
        figure = Path(args.figures) / f"{spec.name}.png"
        figure.parent.mkdir(parents=True, exist_ok=True)
        for path in plot(frame, "fig12", figure):
            print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
