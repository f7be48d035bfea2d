"""A plain numpy interpreter of :class:`ir.Program`: the oracle for frontends.

It checks that a program computes what the model computes (against torch eager)
independently of the SAM lowering. Every tensor is a dense float64 array, so the
semantics are numpy's: functions apply to every entry (``exp(0) = 1`` where a compressed
tensor stores nothing, whereas SAM applies them to stored entries only), ``max`` reduces
implicit zeros too, and ``x / 0`` is ``inf``/``nan``. Use programs on which the two
agree (dense tensors, or sparse ones combined through a pattern, as the frontend's
masked softmax does).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from ir import Program, ProgramError, torch_numpy_view

from ._ast import Access, Assignment, BinOp, Call, Const, Expr, Neg, Reduction, accesses
from ._normalize import normalize, product_factors
from ._parse import parse

__all__ = ["evaluate"]

#: each function of an array, written into ``out`` when it is given (None: a new array)
_FUNCTIONS = {
    "relu": lambda x, out: np.maximum(x, 0.0, out=out),
    "exp": lambda x, out: np.exp(x, out=out),
    "rsqrt": lambda x, out: np.divide(1.0, np.sqrt(x, out=out), out=out),
}
_BINOPS = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}


def evaluate(program: Program, tensors: Mapping[str, Any],
             keep: Collection[str] | None = None) -> dict[str, np.ndarray]:
    """Run ``program`` on its inputs and weights; returns every defined tensor by name
    (only those in ``keep`` when it is given: a caller that reads a few of them need
    not hold the rest).

    ``tensors`` maps each of ``program.inputs`` to a numpy array, a scipy.sparse matrix
    or a torch tensor (dense or sparse; bool becomes 0/1). Results are float32 arrays
    (computed in float64); outputs are ``{n: result[n] for n in program.outputs}``.
    """
    missing = [n for n in program.inputs if n not in tensors]
    if missing:
        raise ProgramError(f"program {program.name!r} needs tensor(s) {missing}; got "
                           f"{sorted(tensors)}")
    defined = [st.target for st in program.statements]
    unknown = sorted(set(keep or ()) - set(defined))
    if unknown:
        raise ProgramError(f"program {program.name!r}: keep {unknown}: not computed by "
                           f"any statement (those are {defined})")
    env = {n: _operand(n, tensors[n], program.tensors[n].shape) for n in program.inputs}
    # the caller's own memory (a float64 array is used as given) is never overwritten
    pinned = [env[n] for n in program.inputs if _aliases(env[n], tensors[n])]
    # a float64 value is dropped after the last statement that reads it, and that
    # statement may overwrite it (an intermediate read once there): OGB-MAG's 736,389 x
    # 349 intermediates are 2 GB each in float64
    assigns = [normalize(parse(st.text)).assignment for st in program.statements]
    reads = [Counter(a.tensor for a in accesses(assign.rhs)) for assign in assigns]
    last = {n: k for k, read in enumerate(reads) for n in read}
    out = {}
    for k, st in enumerate(program.statements):
        dying = {n for n, times in reads[k].items()
                 if times == 1 and last[n] == k and n in defined}
        env[st.target] = _statement(assigns[k], env, dying, pinned)
        want = program.tensors[st.target].shape
        if env[st.target].shape != want:
            raise ProgramError(f"{st.where()} computes shape {env[st.target].shape}; "
                               f"{st.target!r} is declared {want}")
        if keep is None or st.target in keep:
            out[st.target] = env[st.target].astype(np.float32)
        for n in [n for n in env if last.get(n, -1) <= k]:
            del env[n]
    return out


#: a sparse matrix with more entries than this stays sparse (scipy CSR) where it is one
#: factor of a product with one other factor (elsewhere it is made dense when read):
#: OGB-Collab's adjacency (235,868² entries) would take 207 GiB dense
SPARSE_ABOVE = 1 << 26


def _operand(name: str, value: Any, shape: tuple[int, ...]) -> Any:
    """``value`` as a float64 array, or as a float64 CSR matrix when it is a large
    sparse matrix (:data:`SPARSE_ABOVE`)."""
    if len(shape) == 2 and shape[0] * shape[1] > SPARSE_ABOVE:
        import scipy.sparse as sp

        if type(value).__module__.startswith("torch") and \
                str(value.layout) != "torch.strided":
            coo = value.detach().coalesce() if str(value.layout) == "torch.sparse_coo" \
                else value.detach().to_sparse_coo().coalesce()
            rows, cols = coo.indices().numpy()
            value = sp.csr_array((coo.values().double().numpy(), (rows, cols)),
                                 shape=tuple(coo.shape))
        if sp.issparse(value):
            if tuple(value.shape) != tuple(shape):
                raise ProgramError(f"tensor {name!r}: shape {tuple(value.shape)} but the "
                                   f"program declares {tuple(shape)}")
            return sp.csr_array(value, dtype=np.float64)
    return _dense(name, value, shape)


def _aliases(arr: Any, value: Any) -> bool:
    """Whether the operand ``arr`` made of ``value`` may share the caller's memory."""
    value = torch_numpy_view(value)
    return isinstance(arr, np.ndarray) and isinstance(value, np.ndarray) and \
        np.may_share_memory(arr, value)


def _dense(name: str, value: Any, shape: tuple[int, ...]) -> np.ndarray:
    if type(value).__module__.startswith("torch"):  # without importing torch here
        value = value.detach()
        value = value.to_dense() if str(value.layout) != "torch.strided" else value
        value = value.double().numpy()
    elif hasattr(value, "toarray"):  # scipy.sparse
        value = value.toarray()
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != tuple(shape):
        raise ProgramError(f"tensor {name!r}: shape {arr.shape} but the program declares "
                           f"{tuple(shape)}")
    return arr


def _statement(assign: Assignment, env: Mapping[str, Any], dying: Collection[str] = (),
               pinned: Sequence[np.ndarray] = ()) -> np.ndarray:
    """One assignment (implicit reductions made explicit by ``normalize``). Values in
    ``dying`` (read once, for the last time) may be overwritten where no other value
    shares their memory; ``pinned`` arrays never are."""
    arrays = {n: v for n, v in env.items() if isinstance(v, np.ndarray)}
    spent = {n for n in dying if n in arrays and not any(
        m != n and np.may_share_memory(arrays[n], v) for m, v in arrays.items())}
    arr, labels = _eval(assign.rhs, env,
                        [*pinned, *(v for n, v in arrays.items() if n not in spent)])
    return _align(arr, labels, assign.target.indices)


def _eval(e: Expr, env: Mapping[str, Any], guard: Sequence[np.ndarray]
          ) -> tuple[np.ndarray, tuple[str, ...]]:
    """The value of ``e`` as an array with one axis per label (its free indices);
    operations may overwrite their operands except the arrays of ``guard``."""
    if isinstance(e, Access):
        arr = env[e.tensor]
        if hasattr(arr, "toarray"):  # a large sparse operand outside a two-factor product
            arr = arr.toarray()
        if arr.ndim != len(e.indices):
            raise ProgramError(f"{e} has {len(e.indices)} indices but {e.tensor!r} has "
                               f"rank {arr.ndim}")
        return arr, e.indices
    if isinstance(e, Const):
        return np.asarray(e.value, dtype=np.float64), ()
    if isinstance(e, Neg):
        arr, labels = _eval(e.operand, env, guard)
        return np.negative(arr, out=_scratch(arr, arr.shape, guard)), labels
    if isinstance(e, Call):
        arr, labels = _eval(e.arg, env, guard)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return _FUNCTIONS[e.fn](arr, _scratch(arr, arr.shape, guard)), labels
    if isinstance(e, BinOp):
        (a, la), (b, lb) = _eval(e.left, env, guard), _eval(e.right, env, guard)
        labels = la + tuple(i for i in lb if i not in la)
        a, b = _align(a, la, labels, expand=True), _align(b, lb, labels, expand=True)
        shape = np.broadcast_shapes(a.shape, b.shape)
        into = _scratch(a, shape, guard)
        into = _scratch(b, shape, guard) if into is None else into
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return _BINOPS[e.op](a, b, out=into), labels
    if isinstance(e, Reduction):
        if e.op == "sum" and isinstance(e.body, BinOp) and e.body.op == "*":
            return _contract(e, env, guard)
        arr, labels = _eval(e.body, env, guard)
        axes = tuple(labels.index(i) for i in e.indices)
        reduce = np.sum if e.op == "sum" else np.max
        return reduce(arr, axis=axes), tuple(i for i in labels if i not in e.indices)
    raise TypeError(f"not an expression node: {e!r}")


def _contract(e: Reduction, env: Mapping[str, Any], guard: Sequence[np.ndarray]
              ) -> tuple[np.ndarray, tuple[str, ...]]:
    """A sum of products as one ``einsum``: the broadcast product of a GPT layer's MLP
    (1024 x 768 x 3072 float64, 18 GiB) is never materialised."""
    factors = product_factors(e.body)
    sparse = [n for n, f in enumerate(factors) if isinstance(f, Access)
              and hasattr(env[f.tensor], "toarray") and len(f.indices) == 2]
    if len(factors) == 2 and len(sparse) == 1:
        got = _sparse_times(factors[sparse[0]], factors[1 - sparse[0]], e.indices, env,
                           guard)
        if got is not None:
            return got
    parts = [_eval(f, env, guard) for f in factors]
    names: dict[str, str] = {}
    for _, labels in parts:
        for i in labels:
            names.setdefault(i, chr(ord("a") + len(names)) if len(names) < 26
                             else chr(ord("A") + len(names) - 26))
    out = tuple(i for i in names if i not in e.indices)
    spec = ",".join("".join(names[i] for i in labels) for _, labels in parts) + "->" + \
        "".join(names[i] for i in out)
    with np.errstate(over="ignore", invalid="ignore"):
        arr = np.einsum(spec, *(np.asarray(a, dtype=np.float64) for a, _ in parts),
                        optimize=True)
    return arr, out


def _scratch(arr: np.ndarray, shape: tuple[int, ...], guard: Sequence[np.ndarray]
             ) -> np.ndarray | None:
    """``arr`` when an operation of result ``shape`` may overwrite it: a float64 array
    of that shape sharing no memory with ``guard`` (the values still to be read, and
    the caller's arrays); else None. Each operation writes over its operand where it
    can, so ``exp(a - max(a))`` over 736,389 x 349 entries holds one array, not three."""
    if not isinstance(arr, np.ndarray) or arr.dtype != np.float64 or arr.shape != shape \
            or not arr.flags.writeable:
        return None
    if any(np.may_share_memory(arr, v) for v in guard):
        return None
    return arr


def _sparse_times(a: Access, other: Expr, reduced: tuple[str, ...],
                  env: Mapping[str, Any], guard: Sequence[np.ndarray]
                  ) -> tuple[np.ndarray, tuple[str, ...]] | None:
    """``sum(reduced) a(p,q) * other(..q..)`` with ``a`` a large sparse matrix, as one
    sparse-times-dense product, when ``q`` alone is reduced and ``p`` is not in
    ``other`` (``None``: the caller densifies)."""
    p, q = a.indices
    if p == q or tuple(reduced) != (q,):
        return None
    dense, labels = _eval(other, env, guard)
    if q not in labels or p in labels:
        return None
    rest = tuple(i for i in labels if i != q)
    moved = _align(dense, labels, (q, *rest)).reshape(dense.shape[labels.index(q)], -1)
    matrix = env[a.tensor]
    if matrix.shape[1] != moved.shape[0]:
        raise ProgramError(f"{a}: {a.tensor!r} has {matrix.shape[1]} columns, the other "
                           f"factor {moved.shape[0]} entries along {q!r}")
    out = np.asarray(matrix @ moved).reshape(matrix.shape[0],
                                            *(dense.shape[labels.index(i)] for i in rest))
    return out, (p, *rest)


def _align(arr: np.ndarray, labels: tuple[str, ...], target: tuple[str, ...],
           expand: bool = False) -> np.ndarray:
    """Transpose ``arr`` to ``target`` order; ``expand`` adds size-1 axes for labels it
    lacks (numpy broadcasting does the rest)."""
    present = [t for t in target if t in labels]
    assert expand or len(present) == len(labels) == len(target), (labels, target)
    arr = np.transpose(arr, [labels.index(t) for t in present]) if labels else arr
    if expand:
        arr = np.reshape(arr, [arr.shape[present.index(t)] if t in labels else 1
                               for t in target])
    return arr
