"""ir.Format: parsing named and letter specs, canonical str, and pinned error messages."""

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ir._formats import Format, FormatError

D, C = "dense", "compressed"


@pytest.mark.parametrize("spec, ndim, levels, order", [
    ("dense", 1, (D,), (0,)),
    ("dense", 3, (D, D, D), (0, 1, 2)),
    ("csr", 2, (D, C), (0, 1)),
    ("csc", 2, (D, C), (1, 0)),
    ("dcsr", 2, (C, C), (0, 1)),
    ("dcsc", 2, (C, C), (1, 0)),
    ("coo", 3, (C, C, C), (0, 1, 2)),
    ("sparse", 2, (C, C), (0, 1)),
    ("sparse_vec", 1, (C,), (0,)),
    ("sv", 1, (C,), (0,)),
    ("d", 1, (D,), (0,)),
    ("c", 1, (C,), (0,)),
    ("dc", 2, (D, C), (0, 1)),
    ("cc", 2, (C, C), (0, 1)),
    ("dd", 2, (D, D), (0, 1)),
    ("dcc", 3, (D, C, C), (0, 1, 2)),
    ("dc:1,0", 2, (D, C), (1, 0)),
    ("cdc:2,0,1", 3, (C, D, C), (2, 0, 1)),
    (" DC : 1, 0 ", 2, (D, C), (1, 0)),
    ("dense:1,0", 2, (D, D), (1, 0)),
    ("coo:2,1,0", 3, (C, C, C), (2, 1, 0)),
    ("", 0, (), ()),
    ("dense", 0, (), ()),
])
def test_parse(spec, ndim, levels, order):
    fmt = Format.parse(spec, ndim)
    assert fmt.levels == levels
    assert fmt.mode_order == order
    assert fmt.ndim == ndim


@pytest.mark.parametrize("spec, ndim, text", [
    ("csr", 2, "dc"), ("csc", 2, "dc:1,0"), ("dcsc", 2, "cc:1,0"), ("coo", 3, "ccc"),
    ("dense", 2, "dd"), ("dc:0,1", 2, "dc"), ("sv", 1, "c"), ("dense", 0, ""),
])
def test_str_is_canonical_letters(spec, ndim, text):
    assert str(Format.parse(spec, ndim)) == text


@pytest.mark.parametrize("ndim", [0, 1, 2, 3])
def test_every_format_round_trips_through_str(ndim):
    for letters in itertools.product("dc", repeat=ndim):
        for order in itertools.permutations(range(ndim)):
            fmt = Format(tuple(letters), order)
            assert Format.parse(str(fmt), ndim) == fmt
            assert fmt.letters == "".join(letters)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 5).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([D, C]), min_size=n, max_size=n),
    st.permutations(list(range(n))))))
def test_str_parse_property(case):
    levels, order = case
    fmt = Format(tuple(levels), tuple(order))
    again = Format.parse(str(fmt), len(levels))
    assert again == fmt and hash(again) == hash(fmt)


def test_constructors_and_queries():
    fmt = Format(("d", "c"))
    assert fmt == Format.parse("csr", 2)
    assert Format(["dense", "compressed"], [1, 0]) == Format.parse("csc", 2)
    assert Format.dense(3) == Format.parse("ddd", 3)
    assert Format.compressed(2) == Format.parse("dcsr", 2)
    csc = Format.parse("csc", 2)
    assert csc.level_of_mode(1) == 0 and csc.level_of_mode(0) == 1
    assert csc.is_dense(0) and csc.is_compressed(1)
    assert not csc.is_identity_order and Format.parse("dc", 2).is_identity_order
    assert Format.dense(2).all_dense and Format.compressed(2).all_compressed
    assert Format.parse(csc, 2) is csc


@pytest.mark.parametrize("spec, ndim, message", [
    ("dx", 2, "format 'dx' for a 2-d tensor: level letters must be 'd' or 'c'"),
    ("dc", 3, "format 'dc' for a 3-d tensor: expected 3 level letters, one per mode, got 2"),
    ("csr", 3, "format 'csr' for a 3-d tensor: 'csr' is a 2-d format"),
    ("sv", 2, "format 'sv' for a 2-d tensor: 'sv' is a 1-d format"),
    ("dc:0,0", 2, "format 'dc:0,0' for a 2-d tensor: mode order (0, 0) is not a permutation "
                  "of 0..1"),
    ("dc:1", 2, "mode order (1,) is not a permutation of 0..1"),
    ("dc:a,b", 2, "format 'dc:a,b' for a 2-d tensor: mode order after ':' must be "
                  "comma-separated integers"),
    ("csc:0,1", 2, "'csc' fixes its own mode order"),
    ("", 2, "format '' for a 2-d tensor: expected 2 level letters"),
])
def test_parse_errors(spec, ndim, message):
    with pytest.raises(FormatError, match=re.escape(message)):
        Format.parse(spec, ndim)


def test_format_errors_are_value_errors():
    assert issubclass(FormatError, ValueError)
    with pytest.raises(FormatError, match=re.escape("format spec 3: expected a string")):
        Format.parse(3, 1)
    with pytest.raises(FormatError, match=re.escape("format 'dc' has 2 levels but the "
                                                    "tensor is 3-d")):
        Format.parse(Format(("d", "c")), 3)
    with pytest.raises(FormatError, match="level type 'sparse'"):
        Format(("dense", "sparse"))
    with pytest.raises(FormatError, match=re.escape("mode_order (0, 2) is not a permutation")):
        Format(("d", "c"), (0, 2))
    with pytest.raises(FormatError, match="not the string 'dc'"):
        Format("dc")
