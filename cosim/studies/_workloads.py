"""The ``workloads:`` of a study file, each checked into a :class:`~cosim.runs._config.Workload`
(names, shapes and data sets within bounds, an expression that compiles, an MLIR file the
frontend reads), so a bad workload is an error of the study rather than of every run."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

from ..runs._config import GRAPH_DATASETS, Workload, graph_dataset, rmat_params
from ._spec import SAFE_NAME, StudyError

__all__ = ["parse_workload", "MAX_TENSOR_ELEMS"]


def parse_workload(w: Any, n: int, base: Path = Path(".")) -> Workload:
    """The study's ``workloads[n]`` entry, checked: a bundled model, an MLIR file, an example
    kernel or an expression whose tensors may hold bundled data sets."""
    if not isinstance(w, dict):
        raise StudyError(f"workloads[{n}] must be a mapping with 'model' or 'expr'")
    unknown = sorted(set(w) - {"label", "model", "config", "expr", "formats", "shapes",
                               "density", "kernel", "size", "datasets", "mlir"})
    if unknown:
        raise StudyError(f"workloads[{n}]: unknown key(s) {unknown}")
    if sum(k in w for k in ("model", "expr", "kernel", "mlir")) != 1:
        raise StudyError(f"workloads[{n}] needs exactly one of 'model', 'expr', 'kernel' "
                         "and 'mlir'")
    density = w.get("density", 0.1)
    if isinstance(density, bool) or not isinstance(density, int | float) or \
            not 0 <= density <= 1:
        raise StudyError(f"workloads[{n}]: density {density!r} must be in [0, 1]")
    if "mlir" in w:
        wl = _mlir_workload(w, n, base)
    elif "kernel" in w:
        from ..runs._sweep import SWEEP_KERNELS

        size = w.get("size")
        if w["kernel"] not in SWEEP_KERNELS:
            raise StudyError(f"workloads[{n}]: kernel {w['kernel']!r}; example kernels: "
                             f"{', '.join(SWEEP_KERNELS)}")
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= 4096:
            raise StudyError(f"workloads[{n}]: size {size!r} must be an int in [1, 4096]")
        label = w.get("label", f"{w['kernel']}-{size}-{density:g}")
        wl = Workload(label, kernel=w["kernel"], size=size, density=float(density))
    elif "model" in w:  # the model and its config are checked by check_models
        label = w.get("label", f"{w['model']}-{w.get('config', 'small')}")
        wl = Workload(label, model=w["model"], config=str(w.get("config", "small")))
    else:
        shapes = w.get("shapes")
        if not isinstance(shapes, dict) or not all(
                isinstance(s, list) and s and all(isinstance(d, int) and not isinstance(
                    d, bool) and d > 0 for d in s) for s in shapes.values()):
            raise StudyError(f"workloads[{n}]: 'shapes' must map every tensor to a list of "
                             "positive ints")
        for t, s in shapes.items():
            if math.prod(s) > MAX_TENSOR_ELEMS:
                raise StudyError(f"workloads[{n}]: tensor {t!r} of shape {s} has "
                                 f"{math.prod(s):,} entries, more than the {MAX_TENSOR_ELEMS:,} "
                                 "a study builds (its inputs and reference are dense)")
        formats = w.get("formats", {})
        if not isinstance(formats, dict):
            raise StudyError(f"workloads[{n}]: 'formats' must map tensors to format specs")
        data = w.get("datasets", {})
        if not isinstance(data, dict):
            raise StudyError(f"workloads[{n}]: 'datasets' maps tensors to one of "
                             f"{', '.join(GRAPH_DATASETS)} or 'rmat:SCALE:EDGE_FACTOR'")
        tensors = _expr_tensors(w["expr"], n)
        for t, d in data.items():
            if t not in tensors:
                raise StudyError(f"workloads[{n}]: 'datasets' gives {t!r}, which the "
                                 f"expression does not use; its tensors are "
                                 f"{', '.join(sorted(tensors))}")
            n_nodes = _dataset_nodes(d, f"workloads[{n}]: tensor {t!r}")
            if list(shapes.get(t, ())) != [n_nodes, n_nodes]:
                raise StudyError(f"workloads[{n}]: tensor {t!r} holds the {d} adjacency, "
                                 f"so its shape must be [{n_nodes}, {n_nodes}]")
        label = w.get("label", f"expr{n}")
        wl = Workload(label, expr=str(w["expr"]),
                      formats=tuple(sorted((str(k), str(v)) for k, v in formats.items())),
                      shapes=tuple(sorted((str(k), tuple(v)) for k, v in shapes.items())),
                      density=float(density),
                      datasets=tuple(sorted((str(k), str(v)) for k, v in data.items())))
        _check_expr(wl, n)
    if not isinstance(wl.label, str) or not SAFE_NAME.match(wl.label):
        raise StudyError(f"workloads[{n}]: label {wl.label!r} must match "
                         f"{SAFE_NAME.pattern}")
    return wl


#: entries of one tensor of an expression workload: its random inputs and the numpy
#: reference hold it dense (2^24: the largest R-MAT's adjacency)
MAX_TENSOR_ELEMS = 1 << 24
_FIXED_NODES = {"karate": 34, "cora": None, "hubs": 2000}



def _dataset_nodes(name: Any, where: str) -> int:
    """Nodes of a data set name (its adjacency is nodes x nodes), checking the name."""
    expected = (f"expected one of {', '.join(GRAPH_DATASETS)} or "
                "'rmat:SCALE:EDGE_FACTOR[:SEED]'")
    if not isinstance(name, str):
        raise StudyError(f"{where}: data set {name!r}: {expected}")
    try:
        rmat = rmat_params(name)
    except ValueError as exc:
        raise StudyError(f"{where}: data set {name!r}: {exc}") from None
    if rmat is not None:
        return 1 << rmat[0]
    if name not in _FIXED_NODES:
        raise StudyError(f"{where}: data set {name!r}: {expected}")
    return _FIXED_NODES[name] or graph_dataset(name).shape[0]



def _expr_tensors(expr: Any, n: int) -> set[str]:
    """The tensors a workload's expression names (its output included)."""
    from compiler import CompileError, parse, tensor_ranks

    try:
        return set(tensor_ranks(parse(str(expr))))
    except CompileError as exc:
        raise StudyError(f"workloads[{n}]: {exc}") from None


def _check_expr(w: Workload, n: int) -> None:
    from compiler import CompileError, compile_expression

    try:
        compile_expression(w.expr, dict(w.formats), dict(w.shapes))
    except CompileError as exc:
        raise StudyError(f"workloads[{n}] ({w.label}): {exc}") from None


def _mlir_workload(w: dict[str, Any], n: int, base: Path) -> Workload:
    """``mlir: FILE.mlir`` (relative to the study file): translated now, so that a file
    the frontend cannot read is an error of the study rather than of every run."""
    from compiler import CompileError, read_mlir

    path = base / str(w["mlir"])
    if not str(w["mlir"]).endswith(".mlir") or not path.is_file():
        raise StudyError(f"workloads[{n}]: mlir {w['mlir']!r}: expected an existing "
                         ".mlir file (relative to the study file)")
    try:
        read_mlir(path)
    except CompileError as exc:
        raise StudyError(f"workloads[{n}]: {exc}") from None
    sha = hashlib.sha256(path.read_bytes()).hexdigest()[:20]
    return Workload(w.get("label", path.stem), mlir=str(path.resolve()), mlir_sha=sha)
