"""PyTorch module → MLIR text through torch-mlir's FX importer: the second path into the
MLIR frontend, and how its tests get a ``.mlir`` file for every bundled model.

``torch_mlir.fx.export_and_import`` exports the module (``torch.export``, non-strict),
freezes its parameters as constants and lowers it to linalg on tensors. A frozen program
cannot hold a sparse constant (the importer reads a literal's storage), so sparse
buffers become leading function arguments carrying their ``#sparse_tensor.encoding``;
the function's arguments are then renamed after the buffers and ``forward``'s
parameters, so that ``from_mlir`` names them as ``from_torch`` does.
"""

from __future__ import annotations

import inspect
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ._mlir_types import MlirError

__all__ = ["MlirExport", "torch_to_mlir"]


@dataclass
class MlirExport:
    """The module as MLIR text, and the tensors its function takes, in order."""

    text: str
    args: tuple[Any, ...]
    names: tuple[str, ...]


class _Lifted(torch.nn.Module):
    """``module`` with its sparse buffers passed in as the leading arguments."""

    def __init__(self, module: torch.nn.Module, names: Sequence[str]):
        super().__init__()
        self.module, self.names = module, list(names)

    def forward(self, *args: Any) -> Any:
        n = len(self.names)
        return torch.func.functional_call(self.module, dict(zip(self.names, args[:n],
                                                                strict=True)), args[n:])


def torch_to_mlir(module: torch.nn.Module, example_inputs: Sequence[Any], *,
                  elide: bool = False, lift: Sequence[str] = ()) -> MlirExport:
    """Export ``module`` on ``example_inputs`` to linalg-on-tensors MLIR text.

    Sparse buffers, and the buffers named in ``lift`` (e.g. a model's
    ``sparse_formats``: a bool mask meant to be stored sparse), become arguments; the
    other parameters and buffers are constants. ``elide`` leaves their values out of the
    text (``dense_resource`` without a blob), as large models are shared.
    """
    try:
        from torch_mlir import fx
    except ImportError:
        raise MlirError("torch_to_mlir needs the torch-mlir wheel: pip install "
                        "'samfuse[mlir]'") from None

    buffers = dict(module.named_buffers())
    sparse = [n for n, b in buffers.items()
              if b.layout != torch.strided or n in lift or n.replace(".", "_") in lift]
    args = tuple(module.get_buffer(n) for n in sparse) + tuple(example_inputs)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support")
            mod = fx.export_and_import(_Lifted(module, sparse), *args,
                                       output_type="linalg-on-tensors")
    except Exception as e:  # torch and the importer raise many types; keep the cause
        raise MlirError(f"torch-mlir could not import {type(module).__name__}: "
                        f"{type(e).__name__}: {str(e).splitlines()[0]}") from e
    text = mod.operation.get_asm(large_resource_limit=0) if elide else str(mod)
    params = [p for p in inspect.signature(module.forward).parameters
              if p not in ("self",)]
    names = [n.replace(".", "_") for n in sparse] + params[:len(example_inputs)]
    final = []
    for n, name in enumerate(names):
        if re.fullmatch(r"[A-Za-z_]\w*", name) and f"%{name}" not in text:
            text = re.sub(rf"%arg{n}\b", f"%{name}", text)
        else:
            name = f"arg{n}"
        final.append(name)
    return MlirExport(text, args, tuple(final))
