"""Print the two small tables of docs/fusion.md and docs/models.md: the hand-written
two-layer GCN under each schedule, and every bundled model at ``tiny`` (cycles / bytes
moved on the Python model, checked against numpy / eager torch).

    .venv/bin/python scripts/fusion_examples.py            # both tables, ~1 min
    .venv/bin/python scripts/fusion_examples.py --skip-gpt-fused
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp
import torch

from compiler import compile_model, einsum_program, from_torch, models, torch_inputs, torch_weights
from cosim import run_model
from ir import Schedule

SCHEDULES = {"unfused": Schedule.unfused, "by_scope": Schedule.by_scope,
             "fused": Schedule.fused}


def worked_example(seed: int = 0) -> None:
    """The GCN program of docs/fusion.md: 8 nodes, A CSR at density 0.3."""
    p = einsum_program(["T1(i,j) = X(i,k) * W1(k,j)", "T2(i,j) = A(i,k) * T1(k,j)",
                        "H1(i,j) = relu(T2(i,j) + b1(j))", "T3(i,j) = H1(i,k) * W2(k,j)",
                        "H2(i,j) = A(i,k) * T3(k,j)"],
                       {"X": (8, 6), "W1": (6, 4), "A": (8, 8), "b1": (4,), "W2": (4, 3)},
                       {"A": "csr"}, scopes=["layer0"] * 3 + ["layer1"] * 2, name="gcn")
    rng = np.random.default_rng(seed)
    a = sp.random(8, 8, density=0.3, random_state=seed, format="csr", dtype=np.float32)
    x, w1, b1, w2 = (rng.standard_normal(s).astype(np.float32)
                     for s in ((8, 6), (6, 4), (4,), (4, 3)))
    gold = a @ (np.maximum(a @ (x @ w1) + b1, 0) @ w2)
    print("| schedule | regions | cycles | bytes moved | compile |\n|---|---|---|---|---|")
    for name, make in SCHEDULES.items():
        cm = compile_model(p, make(p))
        run = run_model(cm, {"X": x, "W1": w1, "A": a, "b1": b1, "W2": w2})
        np.testing.assert_allclose(run.outputs["H2"], gold, rtol=1e-4, atol=1e-4)
        print(f"| `{name}` | {len(cm.regions)} | {run.cycles} | {run.bytes_moved} | "
              f"{cm.compile_seconds * 1e3:.1f} ms |")


def tiny_models(skip_gpt_fused: bool) -> None:
    print("\n| model | `unfused` | `by_scope` (regions) | `fused` |\n|---|---|---|---|")
    for name, cls in models.MODELS.items():
        model = cls.from_config("tiny").eval()
        args = model.example_inputs()
        program = from_torch(model, args)
        tensors = {**torch_weights(model, program), **torch_inputs(program, args)}
        with torch.no_grad():
            gold = model(*args).numpy()
        cells = []
        for sname, make in SCHEDULES.items():
            if skip_gpt_fused and name == "gpt" and sname == "fused":
                cells.append("skipped")
                continue
            start = time.perf_counter()
            cm = compile_model(program, make(program))
            run = run_model(cm, tensors)
            (out,) = run.outputs.values()
            np.testing.assert_allclose(out, gold, rtol=1e-3, atol=1e-4)
            regions = f" ({len(cm.regions)})" if sname == "by_scope" else ""
            nodes = sum(len(k.graph.nodes) for r in cm.regions for k in r.kernels)
            cells.append(f"{run.cycles:,} / {run.bytes_moved:,}{regions}")
            print(f"  [{name} {sname}: {nodes} nodes, {time.perf_counter() - start:.1f} s]",
                  flush=True)
        print(f"| {cls.__name__} | " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-gpt-fused", action="store_true")
    args = ap.parse_args()
    worked_example()
    tiny_models(args.skip_gpt_fused)


if __name__ == "__main__":
    main()
