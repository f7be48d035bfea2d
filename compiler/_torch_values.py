"""What the torch frontend's graph nodes evaluate to, and its error.

A node of the exported ATen graph translates to a :class:`View` of a program tensor (an
index renaming: transposes, permutes and size-1 reshapes make no statement), to a mask
wrapper only ``masked_fill``/``softmax`` may consume (:class:`Complement`,
:class:`Masked`), or to an :class:`Unsupported` result that fails only when used. Also
the node's model source line and ``nn.Module`` scope, which every statement records.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ._errors import CompileError

__all__ = ["FrontendError", "View", "Complement", "Masked", "Unsupported", "LETTERS",
           "LAYOUT_FORMATS", "node_source", "node_scope", "const_text", "norm_dim"]

LETTERS = "ijklmnopqrstuvwxyzabcdefgh"
LAYOUT_FORMATS = {torch.strided: "dense", torch.sparse_coo: "coo",
                  torch.sparse_csr: "csr", torch.sparse_csc: "csc"}
_TORCH_DIR = os.path.dirname(torch.__file__)
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in [^\n]*\n([^\n]*)')


class FrontendError(CompileError):
    """A model the frontend cannot translate; says which aten op and which model line."""

    def __init__(self, message: str, op: str = "", source: str = ""):
        self.op, self.where = op, source
        where = " ".join(p for p in (op and f"op {op}", source and f"at {source}") if p)
        super().__init__(f"{message}" + (f" [{where}]" if where else ""))


# -- values of graph nodes ---------------------------------------------------------------
@dataclass(frozen=True)
class View:
    """A program tensor seen through an index renaming: logical dim d is tensor mode
    ``modes[d]``, or an inserted size-1 dim when ``modes[d]`` is None."""

    tensor: str
    modes: tuple[int | None, ...]
    shape: tuple[int, ...]

    @classmethod
    def of(cls, tensor: str, shape: Sequence[int]) -> View:
        return cls(tensor, tuple(range(len(shape))), tuple(int(d) for d in shape))

    @property
    def rank(self) -> int:
        return len(self.shape)

    def access(self, idx: Sequence[str]) -> str:
        """Index-notation access with ``idx[d]`` for logical dim d (inserted dims drop)."""
        assert len(idx) == self.rank, (idx, self)
        by_mode = sorted((m, i) for m, i in zip(self.modes, idx, strict=True) if m is not None)
        names = [i for _, i in by_mode]
        return f"{self.tensor}({','.join(names)})" if names else self.tensor

    def permute(self, perm: Sequence[int]) -> View:
        return View(self.tensor, tuple(self.modes[p] for p in perm),
                    tuple(self.shape[p] for p in perm))

    def insert(self, d: int) -> View:
        return View(self.tensor, self.modes[:d] + (None,) + self.modes[d:],
                    self.shape[:d] + (1,) + self.shape[d:])

    def drop(self, d: int) -> View:
        assert self.modes[d] is None, "only inserted dims drop without a statement"
        return View(self.tensor, self.modes[:d] + self.modes[d + 1:],
                    self.shape[:d] + self.shape[d + 1:])


@dataclass(frozen=True)
class Complement:
    """``~mask`` (or ``mask == 0``) of a pattern tensor: only masked_fill may use it."""

    pattern: View


@dataclass(frozen=True)
class Masked:
    """``masked_fill(~P, -inf)``: ``values`` (= x·P) restricted to the stored entries of P;
    ``scores`` is x itself, which softmax exponentiates under P when x is dense there."""

    values: View
    pattern: View
    scores: View


@dataclass(frozen=True)
class Unsupported:
    """A node result that is an error only if something uses it (e.g. argmax indices)."""

    reason: str
    op: str
    source: str


def node_source(node: torch.fx.Node) -> str:
    """``file.py:LINE: code`` of the innermost frame of the user's model."""
    frames = _FRAME.findall(node.meta.get("stack_trace") or "")
    user = [f for f in frames if not os.path.abspath(f[0]).startswith(_TORCH_DIR)]
    if not user:
        return ""
    file, line, code = user[-1]
    return f"{os.path.basename(file)}:{line}: {code.strip()}"


def node_scope(node: torch.fx.Node) -> str:
    stack = node.meta.get("nn_module_stack") or {}
    return list(stack.values())[-1][0] if stack else ""


def const_text(value: float) -> str:
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"constant {value!r} is not finite")
    text = repr(value) if value != int(value) or abs(value) >= 1e15 else str(int(value))
    return f"({text})" if value < 0 else text


def norm_dim(d: int, rank: int) -> int:
    return d + rank if d < 0 else d
