"""The autoscheduler (cosim/tuning/_search*.py): known constraints, unknown constraints, outputs,
resuming from the study cache, determinism. Small: a 3-statement program evaluated
directly, and the tiny GCN through the study runner at a budget of 6-8."""

from __future__ import annotations

import itertools
import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from compiler import CompileError, compile_model, einsum_program
from cosim import Outcome, Point, TuneError, TuneSpace, run_model, search, tune
from cosim.tuning._search import best_trial, initial_design
from ir import Region, Schedule

pytest.importorskip("botorch")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def chain() -> tuple[TuneSpace, dict[str, np.ndarray]]:
    """X·W, then A·T1 (A sparse), then relu: 4 groupings, a few orders per region."""
    p = einsum_program(["T1(i,j) = X(i,k) * W(k,j)", "T2(i,j) = A(i,k) * T1(k,j)",
                        "H(i,j) = relu(T2(i,j))"],
                       {"X": (6, 4), "W": (4, 3), "A": (6, 6)}, {"A": "csr"}, name="chain")
    rng = np.random.default_rng(0)
    inputs = {"X": rng.normal(size=(6, 4)), "W": rng.normal(size=(4, 3)),
              "A": rng.normal(size=(6, 6)) * (rng.random((6, 6)) < 0.3)}
    return TuneSpace.build(p, stats=inputs, depths=(2, 4)), inputs


def simulate(space: TuneSpace, inputs: dict[str, np.ndarray], p: Point) -> Outcome:
    assert space.valid(p), f"proposed a point outside the known constraints: {p}"
    cm = compile_model(space.program, space.schedule(p), depth=p.depth)
    return Outcome(float(run_model(cm, inputs).cycles), "ok")


def test_orders_are_exactly_the_ones_the_compiler_lowers(chain):
    space, _ = chain
    prog = space.program
    for a, b in space.regions((True, True)):
        stmts = [st.target for st in prog.statements[a:b]]
        for order in space.options(a, b):
            cm = compile_model(prog, Schedule([Region("r", stmts, list(order))]
                                              + [Region(s.target, [s.target]) for s in
                                                 prog.statements if s.target not in stmts]))
            reg = next(r for r in cm.regions if r.name == "r")
            assert reg.kernels[0].order == list(order)
    # the fused nested product has valid-looking orders the lowering rejects
    fused = space.regions((False, False))[0]
    names = space.options(*fused)[0]
    assert len(space.options(*fused)) < len(list(itertools.permutations(names)))


def test_never_proposes_a_known_invalid_point(chain):
    space, inputs = chain
    trials = search(space, lambda ps: [simulate(space, inputs, p) for p in ps], 8, seed=1)
    assert len({t.point for t in trials}) == len(trials) == 8
    assert {t.source for t in trials} >= {"hand:unfused", "hand:partial", "bo"}
    bad = Point((True, True), (("z",), None, None), 2)
    assert not space.valid(bad)


def test_learns_from_failing_points(chain):
    """Points that keep X·W and A·T1 apart 'fail' (say, overflow on chip): once the
    initial design has seen failures, the proposals avoid them."""
    space, inputs = chain

    def evaluate(points: list[Point]) -> list[Outcome]:
        return [Outcome(None, "error") if p.cuts[0] else simulate(space, inputs, p)
                for p in points]

    trials = search(space, evaluate, 10, seed=0, n_random=3)
    failed_init = [t for t in trials if t.source != "bo" and t.outcome.value is None]
    assert failed_init, "the initial design should include a failing point"
    bo = [t for t in trials if t.source == "bo"]
    assert bo and all(t.p_feasible is not None for t in bo)
    assert sum(t.outcome.value is None for t in bo) <= 1
    assert max(t.p_feasible for t in bo if t.outcome.value is None) < 0.5 \
        if any(t.outcome.value is None for t in bo) else True
    assert best_trial(trials).outcome.value is not None


def test_deterministic_for_a_seed(chain):
    space, inputs = chain

    def ev(ps: list[Point]) -> list[Outcome]:
        return [simulate(space, inputs, p) for p in ps]

    first = [t.point for t in search(space, ev, 7, seed=3)]
    assert [t.point for t in search(space, ev, 7, seed=3)] == first


@pytest.fixture(scope="module")
def gcn_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("tune")
    return tune("gcn", out, config="tiny", budget=6), out


def test_outputs_and_best_yaml_reproduces_its_cycles(gcn_run):
    result, out = gcn_run
    for name in ("best.yaml", "best.json", "history.csv", "history.parquet",
                 "best_so_far.png"):
        assert (out / name).is_file(), name
    import pandas as pd

    hist = pd.read_csv(out / "history.csv")
    assert list(hist["eval"]) == list(range(1, 7))
    assert hist["best_so_far"].iloc[-1] == result.best.outcome.value
    hand = {t.source: t.outcome.value for t in result.trials if t.source.startswith("hand")}
    assert result.best.outcome.value <= min(hand.values())
    proc = subprocess.run([sys.executable, "-m", "cosim.cli", "model", "gcn", "--config",
                           "tiny", "--schedule", str(out / "best.yaml")],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    assert f"simulated  {int(result.best.outcome.value)} cycles" in proc.stdout


def test_resume_reuses_cached_evaluations(gcn_run, monkeypatch):
    """A longer re-run (as after a kill) replays the first evaluations from the cache."""
    result, out = gcn_run
    import cosim.studies._executors as executors

    ran = []
    real = executors.run_config
    monkeypatch.setattr(executors, "run_config", lambda c: ran.append(c) or real(c))
    again = tune("gcn", out, config="tiny", budget=8)
    assert [t.point for t in again.trials[:6]] == [t.point for t in result.trials]
    assert len(ran) == 2
    assert len(list((out / "runs").glob("*.json"))) == 8


def test_cli_help_imports_no_torch_and_bad_budget_is_a_usage_error():
    code = ("import sys, cosim.cli\ntry:\n    cosim.cli.main(['tune', '--help'])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in ('torch', 'botorch', 'gpytorch', 'optuna') "
            "if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert proc.stdout.strip().endswith("[]")
    bad = subprocess.run([sys.executable, "-m", "cosim.cli", "tune", "gcn", "--budget", "0"],
                         capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 1 and "--budget 0: expected >= 1" in bad.stderr


def test_unknown_model_and_knob_are_clear_errors(chain):

    with pytest.raises(TuneError, match="expected a bundled model"):
        tune("nosuch", "/tmp/unused")
    with pytest.raises(TuneError, match="hardware knob onchip.bytes=lots"):
        TuneSpace.build(chain[0].program, hw_knobs={"onchip.bytes": ["lots"]})
    with pytest.raises(CompileError):
        compile_model(chain[0].program, Schedule([Region("all", ["T1", "T2", "H"],
                                                         ["z"])]))


def test_lanes_and_partitions_are_knobs_that_reach_the_schedule(chain):
    _, inputs = chain
    space = TuneSpace.build(chain[0].program, stats=inputs, lanes=(1, 3),
                            partitions=("round-robin", "balanced"))
    one = space.default_point(space.hand_cuts()["unfused"])
    three = Point(one.cuts, one.orders, one.depth, one.hw, 3, "balanced")
    assert space.valid(three) and not space.valid(Point(one.cuts, one.orders, one.depth,
                                                        one.hw, 2))
    assert space.size() == 4 * TuneSpace.build(chain[0].program, stats=inputs).size()
    assert space.heuristic(three) == pytest.approx(space.heuristic(one) / 3)
    sched = space.schedule(three)
    assert [r.par for r in sched.regions] == [{"i": 3}] * 3
    assert {r.partition for r in sched.regions} == {"balanced"}
    assert three in space.neighbours(Point(one.cuts, one.orders, one.depth, one.hw, 1,
                                           "balanced"))
    cm = compile_model(space.program, sched, stats=inputs)
    assert all(k.graph.meta["parallel"]["par"] == {"i": 3} for r in cm.regions
               for k in r.kernels)
    want = np.maximum(inputs["A"] @ (inputs["X"] @ inputs["W"]), 0)
    np.testing.assert_allclose(run_model(cm, inputs).outputs["H"], want, rtol=1e-4,
                               atol=1e-5)


def test_the_initial_design_runs_the_hand_schedules_on_the_most_lanes_too(chain):
    """With lanes as a knob a researcher tries the hand plans on every lane as well (a
    GraphSAGE Cora tune at budget 10 missed unfused on 4 lanes, 2.2x its best)."""
    _, inputs = chain
    space = TuneSpace.build(chain[0].program, stats=inputs, lanes=(1, 4))
    design = dict(initial_design(space, random.Random(0)))
    for cuts in space.hand_cuts().values():  # (two hand plans may coincide)
        one = space.default_point(cuts)
        assert design[one].startswith("hand:")
        assert design[replace(one, lanes=4)] == design[one] + "x4"
    plain = TuneSpace.build(chain[0].program, stats=inputs)
    assert not any(s.endswith("x4") for s in dict(initial_design(plain,
                                                                  random.Random(0))).values())


def test_block_size_is_a_knob_that_reaches_the_schedule(chain):
    """A point's block extent seeds the program's sparse tensors (A, blocked 2x2 here:
    its indices block T1's rows and X's too); the heuristic prices it compiled in
    blocks, and the tuned schedule runs to numpy's result."""
    _, inputs = chain
    space = TuneSpace.build(chain[0].program, stats=inputs, blocks=(1, 2))
    one = space.default_point(space.hand_cuts()["unfused"])
    two = Point(one.cuts, one.orders, one.depth, one.hw, block=2)
    assert space.valid(two) and not space.valid(Point(one.cuts, one.orders, one.depth,
                                                      one.hw, block=3))
    assert space.size() == 2 * TuneSpace.build(chain[0].program, stats=inputs).size()
    assert two in space.neighbours(one)
    assert 0 < space.heuristic(two) < space.heuristic(one)  # fewer, wider firings
    sched = space.schedule(two)
    assert sched.block == {"A": 2}
    cm = compile_model(space.program, sched, stats=inputs)
    assert cm.regions[1].kernels[0].graph.tensors["A"].block == (2, 2)
    want = np.maximum(inputs["A"] @ (inputs["X"] @ inputs["W"]), 0)
    np.testing.assert_allclose(run_model(cm, inputs).outputs["H"], want, rtol=1e-4,
                               atol=1e-5)
    assert "block=2" in space.describe(two)
    with pytest.raises(TuneError, match="blocks"):
        TuneSpace.build(chain[0].program, blocks=(0,))
    every = TuneSpace.build(chain[0].program, stats=inputs, blocks=(1, 2),
                            block_tensors="all")
    assert every.block_seeds(2) == {"X": 2, "A": 2}  # 2 divides no size of W, T1, T2, H


def test_assoc_is_a_knob_that_reaches_the_schedule(chain):
    """A point's association re-associates the program before grouping: X·W then A·T1
    becomes A·X then ·W; its regions take the compiler's orders."""
    program, inputs = chain[0].program, chain[1]
    plain = TuneSpace.build(program, stats=inputs)
    space = TuneSpace.build(program, stats=inputs, assocs=("as-written", "left"))
    one = space.default_point(space.hand_cuts()["partial"])
    left = Point(one.cuts, (None,) * len(one.orders), one.depth, one.hw, assoc="left")
    assert space.valid(left) and not plain.valid(left)
    assert left in space.neighbours(one)
    assert space.size() > plain.size()
    assert 0 < space.heuristic(left) < float("inf")
    assert "assoc=left" in space.describe(left)
    sched = space.schedule(left)
    assert sched.assoc == "left"
    cm = compile_model(program, sched, stats=inputs)
    assert any("A(i,k) * X(k" in st.text for st in cm.program.statements)
    want = np.maximum(inputs["A"] @ inputs["X"] @ inputs["W"], 0)
    np.testing.assert_allclose(run_model(cm, inputs).outputs["H"], want, rtol=1e-4,
                               atol=1e-5)
    assert any(p.assoc == "left" for p in space.all_points())
    seen = search(space, lambda ps: [simulate(space, inputs, p) for p in ps], 6, seed=0)
    assert all(space.valid(t.point) for t in seen)
    assert {space.sample(random.Random(s)).assoc for s in range(20)} == {"as-written",
                                                                        "left"}
    with pytest.raises(TuneError, match="assocs \\['cost'\\]: expected some of"):
        TuneSpace.build(program, assocs=("cost",))



def test_fifo_depth_defaults_to_the_machines_own(tmp_path):
    """``--hw fuseflow`` (unbounded FIFOs) tunes at that depth, not at the compiled 2 the
    preset's depth would override in every run; a machine without a depth of its own
    keeps 2, and depths given explicitly are searched as given."""
    from cosim.tuning._run import default_depths
    from ir import load_hw

    assert default_depths(load_hw("fuseflow")) == (None,)
    assert default_depths(load_hw("hbm2-u280")) == (2,)
    assert default_depths(load_hw("ideal", ["fifo.depth=8"])) == (8,)
    for sub in ("ff", "given"):
        (tmp_path / sub).mkdir()
    unbounded = tune("gcn", tmp_path / "ff", config="tiny", budget=2, hw="fuseflow")
    assert {t.point.depth for t in unbounded.trials} == {None}
    given = tune("gcn", tmp_path / "given", config="tiny", budget=2, hw="fuseflow",
                 depths=(4,))
    assert {t.point.depth for t in given.trials} == {4}


def test_the_prior_prices_a_points_on_chip_buffers():
    """On hbm2-u280 a point with ``buffer=auto`` is priced with the buffers it runs with
    (issue 27): where they take a gathered dense operand on chip the heuristic prices
    the point below the same point without them, and the simulator agrees; where the
    compiler buffers nothing, both price it the same."""
    from compiler import buffer_model
    from ir import load_hw

    hw = load_hw("hbm2-u280")
    program = einsum_program(["T(i,j) = A(i,k) * X(k,j)", "H(i,j) = relu(T(i,j))"],
                             {"A": (48, 48), "X": (48, 8)}, {"A": "csr"}, name="spmm")
    rng = np.random.default_rng(0)
    inputs = {"A": rng.normal(size=(48, 48)) * (rng.random((48, 48)) < 0.1),
              "X": rng.normal(size=(48, 8))}
    space = TuneSpace.build(program, stats=inputs, hw=hw, buffers=("none", "auto"))
    plain = space.default_point((True,))

    def cycles(p: Point) -> int:
        cm = buffer_model(compile_model(program, space.schedule(p), depth=p.depth), hw,
                          None, inputs)
        return run_model(cm, inputs, hw=hw).cycles

    cheaper = 0
    for order in space.options(0, 1):
        base = replace(plain, orders=(order, *plain.orders[1:]))
        buffered = replace(base, buffer="auto")
        est, est_buffered = space.heuristic(base), space.heuristic(buffered)
        assert est_buffered <= est
        if est_buffered < 0.9 * est:
            cheaper += 1
            assert cycles(buffered) < 0.9 * cycles(base), order
    assert cheaper >= 3
