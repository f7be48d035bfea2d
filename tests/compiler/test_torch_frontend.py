"""compiler.from_torch: every supported op and a few whole models, each translated
program evaluated with compiler.evaluate and compared with torch eager."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

import compiler
from ir import Program

# torch's "sparse CSR support is in beta" and "invariant checks disabled": known, not news
pytestmark = pytest.mark.filterwarnings("ignore:.*[Ss]parse.*:UserWarning")


class Fn(nn.Module):
    """Wrap a function of tensors as a module (the source line is the lambda's)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def translate_and_check(module: nn.Module, args: tuple, formats=None, atol=1e-5) -> Program:
    """from_torch, then evaluate the program and compare every output with torch eager."""
    module = module.eval()
    program = compiler.from_torch(module, args, formats=formats)
    tensors = {**compiler.torch_weights(module, program), **compiler.torch_inputs(program, args)}
    got = compiler.evaluate(program, tensors)
    want = module(*args)
    want = want if isinstance(want, tuple) else (want,)
    assert len(want) == len(program.outputs)
    for name, w in zip(program.outputs, want, strict=True):
        w = w.to_dense() if w.layout != torch.strided else w
        np.testing.assert_allclose(got[name], w.detach().numpy(), rtol=1e-4, atol=atol,
                                   err_msg=f"{name}\n{program}")
    return program


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def sparse(n, m, density=0.4, seed=1, layout="coo"):
    g = torch.Generator().manual_seed(seed)
    d = torch.randn(n, m, generator=g) * (torch.rand(n, m, generator=g) < density)
    return d.to_sparse() if layout == "coo" else d.to_sparse_csr()


def texts(program: Program) -> list[str]:
    return [s.text for s in program.statements]


# -- single ops ---------------------------------------------------------------------------
A, B, V = rand(4, 5), rand(5, 3, seed=1), rand(5, seed=2)

OPS = {
    "mm": (lambda a, b: torch.mm(a, b), (A, B)),
    "matmul": (lambda a, b: a @ b, (A, B)),
    "matvec": (lambda a, v: a @ v, (A, V)),
    "vecmat": (lambda v, b: v @ b, (V, B)),
    "dot": (lambda u, v: u @ v, (V, rand(5, seed=3))),
    "bmm": (lambda a, b: torch.bmm(a, b), (rand(2, 3, 4), rand(2, 4, 5))),
    "matmul_3d_2d": (lambda a, b: a @ b, (rand(2, 3, 4), rand(4, 5))),
    "matmul_broadcast_batch": (lambda a, b: a @ b, (rand(2, 1, 3, 4), rand(3, 4, 2))),
    "addmm": (lambda c, a, b: torch.addmm(c, a, b), (rand(3), A, B)),
    "addmm_scaled": (lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0),
                     (rand(4, 3), A, B)),
    "add_broadcast": (lambda a, v: a + v, (A, V)),
    "add_alpha": (lambda a, b: torch.add(a, b, alpha=-2), (A, rand(4, 5, seed=4))),
    "sub_column": (lambda a, c: a - c, (A, rand(4, 1))),
    "mul_scalar": (lambda a: 3 * a * -0.5, (A,)),
    "div": (lambda a, b: a / b, (A, rand(4, 5, seed=5).abs() + 1)),
    "div_scalar_rsub": (lambda a: 1 - a / 4, (A,)),
    "neg": (lambda a: -a, (A,)),
    "relu": (lambda a: torch.relu(a), (A,)),
    "exp": (lambda a: torch.exp(a), (A,)),
    "rsqrt": (lambda a: torch.rsqrt(a * a + 1), (A,)),
    "amax": (lambda a: a.amax(1), (A,)),
    "amax_keepdim": (lambda a: a - a.amax(dim=-1, keepdim=True), (A,)),
    "max_dim_values": (lambda a: a.max(dim=0).values, (A,)),
    "max_all": (lambda a: a.max() - a, (A,)),
    "sum_all": (lambda a: a.sum(), (A,)),
    "sum_dims": (lambda a: a.sum(dim=(0, 2)), (rand(2, 3, 4),)),
    "mean": (lambda a: a.mean(1), (A,)),
    "mean_all_keepdim": (lambda a: a / a.mean(dim=(0, 1), keepdim=True), (A,)),
    "softmax": (lambda a: torch.softmax(a, dim=1), (A,)),
    "softmax_dim0_3d": (lambda a: torch.softmax(a, dim=0), (rand(3, 2, 4),)),
    "layer_norm": (lambda a: nn.functional.layer_norm(a, (5,)), (A,)),
    "layer_norm_2d": (lambda a: nn.functional.layer_norm(a, (3, 4), eps=1e-3),
                      (rand(2, 3, 4),)),
    "transposes": (lambda a: (a.t(), a.T, a.transpose(0, 1) + 1), (A,)),
    "permute": (lambda a: a.permute(2, 0, 1) * 2, (rand(2, 3, 4),)),
    "unsqueeze_broadcast": (lambda a, v: a * v.unsqueeze(0), (A, V)),
    "reshape_unit_dims": (lambda a: a.reshape(1, 4, 5).view(4, 1, 5).squeeze(1) + 0,
                          (A,)),
    "squeeze_stored_unit_dim": (lambda c, a: c.squeeze(1) + a.sum(1), (rand(4, 1), A)),
    "flatten_unit": (lambda c: c.flatten() * 2, (rand(4, 1),)),
    "identity_output": (lambda a: a, (A,)),
    "masked_fill_zero": (lambda a, m: a.masked_fill(~m, 0.0), (A, A > 0)),
}


@pytest.mark.parametrize("name", list(OPS))
def test_op_matches_torch(name):
    fn, args = OPS[name]
    translate_and_check(Fn(fn), args)


SPARSE_OPS = {  # fn, inputs, their expected formats
    "mm_coo": (lambda a, b: torch.mm(a, b), lambda: (sparse(4, 5), B), ["coo", "dense"]),
    "matmul_csr": (lambda a, b: a @ b, lambda: (sparse(4, 5, layout="csr"), B),
                   ["csr", "dense"]),
    "sparse_mm": (lambda a, b: torch.sparse.mm(a, b), lambda: (sparse(4, 5), B),
                  ["coo", "dense"]),
    "dense_times_sparse_mask": (lambda a, m: a * m, lambda: (A, sparse(4, 5)),
                                ["dense", "coo"]),
    "dense_times_csr": (lambda m, b: (b.t() @ m.t()).t(),
                        lambda: (sparse(3, 5, layout="csr").to_dense().to_sparse_csc(), B),
                        ["csc", "dense"]),
}


@pytest.mark.parametrize("name", list(SPARSE_OPS))
def test_sparse_op_matches_torch(name):
    fn, make, formats = SPARSE_OPS[name]
    program = translate_and_check(Fn(fn), make())
    assert [program.tensors[n].format for n in program.inputs] == formats


def test_linear_with_and_without_bias():
    for bias in (True, False):
        lin = nn.Linear(5, 3, bias=bias)
        p = translate_and_check(lin, (A,))
        want = ("linear(i,j) = sum(k) input(i,k) * weight(j,k)"
                + (" + bias(j)" if bias else ""))
        assert texts(p) == [want]
        assert p.meta["weights"] == ({"weight": "weight", "bias": "bias"} if bias
                                     else {"weight": "weight"})


def test_sparse_softmax_is_over_stored_entries_without_max_shift():
    full = rand(3, 4).to_sparse()  # every entry stored: dense semantics agree
    p = translate_and_check(Fn(lambda a: torch.sparse.softmax(a, 1)), (full,))
    assert not any("= max(" in t for t in texts(p))
    assert texts(p)[0] == "_sparse_softmax_exp(i,j) = exp(args_0(i,j))"
    assert p.tensors["_sparse_softmax_exp"].format == "coo"


def test_softmax_over_compressed_dim_by_format_override():
    p = compiler.from_torch(Fn(lambda a: torch.softmax(a, 1)), (A,), formats={"args_0": "csr"})
    assert [s.target for s in p.statements] == ["softmax_exp", "softmax_sum", "softmax"]
    p = compiler.from_torch(Fn(lambda a: torch.softmax(a, 0)), (A,), formats={"args_0": "csr"})
    assert p.statements[0].text == "softmax_max(j) = max(i) args_0(i,j)"  # dim 0 is dense


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 5), k=st.integers(1, 5), m=st.integers(1, 5),
       dim=st.sampled_from([0, 1, -1]), seed=st.integers(0, 100))
def test_random_shapes(n, k, m, dim, seed):
    a, b, c = rand(n, k, seed=seed), rand(k, m, seed=seed + 1), rand(m, seed=seed + 2)
    translate_and_check(Fn(lambda x, y, z: torch.softmax(torch.relu(x @ y) + z, dim)),
                        (a, b, c))
    translate_and_check(Fn(lambda x, y: torch.sparse.mm(x, y).sum(dim)),
                        (a.to_sparse(), b))


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=4), seed=st.integers(0, 50))
def test_random_broadcast_and_reductions(shape, seed):
    x = rand(*shape, seed=seed)
    y = rand(*shape[1:], seed=seed + 1) if len(shape) > 1 else rand(1, seed=seed + 1)
    translate_and_check(Fn(lambda a, b: (a * b - a.amax(0), (a + b).mean(-1))), (x, y))


# -- models -------------------------------------------------------------------------------
class GCN(nn.Module):
    def __init__(self, f_in=8, hidden=16, classes=4):
        super().__init__()
        self.layer1 = nn.Linear(f_in, hidden)
        self.layer2 = nn.Linear(hidden, classes)

    def forward(self, adj, x):
        h = torch.relu(adj @ self.layer1(x))
        return torch.softmax(adj @ self.layer2(h), dim=1)


class SAGELayer(nn.Module):
    def __init__(self, f_in=8, f_out=6):
        super().__init__()
        self.lin_self = nn.Linear(f_in, f_out)
        self.lin_neigh = nn.Linear(f_in, f_out, bias=False)

    def forward(self, adj_mean, x):
        return torch.relu(self.lin_self(x) + self.lin_neigh(torch.sparse.mm(adj_mean, x)))


def bigbird_mask(n, block=2, seed=0):
    """Block-diagonal window, global first block and a few random blocks."""
    g = torch.Generator().manual_seed(seed)
    nb = n // block
    blocks = torch.zeros(nb, nb, dtype=torch.bool)
    for i in range(nb):
        blocks[i, max(i - 1, 0):i + 2] = True
        blocks[i, torch.randint(nb, (1,), generator=g)] = True
    blocks[0, :] = blocks[:, 0] = True
    return blocks.repeat_interleave(block, 0).repeat_interleave(block, 1)


class Attention(nn.Module):
    def __init__(self, n=8, d=8):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.register_buffer("mask", bigbird_mask(n))
        self.scale = d ** -0.5

    def forward(self, x):
        scores = self.q(x) @ self.k(x).transpose(0, 1) * self.scale
        probs = torch.softmax(scores.masked_fill(~self.mask, float("-inf")), dim=-1)
        return self.norm(probs @ self.v(x) + x)


class SparseMLP(nn.Module):
    """Weights stored sparse (pruned); features are columns: y = W2 relu(W1 x + b1)."""

    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(sparse(12, 8, 0.3, seed=3))
        self.b1 = nn.Parameter(rand(12, 1, seed=4))
        self.w2 = nn.Parameter(sparse(4, 12, 0.3, seed=5))

    def forward(self, x):
        return torch.sparse.mm(self.w2, torch.relu(torch.sparse.mm(self.w1, x) + self.b1))


def test_gcn():
    adj = sparse(10, 10, 0.3, layout="csr")
    p = translate_and_check(GCN(), (adj, rand(10, 8)))
    assert p.tensors["adj"].format == "csr" and p.tensors["x"].format == "dense"
    assert {s.scope for s in p.statements} == {"layer1", "layer2", ""}
    assert p.statement("linear").scope == "layer1"
    assert p.statement("linear_1").scope == "layer2"
    assert p.statement("linear").source.startswith("test_torch_frontend.py:")
    assert p.statement("matmul").source.endswith("h = torch.relu(adj @ self.layer1(x))")
    assert p.inputs == ["layer1_weight", "layer1_bias", "layer2_weight", "layer2_bias",
                        "adj", "x"]
    assert p.meta["weights"]["layer1_weight"] == "layer1.weight"
    assert Program.from_json(p.to_json()).to_dict() == p.to_dict()


def test_gcn_coo_adjacency_and_format_override():
    adj = sparse(10, 10, 0.3)
    p = translate_and_check(GCN(), (adj, rand(10, 8)), formats={"x": "csr"})
    assert p.tensors["adj"].format == "coo" and p.tensors["x"].format == "csr"


def test_graphsage_layer():
    adj = sparse(9, 9, 0.4)
    p = translate_and_check(SAGELayer(), (adj, rand(9, 8)))
    assert [s.op for s in p.statements] == ["aten.linear.default", "aten._sparse_mm.default",
                                            "aten.linear.default", "aten.add.Tensor",
                                            "aten.relu.default"]


def test_bigbird_attention_softmax_over_mask_entries():
    model = Attention()
    p = translate_and_check(model, (rand(8, 8),), formats={"mask": "csr"})
    assert p.tensors["mask"].format == "csr" and p.tensors["mask"].role == "weight"
    # the SDDMM form: only the masked scores are read, so mm + mul + masked_fill fuse
    assert "softmax_exp(i,j) = mask(i,j) * exp(masked_fill(i,j) - softmax_max(i))" \
        in texts(p)
    readers = [t for t in texts(p) if re.search(r"\bmul\(", t.split("=", 1)[1])]
    assert readers == ["masked_fill(i,j) = mul(i,j) * mask(i,j)"]
    assert p.tensors["softmax_exp"].format == "csr"
    assert {s.scope for s in p.statements} >= {"q", "k", "v", "norm", ""}


def test_masked_fill_with_mask_eq_zero_input():
    mask = (bigbird_mask(8) * 1.0)
    fn = Fn(lambda s, m: torch.softmax(s.masked_fill(m == 0, float("-inf")), -1))
    translate_and_check(fn, (rand(8, 8), mask))


def test_masked_softmax_with_mask_broadcast_over_batch():
    mask = bigbird_mask(8)
    fn = Fn(lambda s, m: torch.softmax(s.masked_fill(~m, float("-inf")), -1))
    p = translate_and_check(fn, (rand(2, 8, 8), mask), formats={"args_1": "csr"})
    assert "softmax_exp(i,j,k) = args_1(j,k) * exp(masked_fill(i,j,k) - softmax_max(i,j))" \
        in texts(p)


def test_layer_norm_module():
    p = translate_and_check(nn.LayerNorm(5), (A,))
    assert texts(p)[-1] == ("layer_norm(i,j) = layer_norm_centred(i,j) * layer_norm_rstd(i)"
                            " * weight(j) + bias(j)")


def test_sparse_mlp():
    model = SparseMLP()
    p = translate_and_check(model, (rand(8, 5),))
    assert p.tensors["w1"].format == "coo" and p.tensors["w2"].format == "coo"
    assert p.tensors["b1"].format == "dense"


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Sequential(nn.Linear(4, 4), nn.ReLU())

    def forward(self, x):
        return self.inner(x) * 2


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Block(), Block()])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_scopes_follow_module_hierarchy():
    p = translate_and_check(Stack(), (rand(3, 4),))
    assert [s.scope for s in p.statements] == ["layers.0.inner.0", "layers.0.inner.1",
                                               "layers.0", "layers.1.inner.0",
                                               "layers.1.inner.1", "layers.1"]
    assert "layers_0_inner_0_weight" in p.inputs


# -- errors -------------------------------------------------------------------------------
class Cumsum(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        return torch.cumsum(y, 1)  # the model line


def test_unsupported_op_names_op_and_line():
    with pytest.raises(compiler.FrontendError) as e:
        compiler.from_torch(Cumsum(), (A,))
    lines, start = inspect.getsourcelines(Cumsum)
    line = start + next(i for i, ln in enumerate(lines) if "# the model line" in ln)
    assert "aten.cumsum.default is not supported" in str(e.value)
    assert (f"test_torch_frontend.py:{line}: return torch.cumsum(y, 1)  # the model line"
            in str(e.value))
    assert e.value.op == "aten.cumsum.default"
    assert isinstance(e.value, compiler.CompileError)


@pytest.mark.parametrize("fn, message", [
    (lambda x: torch.sort(x, 1).values, "aten.sort"),
    (lambda x: torch.log_softmax(x, 1), "aten.log_softmax"),
    (lambda x: x.reshape(20), "merges or splits dimensions"),
    (lambda x: x.max(dim=1).indices + 0, "argmax"),
    (lambda x: x.masked_fill(x > 0, 1.0), "aten.gt"),
    (lambda x: x.masked_fill(~(x > 0), 1.0), "aten.gt"),
    (lambda x: x / 0 + x.exp() * float("inf"), "not finite"),
    (lambda x: torch.max(x, x * 2), "elementwise max"),
])
def test_unsupported_patterns(fn, message):
    with pytest.raises(compiler.FrontendError, match=message):
        compiler.from_torch(Fn(fn), (A,))


def test_mask_misuse_is_rejected():
    mask = bigbird_mask(8)
    with pytest.raises(compiler.FrontendError, match="a complemented mask can only feed"):
        compiler.from_torch(Fn(lambda s, m: s * ~m), (rand(8, 8), mask))
    with pytest.raises(compiler.FrontendError, match="is not a tensor the program can"):
        compiler.from_torch(Fn(lambda s, m: s.masked_fill(~m, float("-inf"))),
                            (rand(8, 8), mask))
    with pytest.raises(compiler.FrontendError, match=r"masked_fill value 2\.0"):
        compiler.from_torch(Fn(lambda s, m: s.masked_fill(~m, 2.0)), (rand(8, 8), mask))


def test_dropout_is_identity_in_eval_mode_only():
    p = translate_and_check(nn.Sequential(nn.Linear(5, 2), nn.Dropout(0.5)), (A,))
    assert p.inputs == ["_0_weight", "_0_bias", "input"]
    with pytest.raises(compiler.FrontendError, match="dropout in training mode"):
        compiler.from_torch(nn.Sequential(nn.Dropout(0.5)).train(), (A,))


class ConstantAttribute(nn.Module):
    def __init__(self, in_forward=False):
        super().__init__()
        self.c, self.in_forward = torch.arange(5.0), in_forward

    def forward(self, x):
        return x * (torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0]) if self.in_forward else self.c)


def test_tensor_attributes_are_weights_but_not_tensors_made_in_forward():
    p = translate_and_check(ConstantAttribute(), (A,))
    assert p.tensors["c"].role == "weight" and p.meta["weights"] == {"c": "c"}
    with pytest.raises(compiler.FrontendError, match="register it as a buffer"):
        compiler.from_torch(ConstantAttribute(in_forward=True), (A,))


def test_bad_formats_are_rejected():
    with pytest.raises(compiler.FrontendError, match=r"unknown tensor\(s\) \['nope'\]"):
        compiler.from_torch(Fn(lambda a: a + 1), (A,), formats={"nope": "csr"})
    with pytest.raises(compiler.FrontendError, match="format 'xyz'"):
        compiler.from_torch(Fn(lambda a: a + 1), (A,), formats={"args_0": "xyz"})


def test_torch_inputs_checks_count():
    p = compiler.from_torch(Fn(lambda a: a + 1), (A,))
    with pytest.raises(compiler.FrontendError, match="takes inputs"):
        compiler.torch_inputs(p, (A, A))
