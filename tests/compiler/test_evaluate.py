"""compiler.evaluate: the numpy interpreter of einsum programs, checked against numpy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import compiler
from ir import Program, ProgramError, Statement, TensorDecl


def program(decls: dict[str, tuple], *lines: str, outputs: tuple[str, ...] = ()) -> Program:
    """Tensors from ``decls`` (name → shape); statements from ``lines``; the last target
    (or ``outputs``) is the output."""
    sts = []
    for line in lines:
        target = compiler.parse(line).target.tensor
        reads = [a.tensor for a in compiler._ast.accesses(compiler.parse(line).rhs)]
        sts.append(Statement(target, line, tuple(dict.fromkeys(reads))))
    outs = outputs or (sts[-1].target,)
    tensors = [TensorDecl(n, s, role="output" if n in outs else
                          "intermediate" if any(x.target == n for x in sts) else "input")
               for n, s in decls.items()]
    return Program.build(tensors, sts)


RNG = np.random.default_rng(0)
B, C, v = RNG.standard_normal((4, 5)), RNG.standard_normal((5, 3)), RNG.standard_normal(5)


@pytest.mark.parametrize("line, want", [
    ("X(i,j) = sum(k) B(i,k) * C(k,j)", B @ C),
    ("X(i,j) = B(i,k) * C(k,j)", B @ C),  # implicit sum
    ("X(j,i) = B(i,k) * C(k,j)", (B @ C).T),
    ("y(i) = B(i,k) * v(k)", B @ v),
    ("y(i) = max(k) B(i,k)", B.max(1)),
    ("s = sum(i,k) B(i,k)", B.sum()),
    ("Y(i,k) = relu(B(i,k)) - exp(v(k)) / 2", np.maximum(B, 0) - np.exp(v) / 2),
    ("Y(i,k) = rsqrt(B(i,k) * B(i,k) + 1)", 1 / np.sqrt(B * B + 1)),
    ("Y(i,k) = -B(i,k) + v(k) * B(i,k)", -B + v * B),
    ("y(i) = relu(sum(k) B(i,k)) + 1", np.maximum(B.sum(1), 0) + 1),
    ("y(k) = sum(i) B(i,k) * sum(j) C(k,j)", B.sum(0) * C.sum(1)),
])
def test_statement_matches_numpy(line, want):
    shapes = {"B": (4, 5), "C": (5, 3), "v": (5,)}
    target = compiler.parse(line).target
    sizes = {"i": 4, "k": 5, "j": 3}
    shapes[target.tensor] = tuple(sizes[i] for i in target.indices)
    p = program(shapes, line)
    got = compiler.evaluate(p, {"B": B, "C": C, "v": v})[target.tensor]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert got.dtype == np.float32


def test_chained_statements_and_every_tensor_returned():
    p = program({"B": (4, 5), "C": (5, 3), "T": (4, 3), "m": (4,), "Y": (4, 3)},
                "T(i,j) = B(i,k) * C(k,j)", "m(i) = max(j) T(i,j)",
                "Y(i,j) = exp(T(i,j) - m(i))")
    out = compiler.evaluate(p, {"B": B, "C": C})
    t = B @ C
    assert set(out) == {"T", "m", "Y"}
    np.testing.assert_allclose(out["Y"], np.exp(t - t.max(1, keepdims=True)), rtol=1e-5)


def test_accepts_scipy_and_torch_inputs():
    p = program({"B": (4, 5), "C": (5, 3), "X": (4, 3)}, "X(i,j) = B(i,k) * C(k,j)")
    for b, c in [(sp.csr_array(B), torch.from_numpy(C)),
                 (torch.from_numpy(B).to_sparse(), sp.coo_array(C)),
                 (torch.from_numpy(B > 0), C)]:
        want = (B > 0) @ C if isinstance(b, torch.Tensor) and b.dtype == torch.bool else B @ C
        got = compiler.evaluate(p, {"B": b, "C": c})["X"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_dense_semantics_of_functions_on_unstored_entries():
    """exp applies to every entry, implicit zeros included (SAM would skip them)."""
    p = program({"B": (2, 2), "Y": (2, 2)}, "Y(i,j) = exp(B(i,j))")
    got = compiler.evaluate(p, {"B": sp.csr_array(np.diag([1.0, 2.0]))})["Y"]
    np.testing.assert_allclose(got, np.exp(np.diag([1.0, 2.0])), rtol=1e-6)


def test_errors():
    p = program({"B": (4, 5), "y": (4,)}, "y(i) = sum(k) B(i,k)")
    with pytest.raises(ProgramError, match=r"needs tensor\(s\) \['B'\]"):
        compiler.evaluate(p, {})
    with pytest.raises(ProgramError, match=r"tensor 'B': shape \(5, 4\)"):
        compiler.evaluate(p, {"B": B.T})
    bad = program({"B": (4, 5), "y": (5,)}, "y(i) = sum(k) B(i,k)")
    with pytest.raises(ProgramError, match=r"computes shape \(4,\)"):
        compiler.evaluate(bad, {"B": B})


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=3, max_dims=3, max_side=4),
                  elements=st.floats(-10, 10)),
       st.sampled_from(["sum", "max"]))
def test_reductions_random(x, op):
    p = program({"A": x.shape, "y": (x.shape[1],)}, f"y(j) = {op}(i,k) A(i,j,k)")
    want = x.sum((0, 2)) if op == "sum" else x.max((0, 2))
    np.testing.assert_allclose(compiler.evaluate(p, {"A": x})["y"], want, rtol=1e-5,
                               atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 9), st.integers(2, 9), st.integers(1, 5), st.floats(0.0, 0.6),
       st.booleans(), st.integers(0, 2**31 - 1))
def test_a_large_sparse_factor_stays_sparse_and_gives_numpys_result(n, m, f, density,
                                                                    as_torch, seed):
    """Above SPARSE_ABOVE entries a sparse matrix is multiplied sparse (OGB-Collab's
    adjacency would take 207 GiB dense): the threshold is lowered so small matrices take
    that path, and the result must be numpy's dense one, also when the matrix appears
    outside a two-factor product (made dense there) or transposed in the product."""
    import compiler._evaluate as ev

    rng = np.random.default_rng(seed)
    a = sp.random(n, m, density=density, format="csr", random_state=rng, dtype=np.float32)
    x, y = rng.standard_normal((m, f)), rng.standard_normal((n, f))
    prog = program({"A": (n, m), "X": (m, f), "Y": (n, f), "T": (n, f), "U": (m, f),
                    "V": (n, f), "W": (n, m)},
                   "T(i,j) = A(i,k) * X(k,j)", "U(k,j) = A(i,k) * Y(i,j)",
                   "V(i,j) = A(i,k) * X(k,j) * X(k,j) + T(i,j)", "W(i,k) = relu(A(i,k))",
                   outputs=("T", "U", "V", "W"))
    given_a = torch.from_numpy(a.toarray()).to_sparse_csr() if as_torch else a
    old, ev.SPARSE_ABOVE = ev.SPARSE_ABOVE, 0
    try:
        got = compiler.evaluate(prog, {"A": given_a, "X": x, "Y": y})
    finally:
        ev.SPARSE_ABOVE = old
    dense = a.toarray().astype(np.float64)
    t = dense @ x
    np.testing.assert_allclose(got["T"], t, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["U"], dense.T @ y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["V"], dense @ (x * x) + t, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["W"], np.maximum(dense, 0), rtol=1e-6)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.floats(0.0, 1.0), st.booleans(),
       st.sampled_from(["numpy", "torch", "float32"]), st.integers(0, 2**31 - 1))
def test_chains_overwrite_only_temporaries_and_equal_numpy_exactly(n, m, density,
                                                                   sparse_a, held, seed):
    """Operations write over their temporaries, and a statement reading a value for the
    last time over that value; each float64 value is dropped after its last reader.
    The results must be numpy's float64 ones to the bit, every tensor is still returned
    (or those kept), and no caller's memory changes: a float64 ``W`` (numpy or torch)
    is used as given, ``V`` is a view of it that dies in ``U``'s statement, and ``A`` and
    ``X`` are read again after the chains that consume them."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, m)) * (rng.random((n, m)) < density)
    x, b, w = rng.standard_normal((n, m)), rng.standard_normal(m), rng.standard_normal((m, n))
    given_a = sp.csr_array(a) if sparse_a else a
    given_w = {"numpy": w, "torch": torch.from_numpy(w), "float32": w.astype(np.float32)}[held]
    w = w.astype(np.float32).astype(np.float64) if held == "float32" else w
    copies = a.copy(), x.copy(), b.copy(), w.copy()
    prog = program({"A": (n, m), "X": (n, m), "b": (m,), "W": (m, n), "S": (n, m),
                    "z": (n,), "E": (n, m), "P": (n, m), "R": (n, m), "Q": (n, m),
                    "V": (n, m), "U": (n, m)},
                   "S(i,j) = A(i,j) * X(i,j) + b(j)", "z(i) = max(j) S(i,j)",
                   "E(i,j) = exp(S(i,j) - z(i))", "P(i,j) = -E(i,j) / sum(k) E(i,k)",
                   "R(i,j) = relu(-(A(i,j) - X(i,j))) + rsqrt(E(i,j) * E(i,j) + 1)",
                   "Q(i,j) = P(i,j) * A(i,j) - X(i,j)", "V(i,j) = W(j,i)",
                   "U(i,j) = exp(-V(i,j)) * 2",
                   outputs=("E", "P", "R", "Q", "U"))
    got = compiler.evaluate(prog, {"A": given_a, "X": x, "b": b, "W": given_w})
    s = a * x + b
    e = np.exp(s - s.max(1)[:, None])
    p = -e / e.sum(1)[:, None]
    want = {"S": s, "z": s.max(1), "E": e, "P": p,
            "R": np.maximum(-(a - x), 0) + 1 / np.sqrt(e * e + 1), "Q": p * a - x,
            "V": w.T, "U": np.exp(-w.T) * 2}
    assert set(got) == set(want)
    for name, value in want.items():
        np.testing.assert_array_equal(got[name], value.astype(np.float32), err_msg=name)
    for given_value, before in zip((a, x, b, w), copies, strict=True):
        np.testing.assert_array_equal(given_value, before)
    kept = compiler.evaluate(prog, {"A": given_a, "X": x, "b": b, "W": given_w},
                             keep=["P", "U"])
    assert set(kept) == {"P", "U"}
    np.testing.assert_array_equal(kept["U"], got["U"])
    with pytest.raises(ProgramError, match=r"keep \['A'\]: not computed"):
        compiler.evaluate(prog, {"A": given_a, "X": x, "b": b, "W": given_w}, keep=["A"])
