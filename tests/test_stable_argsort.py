"""``decoders._kernels.stable_argsort`` against numpy's stable sort, its twin."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from decoders._kernels import stable_argsort


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 70),
       kind=st.sampled_from(["ties", "continuous", "special", "int"]))
def test_stable_argsort_equals_numpys_stable_sort(seed, n, kind):
    rng = np.random.default_rng(seed)
    if kind == "int":
        a = rng.integers(-3, 4, n)
    elif kind == "ties":
        a = rng.integers(0, 3, n).astype(float)
    else:
        a = rng.standard_normal(n)
    if kind == "special":  # infinities, NaNs and signed zeros among the values
        pick = rng.random(n)
        a[pick < 0.15] = np.inf
        a[(pick >= 0.15) & (pick < 0.3)] = -np.inf
        a[(pick >= 0.3) & (pick < 0.45)] = np.nan
        a[(pick >= 0.45) & (pick < 0.55)] = -0.0
        a[(pick >= 0.55) & (pick < 0.65)] = 0.0
    got = stable_argsort(a)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.argsort(a, kind="stable"))


def test_stable_argsort_of_a_slice_and_of_long_arrays():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 50, 5000).astype(float)
    np.testing.assert_array_equal(stable_argsort(a), np.argsort(a, kind="stable"))
    v = a[::3]  # not contiguous
    np.testing.assert_array_equal(stable_argsort(v), np.argsort(v, kind="stable"))
