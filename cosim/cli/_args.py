"""What the commands share: the user-error class, NAME=VALUE and shape arguments, a graph
and its input tensors read from files (checked before a run), the "still running" lines
and the files a run writes."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ir import (
    SCHEMA,
    FiberTree,
    FormatError,
    Graph,
    StorageError,
    check_fits,
    from_path,
    mtx_vector_shape,
    tensor_file_header,
)
from sim_models.python import SimResult

from ..runs._files import atomic_path, safe_join, write_tensor

__all__ = ["PROG", "CliError", "TENSOR_SUFFIXES", "name_value_pairs", "parse_shape",
           "load_graph", "load_inputs", "check_size", "still_running", "write_outputs",
           "write_trace", "say", "read_tensor", "input_densities", "add_nonfinite",
           "refuse_nonfinite", "check_workers"]


PROG = "samfuse"
#: seconds before the first progress line, and between lines
PROGRESS_DELAY, PROGRESS_EVERY = 2.0, 10.0


class CliError(Exception):
    """A user error found by the command line itself (bad NAME=VALUE, missing file…)."""


# -- argument helpers --------------------------------------------------------------------

def name_value_pairs(items: Sequence[str] | None, option: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise CliError(f"{option} expects NAME={what}, got {item!r}")
        if name.strip() in out:
            raise CliError(f"{option} gives {name.strip()!r} twice")
        out[name.strip()] = value.strip()
    return out


#: suffixes of the tensor files ``--shape`` and ``--input`` read
TENSOR_SUFFIXES = (".mtx", ".npy", ".npz")


def parse_shape(name: str, text: str, ndim: int | None = None) -> tuple[int, ...]:
    """``34x16``, ``34,16``, ``""`` (a scalar), or a tensor file to take the shape from
    (an n x 1 Matrix Market file gives a vector's shape where ``ndim`` is 1)."""
    parts = [p for p in text.replace("x", ",").split(",") if p.strip()]
    if all(p.strip().isdigit() for p in parts):
        if any(int(p) < 1 for p in parts):
            raise CliError(f"--shape {name}={text}: every size must be an integer >= 1")
        return tuple(int(p) for p in parts)
    if Path(text).suffix.lower() in TENSOR_SUFFIXES or Path(text).exists():
        head = tensor_file_header(text) if Path(text).is_file() else None
        if head is not None:  # the header alone: the data is not needed
            vector = mtx_vector_shape(head[0]) if ndim == 1 and text.endswith(".mtx") else None
            return vector or head[0]
        return read_tensor(name, text, ndim, "--shape").shape
    raise CliError(f"--shape {name}={text}: expected sizes such as 34x16 or a tensor "
                   "file (.mtx, .npy, .npz) to read the shape from")


def load_graph(path: str) -> Graph:
    """Read graph JSON; a missing, special, binary or non-JSON file is a one-line user
    error saying which of these it is."""
    file = Path(path)
    if not file.exists():
        raise CliError(f"graph file {path!r} does not exist")
    if file.is_dir():
        raise CliError(f"graph file {path!r} is a folder; give the graph JSON written by "
                       f"'{PROG} compile -o'")
    if not file.is_file():
        raise CliError(f"graph file {path!r} is not a regular file (a device or a pipe); "
                       f"give the graph JSON written by '{PROG} compile -o'")
    hint = f"expected the graph JSON written by '{PROG} compile -o'"
    try:
        data = json.loads(file.read_text())
    except UnicodeDecodeError:
        raise CliError(f"graph file {path!r} is not text; {hint}") from None
    except (json.JSONDecodeError, RecursionError) as exc:
        why = exc if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise CliError(f"graph file {path!r} is not valid JSON ({why}); {hint}") from None
    if not isinstance(data, dict):
        raise CliError(f"graph file {path!r} holds a JSON {type(data).__name__}, not an "
                       f"object; {hint}")
    if "schema" not in data:
        raise CliError(f"graph file {path!r} has no 'schema' key, so it is not samfuse graph "
                       f"JSON; {hint} (it starts with \"schema\": \"{SCHEMA}\")")
    return Graph.from_dict(data)


def load_inputs(graph: Graph, items: Sequence[str] | None,
                 nonfinite: bool = False) -> dict[str, FiberTree]:
    """Read ``NAME=FILE`` inputs in the graph's formats; names are checked first. Values
    that are NaN, infinite or beyond float32's range (1e40 would become inf) are refused
    unless ``nonfinite``: IEEE-754 special values are then simulated as they are."""
    given = name_value_pairs(items, "--input", "FILE")
    wanted = sorted(n for n, t in graph.tensors.items() if t.role == "input")
    extra = sorted(set(given) - set(wanted))
    if extra:
        raise CliError(f"graph {graph.name!r} has no input tensor(s) {extra}; it reads "
                       f"{wanted}")
    missing = [n for n in wanted if n not in given]
    if missing:
        raise CliError(f"graph {graph.name!r} needs --input for {missing} (it reads "
                       f"{wanted})")
    out = {}
    for name in wanted:
        path = Path(given[name])
        if not path.is_file():
            raise CliError(f"input {name!r}: no such file {str(path)!r}")
        spec = graph.tensors[name]
        check_size(name, path, spec.shape, spec.format, graph.dtype)
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # refused below
                out[name] = from_path(path, spec.format, dtype=graph.dtype,
                                      ndim=len(spec.shape))
        except (StorageError, FormatError) as exc:
            text = str(exc)
            if text.startswith(("cannot read", "tensor file", ".npy file")):
                raise  # already names the file
            raise CliError(f"input {name!r} ({str(path)!r}): {text}") from None
        if not nonfinite:
            refuse_nonfinite(f"input {name!r} ({str(path)!r})", out[name].vals,
                             "give --allow-nonfinite to simulate IEEE-754 special values "
                             "as they are")
    return out


def refuse_nonfinite(label: str, values: np.ndarray, hint: str) -> None:
    """One line for input values a float32 run cannot hold: NaN, infinite or beyond
    float32's range (1e40 would become inf)."""
    limit = float(np.finfo(np.float32).max)
    with np.errstate(invalid="ignore"):
        bad = np.flatnonzero(~np.isfinite(values) | (np.abs(values) > limit))
    if len(bad):
        raise CliError(f"{label}: {len(bad)} value(s) are NaN, infinite or beyond "
                       "float32's range (+-3.4e38), the first "
                       f"{np.asarray(values).flat[bad[0]]:g}; {hint}")




def check_size(name: str, path: Path, want: tuple[int, ...], fmt_spec: str,
                dtype: str) -> None:
    """Refuse, from the file header, an input whose shape differs from the graph's or whose
    storage would not fit in memory, before anything is allocated."""
    head = tensor_file_header(path)
    if head is None:
        return
    shape, nnz = head
    if len(want) == 1 and path.suffix.lower() == ".mtx" and mtx_vector_shape(shape):
        shape = mtx_vector_shape(shape)  # an n x 1 or 1 x n matrix stores a vector
    if shape != tuple(want):
        raise CliError(f"tensor {name!r}: shape {shape} but the graph expects {tuple(want)} "
                       f"(header of {str(path)!r})")
    from ir import Format

    try:
        fmt = Format.parse(fmt_spec, len(shape))
    except FormatError:
        return
    try:
        check_fits(f"input {name!r}", shape, fmt, dtype, nnz)
    except StorageError as exc:
        raise CliError(str(exc)) from None


@contextmanager
def still_running(label: str, delay: float = PROGRESS_DELAY,
              every: float = PROGRESS_EVERY) -> Iterator[None]:
    """Periodic "still running" lines on stderr for runs longer than ``delay`` seconds."""
    done = threading.Event()
    start = time.perf_counter()

    def tick() -> None:
        wait = delay
        while not done.wait(wait):
            print(f"{PROG}: {label}… {time.perf_counter() - start:.0f} s", file=sys.stderr,
                  flush=True)
            wait = every

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


# -- reporting ---------------------------------------------------------------------------

def write_outputs(res: SimResult, out_dir: Path) -> list[Path]:
    """Dense outputs (and any that is not a matrix) as .npy, sparse matrices as .mtx."""
    return [write_tensor(tree, out_dir, name) for name, tree in res.outputs.items()]


def write_trace(trace: Any, out_dir: Path, graph: str, backend: str) -> Path:
    path = safe_join(out_dir, f"{graph}.{backend}.trace")
    with atomic_path(path) as tmp:
        trace.write(tmp)
    return path


def say(*lines: str) -> None:
    for line in lines:
        print(line)




def read_tensor(name: str, path: str, ndim: int | None = None,
                 option: str = "--input") -> FiberTree:
    """A tensor file given with --input or --shape: .mtx, .npy or scipy .npz (an n x 1 or
    1 x n Matrix Market file as a vector where the expression's ``ndim`` is 1)."""
    if not Path(path).is_file():
        raise CliError(f"{option} {name}={path}: no such file")
    try:
        return from_path(path, ndim=ndim)
    except (ValueError, OSError) as exc:
        raise CliError(f"{option} {name}={path}: {exc}") from None




def input_densities(items: Sequence[str] | None) -> dict[str, float]:
    """``--density NAME=P`` pairs: the statistics the order search costs orders with."""
    out = {}
    for name, text in name_value_pairs(items, "--density", "P").items():
        try:
            out[name] = float(text)
        except ValueError:
            out[name] = -1.0
        if not 0.0 <= out[name] <= 1.0:
            raise CliError(f"--density {name}={text}: expected a fraction in [0, 1]")
    return out




def add_nonfinite(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-nonfinite", action="store_true",
                   help="accept NaN, infinite and out-of-range float32 input values (refused "
                   "by default)")


def check_workers(workers: int, error: type[Exception]) -> None:
    """``--workers`` of a study or tuning run: each is a local process (a pool of 10^5
    would exhaust memory before the first run)."""
    from ..studies._executors import MAX_WORKERS

    if not 1 <= workers <= MAX_WORKERS:
        raise error(f"--workers {workers}: expected 1 to {MAX_WORKERS} (parallel runs, each "
                    "a process of its own)")
