"""The hardware token word: one codec, round trips for every token kind, one constant rule."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ir import (
    DONE,
    EMPTY,
    INT32_MAX,
    INT32_MIN,
    REPEAT,
    CodecError,
    decode_token,
    decode_words,
    encode_token,
    f32_bits,
    int_constant,
    stop,
    to_f32,
    unary_constant_bits,
    value_bits,
    values_from_bits,
)

f32s = st.floats(width=32, allow_nan=False)
control = st.one_of(st.integers(0, 7).map(stop), st.just(EMPTY), st.just(DONE))


@given(st.one_of(f32s, control))
def test_float_values_round_trip(tok):
    word = encode_token(tok, "float")
    assert word < 1 << 34
    assert decode_token(word, "float", "val") == tok


@given(st.one_of(st.integers(INT32_MIN, INT32_MAX), control))
def test_int_values_round_trip(tok):
    assert decode_token(encode_token(tok, "int"), "int", "val") == tok


@given(st.one_of(st.integers(0, 2**32 - 1), control))
def test_crds_and_refs_round_trip_unsigned(tok):
    assert decode_token(encode_token(tok, "int"), "int", "crd") == tok


def test_repeat_signals_decode_from_tag_zero():
    assert decode_token(encode_token(REPEAT, "int"), "int", "repsig") is REPEAT


@given(st.lists(st.one_of(st.integers(INT32_MIN, INT32_MAX), control), max_size=40))
def test_vectorised_decoding_equals_word_by_word(toks):
    words = np.array([encode_token(t, "int") for t in toks], dtype=np.uint64)
    assert decode_words(words, "val", "int") == [decode_token(int(w), "int", "val")
                                                 for w in words]


def test_float_bits_follow_ieee_and_overflow_to_infinity():
    assert f32_bits(1.0) == 0x3F800000
    assert f32_bits(-2.5) == struct.unpack("<I", struct.pack("<f", -2.5))[0]
    assert f32_bits(1e39) == 0x7F800000 and f32_bits(-1e39) == 0xFF800000
    # the models round the same way
    assert values_from_bits([f32_bits(1e39)], "float32") == [to_f32(1e39)] == [math.inf]


@given(st.lists(st.integers(INT32_MIN, INT32_MAX), max_size=20))
def test_int_payloads_are_twos_complement(vals):
    assert values_from_bits([value_bits(v, "int32") for v in vals], "int32") == vals


@pytest.mark.parametrize("bad", [0.5, math.inf, -math.inf, math.nan, 2**31, -(2**31) - 1,
                                 1e12, True])
def test_int32_constants_outside_the_register_are_refused(bad):
    with pytest.raises(CodecError, match="constant"):
        int_constant(bad)
    with pytest.raises(CodecError):
        unary_constant_bits(bad, "int32")


def test_int32_constants_in_range_are_exact():
    assert int_constant(-(2**31)) == -(2**31) and int_constant(7.0) == 7
    assert unary_constant_bits(-1, "int32") == 0xFFFFFFFF
    assert unary_constant_bits(0.5, "float32") == 0x3F000000


@pytest.mark.parametrize("const", [2.5, 2**31, 1e39])
def test_an_int32_graph_with_a_constant_outside_int32_does_not_load(const):
    from ir import GraphBuilder, GraphError

    g = GraphBuilder("c", "int32")
    g.tensor("a", (2,), "d")
    g.tensor("x", (2,), "d", role="output")
    for nid, op, kw in [("r", "root", {}), ("ai", "scan_dense", {"tensor": "a", "level": 0}),
                        ("av", "array", {"tensor": "a"}),
                        ("f", "unary", {"op": "add_const", "const": const}),
                        ("xi", "level_writer", {"tensor": "x", "level": 0}),
                        ("xv", "value_writer", {"tensor": "x"})]:
        g.node(nid, op, **kw)
    for s, d in [("r.ref", "ai.ref_in"), ("ai.ref", "av.ref"), ("ai.crd", "xi.crd"),
                 ("av.val", "f.val_in"), ("f.val", "xv.val")]:
        g.edge(s, d)
    with pytest.raises(GraphError, match="node 'f' \\(unary\\): constant"):
        g.build()
