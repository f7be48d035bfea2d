"""The einsum parser and the normalizer: precedence, reductions, and pinned error texts."""

from __future__ import annotations

import pytest

from compiler import (
    FUNCTIONS,
    Access,
    BinOp,
    Call,
    Const,
    LoweringError,
    Neg,
    ParseError,
    Reduction,
    normalize,
    parse,
)


def test_statement_with_precedence_and_columns():
    a = parse("X(i,j) = B(i,k) * C(k,j) + 2 * D(i,j)")
    assert a.target == Access("X", ("i", "j"), 1)
    assert isinstance(a.rhs, BinOp) and a.rhs.op == "+" and a.rhs.col == 26
    left, right = a.rhs.left, a.rhs.right
    assert left == BinOp("*", Access("B", ("i", "k"), 10), Access("C", ("k", "j"), 19), 17)
    assert right == BinOp("*", Const(2.0, 28), Access("D", ("i", "j"), 32), 30)


def test_subtraction_and_division_are_left_associative():
    a = parse("x(i) = a(i) - b(i) - c(i) / d(i) / 2")
    assert str(a.rhs) == "(a(i) - b(i)) - ((c(i) / d(i)) / 2)"


def test_unary_minus_numbers_and_scalars():
    a = parse("y = -2.5e-1 * s() * -t")
    assert a.target == Access("y", (), 1)
    assert a.rhs == BinOp("*", BinOp("*", Neg(Const(2.5e-1, 6), 5), Access("s", (), 15), 13),
                          Neg(Access("t", (), 22), 21), 19)


def test_reduction_body_is_the_product_chain_that_follows():
    a = parse("X(i,j) = B(i,j) * sum(k) C(i,k) * D(k,j) + E(i,j)")
    assert str(a.rhs) == "(B(i,j) * (sum(k) (C(i,k) * D(k,j)))) + E(i,j)"
    red = a.rhs.left.right
    assert isinstance(red, Reduction) and red.indices == ("k",) and red.col == 19


def test_max_reduction_and_multiple_indices():
    assert str(parse("x(i) = max(j) B(i,j)").rhs) == "max(j) B(i,j)"
    assert parse("x = sum(i, j) B(i,j)").rhs.indices == ("i", "j")


@pytest.mark.parametrize("text, message", [
    ("X(i,j) = B(i,k * C(k,j)",
     "column 16: expected ',' or ')' in the index list of 'B', found '*'\n"
     "  X(i,j) = B(i,k * C(k,j)\n"
     "                 ^"),
    ("X(i,j) = B(i,k) * ",
     "column 18: expected a tensor access such as 'B(i,j)', a number, a reduction such as "
     "'sum(k) ...', a function such as 'relu(...)', '-' or '(', found the end of the "
     "expression\n"
     "  X(i,j) = B(i,k) *\n"
     "                   ^"),
    ("X(i,j) = B(i,k) $ C(k,j)",
     "column 17: unexpected character '$'; expected a tensor name, a number, or one of "
     "( ) = + - * / ,\n"
     "  X(i,j) = B(i,k) $ C(k,j)\n"
     "                  ^"),
    ("X(i,j) = B(i,k) C(k,j)",
     "column 17: expected an operator (+ - * /) or the end of the expression, found name "
     "'C'\n"
     "  X(i,j) = B(i,k) C(k,j)\n"
     "                  ^"),
])
def test_parse_errors_show_the_line_and_a_caret(text, message):
    with pytest.raises(ParseError) as err:
        parse(text)
    assert str(err.value) == message


def test_function_calls_hold_any_expression():
    a = parse("H(i,j) = relu(sum(k) A(i,k) * W(k,j) + b(j)) * 2")
    call = a.rhs.left
    assert isinstance(call, Call) and call.fn == "relu" and call.col == 10
    assert call.arg == BinOp("+", Reduction("sum", ("k",), BinOp(
        "*", Access("A", ("i", "k"), 22), Access("W", ("k", "j"), 31), 29), 15),
        Access("b", ("j",), 40), 38)
    assert str(a.rhs) == "relu((sum(k) (A(i,k) * W(k,j))) + b(j)) * 2"
    assert str(parse("y = exp(-x) / rsqrt(z)").rhs) == "exp(-x) / rsqrt(z)"
    assert FUNCTIONS == ("relu", "exp", "rsqrt")


@pytest.mark.parametrize("text, expected, col", [
    ("X(i) = foo(B(i))", "unknown function 'foo'; the known functions are relu, exp, "
     "rsqrt (a tensor access lists index variables only, e.g. 'B(i,j)')", 8),
    ("X(i) = tanh(2 * B(i))", "unknown function 'tanh'; the known functions are relu, exp, "
     "rsqrt (a tensor access lists index variables only, e.g. 'B(i,j)')", 8),
    ("X(i) = exp B(i)", "expected '(' after the function 'exp', e.g. 'exp(B(i,j))', found "
     "name 'B'", 12),
    ("X(i) = relu()", "expected an expression as the argument of relu(...), found ')'", 13),
    ("X(i) = rsqrt(B(i)", "expected ')' to close rsqrt( at column 8, found the end of the "
     "expression", 18),
    ("exp(i) = B(i)", "'exp' is a function and cannot name the output tensor", 1),
    ("= B(i)", "expected the output tensor, e.g. 'X(i,j)', found '='", 1),
    ("X(i,j) B(i,j)", "expected '=' after the output tensor, found name 'B'", 8),
    ("X(i) =", "expected an expression after '=', found the end of the expression", 7),
    ("X(i,) = B(i)", "expected an index variable in the output's index list, found ')'", 5),
    ("X(i) = (B(i) + C(i)", "expected ')' to close the '(' at column 8, found the end of "
     "the expression", 20),
    ("X(i) = sum(j) + B(i,j)", "expected the body of sum(j), e.g. 'sum(j) B(i,j)', found "
     "'+'", 15),
    ("X(i) = sum() B(i,j)", "expected at least one index variable to reduce in sum(...), "
     "found ')'", 12),
    ("X(i) = sum B(i,j)", "expected '(' and the reduced index variables after 'sum', e.g. "
     "'sum(k)', found name 'B'", 12),
    ("X(i) = B(i, 2)", "expected an index variable in the index list of 'B', found number "
     "2", 13),
    ("sum(i) = B(i)", "'sum' is a reduction and cannot name the output tensor", 1),
    ("x(i) = 1e999 * B(i)", "number 1e999 is too large for a float", 8),
])
def test_parse_error_messages_say_what_was_expected(text, expected, col):
    with pytest.raises(ParseError) as err:
        parse(text)
    assert err.value.message == expected
    assert err.value.col == col
    assert str(err.value).splitlines()[2] == "  " + " " * (col - 1) + "^"


@pytest.mark.parametrize("text, normalized", [
    ("x(i) = B(i,j) * c(j)", "x(i) = sum(j) (B(i,j) * c(j))"),
    # a factor free of the reduced index is pulled out of the sum (exact for sums)
    ("X(i,j) = B(i,j) * C(i,k) * D(k,j)", "X(i,j) = B(i,j) * (sum(k) (C(i,k) * D(k,j)))"),
    # indices sharing factors are reduced together
    ("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
     "A(i,j) = sum(k,l) ((B(i,k,l) * C(k,j)) * D(l,j))"),
    # the smallest subexpression holding every occurrence
    ("X(i,j) = B(i,j) + C(i,k) * D(k,j)", "X(i,j) = B(i,j) + (sum(k) (C(i,k) * D(k,j)))"),
    ("x(i) = B(i,j) + C(i,j)", "x(i) = sum(j) (B(i,j) + C(i,j))"),
    ("x = a(i) * b(i)", "x = sum(i) (a(i) * b(i))"),
    # separate loops over the same name are renamed apart
    ("x(i) = sum(k) B(i,k) + C(i,k)", "x(i) = (sum(k) B(i,k)) + (sum(k#2) C(i,k#2))"),
])
def test_implicit_reductions_are_placed_on_the_smallest_subexpression(text, normalized):
    norm = normalize(parse(text))
    assert str(norm.assignment) == normalized
    assert set(norm.user.values()) <= set("ijkl")


@pytest.mark.parametrize("text, normalized", [
    # a reduction is never moved into a (nonlinear) function: einsum sums outside it
    ("x(i) = relu(B(i,k))", "x(i) = sum(k) relu(B(i,k))"),
    ("x(i) = exp(B(i,k) * c(k))", "x(i) = sum(k) exp(B(i,k) * c(k))"),
    # a call is one opaque factor: the product is not split through it
    ("X(i,j) = relu(B(i,k)) * C(k,j)", "X(i,j) = sum(k) (relu(B(i,k)) * C(k,j))"),
    ("X(i,j) = B(i,j) * exp(C(i,k)) * D(k,j)",
     "X(i,j) = B(i,j) * (sum(k) (exp(C(i,k)) * D(k,j)))"),
    ("X(i,j) = relu(B(i,j) + C(i,k)) * D(i,j)",
     "X(i,j) = (sum(k) relu(B(i,j) + C(i,k))) * D(i,j)"),
    # an explicit reduction inside a call stays there; its index is renamed apart
    ("x(i) = exp(sum(k) B(i,k)) + sum(k) C(i,k)",
     "x(i) = exp(sum(k) B(i,k)) + (sum(k#2) C(i,k#2))"),
])
def test_implicit_reductions_stay_outside_function_calls(text, normalized):
    assert str(normalize(parse(text)).assignment) == normalized


def test_implicit_max_follows_the_written_tree_and_never_regroups_products():
    norm = normalize(parse("X(i,j) = B(i,j) * C(i,k)"), reduce="max")
    assert str(norm.assignment) == "X(i,j) = B(i,j) * (max(k) C(i,k))"
    # (B*C)*D holds k on both sides: a sum may regroup, a max may not
    text = "x(i) = B(i) * C(i,k) * D(k)"
    assert str(normalize(parse(text)).assignment) == "x(i) = B(i) * (sum(k) (C(i,k) * D(k)))"
    assert str(normalize(parse(text), reduce="max").assignment) == \
        "x(i) = max(k) ((B(i) * C(i,k)) * D(k))"


@pytest.mark.parametrize("text, message", [
    ("X(i,i) = B(i,i)", "X(i,i): index 'i' appears twice; diagonal accesses are not "
     "supported"),
    ("X(i,j) = B(i,k)", "output index 'j' does not appear on the right-hand side "
     "(broadcasting to a new dimension is not supported)"),
    ("X(i,j) = X(i,j) * 2", "the output 'X' is also read on the right-hand side; write the "
     "result to a new tensor"),
    ("X(i) = sum(i) B(i)", "sum(i) reduces 'i', which is an output index"),
    ("x(i) = sum(j) B(i)", "sum(j) reduces 'j', which no tensor in its body uses"),
    ("x(i) = B(i) * B(i,j)", "tensor 'B' is used with 2 indices here but as B(i) (rank 1) "
     "before"),
    ("X(i) = 2 + 3", "the right-hand side reads no tensor; there is nothing to stream"),
])
def test_structural_errors_are_lowering_errors_with_a_location(text, message):
    with pytest.raises(LoweringError) as err:
        normalize(parse(text))
    assert err.value.message == message
    assert str(err.value).splitlines()[1] == "  " + text


def test_unknown_reduction_option():
    with pytest.raises(LoweringError, match="reduce='min' is not a reduction"):
        normalize(parse("x(i) = B(i,j)"), reduce="min")
