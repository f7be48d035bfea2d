"""The MLIR frontend against MLIR itself: random dense ``linalg.generic`` functions are
lowered by MLIR's own passes (one-shot bufferization → loops → LLVM) and run by its JIT
(``ExecutionEngine``); the program ``from_mlir`` makes of the same text, evaluated by the
numpy oracle and simulated on the Python model, must agree. The oracle shares no code
with the translation: it is the compiler that wrote the semantics of the ops."""

from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("torch_mlir")

from compiler import compile_model, evaluate, from_mlir  # noqa: E402
from cosim import run_model  # noqa: E402
from ir import Schedule  # noqa: E402

_PIPELINE = (
    "builtin.module(func.func(llvm-request-c-wrappers),"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "func.func(convert-linalg-to-loops),convert-scf-to-cf,expand-strided-metadata,"
    "lower-affine,finalize-memref-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,"
    "convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts)")


def _jit(text: str, args: list[np.ndarray], out_rank: int) -> np.ndarray:
    """Run ``@f`` of ``text`` with MLIR's own lowering and JIT."""
    from torch_mlir import execution_engine, ir, passmanager
    from torch_mlir.runtime import (
        get_ranked_memref_descriptor,
        make_nd_memref_descriptor,
        ranked_memref_to_numpy,
    )

    ctx = ir.Context()
    module = ir.Module.parse(text, ctx)
    with ctx:
        passmanager.PassManager.parse(_PIPELINE).run(module.operation)
    engine = execution_engine.ExecutionEngine(module, opt_level=0)
    res = make_nd_memref_descriptor(out_rank, ctypes.c_float)()
    ptrs = [ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(a))) for a in args]
    engine.invoke("f", ctypes.pointer(ctypes.pointer(res)), *ptrs)
    return ranked_memref_to_numpy(ctypes.pointer(res)).copy()


def _ttype(shape: list[int]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>" if shape else "tensor<f32>"


@st.composite
def generics(draw):
    """A function with one ``linalg.generic``: 2–3 loops, 1–3 inputs each indexed by a
    projected permutation of the loops (together reading every loop), a random body of
    arith/math ops (relu as maxnumf with 0 or cmpf + select), and optionally a sum or
    max over the last loop."""
    n = draw(st.integers(2, 3))
    sizes = draw(st.lists(st.integers(2, 4), min_size=n, max_size=n))
    reduce = draw(st.sampled_from([None, "sum", "max"]))
    parallel = list(range(n - 1)) if reduce else list(range(n))
    inputs = []
    for _ in range(draw(st.integers(1, 3))):
        dims = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
        inputs.append(dims)
    # every loop is read by some input (an output index the right-hand side lacks is a
    # broadcast the index notation cannot write: test_broadcast_to_a_new_dim_is_one_line)
    missing = [d for d in range(n) if not any(d in m for m in inputs)]
    inputs[0] = [*inputs[0], *missing]
    body, count = [], [0]

    def fresh() -> str:
        count[0] += 1
        return f"%v{count[0]}"

    def expr(depth: int) -> str:
        if depth == 0 or draw(st.booleans()) and depth < 2:
            return f"%in{draw(st.integers(0, len(inputs) - 1))}"
        kind = draw(st.sampled_from(["addf", "subf", "mulf", "divexp", "exp", "relu", "relu2",
                                     "negf"]))
        a = expr(depth - 1)
        v = fresh()
        if kind in ("addf", "subf", "mulf"):
            b = expr(depth - 1)
            body.append(f"{v} = arith.{kind} {a}, {b} : f32")
        elif kind == "divexp":  # a / exp(b): never a division by zero
            b = expr(depth - 1)
            e = fresh()
            body.append(f"{e} = math.exp {b} : f32")
            body.append(f"{v} = arith.divf {a}, {e} : f32")
        elif kind == "exp":
            body.append(f"{v} = math.exp {a} : f32")
        elif kind == "negf":
            body.append(f"{v} = arith.negf {a} : f32")
        elif kind == "relu":
            body.append(f"{v} = arith.maxnumf {a}, %zero : f32")
        else:
            c = fresh()
            body.append(f"{c} = arith.cmpf ugt, {a}, %zero : f32")
            body.append(f"{v} = arith.select {c}, {a}, %zero : f32")
        return v

    g = expr(draw(st.integers(1, 3)))
    for k in range(len(inputs)):  # every input takes part, so every loop is read
        if not any(re.search(rf"%in{k}\b", t) for t in [*body, g]):
            v = fresh()
            body.append(f"{v} = arith.addf {g}, %in{k} : f32")
            g = v
    if reduce == "sum":
        y = fresh()
        body.append(f"{y} = arith.addf %out, {g} : f32")
    elif reduce == "max":
        y = fresh()
        body.append(f"{y} = arith.maximumf {g}, %out : f32")
    else:
        y = g
    dims = ", ".join(f"d{d}" for d in range(n))
    maps = [f"affine_map<({dims}) -> ({', '.join(f'd{d}' for d in m)})>"
            for m in [*inputs, parallel]]
    iters = ", ".join('"reduction"' if reduce and d == n - 1 else '"parallel"'
                      for d in range(n))
    shapes = [[sizes[d] for d in m] for m in inputs]
    out_shape = [sizes[d] for d in parallel]
    args = ", ".join(f"%a{k}: {_ttype(s)}" for k, s in enumerate(shapes))
    init = {"sum": "0.0", "max": "0xFF800000", None: "0.0"}[reduce]
    lines = "\n".join(f"      {b}" for b in body)
    text = f"""func.func @f({args}) -> {_ttype(out_shape)} {{
  %zero = arith.constant 0.0 : f32
  %init = arith.constant {init} : f32
  %e = tensor.empty() : {_ttype(out_shape)}
  %fill = linalg.fill ins(%init : f32) outs(%e : {_ttype(out_shape)}) -> {_ttype(out_shape)}
  %r = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = [{iters}]}}
      ins({', '.join(f'%a{k}' for k in range(len(inputs)))} : {', '.join(map(_ttype, shapes))})
      outs(%fill : {_ttype(out_shape)}) {{
    ^bb0({', '.join(f'%in{k}: f32' for k in range(len(inputs)))}, %out: f32):
{lines}
      linalg.yield {y} : f32
  }} -> {_ttype(out_shape)}
  return %r : {_ttype(out_shape)}
}}
"""
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    tensors = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    return text, tensors, len(out_shape)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=generics())
def test_random_generic_matches_mlir_jit(case):
    text, tensors, out_rank = case
    want = _jit(text, tensors, out_rank)
    program = from_mlir(text)
    binds = dict(zip([n for n in program.inputs], tensors, strict=True))
    got = evaluate(program, binds)[program.outputs[0]]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=text)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=generics())
def test_random_generic_simulates_like_mlir_jit(case):
    text, tensors, out_rank = case
    want = _jit(text, tensors, out_rank)
    program = from_mlir(text)
    binds = dict(zip([n for n in program.inputs], tensors, strict=True))
    run = run_model(compile_model(program, Schedule.unfused(program)), binds)
    np.testing.assert_allclose(run.outputs[program.outputs[0]], want, rtol=1e-4, atol=1e-5,
                               err_msg=text)


def test_softmax_file_matches_mlir_jit():
    from pathlib import Path

    text = (Path(__file__).parent / "mlir" / "softmax.mlir").read_text()
    x = np.random.default_rng(0).normal(size=(8, 5)).astype(np.float32)
    want = _jit(text.replace("@forward", "@f"), [x], 2)
    program = from_mlir(text)
    np.testing.assert_allclose(evaluate(program, {"scores": x})["probs"], want, rtol=1e-5,
                               atol=1e-7)


@pytest.mark.parametrize(("out_map", "iterators", "out_shape"), [
    ("(d0)", '"parallel", "parallel"', [4]),  # a parallel loop no output uses: summed
    ("(d0, d1)", '"parallel", "reduction"', [4, 3]),  # a reduction loop the output uses
])
def test_iterator_types_that_disagree_with_the_maps_read_as_mlir_runs_them(
        out_map, iterators, out_shape):
    """Reductions are read from the maps (the loops no output uses); MLIR's verifier accepts
    iterator types that say otherwise, and its loop lowering computes what the maps say."""
    out = _ttype(out_shape)
    text = f"""func.func @f(%a: tensor<4x3xf32>) -> {out} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {out}
  %fill = linalg.fill ins(%zero : f32) outs(%e : {out}) -> {out}
  %r = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
      affine_map<(d0, d1) -> {out_map}>], iterator_types = [{iterators}]}}
      ins(%a : tensor<4x3xf32>) outs(%fill : {out}) {{
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %out, %in : f32
      linalg.yield %s : f32
  }} -> {out}
  return %r : {out}
}}
"""
    a = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
    want = _jit(text, [a], len(out_shape))
    np.testing.assert_allclose(want, a.sum(1) if len(out_shape) == 1 else a, rtol=1e-6)
    program = from_mlir(text)
    np.testing.assert_allclose(evaluate(program, {"a": a})[program.outputs[0]], want,
                               rtol=1e-6, atol=1e-7)
