"""The models, sizes and schedules the model benchmarks run (``bench_models``,
``bench_compile``, ``bench_mlir``): workloads built from the bundled PyTorch models, and
the ``epilogue`` schedule the benchmarks compare with the named ones."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from compiler import from_torch, torch_inputs, torch_weights
from ir import Program, Schedule
from ir import datasets as ds

_ACCESS = re.compile(r"\b\w+\(([\w\s,]*)\)")  # T(i,j), sum(k): parentheses of names only


def _reduces(text: str) -> bool:
    """Whether an assignment reduces: an index on the right (explicit ``sum(k)`` or
    implicit) that the target does not have."""
    lhs, rhs = text.split("=", 1)

    def names(part: str) -> set[str]:
        return {v.strip() for m in _ACCESS.finditer(part) for v in m.group(1).split(",")
                if v.strip()}

    return bool(names(rhs) - names(lhs))


def epilogue_schedule(program: Program) -> Schedule:
    """Fuse each statement into the region of the statement it reads when it is
    elementwise (no reduction), that producer is the region's last statement, of the same
    rank, and has no other reader. Every contraction keeps its elementwise tail
    (``A·T + b → relu``), but no producer is ever inlined into a reduction, so nothing is
    recomputed: the fusion that is always safe in samfuse's one-loop-nest lowering."""
    readers: dict[str, int] = {}
    for st in program.statements:
        for t in set(st.reads):
            readers[t] = readers.get(t, 0) + 1

    def rank(t: str) -> int:
        return len(program.tensors[t].shape)

    groups: list[list[str]] = []
    for st in program.statements:
        last = groups[-1][-1] if groups else None
        if (groups and not _reduces(st.text) and last in st.reads
                and readers.get(last, 0) == 1 and last not in program.outputs
                and rank(last) == rank(st.target)):
            groups[-1].append(st.target)
        else:
            groups.append([st.target])
    sched = Schedule.groups(program, groups)
    sched.name = "epilogue"
    return sched


SCHEDULES: dict[str, Callable[[Program], Schedule]] = {
    "unfused": Schedule.unfused, "partial": Schedule.by_scope, "full": Schedule.fused,
    "epilogue": epilogue_schedule}
MODEL_NAMES = ("gcn", "graphsage", "autoencoder", "bigbird", "gpt")
SIM_MODELS = ("gcn", "graphsage", "bigbird")
#: published FuseFlow trend: the fastest schedule per model
EXPECTED = {"gcn": "partial", "graphsage": "partial", "bigbird": "full",
            "attn_core": "full"}
#: compile-time target per model and schedule (seconds)
COMPILE_TARGET = 0.75
#: simulation throughput, stream tokens per second (measured here: Python 0.14–0.7 M/s
#: depending on the graph, SystemC 6.5–8 M/s on one core; one firing per token within
#: ~20 %) and the fixed cost per kernel (SystemC forks a child)
RATE = {"python": 5e5, "systemc": 5e6}
PER_KERNEL = {"python": 0.01, "systemc": 0.5}


# -- workloads -------------------------------------------------------------------------------

@dataclass
class Workload:
    """A model instance, its example inputs, the formats given to the frontend, and a
    one-line description of its size; or (``module`` None) a hand-written program and
    its input tensors in ``args[0]``."""

    name: str
    module: Any
    args: tuple[Any, ...]
    formats: dict[str, str] | None
    size: str
    program: Program | None = None

    def bind(self, prog: Program) -> dict[str, Any]:
        """Every input and weight of ``prog`` by name."""
        if self.module is None:
            return dict(self.args[0])
        return {**torch_weights(self.module, prog), **torch_inputs(prog, self.args)}


def _models() -> Any:
    import compiler.models as models
    return models


def graph_workload(name: str, scale: float = 1.0, seed: int = 0) -> Workload:
    """GCN or GraphSAGE on a Cora-like graph, hidden 16, 7 outputs; ``scale`` < 1
    shrinks nodes, edges and features alike (same degree exponent and feature density)."""
    models = _models()
    data = ds.cora_like(n_nodes=round(2708 * scale), n_edges=round(5278 * scale),
                        n_features=round(1433 * scale), seed=seed)
    hidden, out = 16, 7
    n_in = data.features.shape[1]
    density = data.features.nnz / float(np.prod(data.features.shape))
    cls = models.GCN if name == "gcn" else models.GraphSAGE
    module = cls(data.adj, n_in, hidden, out, feature_density=density, seed=seed).eval()
    x = module.example_inputs(seed)
    size = (f"cora_like {data.n_nodes} nodes, {data.adj.nnz // 2} edges, {n_in} features "
            f"@ {100 * density:.2f} % (CSR), hidden {hidden}, out {out}")
    return Workload(name, module, x, {"x": "csr"}, size)


def bigbird_workload(seq: int, d_model: int, block: int, seed: int = 0) -> Workload:
    """One BigBird attention head, mask stored CSR (the SDDMM pattern)."""
    module = _models().BigBirdAttention(seq, d_model, block, seed=seed).eval()
    density = module.mask_csr().nnz / float(seq * seq)
    size = f"seq {seq}, d_model {d_model}, block {block}, mask {100 * density:.1f} % (CSR)"
    return Workload("bigbird", module, module.example_inputs(seed), {"mask": "csr"}, size)


def attention_core_workload(seq: int, d_model: int, block: int, seed: int = 0
                            ) -> Workload:
    """The BigBird attention core as a hand-written program, softmax without the max
    shift (as block-sparse attention accelerators compute it): an SDDMM, exp, row sum,
    normalisation and the SpMM with V; Q, K, V are inputs. Scopes ``score`` (S, E),
    ``norm`` (Z) and ``out`` (P, O) make ``partial`` fuse the SDDMM with exp and the
    normalisation with the SpMM."""
    prog, inputs = _models().attention_core(seq, d_model, block, seed=seed)
    mask = inputs["M"]
    density = mask.nnz / float(seq * seq)
    size = (f"attention core (no max shift), seq {seq}, d {d_model}, block {block}, "
            f"mask {100 * density:.1f} % (CSR)")
    return Workload("attn_core", None, (inputs,), None, size, prog)


def named_workload(name: str, config: str) -> Workload:
    """A model at one of its named configurations (``default_config``)."""
    module = _models().MODELS[name].from_config(config).eval()
    fmt = {"x": "csr"} if name in ("gcn", "graphsage") else \
        {"mask": "csr"} if name == "bigbird" else None
    return Workload(name, module, module.example_inputs(0), fmt, config)


COMPILE_CONFIGS = {"gcn": "cora", "graphsage": "cora", "autoencoder": "mnist",
                   "bigbird": "bigbird16", "gpt": "gpt3-small"}


def frontend(w: Workload) -> tuple[Program, float]:
    """``from_torch`` (export + translation) and its wall time."""
    start = time.perf_counter()
    prog = w.program if w.program is not None else \
        from_torch(w.module, w.args, formats=w.formats)
    return prog, time.perf_counter() - start
