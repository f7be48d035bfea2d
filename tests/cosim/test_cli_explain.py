"""``samfuse compile --explain`` and ``--density``: the order search's candidates, their
costs (checked against ``compiler.order_cost`` of each order compiled explicitly) and
the chosen one."""

from __future__ import annotations

from itertools import permutations

import pytest

from compiler import compile_expression, order_cost
from cosim.cli import main

SPMM = "X(i,j) = A(i,k) * W(k,j)"
ARGS = ["compile", SPMM, "--format", "A=csr", "--shape", "A=300x200", "--shape", "W=200x8"]


def _rows(out: str) -> dict[str, tuple[bool, float]]:
    """order → (chosen, cost) from the explanation's candidate lines."""
    rows = {}
    for line in out.splitlines()[2:]:
        chosen = line.startswith("  * ")
        parts = line.split()
        order = parts[1] if chosen else parts[0]
        rows[order] = (chosen, float(parts[parts.index("cost") + 1].replace(",", "")))
    return rows


@pytest.mark.parametrize("density", [0.01, 0.3])
def test_explain_lists_every_order_with_its_cost_and_marks_the_cheapest(capsys, density):
    assert main([*ARGS, "--density", f"A={density}", "--explain"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("einsum: X(i,j) = A(i,k) * W(k,j)\n")
    assert "6 costed, 0 invalid" in out.splitlines()[1]
    rows = _rows(out)
    assert set(rows) == {",".join(p) for p in permutations("ijk")}
    shapes = {"A": (300, 200), "W": (200, 8)}
    for order, (_, cost) in rows.items():
        g = compile_expression(SPMM, {"A": "csr"}, shapes, order=order)
        assert cost == pytest.approx(order_cost(g, {"A": density}).total, abs=0.5)
    (chosen,) = [o for o, (c, _) in rows.items() if c]
    assert rows[chosen][1] == min(cost for _, cost in rows.values())
    assert list(rows)[0] == chosen  # cheapest first


def test_explain_with_an_explicit_order_costs_that_order(capsys):
    assert main([*ARGS, "--order", "i,j,k", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "order given explicitly" in out and "* i,j,k" in out


def test_explain_names_invalid_orders(capsys):
    assert main(["compile", "X(i,j) = M(i,j) * A(i,k) * W(k,j)", "--format", "M=csr",
                 "--size", "i=5", "--size", "j=5", "--size", "k=3", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "2 invalid" in out and "k,i,j  invalid: the operands of one of its loops" in out


@pytest.mark.parametrize("args,message", [
    (["--density", "A=2"], "samfuse: error: --density A=2: expected a fraction in [0, 1]"),
    (["--density", "A=x"], "samfuse: error: --density A=x: expected a fraction in [0, 1]"),
    (["--density", "Q=0.1"], "samfuse: error: stats given for ['Q'], which the expression "
                             "does not read; its inputs are ['A', 'W']"),
])
def test_bad_density_is_a_one_line_error(capsys, args, message):
    assert main([*ARGS, *args, "--explain"]) != 0
    err = capsys.readouterr().err.strip()
    assert err == message
