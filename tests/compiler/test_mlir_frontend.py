"""The MLIR frontend: hand-written linalg + sparse_tensor files (tests/compiler/mlir, in
the style of FuseFlow's model files) compiled and simulated against numpy and torch; the
torch → MLIR path (torch-mlir's FX importer) against torch.export for every bundled model;
one-line errors for unsupported ops, encodings and hostile files."""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("torch_mlir")

from compiler import (  # noqa: E402
    MlirError,
    compile_model,
    evaluate,
    from_mlir,
    mlir_tensors,
    read_mlir,
)
from cosim import run_model  # noqa: E402
from ir import Schedule  # noqa: E402

warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")

HERE = Path(__file__).parent / "mlir"
SCHEDULES = {"unfused": Schedule.unfused, "fused": Schedule.fused}


def _csr(n: int, m: int, density: float, seed: int) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    a = sp.random_array((n, m), density=density, rng=rng, dtype=np.float32, format="csr")
    return sp.csr_array(a)


def _simulate(program, tensors, schedule: str) -> np.ndarray:
    run = run_model(compile_model(program, SCHEDULES[schedule](program)), tensors)
    return run.outputs[program.outputs[0]]


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@functools.cache
def _case(name: str):
    model = read_mlir(HERE / f"{name}.mlir")
    return model


def _gcn_gold(t):
    adj, x, w, b = (np.asarray(sp.csr_array(t[n]).toarray() if sp.issparse(t[n]) else t[n],
                               np.float64) for n in ("adj", "x", "weight", "bias"))
    return _relu(adj @ (x @ w.T) + b)


def _sage_gold(t):
    adj = sp.csr_array(t["adj"]).toarray().astype(np.float64)
    x, ws, wn, b = (np.asarray(t[n], np.float64) for n in ("x", "w_self", "w_neigh", "bias"))
    return _relu(x @ ws.T + adj @ (x @ wn.T) + b)


def _sddmm_gold(t):
    s = sp.csr_array(t["s"]).toarray().astype(np.float64)
    return s * (np.asarray(t["a"], np.float64) @ np.asarray(t["b"], np.float64))


CASES = {
    # name: (tensors given by the test, numpy gold)
    "gcn_layer": (lambda seed: {"adj": _csr(8, 8, 0.3, seed),
                                "x": np.random.default_rng(seed).normal(size=(8, 6))},
                  _gcn_gold),
    "graphsage_layer": (lambda seed: {"adj": _csr(10, 10, 0.25, seed)}, _sage_gold),
    "softmax": (lambda seed: {}, lambda t: _softmax(np.asarray(t["scores"], np.float64))),
    "sddmm": (lambda seed: {"s": _csr(8, 7, 0.3, seed)}, _sddmm_gold),
}


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
@pytest.mark.parametrize("name", sorted(CASES))
def test_mlir_file_compiles_and_simulates_against_numpy(name, schedule):
    model = _case(name)
    given_fn, gold_fn = CASES[name]
    tensors = mlir_tensors(model, seed=3, given=given_fn(3))
    gold = gold_fn(tensors)
    program = model.program
    out = program.outputs[0]
    np.testing.assert_allclose(evaluate(program, tensors)[out], gold, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_simulate(program, tensors, schedule), gold, rtol=1e-4,
                               atol=1e-5)


def test_named_ops_against_numpy():
    model = _case("named_ops")
    t = mlir_tensors(model, seed=2)
    a, b, v, c, d = (np.asarray(t[n], np.float64) for n in "abvcd")
    x = np.exp(a + b)
    gold = dict(zip(model.program.outputs,
                    [x, x.sum(1), a @ v, c @ d, 1 / np.sqrt(x)], strict=True))
    assert [s.op for s in model.program.statements] == [
        "linalg.add", "linalg.exp", "linalg.reduce", "linalg.matvec", "linalg.batch_matmul",
        "linalg.map"]
    run = run_model(compile_model(model.program, Schedule.unfused(model.program)), t)
    for name, want in gold.items():
        np.testing.assert_allclose(run.outputs[name], want, rtol=1e-4, atol=1e-6)


def test_broadcast_to_a_new_dim_is_one_line():
    text = ("func.func @f(%v: tensor<3xf32>) -> tensor<4x3xf32> {\n"
            "  %e = tensor.empty() : tensor<4x3xf32>\n"
            "  %b = linalg.broadcast ins(%v : tensor<3xf32>) outs(%e : tensor<4x3xf32>) "
            "dimensions = [0]\n  return %b : tensor<4x3xf32>\n}\n")
    with pytest.raises(MlirError, match=r"^<mlir>:3:8: linalg.broadcast: cannot be written "
                       r"as 'b\(i,j\) = v\(j\)': output index 'i' does not appear") as e:
        from_mlir(text)
    assert "\n" not in str(e.value)


def test_a_generated_mask_is_zero_one_with_an_entry_in_every_row():
    from compiler import models as M
    from compiler import torch_to_mlir

    module = M.MODELS["bigbird"].from_config("tiny").eval()
    exported = torch_to_mlir(module, module.example_inputs(), lift=["mask"])
    model = read_mlir(exported.text, formats=module.sparse_formats)
    assert model.masks == ["mask"]
    t = mlir_tensors(model, seed=3)
    assert set(np.unique(t["mask"])) <= {0.0, 1.0} and t["mask"].any(axis=1).all()
    out = _simulate(model.program, t, "unfused")
    np.testing.assert_allclose(out, evaluate(model.program, t)[model.program.outputs[0]],
                               rtol=1e-4, atol=1e-5)
    assert np.isfinite(out).all()


def test_dead_ops_and_unread_constants_are_dropped():
    """Results that only feed each other, and constants nothing reads, are not part of
    the program (FuseFlow's files keep such leftovers); arguments always are."""
    text = (HERE / "softmax.mlir").read_text().replace(
        "return %probs", "return %shifted").replace(
        "%cst = arith.constant 0.000000e+00 : f32",
        "%cst = arith.constant 0.000000e+00 : f32\n"
        "    %unused = arith.constant dense_resource<__elided__> : tensor<9x9xf32>")
    p = from_mlir(text)
    assert [s.target for s in p.statements] == ["rowmax", "shifted"]
    assert p.inputs == ["scores"] and "unused" not in p.tensors and not p.meta["elided"]


def test_module_level_ops_that_compute_nothing_are_skipped():
    """Globals, declarations and module attributes are not part of the program; any
    other module-level op is one line naming it."""
    body = (HERE / "sddmm.mlir").read_text()
    extra = ('  ml_program.global private mutable @seed(dense<0> : tensor<i64>) : tensor<i64>\n'
             '  memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]>\n'
             "  func.func private @declared(tensor<4xf32>) -> tensor<4xf32>\n")
    text = body.replace("func.func @", extra + "  func.func @", 1)
    assert "memref.global" in text
    assert [s.text for s in from_mlir(text).statements] == \
        [s.text for s in from_mlir(body).statements]
    bad = body.replace("func.func @", "  memref.alloca_scope {\n  }\n  func.func @", 1)
    with pytest.raises(MlirError, match=r"^<mlir>:\d+:\d+: memref.alloca_scope: "
                       "module-level memref.alloca_scope is not supported"):
        from_mlir(bad)


def test_gcn_layer_against_torch():
    torch = pytest.importorskip("torch")
    model = _case("gcn_layer")
    t = mlir_tensors(model, seed=1, given=CASES["gcn_layer"][0](1))
    adj = torch.sparse_csr_tensor(*(torch.from_numpy(a) for a in (
        t["adj"].indptr.astype(np.int64), t["adj"].indices.astype(np.int64),
        t["adj"].data)), size=t["adj"].shape)
    x, w, b = (torch.from_numpy(np.asarray(t[n], np.float32)) for n in ("x", "weight", "bias"))
    want = torch.relu(torch.mm(adj, x @ w.T) + b).numpy()
    got = _simulate(model.program, t, "unfused")
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_graphsage_layer_against_torch():
    torch = pytest.importorskip("torch")
    model = _case("graphsage_layer")
    t = mlir_tensors(model, seed=4, given=CASES["graphsage_layer"][0](4))
    adj = torch.sparse_csr_tensor(*(torch.from_numpy(np.array(a)) for a in (
        t["adj"].indptr.astype(np.int64), t["adj"].indices.astype(np.int64),
        t["adj"].data)), size=t["adj"].shape)
    x, ws, wn, b = (torch.from_numpy(np.array(t[n], np.float32))
                    for n in ("x", "w_self", "w_neigh", "bias"))
    want = torch.relu(x @ ws.T + torch.sparse.mm(adj, x @ wn.T) + b).numpy()
    for schedule in SCHEDULES:
        np.testing.assert_allclose(_simulate(model.program, t, schedule), want, rtol=1e-4,
                                   atol=1e-5)


def test_softmax_against_torch():
    torch = pytest.importorskip("torch")
    model = _case("softmax")
    t = mlir_tensors(model, seed=5)
    want = torch.softmax(torch.from_numpy(np.asarray(t["scores"], np.float32)), 1).numpy()
    np.testing.assert_allclose(_simulate(model.program, t, "fused"), want, rtol=1e-4,
                               atol=1e-6)


def test_gcn_layer_reads_the_file_as_fuseflow_writes_it():
    p = _case("gcn_layer").program
    assert p.tensors["adj"].format == "dc" and p.tensors["weight"].format == "dc"
    assert p.tensors["weight"].role == "weight" and p.meta["elided"] == ["weight"]
    # the transpose is an index renaming, relu is one statement, each op keeps its line
    assert [s.text for s in p.statements] == [
        "matmul(i,j) = sum(k) x(i,k) * weight(j,k)",
        "matmul_1(i,j) = sum(k) adj(i,k) * matmul(k,j)",
        "add(i,j) = matmul_1(i,j) + bias(j)",
        "relu_(i,j) = relu(add(i,j))"]
    assert [s.op for s in p.statements] == ["linalg.matmul", "linalg.matmul",
                                            "linalg.generic", "linalg.generic"]
    assert p.statements[0].source == "gcn_layer.mlir:17:10"


def test_softmax_row_statistics_drop_their_size_one_dim():
    p = _case("softmax").program
    assert p.tensors["rowmax"].shape == (8,) and p.tensors["rowsum"].shape == (8,)
    assert p.statement("rowmax").text == "rowmax(i) = max(j) scores(i,j)"


def test_sddmm_is_one_statement_stored_like_its_init():
    p = _case("sddmm").program
    assert [s.text for s in p.statements] == ["x(i,j) = sum(k) s(i,j) * a(i,k) * b(k,j)"]
    assert p.tensors["x"].format == "dc"


@settings(max_examples=15, deadline=None)
@given(density=st.floats(0.05, 1.0), seed=st.integers(0, 2**16))
def test_sddmm_over_random_sparsity(density, seed):
    model = _case("sddmm")
    t = mlir_tensors(model, seed=seed, given={"s": _csr(8, 7, density, seed)})
    np.testing.assert_allclose(_simulate(model.program, t, "unfused"), _sddmm_gold(t),
                               rtol=1e-4, atol=1e-5)


def test_given_tensors_replace_generated_and_file_constants():
    model = _case("gcn_layer")
    w = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = mlir_tensors(model, seed=0, given={"weight": w})
    assert t["weight"] is w
    np.testing.assert_array_equal(t["bias"], [0.5, -0.25, 0.125, -1.0])
    assert not np.array_equal(mlir_tensors(model, seed=1)["x"], t["x"])
    with pytest.raises(MlirError, match="no input or weight named 'w'"):
        mlir_tensors(model, given={"w": w})


def test_generated_sparse_weight_has_the_declared_density():
    t = mlir_tensors(_case("gcn_layer"), seed=0, density=0.25)
    nnz = np.count_nonzero(t["weight"]) / t["weight"].size
    assert 0 < nnz < 0.6 and np.count_nonzero(t["x"]) == t["x"].size


# -- encodings ---------------------------------------------------------------------------
def _one_arg(encoding: str, shape: str = "4x4") -> str:
    return (f"#E = #sparse_tensor.encoding<{{ map = {encoding} }}>\n"
            f"func.func @f(%a: tensor<{shape}xf32, #E>) -> tensor<{shape}xf32, #E> {{\n"
            f"  return %a : tensor<{shape}xf32, #E>\n}}\n")


@pytest.mark.parametrize(("encoding", "fmt"), [
    ("(i, j) -> (i : dense, j : compressed)", "dc"),
    ("(i, j) -> (i : compressed, j : compressed)", "cc"),
    ("(i, j) -> (j : dense, i : compressed)", "dc:1,0"),
    ("(i, j) -> (i : compressed(nonunique), j : singleton)", "cc"),
    ("(i, j) -> (i : dense, j : loose_compressed)", "dc"),
    ("(i, j) -> (i : dense, j : dense)", "dd"),
])
def test_level_types_map_to_formats(encoding, fmt):
    p = from_mlir(_one_arg(encoding))
    assert p.tensors["a"].format == fmt


@pytest.mark.parametrize(("encoding", "named"), [
    ("(i, j) -> (i : dense, j : compressed(nonordered))", "compressed(non_ordered)"),
    ("(i, j) -> (i : dense, j : structured[2, 4])", "n_out_of_m"),
    ("(i, j) -> (i floordiv 2 : dense, j floordiv 2 : compressed, i mod 2 : dense, "
     "j mod 2 : dense)", "not a permutation"),
])
def test_unsupported_level_type_is_an_error_naming_it(encoding, named):
    with pytest.raises(MlirError, match=named.replace("(", r"\(").replace(")", r"\)")) as e:
        from_mlir(_one_arg(encoding))
    assert "\n" not in str(e.value) and str(e.value).startswith("<mlir>:2:14: func.func: ")


def test_malformed_encoding_is_mlir_s_own_one_line_error():
    with pytest.raises(MlirError, match=r"^<mlir>:1:\d+: expected compressed or "
                       "loose_compressed level before singleton level$"):
        from_mlir(_one_arg("(i, j) -> (i : singleton, j : dense)"))


# -- errors: one line, the op and where -----------------------------------------------------
_LOG = """#map = affine_map<(d0) -> (d0)>
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %l = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.log %in : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  return %l : tensor<4xf32>
}
"""


def test_unsupported_body_op_names_it_and_its_location(tmp_path):
    path = tmp_path / "log.mlir"
    path.write_text(_LOG)
    with pytest.raises(MlirError) as e:
        from_mlir(path)
    msg = str(e.value)
    assert msg.startswith("log.mlir:7:10: math.log: not supported in a linalg body")
    assert "\n" not in msg


@pytest.mark.parametrize(("text", "message"), [
    ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
     "  %0 = tensor.pad %a low[1] high[1] { ^bb0(%i: index): %c = arith.constant 0.0 : f32\n"
     "  tensor.yield %c : f32 } : tensor<4xf32> to tensor<6xf32>\n"
     "  return %a : tensor<4xf32>\n}\n",
     r"<mlir>:2:8: tensor.pad: tensor.pad is not supported"),
    ("func.func @f(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {\n"
     "  return %a : tensor<?x4xf32>\n}\n", "dynamic dimension"),
    ("func.func @f(%a: tensor<100000x100000xf32>) -> tensor<100000x100000xf32> {\n"
     "  return %a : tensor<100000x100000xf32>\n}\n", "refused before allocation"),
    ("func.func @f(%a: tensor<" + "1x" * 30 + "f32>) {\n  return\n}\n",
     "has 30 dims; up to 12"),
    ("func.func @f(%a: tensor<4xi32>) -> tensor<4xi32> {\n"
     "  return %a : tensor<4xi32>\n}\n", "element type i32"),
    ("#E = #sparse_tensor.encoding<{ map = (i) -> (i : sideways) }>\n"
     "func.func @f(%a: tensor<4xf32, #E>) -> tensor<4xf32, #E> {\n"
     "  return %a : tensor<4xf32, #E>\n}\n", r"<mlir>:1:\d+: unknown level format"),
    ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
     "  return %a : tensor<4xf32>\n}\nfunc.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
     "  return %a : tensor<4xf32>\n}\n", "no function @main"),
    ("func.func @f(%a: tensor<4xf32>) {\n  return\n}\n", "returns no tensor"),
])
def test_bad_files_give_one_line(text, message):
    with pytest.raises(MlirError, match=message) as e:
        from_mlir(text)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("text", [  # each segfaults MLIR's parser at 200,000 levels
    "func.func @f() {\n" + "scf.execute_region {\n" * 200_000 + "}\n" * 200_001,
    "func.func private @f(%a: " + "tuple<" * 200_000 + "f32" + ">" * 200_000 + ")\n",
    "func.func private @f(%a: f32) attributes {x = " + "[" * 200_000 + "1" + "]" * 200_000
    + "}\n",
])
def test_deep_nesting_is_refused_before_parsing(text):
    with pytest.raises(MlirError, match=r"^<mlir>:\d+:\d+: brackets nested deeper than 256"):
        from_mlir(text)


@pytest.mark.parametrize("dims", ["5", "tensor.empty()", '"x"'])
def test_a_file_that_crashes_mlir_s_parser_is_one_line(dims):
    """MLIR's linalg.reduce parser dereferences a missing list (a segmentation fault of
    the interpreter); the file is parsed in a forked child first and refused."""
    text = ("func.func @f(%x: tensor<4x3xf32>, %i: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %r = linalg.reduce ins(%x : tensor<4x3xf32>) outs(%i : tensor<4xf32>) "
            f"dimensions = {dims}\n"
            "    (%in: f32, %init: f32) {\n      %t = arith.addf %in, %init : f32\n"
            "      linalg.yield %t : f32\n    }\n  return %r : tensor<4xf32>\n}\n")
    with pytest.raises(MlirError, match=r"^<mlir>: MLIR's parser crashed on this file "
                       r"\(SIGSEGV\): a malformed op its parser does not check; refused$"):
        from_mlir(text)
    assert from_mlir(text.replace(f"dimensions = {dims}", "dimensions = [1]")).statements


def test_arrows_comments_and_strings_do_not_count_as_brackets():
    deep = "// " + "<" * 300 + "\n" + "\n".join(
        f"#map{n} = affine_map<(d0, d1) -> (d1, d0)>" for n in range(300))
    assert from_mlir(deep + "\n" + _one_arg("(i, j) -> (i : dense, j : compressed)"))


def test_a_huge_body_is_refused():
    chain = "".join(f"    %v{n + 1} = arith.addf %v{n}, %in : f32\n" for n in range(300))
    text = ("#map = affine_map<(d0) -> (d0)>\n"
            "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %e = tensor.empty() : tensor<4xf32>\n"
            "  %l = linalg.generic {indexing_maps = [#map, #map], iterator_types = "
            "[\"parallel\"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {\n"
            "  ^bb0(%in: f32, %out: f32):\n    %v0 = arith.addf %in, %in : f32\n" + chain +
            "    linalg.yield %v300 : f32\n  } -> tensor<4xf32>\n"
            "  return %l : tensor<4xf32>\n}\n")
    with pytest.raises(MlirError, match="the body has 302 ops; up to 256"):
        from_mlir(text)


def test_missing_file_and_unknown_format_name(tmp_path):
    with pytest.raises(MlirError, match="no such file"):
        from_mlir(tmp_path / "absent.mlir")
    with pytest.raises(MlirError, match="unknown tensor"):
        from_mlir(HERE / "softmax.mlir", formats={"nope": "csr"})
    assert from_mlir(HERE / "softmax.mlir", formats={"exps": "dc"}).tensors["exps"].format \
        == "dc"


# -- torch → MLIR (FX importer) against torch.export -------------------------------------
@functools.cache
def _fx(name: str):
    from compiler import from_torch, torch_inputs, torch_to_mlir, torch_weights
    from compiler import models as M

    module = M.MODELS[name].from_config("tiny").eval()
    example = module.example_inputs()
    exported = torch_to_mlir(module, example)
    ref = from_torch(module, example)
    ref_binds = {**torch_weights(module, ref), **torch_inputs(ref, example)}
    return module, example, exported, ref, ref_binds


@pytest.mark.parametrize("name", ["autoencoder", "bigbird", "gcn", "gpt", "graphsage"])
def test_fx_imported_model_matches_torch_export(name):
    torch = pytest.importorskip("torch")
    from compiler import to_array

    module, example, exported, ref, ref_binds = _fx(name)
    model = read_mlir(exported.text)
    p = model.program
    assert not model.elided  # the FX importer prints every weight as a blob
    assert [n for n in p.inputs if p.tensors[n].role == "input"] == list(exported.names)
    binds = mlir_tensors(model, given={n: to_array(a) for n, a in
                                       zip(exported.names, exported.args, strict=True)})
    got = evaluate(p, binds)[p.outputs[0]]
    want = evaluate(ref, ref_binds)[ref.outputs[0]]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    with torch.no_grad():
        eager = module(*example).numpy()
    np.testing.assert_allclose(got, eager, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["autoencoder", "bigbird", "gcn", "gpt", "graphsage"])
def test_fx_imported_model_simulates(name):
    from compiler import to_array

    _, _, exported, ref, ref_binds = _fx(name)
    model = read_mlir(exported.text)
    binds = mlir_tensors(model, given={n: to_array(a) for n, a in
                                       zip(exported.names, exported.args, strict=True)})
    want = evaluate(ref, ref_binds)[ref.outputs[0]]
    np.testing.assert_allclose(_simulate(model.program, binds, "unfused"), want, rtol=1e-4,
                               atol=1e-5)


def test_fx_attention_mask_becomes_a_csr_argument_and_simulates():
    """A model's sparse_formats buffer (BigBird's bool mask) is lifted to an argument, so
    formats= stores it CSR as from_torch does; the masked softmax still matches."""
    from compiler import from_torch, to_array, torch_inputs, torch_to_mlir, torch_weights
    from compiler import models as M

    module = M.MODELS["bigbird"].from_config("tiny").eval()
    example = module.example_inputs()
    exported = torch_to_mlir(module, example, lift=list(module.sparse_formats))
    assert exported.names == ("mask", "x")
    model = read_mlir(exported.text, formats=module.sparse_formats)
    assert model.program.tensors["mask"].format == "csr"
    binds = mlir_tensors(model, given={n: to_array(a) for n, a in
                                       zip(exported.names, exported.args, strict=True)})
    ref = from_torch(module, example, formats=module.sparse_formats)
    want = evaluate(ref, {**torch_weights(module, ref), **torch_inputs(ref, example)})
    np.testing.assert_allclose(_simulate(model.program, binds, "unfused"),
                               want[ref.outputs[0]], rtol=1e-4, atol=1e-5)


def _canonical(program) -> list[str]:
    """Statement texts with tensors renamed T0, T1, … in order of first appearance."""
    import re

    names: dict[str, str] = {}
    out = []
    for statement in program.statements:
        out.append(re.sub(r"\b[A-Za-z_]\w*(?=\(|\s*=|$)", lambda m: names.setdefault(
            m.group(), f"T{len(names)}") if m.group() in program.tensors else m.group(),
            statement.text))
    return out


@pytest.mark.parametrize(("name", "same"), [("autoencoder", 9), ("gcn", 8)])
def test_fx_statements_match_torch_export_where_ops_map_one_to_one(name, same):
    """The autoencoder's ops (mm, bias add, relu, transpose) map one to one: the same
    statements up to tensor names; GCN's too up to the softmax, which torch-mlir
    decomposes with a separate subtraction."""
    _, _, exported, ref, _ = _fx(name)
    p = from_mlir(exported.text)
    assert _canonical(p)[:same] == _canonical(ref)[:same]
    assert len(ref.statements) == same or _canonical(p)[same] != _canonical(ref)[same]


def test_fx_mm_statements_match_torch_export_one_to_one():
    """aten.mm over the sparse adjacency is one linalg.matmul: the same statement."""
    _, _, exported, ref, _ = _fx("gcn")
    p = from_mlir(exported.text)
    adj = [s.text.split("= ", 1)[1] for s in p.statements if "adj(" in s.text]
    ref_adj = [s.text.split("= ", 1)[1] for s in ref.statements if "adj(" in s.text]
    assert len(adj) == len(ref_adj) == 2
    assert all(a.startswith("sum(k) adj(i,k) * ") for a in adj + ref_adj)


#: aten ops that torch-mlir lowers to one linalg op each (linear, softmax, layer_norm are
#: decomposed into several)
_ONE_TO_ONE = ("aten.mm.default", "aten.relu.default", "aten.mul.Tensor",
               "aten.masked_fill.Scalar", "aten.bmm.default")


def _form(program, statement, keep: set[str]) -> str:
    """A statement with every tensor but those in ``keep`` written T (the two frontends
    name intermediates and weights differently)."""
    import re

    return re.sub(r"\b[A-Za-z_]\w*\b(?=\(|\s*=)", lambda m: m.group() if m.group() in keep
                  or m.group() not in program.tensors else "T", statement.text)


@pytest.mark.parametrize("name", ["autoencoder", "bigbird", "gcn", "gpt", "graphsage"])
def test_fx_every_one_to_one_op_gives_the_same_statement(name):
    """Each statement torch.export makes of an op that maps one to one (mm, relu, a scalar
    mul, masked_fill) is also in the MLIR program, up to the names of intermediates."""
    from collections import Counter

    _, _, exported, ref, _ = _fx(name)
    p = from_mlir(exported.text)
    given = {n for n, t in ref.tensors.items() if t.role in ("input", "weight")}
    keep = {n for n in given if n in p.tensors and p.tensors[n].role in ("input", "weight")}
    assert keep  # the inputs (x, adj, mask): named alike by both
    want = Counter(_form(ref, s, keep) for s in ref.statements if s.op in _ONE_TO_ONE)
    assert sum(want.values()) >= 3
    assert not want - Counter(_form(p, s, keep) for s in p.statements)


def test_elided_export_generates_weights_at_the_declared_shapes():
    from compiler import models as M
    from compiler import torch_to_mlir

    module = M.MODELS["gcn"].from_config("tiny").eval()
    exported = torch_to_mlir(module, module.example_inputs(), elide=True)
    model = read_mlir(exported.text)
    assert model.elided and not model.constants
    t = mlir_tensors(model, seed=2)
    for n in model.elided:
        assert t[n].shape == model.program.tensors[n].shape
    assert np.isfinite(evaluate(model.program, t)[model.program.outputs[0]]).all()
