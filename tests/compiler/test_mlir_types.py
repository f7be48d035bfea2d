"""What the MLIR frontend reads besides ops (compiler/_mlir_types.py): ``sparse<…>``
constants as weights, the blobs of ``dense_resource`` constants in the file's resource
section, and the program-wide size limit on hostile files — each checked against numpy
values written by the test itself."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("torch_mlir")

from compiler import MlirError, compile_model, from_mlir, mlir_tensors, read_mlir  # noqa: E402
from compiler._mlir_types import MAX_ELEMENTS, MAX_TOTAL_ELEMENTS  # noqa: E402
from cosim import run_model  # noqa: E402
from ir import Schedule  # noqa: E402


def _matmul_file(rows: int, inner: int, cols: int, constant: str, element: str = "f32",
                 tail: str = "") -> str:
    """``w · x`` with ``w`` the constant ``constant : tensor<rows x inner x element>``."""
    w = f"tensor<{rows}x{inner}x{element}>"
    return (f"func.func @f(%x: tensor<{inner}x{cols}xf32>) -> tensor<{rows}x{cols}xf32> {{\n"
            f"  %zero = arith.constant 0.000000e+00 : f32\n"
            f"  %w = arith.constant {constant} : {w}\n"
            f"  %e = tensor.empty() : tensor<{rows}x{cols}xf32>\n"
            f"  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{rows}x{cols}xf32>) -> "
            f"tensor<{rows}x{cols}xf32>\n"
            f"  %y = linalg.matmul ins(%w, %x : {w}, tensor<{inner}x{cols}xf32>) "
            f"outs(%f : tensor<{rows}x{cols}xf32>) -> tensor<{rows}x{cols}xf32>\n"
            f"  return %y : tensor<{rows}x{cols}xf32>\n}}\n{tail}")


def _check_simulated(model, w: np.ndarray, seed: int = 0) -> None:
    """Simulate ``model`` (``w · x``) and compare with numpy; a result's size-1 dims are
    not stored (docs/frontend.md)."""
    t = mlir_tensors(model, seed=seed)
    run = run_model(compile_model(model.program, Schedule.unfused(model.program)), t)
    gold = w.astype(np.float64) @ np.asarray(t["x"], np.float64)
    np.testing.assert_allclose(run.outputs[model.program.outputs[0]],
                               gold.reshape([d for d in gold.shape if d != 1]),
                               rtol=1e-5, atol=1e-5)


# -- sparse<indices, values> constants ----------------------------------------------------
@st.composite
def _sparse_constants(draw):
    rows, inner = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    cells = draw(st.lists(st.tuples(st.integers(0, rows - 1), st.integers(0, inner - 1)),
                          unique=True, max_size=rows * inner))
    values = draw(st.lists(st.floats(-4, 4, width=32, allow_subnormal=False),
                           min_size=len(cells), max_size=len(cells)))
    return rows, inner, cells, values, draw(st.sampled_from(["f32", "f64"]))


def _sparse_literal(cells, values) -> str:
    if not cells:
        return "sparse<>"
    idx = ", ".join(f"[{i}, {j}]" for i, j in cells)
    return f"sparse<[{idx}], [{', '.join(repr(float(v)) for v in values)}]>"


@settings(max_examples=12, deadline=None)
@given(case=_sparse_constants())
def test_sparse_constant_weight_compiles_and_simulates(case):
    rows, inner, cells, values, element = case
    model = read_mlir(_matmul_file(rows, inner, 3, _sparse_literal(cells, values), element))
    w = np.zeros((rows, inner), np.float32)
    for (i, j), v in zip(cells, values, strict=True):
        w[i, j] = v
    assert model.program.tensors["w"].format == "cc" and model.program.tensors["w"].role \
        == "weight"
    np.testing.assert_array_equal(model.constants["w"], w)
    _check_simulated(model, w)


def test_a_large_sparse_constant_is_read_from_its_hex_values():
    """Above 100 values MLIR prints a sparse constant's values as one hex string."""
    cells = [(i, (7 * i) % 150) for i in range(150)]
    values = [i / 8 - 9 for i in range(150)]
    model = read_mlir(_matmul_file(150, 150, 2, _sparse_literal(cells, values)))
    w = np.zeros((150, 150), np.float32)
    w[tuple(np.array(cells).T)] = values
    np.testing.assert_array_equal(model.constants["w"], w)


@pytest.mark.parametrize(("literal", "element", "cells"), [
    ("sparse<0, 1.5>", "f32", {(0, 0): 1.5}),  # one entry: index and value are splats
    ("sparse<[[0, 1], [2, 2]], 2.5>", "f64", {(0, 1): 2.5, (2, 2): 2.5}),  # a splat value
    ("sparse<[[1, 0], [2, 3]], [true, false]>", "i1", {(1, 0): 1.0}),  # a 0/1 mask
    ("sparse<[[3, 1]], [7]>", "i8", {(3, 1): 7.0}),
])
def test_sparse_constant_forms(literal, element, cells):
    model = read_mlir(_matmul_file(4, 4, 2, literal, element))
    w = np.zeros((4, 4), np.float32)
    for ij, v in cells.items():
        w[ij] = v
    np.testing.assert_array_equal(model.constants["w"], w)


def test_sparse_constant_index_outside_its_shape_is_one_line():
    with pytest.raises(MlirError, match=r"^<mlir>:\d+:\d+: .*index|^<mlir>:\d+:\d+: .*out"):
        from_mlir(_matmul_file(4, 4, 2, "sparse<[[0, 9]], [1.0]>"))


# -- every float width, every printed form -----------------------------------------------
#: values every float type holds exactly (bf16 keeps 8 significant bits)
_EXACT = np.array([1.0, 2.5, -3.0, 0.15625, 0.0, -0.5, 96.0, 0.75], np.float32)
_NUMPY = {"f32": "<f4", "f64": "<f8", "f16": "<f2"}


def _raw(values: np.ndarray, element: str) -> bytes:
    if element == "bf16":  # the upper halves of the float32s
        return (values.astype(np.float32).view(np.uint32) >> 16).astype("<u2").tobytes()
    return values.astype(_NUMPY[element]).tobytes()


@pytest.mark.parametrize("element", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("form", ["list", "hex", "blob", "sparse"])
def test_float_constants_of_every_width_and_form(element, form):
    """Dense literals (listed, and in hex: MLIR prints above 100 elements so), resource
    blobs and sparse literals of every float width give the values numpy holds."""
    w = np.tile(_EXACT, 20 if form == "hex" else 1).reshape(-1, 4)  # 40x4 or 2x4
    rows = w.shape[0]
    listed = ", ".join("[" + ", ".join(repr(float(v)) for v in row) + "]" for row in w)
    literal, tail = {
        "list": (f"dense<[{listed}]>", ""),
        "hex": (f'dense<"0x{_raw(w, element).hex().upper()}">', ""),
        "blob": ("dense_resource<wblob>", "{-#\n  dialect_resources: {\n    builtin: {\n"
                 f'      wblob: "0x{(struct.pack("<I", 2) + _raw(w, element)).hex()}"\n'
                 "    }\n  }\n#-}\n"),
        "sparse": (_sparse_literal(list(zip(*np.nonzero(w), strict=True)), w[w != 0]), ""),
    }[form]
    model = read_mlir(_matmul_file(rows, 4, 2, literal, element, tail))
    np.testing.assert_array_equal(model.constants["w"], w)
    if form == "list":
        _check_simulated(model, w)


# -- dense_resource blobs -----------------------------------------------------------------
def _blob(values: np.ndarray) -> str:
    """MLIR's hex form of a blob: a little-endian alignment word, then the data."""
    return "0x" + (struct.pack("<I", values.dtype.itemsize) + values.tobytes()).hex().upper()


def _resource_file(w: np.ndarray, section: str | None = None) -> str:
    rows, inner = w.shape
    section = section if section is not None else (
        "{-#\n  dialect_resources: {\n    builtin: {\n"
        f"      other: \"{_blob(np.arange(3, dtype=np.float32))}\",\n"
        f"      wblob: \"{_blob(w)}\"\n    }}\n  }}\n#-}}\n")
    return _matmul_file(rows, inner, 2, "dense_resource<wblob>", tail=section)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**16), rows=st.integers(1, 9), inner=st.integers(1, 9))
def test_resource_blob_weight_is_read_and_simulated(seed, rows, inner):
    w = np.random.default_rng(seed).normal(size=(rows, inner)).astype(np.float32)
    model = read_mlir(_resource_file(w))
    assert not model.elided
    np.testing.assert_array_equal(model.constants["w"], w)
    _check_simulated(model, w, seed)


def test_an_empty_resource_section_leaves_the_constant_elided():
    model = read_mlir(_resource_file(np.ones((2, 3), np.float32), "{-#\n#-}\n"))
    assert model.elided == ["w"] and "w" not in model.constants


@pytest.mark.parametrize(("section", "message"), [
    ('{-#\n  dialect_resources: {\n    builtin: {\n      wblob: "0x04000000ZZ"\n    }\n  }\n'
     "#-}\n", r"^<mlir>:12:7: resource 'wblob' is not hexadecimal$"),
    ('{-#\n  dialect_resources: {\n    builtin: {\n      wblob: "0x0400000000"\n    }\n  }\n'
     "#-}\n", r"^<mlir>:3:\d+: arith.constant: resource 'wblob' holds 1 bytes"),
    ('{-#\n  external_resources: {\n  }\n#-}\n', r"^<mlir>:9:1: the file's metadata"),
    ('{-#\n  dialect_resources: {\n    builtin: {\n    }\n  }\n#-}\n'
     "func.func private @g()\n", r"^<mlir>:\d+:\d+: the file's metadata"),
])
def test_a_bad_resource_section_is_one_line(section, message):
    with pytest.raises(MlirError, match=message) as e:
        from_mlir(_resource_file(np.ones((2, 3), np.float32), section))
    assert "\n" not in str(e.value)


# -- hostile sizes ------------------------------------------------------------------------
def test_many_tensors_each_within_the_limit_are_refused_together():
    """Every tensor is within MAX_ELEMENTS, but all together are not: refused while
    reading, before mlir_tensors would generate (allocate) them."""
    side = int(MAX_ELEMENTS ** 0.5)
    n = MAX_TOTAL_ELEMENTS // (side * side) + 1
    t = f"tensor<{side}x{side}xf32>"
    args = ", ".join(f"%a{k}: {t}" for k in range(n))
    text = f"func.func @f({args}) -> {t} {{\n  return %a0 : {t}\n}}\n"
    with pytest.raises(MlirError, match=rf"^<mlir>:1:\d+: func.func: the program's tensors "
                       rf"hold more than {MAX_TOTAL_ELEMENTS} elements in all \(at 'a{n - 1}'\)"
                       r"; refused before allocation$"):
        from_mlir(text)
    fewer = text.replace(f", %a{n - 1}: {t}", "").replace(f", %a{n - 2}: {t}", "")
    assert from_mlir(fewer)  # two fewer, and the copy of the returned argument, fit
