"""The fusion table the lowering records: its shape, that it accounts for every graph node
exactly once, that its references resolve, and that it survives the graph's JSON."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import Entry, FusionTable, LoweringError, compile_expression, fusion_table
from ir import Graph

GCN = "H(i,j) = relu(sum(k) A(i,k) * sum(l) X(k,l) * W(l,j) + b(j))"
SPMM = "X(i,j) = B(i,k) * C(k,j)"

#: primitives that work on value streams: recorded in the ``val`` row
VALUE_PRIMS = {"array", "alu", "unary", "reduce", "spacc", "spacc2", "value_writer"}


def _spmm_ikj() -> Graph:
    return compile_expression(SPMM, {"B": "csr", "C": "csr"}, {"B": (4, 5), "C": (5, 3)},
                              order="ikj")


def _gcn() -> Graph:
    return compile_expression(GCN, {"A": "csr", "X": "csr"},
                              {"A": (6, 6), "X": (6, 5), "W": (5, 4), "b": (4,)},
                              order="i,j,k,l")


def _check_accounts_for_every_node(graph: Graph) -> FusionTable:
    table = fusion_table(graph)
    created = table.created()
    assert sorted(created) == sorted(graph.nodes), "every node in exactly one cell"
    for (row, col), entries in table.cells.items():
        for e in entries:
            assert e.node in graph.nodes, f"{e} names no node"
            if e.ref:
                assert created[e.node] != (row, col), "a reference points to another cell"
                continue
            node = graph.nodes[e.node]
            assert e.label.split()[0] == node.op
            if node.op in VALUE_PRIMS:
                assert row == "val", e
            elif node.op != "root":  # a root sits at its view's first index (or val)
                assert row != "val", e
    return table


def test_spmm_ikj_table_has_the_order_rows_and_one_column_per_view():
    graph = _spmm_ikj()
    table = _check_accounts_for_every_node(graph)
    assert table.rows == ["i", "k", "j", "val"]
    assert table.columns == ["B(i,k)", "C(k,j)", "X(i,j)"]
    labels = {(r, c): [str(e) for e in table.cell(r, c)] for r in table.rows
              for c in table.columns}
    assert labels["i", "B(i,k)"] == ["root root_B", "scan_dense B_i"]
    # C's dense k level is not scanned: B's k crds locate into it
    assert labels["k", "B(i,k)"] == ["scan_compressed B_k"]
    assert labels["k", "C(k,j)"] == ["repsig rs_k", "repeat rep_C_k", "locate C_k", "→ B_k"]
    assert labels["j", "C(k,j)"] == ["scan_compressed C_j"]
    assert labels["j", "B(i,k)"] == ["repsig rs_j", "repeat rep_B_j"]
    assert labels["val", "B(i,k)"] == ["array B_val", "alu mul mul", "spacc spacc_k"]
    assert labels["val", "C(k,j)"] == ["array C_val", "→ mul"]
    assert labels["j", "X(i,j)"] == ["level_writer X_j", "→ spacc_k"]
    assert labels["val", "X(i,j)"] == ["value_writer X_val", "→ spacc_k"]


def test_gcn_table_places_the_nested_matmul_and_the_epilogue():
    graph = _gcn()
    table = _check_accounts_for_every_node(graph)
    assert graph.meta["order"] == ["i", "j", "k", "l"]
    assert table.rows == ["i", "j", "k", "l", "val"]
    assert table.columns == ["A(i,k)", "X(k,l)", "W(l,j)", "b(j)", "H(i,j)"]
    ops = {c: [e.label for e in table.cell("val", c) if not e.ref] for c in table.columns}
    assert ops["A(i,k)"] == ["array", "alu mul", "reduce sum", "alu add", "unary relu"]
    assert ops["X(k,l)"] == ["array", "alu mul", "reduce sum"]
    # the union of W and b over j is made once, in W's column, and shared by b
    assert [str(e) for e in table.cell("j", "b(j)")] == ["scan_dense b_j", "→ union_j"]
    assert table.cell("l", "A(i,k)") == [] and table.cell("l", "b(j)") == []


def test_table_round_trips_through_graph_json_and_prints_aligned():
    graph = _gcn()
    again = Graph.from_json(graph.to_json())
    assert fusion_table(again) == fusion_table(graph)
    text = str(fusion_table(graph))
    lines = text.splitlines()
    assert lines[0].split("|")[1].strip() == "A(i,k)"
    bars = {n for n, ch in enumerate(lines[0]) if ch == "|"}
    for line in lines[2:]:
        assert {n for n, ch in enumerate(line) if ch == "|"} == bars, "columns align"
    assert [line.split("|")[0].strip() for line in lines[2:] if line[0] != " "] == \
        ["i", "j", "k", "l", "val"]


def test_repeated_views_get_distinct_columns():
    graph = compile_expression("X(i,j) = B(i,j) * B(i,j)", {}, {"B": (2, 3)})
    table = _check_accounts_for_every_node(graph)
    assert table.columns == ["B(i,j)", "B(i,j)#2", "X(i,j)"]


def test_graphs_without_a_table_are_rejected_clearly():
    graph = _spmm_ikj()
    bare = Graph(graph.name, list(graph.nodes.values()), graph.edges,
                 list(graph.tensors.values()), graph.dtype, {})
    with pytest.raises(ValueError, match="has no fusion table in its meta; only graphs made "
                                         "by compiler.compile_expression carry one"):
        fusion_table(bare)
    with pytest.raises(KeyError, match=r"no cell \('q', 'B\(i,k\)'\); rows are"):
        fusion_table(graph).cell("q", "B(i,k)")


def test_entries_render_created_nodes_and_references():
    assert str(Entry("isect_k", "intersect")) == "intersect isect_k"
    assert str(Entry("isect_k", "", ref=True)) == "→ isect_k"


EXPRESSIONS = [
    ("X(i,j) = B(i,k) * C(k,j)", {"B": "ik", "C": "kj"}),
    ("X(i,j) = B(i,j) + C(i,k) * D(k,j)", {"B": "ij", "C": "ik", "D": "kj"}),
    ("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", {"B": "ikl", "C": "kj", "D": "lj"}),
    ("x = a(i) * b(i)", {"a": "i", "b": "i"}),
    (GCN, {"A": "ik", "X": "kl", "W": "lj", "b": "j"}),
    ("P(i,j) = exp(S(i,j)) / sum(j2) exp(S(i,j2))", {"S": "ij"}),
]


@st.composite
def formats(draw, rank: int) -> str:
    letters = "".join(draw(st.sampled_from("dc")) for _ in range(rank))
    order = draw(st.permutations(range(rank)))
    return letters if list(order) == sorted(order) else f"{letters}:{','.join(map(str, order))}"


@pytest.mark.parametrize("expr, operands", EXPRESSIONS)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_every_node_of_any_compiled_graph_is_in_exactly_one_cell(expr, operands, data):
    fmts = {t: data.draw(formats(len(ix)), label=f"format {t}") for t, ix in operands.items()}
    shapes = {t: (3,) * len(ix) for t, ix in operands.items()}
    try:
        graph = compile_expression(expr, fmts, shapes)
    except LoweringError:  # formats this expression cannot be lowered for
        return
    table = _check_accounts_for_every_node(graph)
    assert table.rows == [*graph.meta["order"], "val"] or "#" in graph.meta["normalized"]
    assert table.columns[-1].split("(")[0] == expr.split("(")[0].split("=")[0].strip()


def test_cli_compile_table_prints_the_plan(capsys, tmp_path):
    from cosim.cli import main

    args = ["compile", SPMM, "--format", "B=csr", "--format", "C=csr", "--shape", "B=4x5",
            "--shape", "C=5x3", "--order", "ikj", "--table"]
    assert main(args) == 0
    assert capsys.readouterr().out == str(fusion_table(_spmm_ikj())) + "\n"
    out = tmp_path / "g.json"
    assert main([*args, "-o", str(out)]) == 0
    assert capsys.readouterr().out.startswith(str(fusion_table(_spmm_ikj())))
    assert fusion_table(Graph.from_json(out)) == fusion_table(_spmm_ikj())
