"""Schedules (construction, YAML, validation), inlining rules and compile_model.

Numerical agreement of compiled models with numpy is tested in
``tests/cosim/test_model_run.py``, which runs them.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import (
    FUNCTIONS,
    Access,
    Assignment,
    BinOp,
    Call,
    CompileError,
    Const,
    LoweringError,
    Neg,
    OrderError,
    Reduction,
    compile_model,
    einsum_program,
    format_assignment,
    fuse_region,
    parse,
    region_exports,
)
from ir import Region, Schedule, ScheduleError

GCN = ["T1(i,j) = X(i,k) * W1(k,j)", "T2(i,j) = A(i,k) * T1(k,j)",
       "H1(i,j) = relu(T2(i,j) + b1(j))", "T3(i,j) = H1(i,k) * W2(k,j)",
       "H2(i,j) = A(i,k) * T3(k,j)"]
GCN_SHAPES = {"X": (6, 4), "W1": (4, 3), "A": (6, 6), "b1": (3,), "W2": (3, 2)}


def gcn():
    return einsum_program(GCN, GCN_SHAPES, {"A": "csr"}, scopes=["l0"] * 3 + ["l1"] * 2,
                          name="gcn")


def chain():
    """Y = A (B C) + D with an extra reader of the intermediate."""
    return einsum_program(["T(i,j) = B(i,k) * C(k,j)", "U(i,j) = A(i,k) * T(k,j)",
                           "Y(i,j) = U(i,j) + D(i,j)", "Z(i,j) = T(i,j) * U(i,j)"],
                          {"A": (5, 4), "B": (4, 3), "C": (3, 5), "D": (5, 5)},
                          {"A": "csr", "B": "csr", "C": "csr"}, outputs=["Y", "Z"],
                          name="chain")


# -- schedules ---------------------------------------------------------------------------

def test_schedule_constructors():
    p = gcn()
    assert [r.statements for r in Schedule.unfused(p).regions] == [[t] for t in
                                                                   ("T1", "T2", "H1", "T3",
                                                                    "H2")]
    assert Schedule.fused(p).regions[0].statements == ["T1", "T2", "H1", "T3", "H2"]
    by = Schedule.by_scope(p)
    assert [(r.name, r.statements) for r in by.regions] == [
        ("l0", ["T1", "T2", "H1"]), ("l1", ["T3", "H2"])]
    g = Schedule.groups(p, [["T1", "T2"], ["H1", "T3", "H2"]])
    assert [r.name for r in g.regions] == ["T1+T2", "H1+T3+H2"]
    for s in (by, g, Schedule.unfused(p), Schedule.fused(p)):
        s.validate(p)


def test_schedule_yaml_round_trip():
    p = gcn()
    s = Schedule([Region("layer0", ["T1", "T2", "H1"], ["i", "k"], transpose=False),
                  Region("layer1", ["T3", "H2"])], {"H1": "dc"}, name="mine")
    text = s.to_yaml()
    assert "order: i,k" in text and "transpose: false" in text
    back = Schedule.from_yaml(text)
    assert back == s and back.to_dict() == s.to_dict()
    back.validate(p)
    written = """
name: handwritten
regions:
  - {name: a, statements: [T1, T2], order: [i, k, k2]}
  - name: b
    statements: H1, T3, H2
formats: {T2: csr}
"""
    s2 = Schedule.from_yaml(written)
    s2.validate(p)
    assert s2.regions[0].order == ["i", "k", "k2"]
    assert s2.regions[1].statements == ["H1", "T3", "H2"]


@pytest.mark.parametrize(("regions", "formats", "match"), [
    ([["T1", "T2"], ["H1", "T3"]], {}, r"statement\(s\) \['H2'\] are in no region"),
    ([["T1", "T2"], ["T2", "H1", "T3", "H2"]], {},
     r"statement 'T2' is listed in regions 'T1\+T2' and 'T2\+H1\+T3\+H2'"),
    ([["T1", "Q"], ["T2", "H1", "T3", "H2"]], {},
     r"region 'T1\+Q' names 'Q', which no statement of program 'gcn' defines"),
    ([["T1", "H1"], ["T2"], ["T3", "H2"]], {},
     r"regions depend on each other in a cycle: 'T1\+H1' -> 'T2' -> 'T1\+H1'"),
    ([["T1", "T2", "H1", "T3", "H2"]], {"Q": "csr"},
     r"format override for 'Q', which program 'gcn' does not declare"),
    ([["T1", "T2", "H1", "T3", "H2"]], {"T1": "dcx"},
     r"format override for 'T1': format 'dcx'"),
])
def test_schedule_validation_errors(regions, formats, match):
    with pytest.raises(ScheduleError, match=match):
        Schedule.groups(gcn(), regions, formats)


@pytest.mark.parametrize(("text", "match"), [
    ("[1, 2]", r"a schedule must be a mapping with 'regions', got list"),
    ("regions: [{name: a}]", r"region #0: expected a mapping with 'statements'"),
    ("regions: []\nextra: 1", r"unknown schedule key\(s\) \['extra'\]"),
    ("regions: [{statements: [T1], transpose: maybe}]",
     r"region #0: transpose must be true or false, got 'maybe'"),
    ("regions: [{statements: [T1], order: 'i,i'}]", r"lists \['i'\] more than once"),
    ("regions: [", r"schedule YAML does not parse"),
    ("regions: [{statements: [T1], order: 3}]", r"order must be a list of index names"),
])
def test_schedule_from_yaml_errors(text, match):
    with pytest.raises(ScheduleError, match=match):
        Schedule.from_yaml(text)


def test_execution_order_moves_regions_after_their_producers():
    p = gcn()
    s = Schedule([Region("late", ["T3", "H2"]), Region("early", ["T1", "T2", "H1"])])
    assert [r.name for r in s.execution_order(p)] == ["early", "late"]


# -- inlining ----------------------------------------------------------------------------

def test_exports_and_inlining_renames_reductions_apart():
    p = gcn()
    assert region_exports(p, ["T1", "T2", "H1"]) == ["H1"]
    (f,) = fuse_region(p, ["T1", "T2", "H1"])
    assert f.text == "H1(i,j) = relu(sum(k) A(i,k) * sum(k2) X(k,k2) * W1(k2,j) + b1(j))"
    assert f.inlined == ("T2", "T1") and f.statements == ("T1", "T2", "H1")
    assert f.reads == ["A", "X", "W1", "b1"]
    assert f.index_names() == ["i", "j", "k", "k2"]
    assert parse(f.text) == f.assignment  # the text is what gets compiled


def test_renaming_is_deterministic_and_avoids_every_used_name():
    p = einsum_program(["T(i,j) = B(i,k) * C(k,j)", "Y(i,k2) = T(i,k) * D(k,k2) + T(i,k2)"],
                       {"B": (3, 4), "C": (4, 5), "D": (5, 5)})
    (f,) = fuse_region(p, ["T", "Y"])
    assert f.text == ("Y(i,k2) = sum(k) (sum(k3) B(i,k3) * C(k3,k)) * D(k,k2) + "
                      "sum(k4) B(i,k4) * C(k4,k2)")
    assert f.inlined == ("T", "T")
    assert fuse_region(p, ["T", "Y"])[0].text == f.text


def test_several_exports_give_one_fused_expression_each():
    p = chain()
    assert region_exports(p, ["T", "U", "Y", "Z"]) == ["Y", "Z"]
    y, z = fuse_region(p, ["T", "U", "Y", "Z"])
    assert y.inlined == ("U", "T") and z.inlined == ("T", "U", "T")  # T recomputed
    # T is read by Z outside {T, U}: it is exported and read back from memory
    assert region_exports(p, ["T", "U"]) == ["T", "U"]
    t, u = fuse_region(p, ["T", "U"])
    assert u.text == "U(i,j) = sum(k) A(i,k) * T(k,j)"


def test_rank_mismatch_is_reported():
    p = einsum_program(["T(i) = B(i,k) * c(k)", "y(i) = T(i) * d(i)"],
                       {"B": (3, 4), "c": (4,), "d": (3,)})
    broken = type(p).from_dict({**p.to_dict(), "statements": [
        p.statements[0].__dict__, {**p.statements[1].__dict__,
                                   "text": "y(i) = T(i,j) * d(i)"}]})
    with pytest.raises(CompileError, match=r"T\(i,j\) reads 'T' with 2 indices, but it is "
                                           r"defined as T\(i\) \(1 indices\)"):
        fuse_region(broken, ["T", "y"])


def uncolumned(text):
    """The tree ``text`` parses to, printed fully parenthesised (columns dropped)."""
    return str(parse(text))


INDEX = st.sampled_from("ijk")
LEAVES = st.one_of(
    st.builds(lambda t, ix: Access(t, tuple(ix)), st.sampled_from("BCD"),
              st.lists(INDEX, max_size=2, unique=True)),
    st.builds(Const, st.sampled_from([0.5, 2.0, 3.0])))
TREES = st.recursive(LEAVES, lambda sub: st.one_of(
    st.builds(Neg, sub),
    st.builds(BinOp, st.sampled_from("+-*/"), sub, sub),
    st.builds(lambda op, ix, body: Reduction(op, tuple(ix), body), st.sampled_from(
        ["sum", "max"]), st.lists(INDEX, min_size=1, max_size=2, unique=True), sub),
    st.builds(Call, st.sampled_from(FUNCTIONS), sub)), max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(rhs=TREES)
def test_printer_reads_back_to_the_same_tree_with_fewer_parentheses(rhs):
    assign = Assignment(Access("X", ("i",)), rhs)
    text = format_assignment(assign)
    assert uncolumned(text) == uncolumned(str(assign))
    assert len(text) <= len(str(assign))


@pytest.mark.parametrize(("full", "minimal"), [
    ("X(i) = (sum(k) B(i,k)) * C(i)", "X(i) = (sum(k) B(i,k)) * C(i)"),
    ("X(i) = C(i) * (sum(k) B(i,k) * D(k))", "X(i) = C(i) * sum(k) B(i,k) * D(k)"),
    ("X(i) = (C(i) * (sum(k) B(i,k))) * D(i)", "X(i) = C(i) * (sum(k) B(i,k)) * D(i)"),
    ("X(i) = B(i) - (C(i) - D(i))", "X(i) = B(i) - (C(i) - D(i))"),
    ("X(i) = (sum(k) (B(i,k) + C(i,k))) + D(i)", "X(i) = sum(k) (B(i,k) + C(i,k)) + D(i)"),
    ("X(i) = -(B(i) * C(i))", "X(i) = -(B(i) * C(i))"),
])
def test_printer_keeps_the_parentheses_the_grammar_needs(full, minimal):
    assert format_assignment(parse(full)) == minimal


# -- compile_model -----------------------------------------------------------------------

def test_compile_model_regions_orders_and_summary():
    p = gcn()
    cm = compile_model(p, Schedule.by_scope(p))
    assert [r.name for r in cm.regions] == ["l0", "l1"]
    l0, l1 = cm.regions
    assert l0.outputs == ["H1"] and set(l0.inputs) == {"A", "X", "W1", "b1"}
    assert l1.inputs == ["A", "H1", "W2"]
    (k,) = l0.kernels
    # the graph's only valid order puts the inner sum outside j: its rows stream into
    # the outer accumulator, whose rows meet b1(j) in an epilogue join (costed first);
    # orders that permute operands follow, and the cheapest costed one is kept
    assert k.order_graph.all_orders().orders == [["i", "k", "k2", "j"]]
    costs = {c["order"]: c["cost"] for c in k.graph.meta["order_search"]["candidates"]
             if "cost" in c}
    assert "i,k,k2,j" in costs and ["i", "k", "k2", "j"] not in [o for o, _ in k.tried]
    assert [(o, why.split(";")[0]) for o, why in k.tried[:1]] == [
        (["i", "k2", "j", "k"], "dataflow order i,k2,j,k runs the sum over 'k2' outside "
                                "index 'j'")]
    assert k.order == k.graph.meta["order"] and ",".join(k.order) == min(costs, key=costs.get)
    inputs = {t for t in k.transposed if t != "H1"}
    assert sorted(inputs) == sorted(k.order_graph.transposes(k.order))
    assert k.graph.meta["inlined"] == ["T2", "T1"] and k.graph.meta["region"] == "l0"
    text = str(cm)
    assert "region l0 [T1, T2, H1]: reads" in text and k.text in text
    assert cm.compile_seconds > 0


def test_user_order_is_honoured_and_transposes_recorded():
    p = einsum_program(["Y(i,j) = B(i,k) * C(k,j)"], {"B": (4, 5), "C": (5, 3)},
                       {"B": "csr", "C": "csr"})
    cm = compile_model(p, Schedule([Region("r", ["Y"], ["j", "i", "k"])]))
    (k,) = cm.regions[0].kernels
    assert k.order == ["j", "i", "k"]
    # a partial order is a constraint the cost-chosen order keeps
    part = compile_model(p, Schedule([Region("r", ["Y"], ["j", "i"])]))
    order = part.regions[0].kernels[0].order
    assert order.index("j") < order.index("i")
    # C gets a permuted copy; the output is written in order j,i (same logical tensor)
    assert k.transposed == {"C": {"requested": "dc", "bound": "dc:1,0"},
                            "Y": {"requested": "dd", "bound": "dd:1,0"}}
    assert list(k.order_graph.permuted) == ["C"]


def test_forbidden_transposes_raise_conflict():
    p = einsum_program(["Y(i,j) = B(i,k) * C(k,j)"], {"B": (4, 5), "C": (5, 3)},
                       {"B": "csr", "C": "csr"})
    sched = Schedule([Region("r", ["Y"], "j,i", transpose=False)])
    with pytest.raises(OrderError, match=r"conflicting ordering constraints: tensor 'C' "
                                         r"read as C\(k,j\)"):
        compile_model(p, sched)


def test_unknown_order_name_shows_the_fused_text():
    p = gcn()
    sched = Schedule([Region("l0", ["T1", "T2", "H1"], "i,q"), Region("l1", ["T3", "H2"])])
    with pytest.raises(OrderError, match=r"region 'l0': order 'i,q' names 'q', which is not "
                                         r"an index of its fused expression\(s\): H1\(i,j\)"):
        compile_model(p, sched)


def test_nested_matmul_without_transposes_streams_the_inner_row():
    # the only concordant order i,l,k,j sums k above j: the inner row T(l,:) comes out
    # of a spacc and is streamed into the outer one, A(i,l) broadcast over its crds
    p = einsum_program(["T(i,j) = B(i,k) * C(k,j)", "Y(i,j) = A(i,l) * T(l,j)"],
                       {"A": (3, 3), "B": (3, 4), "C": (4, 3)},
                       {"A": "csr", "B": "csr", "C": "csr"})
    cm = compile_model(p, Schedule([Region("all", ["T", "Y"], transpose=False)]))
    (kernel,) = cm.regions[0].kernels
    assert kernel.order == ["i", "l", "k", "j"]
    assert kernel.graph.meta["reductions"] == ["sum(k): spacc", "sum(l): spacc"]


def test_no_lowerable_order_lists_the_reasons():
    # the only concordant order puts the max above 'j': accumulators only sum
    p = einsum_program(["Y(i,j) = max(k) B(i,k) * C(k,j)"], {"B": (3, 4), "C": (4, 3)},
                       {"B": "csr", "C": "csr"})
    with pytest.raises(LoweringError) as exc:
        compile_model(p, Schedule([Region("all", ["Y"], transpose=False)]))
    msg = str(exc.value)
    assert msg.startswith("region 'all': no dataflow order of Y(i,j) = ")
    assert "i,k,j: " in msg and "1 tried" in msg


@pytest.mark.parametrize(("stmts", "match"), [
    (["Y(i) = B(i,k) * q(k)"], r"reads 'q', whose shape is unknown"),
    (["Y(i,z) = B(i,k) * c(k)"], r"the size of output index z is unknown"),
])
def test_einsum_program_errors(stmts, match):
    with pytest.raises(ValueError, match=match):
        einsum_program(stmts, {"B": (3, 4), "c": (4,)})


def test_einsum_program_roles_and_shapes():
    p = einsum_program(["T(i,j) = B(i,k) * C(k,j)", "y(i) = T(i,j) * d(j)"],
                       {"B": (3, 4), "C": (4, 5), "d": (5,)}, {"B": "csr"})
    assert p.inputs == ["B", "C", "d"] and p.outputs == ["y"]
    assert p.tensors["T"].shape == (3, 5) and p.tensors["T"].role == "intermediate"
    assert p.tensors["B"].format == "csr" and p.statements[1].reads == ("T", "d")


def test_by_scope_starts_a_new_region_when_a_scope_comes_back():
    p = einsum_program(["T(i) = B(i) * c(i)", "U(i) = T(i) + c(i)", "V(i) = U(i) * T(i)"],
                       {"B": (3,), "c": (3,)}, scopes=["a#1", "", "a#1"])
    s = Schedule.by_scope(p)
    assert [(r.name, r.statements) for r in s.regions] == [
        ("a#1", ["T"]), ("main", ["U"]), ("a#1#2", ["V"])]
    s.validate(p)


def test_by_scope_groups_statements_by_layer():
    p = einsum_program(["T(i) = B(i) * c(i)", "U(i) = T(i) + c(i)", "V(i) = U(i) * U(i)",
                        "W(i) = V(i) * c(i)", "Y(i) = W(i) + V(i)", "Z(i) = Y(i) * c(i)"],
                       {"B": (3,), "c": (3,)},
                       scopes=["layers.0.lin", "layers.0", "", "blk.attn.q", "blk.out", ""])

    def regions(**kw):
        return [(r.name, r.statements) for r in Schedule.by_scope(p, **kw).regions]

    assert regions() == [("layers.0", ["T", "U"]), ("main", ["V"]),
                         ("blk", ["W", "Y"]), ("main#2", ["Z"])]
    assert regions(depth=2) == [("layers.0.lin", ["T"]), ("layers.0", ["U"]),
                                ("main", ["V"]), ("blk.attn", ["W"]), ("blk.out", ["Y"]),
                                ("main#2", ["Z"])]
    assert [n for n, _ in regions(depth=None)] == ["layers.0.lin", "layers.0", "main",
                                                   "blk.attn.q", "blk.out", "main#2"]
    Schedule.by_scope(p).validate(p)
    with pytest.raises(ScheduleError, match="by_scope depth 0: expected a positive"):
        Schedule.by_scope(p, depth=0)
