"""Block sparsity in models (docs/blocks.md, "Models"): a schedule's ``block`` seeds
propagate to every tensor that shares an index with a blocked one, every region
compiles with those blocks, and the run equals the numpy oracle."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from compiler import (
    LoweringError,
    compile_model,
    einsum_program,
    evaluate,
    from_torch,
    models,
    torch_inputs,
    torch_weights,
)
from compiler._blocks import seed_blocks, tensor_blocks
from cosim import run_model
from ir import Schedule, ScheduleError


@pytest.fixture(scope="module")
def bigbird():
    m = models.BigBirdAttention(**models.BigBirdAttention.default_config["small"])
    prog = from_torch(m, m.example_inputs(), formats={"mask": "csr"})
    binds = {**torch_weights(m, prog), **torch_inputs(prog, m.example_inputs())}
    return prog, binds, evaluate(prog, binds)


def test_blocks_propagate_from_the_mask_along_shared_indices(bigbird):
    prog, _, _ = bigbird
    blocks = tensor_blocks(prog, {"mask": 4})
    assert blocks["mask"] == (4, 4) and blocks["mm"] == (4, 4)
    # the projections meet the mask's rows: blocked by rows, their width stays scalar
    assert blocks["x"] == (4, 1) and blocks["linear"] == (4, 1)
    assert blocks["softmax_max"] == (4,)
    assert "qkv_q_weight" not in blocks and "out_bias" not in blocks


@pytest.mark.parametrize("schedule", ["unfused", "by_scope"])
def test_blocked_bigbird_matches_the_oracle(bigbird, schedule):
    prog, binds, gold = bigbird
    sched = getattr(Schedule, schedule)(prog)
    sched.block = {"mask": 4}
    cm = compile_model(prog, sched, stats=binds)
    assert any(n.params.get("block") for r in cm.regions for k in r.kernels
               for n in k.graph.nodes.values())
    run = run_model(cm, binds)
    out = prog.outputs[0]
    np.testing.assert_allclose(run.outputs[out], gold[out], rtol=1e-4, atol=1e-5)
    scalar = run_model(compile_model(prog, getattr(Schedule, schedule)(prog), stats=binds),
                       binds)
    assert run.cycles < scalar.cycles  # 16 scalars per firing of the score blocks


def test_block_schedule_round_trips_and_names_bad_tensors(bigbird):
    prog, _, _ = bigbird
    sched = Schedule.unfused(prog)
    sched.block = {"mask": 4}
    again = Schedule.from_yaml(sched.to_yaml())
    assert again.block == {"mask": 4}
    bad = Schedule.from_dict({**sched.to_dict(), "block": {"nope": 4}})
    with pytest.raises(ScheduleError, match="block names 'nope'"):
        bad.validate(prog)
    with pytest.raises(ScheduleError, match="must be an int >= 1"):
        Schedule.from_dict({**sched.to_dict(), "block": {"mask": "x"}})


def test_conflicting_block_extents_name_the_statement():
    prog = einsum_program(["C(i,j) = A(i,j) + B(i,j)"], {"A": (8, 8), "B": (8, 8)},
                          {"A": "csr", "B": "csr"})
    with pytest.raises(LoweringError, match="meets blocks 4 and 2 at index"):
        tensor_blocks(prog, {"A": 4, "B": 2})
    with pytest.raises(LoweringError, match="not a multiple of its block extent 3"):
        tensor_blocks(prog, {"A": 3})


def test_a_fused_gpt_layer_with_every_tensor_blocked_matches_torch():
    """The fused attention region of a GPT layer has ~60 indices, more than the Latin
    alphabet names: block operators take Greek letters after it."""
    m = models.GPTDecoderLayer(**models.GPTDecoderLayer.default_config["tiny"])
    inputs = m.example_inputs()
    prog = from_torch(m, inputs)
    binds = {**torch_weights(m, prog), **torch_inputs(prog, inputs)}
    sched = Schedule.by_scope(prog)
    sched.block = seed_blocks(prog, 2, "all")
    cm = compile_model(prog, sched, stats=binds)
    specs = [n.params["block"] for r in cm.regions for k in r.kernels
             for n in k.graph.nodes.values() if n.params.get("block")]
    assert any(not c.isascii() for s in specs for c in s.split(";")[0])
    with torch.no_grad():
        want = m(*inputs).numpy()
    got = run_model(cm, binds).outputs[prog.outputs[0]]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
