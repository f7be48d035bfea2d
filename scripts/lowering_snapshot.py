#!/usr/bin/env python
"""Snapshot every graph the compiler lowers, to check a refactoring changed none of them.

Compiles a fixed set of expressions (every dataflow order of each, with formats, blocks,
lanes, functions, epilogues and deep epilogues) and the bundled models
(``compiler.models`` at their ``tiny`` size under the unfused, by-scope and fused
schedules) and writes one line per compilation: its key and the graph's JSON (or the
lowering's error message). Run it before and after a change and compare the files:

    .venv/bin/python scripts/lowering_snapshot.py /tmp/before.txt
    ...edit...
    .venv/bin/python scripts/lowering_snapshot.py /tmp/after.txt --compare /tmp/before.txt

The snapshot is a working file for one change, not a golden file the tests read.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections.abc import Iterator
from itertools import permutations

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from compiler import Access, CompileError, compile_expression, compile_model, parse  # noqa: E402
from compiler._ast import accesses  # noqa: E402

#: (expression, formats, index sizes, extra options): each compiled in every order
EXPRESSIONS: list[tuple[str, dict[str, str], dict[str, int], dict]] = [
    ("X(i,j) = B(i,k) * C(k,j)", {"B": "csr", "C": "csr"}, {}, {}),
    ("X(i,j) = B(i,k) * C(k,j)", {"B": "csr", "C": "dense", "X": "csr"}, {}, {}),
    ("X(i,j) = B(i,k) * C(k,j)", {"B": "csc", "C": "dcsr", "X": "dcsr"}, {}, {}),
    ("X(i,l) = A(i,j) * B(j,k) * H(k,l)", {"A": "csr", "B": "csr"}, {}, {}),
    ("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", {"B": "dcc"}, {}, {}),
    ("X(i,j,l) = B(i,j,k) * C(k,l)", {"B": "dcc"}, {}, {}),
    ("X(i,j,l) = B(i,k) * C(k,j,l)", {"B": "csr", "C": "dcc"}, {}, {}),
    ("y(i) = A(i,j) * x(j)", {"A": "csr"}, {}, {}),
    ("y(i) = A(i,j) * x(j)", {"A": "csr", "x": "sparse"}, {}, {}),
    ("X(i,j) = A(i,j) + B(i,j)", {"A": "csr", "B": "csr", "X": "csr"}, {}, {}),
    ("X(i,j) = A(i,j) - B(i,j) * 2", {"A": "dcsr", "B": "csr", "X": "dcsr"}, {}, {}),
    ("X(i,j) = A(i,j) / B(i,j) + 1", {"A": "csr"}, {}, {}),
    ("X(i,j) = -A(i,j) * 3 - 2", {"A": "csr", "X": "csr"}, {}, {}),
    ("Y(i,j) = relu(sum(k) A(i,k) * W(k,j) + b(j))", {"A": "csr"}, {}, {}),
    ("Y(i,j) = exp(A(i,j)) * M(i,j)", {"M": "csr", "Y": "csr"}, {}, {}),
    ("Y(i,j) = rsqrt(A(i,j) + 1) * M(i,j)", {"M": "csr"}, {}, {}),
    ("S(i,j) = M(i,j) * Q(i,d) * K(j,d)", {"M": "csr", "S": "csr"}, {}, {}),
    ("Y(i,j) = X(i,j) * sum(k) B(i,k) * c(k)", {"B": "csr"}, {}, {}),
    ("Y(i,j) = exp(Z(i,j) - max(j2) Z(i,j2)) / sum(j3) exp(Z(i,j3) - max(j4) Z(i,j4))",
     {}, {}, {}),
    ("Y(i,j) = sum(k) A(i,k) * sum(k2) X(k,k2) * W(k2,j)", {"A": "csr", "X": "csr"}, {},
     {}),
    ("Y(i,j) = relu(sum(k2) (sum(k3) A(i,k3) * X(k3,k2)) * N(j,k2) + b(j))",
     {"A": "csr"}, {}, {}),
    ("Y(i,j) = sum(k) X(i,k) * S(j,k) + sum(k2) (sum(k3) A(i,k3) * Z(k3,k2)) * N(j,k2)",
     {"A": "csr", "X": "csr"}, {}, {}),
    ("X(i,j) = sum(k,l) B(i,k,l) * C(k,l,j)", {"B": "dcc"}, {}, {}),
    ("X(i,j) = P(i,j) * exp(S(i,j) - m(i))", {"P": "csr", "S": "csr", "X": "csr"}, {}, {}),
    ("X(i,j) = A(i,k) * B(k,j)", {"A": "csr", "X": "csr"}, {},
     {"par": {"i": 2}}),
    ("X(i,j) = A(i,k) * B(k,j)", {"A": "csr", "X": "csr"}, {},
     {"par": {"j": 2}, "partition": "block"}),
    ("X(i,j) = A(i,k) * B(k,j)", {"A": "csr", "X": "csr"}, {}, {"par": {"i": 2, "j": 2}}),
    ("X(i,j) = A(i,k) * B(k,j)", {"A": "csr"}, {}, {"block": {"i": 2, "k": 2, "j": 2}}),
    ("S(i,j) = M(i,j) * Q(i,d) * K(j,d)", {"M": "csr", "S": "csr"}, {},
     {"block": {"i": 2, "j": 2}}),
    ("Y(i,j) = relu(sum(k) A(i,k) * W(k,j) + b(j))", {"A": "csr"}, {},
     {"block": {"i": 2, "k": 2}}),
    ("y(i) = A(i,j) * x(j)", {"A": "csr"}, {}, {"dtype": "int32"}),
    ("y(i) = A(i,j) * x(j) * 1.5", {"A": "csr"}, {}, {"dtype": "int32"}),
    ("X(i,j) = 2 / A(i,j)", {"A": "csr"}, {}, {}),
    ("X(i,j) = A(i,j) * (1 / 0)", {"A": "csr"}, {}, {}),
    ("X(i,j) = A(i,j) * (6 / 4 - 2 * 0.5 + 1)", {"A": "csr"}, {}, {}),
    ("X(i,j) = (2 - A(i,j)) / 4 + 0", {"A": "csr", "X": "csr"}, {}, {}),
    ("X(i,j) = (2 - A(i,j)) / 4 - 1 + B(i,j)", {"B": "csr"}, {}, {}),
    ("X(i,j) = relu(A(i,j)) + exp(B(i,j)) * 1", {"A": "csr", "X": "csr"}, {}, {}),
    ("X(i,j) = rsqrt(4) * A(i,j)", {"A": "csr"}, {}, {}),
]
SIZE = {"i": 4, "j": 3, "k": 5, "l": 2, "d": 2, "k2": 3, "k3": 4, "j2": 3, "j3": 3, "j4": 3}
MODEL_SCHEDULES = ("unfused", "by_scope", "fused")


def _accesses(expr: str) -> list[Access]:
    assign = parse(expr)
    return [*accesses(assign.rhs), assign.target]


def _indices(expr: str) -> list[str]:
    return sorted({v for acc in _accesses(expr) for v in acc.indices})


def _shapes(expr: str) -> dict[str, tuple[int, ...]]:
    return {a.tensor: tuple(SIZE[v] for v in a.indices) for a in _accesses(expr)}


def expression_graphs() -> Iterator[tuple[str, str]]:
    """(key, graph JSON or error) for every expression in every order, then the search."""
    for n, (expr, formats, _, opts) in enumerate(EXPRESSIONS):
        shapes = _shapes(expr)
        for order in [None, *permutations(_indices(expr))]:
            key = f"expr{n} {expr} {formats} {opts} order={order}"
            try:
                graph = compile_expression(expr, formats, shapes, order=order, **opts)
            except CompileError as e:
                yield key, f"ERROR {type(e).__name__}: {e}"
                continue
            yield key, graph.to_json()


def model_graphs() -> Iterator[tuple[str, str]]:
    """(key, graph JSON) of every kernel of every bundled model, per schedule."""
    from compiler import from_torch
    from compiler.models import MODELS
    from ir import Schedule
    for name, cls in MODELS.items():
        model = cls.from_config("tiny")
        program = from_torch(model, model.example_inputs(), formats=model.sparse_formats)
        yield f"model {name} program", "\n".join(st.text for st in program.statements)
        for sched in MODEL_SCHEDULES:
            compiled = compile_model(program, getattr(Schedule, sched)(program))
            for reg in compiled.regions:
                for k in reg.kernels:
                    yield f"model {name} {sched} {reg.name} {k.target}", k.graph.to_json()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="snapshot file to write")
    ap.add_argument("--compare", metavar="BEFORE", help="a snapshot to compare with")
    ap.add_argument("--no-models", action="store_true", help="expressions only")
    args = ap.parse_args(argv)
    found = [*expression_graphs(), *([] if args.no_models else model_graphs())]
    lines = [f"{key}\t{text!r}" for key, text in found]
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    errors = sum(text.startswith("ERROR ") for _, text in found)
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]
    print(f"{len(lines)} compilations ({len(lines) - errors} graphs, {errors} refused), "
          f"sha256 {digest}")
    if args.compare:
        with open(args.compare) as f:
            before = f.read().splitlines()
        differ = [a.split("\t")[0] for a, b in zip(before, lines, strict=False) if a != b]
        if len(before) != len(lines) or differ:
            print(f"DIFFERENT: {len(before)} vs {len(lines)} lines; first differing: "
                  f"{differ[:3]}")
            return 1
        print(f"identical to {args.compare}: {len(lines)} of {len(lines)} byte for byte")
    return 0


if __name__ == "__main__":
    sys.exit(main())
