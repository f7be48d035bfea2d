"""PyTorch module → :class:`ir.Program`: the torch.export frontend.

``from_torch`` exports the module with ``torch.export.export`` (non-strict: strict
export cannot guard sparse parameters on torch 2.13), walks the ATen graph once
(``_torch_translate``) and writes each op as one or more statements in samfuse's index
notation (``docs/frontend.md`` has the op table). Tensor views (transpose, permute,
unsqueeze, size-1 reshapes) are index renamings and produce no statement
(``_torch_values``). Every statement records the aten op, the model source line and the
owning ``nn.Module`` path, so that later passes can group by layer and point errors back
at the model. ``torch_weights``/``torch_inputs``/``to_array`` bind a module's tensors to
the program's names as numpy/scipy arrays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from ir import Program

from ._torch_translate import Translator
from ._torch_values import FrontendError

__all__ = ["FrontendError", "from_torch", "torch_weights", "torch_inputs", "to_array"]


# -- public API --------------------------------------------------------------------------
def from_torch(module: torch.nn.Module, example_inputs: tuple, *,
               formats: Mapping[str, str] | None = None, name: str | None = None) -> Program:
    """Export ``module`` on ``example_inputs`` and translate it to an einsum program.

    Tensors are named after the forward arguments (inputs) and the parameter/buffer
    FQNs with dots replaced by underscores (weights; ``program.meta["weights"]`` maps
    each to its FQN for :func:`torch_weights`). ``formats`` overrides the format of any
    program tensor by name; sparse example tensors default to their layout
    (COO → ``"coo"``, all levels compressed; CSR → ``"csr"``; CSC → ``"csc"``).
    """
    try:
        ep = torch.export.export(module, tuple(example_inputs), strict=False)
    except Exception as e:  # torch raises many types; keep the cause chained
        raise FrontendError(f"torch.export could not export {type(module).__name__}: "
                            f"{type(e).__name__}: {str(e).splitlines()[0]}") from e
    tr = Translator(ep, formats or {})
    inputs, outputs = tr.run()
    unknown = sorted(set(tr.formats) - set(tr.tensors))
    if unknown:
        raise FrontendError(f"formats names unknown tensor(s) {unknown}; the program's "
                            f"tensors are {sorted(tr.tensors)}")
    for tensor, fqn in tr.weights.items():
        if _lookup(module, fqn) is None:
            raise FrontendError(f"weight {tensor!r} ({fqn!r}) is not an attribute of the "
                                "module (a tensor created inside forward?); register it "
                                "as a buffer")
    return Program(tr.tensors, tr.statements, inputs, outputs,
                   name or type(module).__name__, {"weights": dict(tr.weights),
                                                   "frontend": "torch.export"})


def _lookup(module: torch.nn.Module, fqn: str) -> torch.Tensor | None:
    obj: Any = module
    for part in fqn.split("."):
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, torch.Tensor) else None


def to_array(t: Any) -> Any:
    """A torch tensor as numpy (dense, bool → float32) or scipy.sparse (2-D COO/CSR/CSC)."""
    import scipy.sparse as sp

    if not isinstance(t, torch.Tensor):
        return t
    t = t.detach()
    if t.dtype == torch.bool:
        t = t.to(torch.float32)
    if t.layout == torch.sparse_coo and t.dim() == 2:
        t = t.coalesce()
        i = t.indices().numpy()
        return sp.coo_array((t.values().numpy(), (i[0], i[1])), shape=tuple(t.shape))
    if t.layout in (torch.sparse_csr, torch.sparse_csc):
        csr = t.layout == torch.sparse_csr
        ptr = (t.crow_indices() if csr else t.ccol_indices()).numpy()
        idx = (t.col_indices() if csr else t.row_indices()).numpy()
        cls = sp.csr_array if csr else sp.csc_array
        return cls((t.values().numpy(), idx, ptr), shape=tuple(t.shape))
    return np.asarray(t.to_dense() if t.layout != torch.strided else t)


def torch_weights(module: torch.nn.Module, program: Program) -> dict[str, Any]:
    """The program's weights (parameters, buffers) taken from ``module``, by tensor name."""
    out = {}
    for tensor, fqn in program.meta.get("weights", {}).items():
        value = _lookup(module, fqn)
        if value is None:
            raise FrontendError(f"module {type(module).__name__} has no tensor {fqn!r} "
                                f"(weight {tensor!r} of program {program.name!r})")
        out[tensor] = to_array(value)
    return out


def torch_inputs(program: Program, example_inputs: Sequence[Any]) -> dict[str, Any]:
    """Positional forward arguments bound to the program's input names."""
    names = [n for n in program.inputs if program.tensors[n].role == "input"]
    if len(names) != len(example_inputs):
        raise FrontendError(f"program {program.name!r} takes inputs {names}; got "
                            f"{len(example_inputs)} tensors")
    return {n: to_array(t) for n, t in zip(names, example_inputs, strict=True)}
