"""Hypothesis strategies and format lists shared by the storage and interop tests."""

import itertools

import numpy as np
from hypothesis import strategies as st

from ir._formats import Format


def all_formats(ndim):
    """Every level-kind and mode-order combination for an ``ndim``-d tensor."""
    return [Format(tuple(lv), order) for lv in itertools.product("dc", repeat=ndim)
            for order in itertools.permutations(range(ndim))]


@st.composite
def dense_arrays(draw, min_ndim=1, max_ndim=3, max_side=4):
    """Small float32/int32 arrays at assorted densities (empty sides included)."""
    ndim = draw(st.integers(min_ndim, max_ndim))
    shape = tuple(draw(st.lists(st.integers(0, max_side), min_size=ndim, max_size=ndim)))
    density = draw(st.sampled_from([0.0, 0.2, 0.5, 1.0]))
    dtype = draw(st.sampled_from(["float32", "int32"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    vals = rng.integers(1, 9, size=shape) * np.where(rng.random(shape) < 0.5, 1, -1)
    if dtype == "float32":
        vals = vals + rng.random(shape).round(3)
    mask = rng.random(shape) < density
    return np.where(mask, vals, 0).astype(dtype)
