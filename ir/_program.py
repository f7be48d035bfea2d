"""Einsum programs: what a frontend produces and the fusion pass consumes.

A program is a straight-line list of statements, each defining one tensor by one
expression in samfuse's index notation (``docs/compiler.md``), e.g.
``T(i,j) = sum(k) A(i,k) * X(k,j)`` or ``H(i,j) = relu(T(i,j) + b(j))``. Keeping the
expression as text makes a program printable, diffable and JSON-friendly; the compiler
parses it. Each statement remembers the frontend op and model source line it came from,
so that every later error can point back at the user's model.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Program", "ProgramError", "Statement", "TensorDecl", "TENSOR_ROLES"]

#: input: bound per run (activations, adjacency); weight: bound once (parameters,
#: constant masks); intermediate: defined by a statement and consumed by others;
#: output: defined by a statement and returned.
TENSOR_ROLES = ("input", "weight", "intermediate", "output")

PROGRAM_SCHEMA = 1


class ProgramError(ValueError):
    """A program that is not well formed (undeclared tensor, double definition, ...)."""


@dataclass(frozen=True)
class TensorDecl:
    """A tensor of the program: its shape, storage format spec and role."""

    name: str
    shape: tuple[int, ...]
    format: str = "dense"  # any ir.Format spec ("dense", "csr", "dc:1,0", ...)
    role: str = "input"
    dtype: str = "float32"

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        if self.role not in TENSOR_ROLES:
            raise ProgramError(f"tensor {self.name!r}: role {self.role!r} is not one of "
                               f"{TENSOR_ROLES}")


@dataclass(frozen=True)
class Statement:
    """``target`` defined by ``text`` (a whole assignment in index notation)."""

    target: str
    text: str  # "T(i,j) = sum(k) A(i,k) * X(k,j)"
    reads: tuple[str, ...]  # tensors read by the right-hand side, first use first
    op: str = ""  # frontend op it came from, e.g. "aten.mm.default"
    source: str = ""  # model source line, e.g. "models.py:41: h = self.adj @ x"
    scope: str = ""  # owning module path, e.g. "layers.0" (partial fusion groups by it)

    def __post_init__(self) -> None:
        object.__setattr__(self, "reads", tuple(self.reads))

    def where(self) -> str:
        """Where the statement came from, for error messages."""
        origin = " ".join(part for part in (self.op, self.source and f"({self.source})")
                          if part)
        return f"{self.target}: {self.text}" + (f"  [{origin}]" if origin else "")


@dataclass
class Program:
    """Tensors and the statements that define the non-input ones, in execution order."""

    tensors: dict[str, TensorDecl]
    statements: list[Statement]
    inputs: list[str]  # inputs and weights, in binding order
    outputs: list[str]
    name: str = "program"
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.validate()

    # -- queries ---------------------------------------------------------------------
    def producer(self, tensor: str) -> Statement | None:
        for st in self.statements:
            if st.target == tensor:
                return st
        return None

    def consumers(self, tensor: str) -> list[Statement]:
        return [st for st in self.statements if tensor in st.reads]

    def statement(self, target: str) -> Statement:
        st = self.producer(target)
        if st is None:
            raise ProgramError(f"no statement defines {target!r}; defined: "
                               f"{[s.target for s in self.statements]}")
        return st

    # -- checks ----------------------------------------------------------------------
    def validate(self) -> None:
        """Every tensor declared, defined once, before use; inputs never defined."""
        known = set(self.tensors)
        for name in (*self.inputs, *self.outputs):
            if name not in known:
                raise ProgramError(f"{name!r} is listed as an input/output but not declared")
        defined = set(self.inputs)
        for st in self.statements:
            for name in (st.target, *st.reads):
                if name not in known:
                    raise ProgramError(f"undeclared tensor {name!r} in {st.where()}")
            for name in st.reads:
                if name not in defined:
                    raise ProgramError(f"{name!r} is read before it is defined in "
                                       f"{st.where()}")
            if st.target in defined:
                what = "an input" if st.target in self.inputs else "defined twice"
                raise ProgramError(f"{st.target!r} is {what}: {st.where()}")
            defined.add(st.target)
        for name in self.outputs:
            if name not in defined:
                raise ProgramError(f"output {name!r} is never defined")

    # -- text and JSON ---------------------------------------------------------------
    def __str__(self) -> str:
        lines = [f"program {self.name}"]
        for name in self.inputs:
            t = self.tensors[name]
            lines.append(f"  {t.role:6} {name}{list(t.shape)}: {t.format}")
        for st in self.statements:
            lines.append(f"  {st.text}" + (f"    # {st.source}" if st.source else ""))
        lines.append(f"  return {', '.join(self.outputs)}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"schema": PROGRAM_SCHEMA, "name": self.name,
                "tensors": [asdict(t) for t in self.tensors.values()],
                "statements": [asdict(s) for s in self.statements],
                "inputs": list(self.inputs), "outputs": list(self.outputs),
                "meta": self.meta}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Program:
        if data.get("schema") != PROGRAM_SCHEMA:
            raise ProgramError(f"program schema {data.get('schema')!r}: expected "
                               f"{PROGRAM_SCHEMA}")
        tensors = [TensorDecl(**t) for t in data["tensors"]]
        return cls({t.name: t for t in tensors},
                   [Statement(**s) for s in data["statements"]],
                   list(data["inputs"]), list(data["outputs"]),
                   data.get("name", "program"), dict(data.get("meta", {})))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    @classmethod
    def from_json(cls, text: str) -> Program:
        return cls.from_dict(json.loads(text))

    @classmethod
    def build(cls, tensors: Iterable[TensorDecl], statements: Iterable[Statement],
              name: str = "program") -> Program:
        """Inputs are the declared tensors no statement defines; outputs have role output."""
        decls = {t.name: t for t in tensors}
        sts = list(statements)
        defined = {s.target for s in sts}
        inputs = [n for n in decls if n not in defined]
        outputs = [n for n, t in decls.items() if t.role == "output"]
        return cls(decls, sts, inputs, outputs, name)
