"""The shared checks of lecnotes.core.validate."""

import numpy as np
import pytest

from lecnotes.core import validate as V


def test_sizes_accepts_integers_and_integer_valued_floats():
    out = V.sizes([3, np.int64(5), 8.0], "dims")
    assert out.dtype == np.int64 and out.tolist() == [3, 5, 8]
    grid = V.sizes(np.geomspace(8, 64, 4).round(), "dims")
    assert grid.tolist() == [8, 16, 32, 64]


@pytest.mark.parametrize("bad", [[], [0], [2, -1], [1.5], [np.nan], [np.inf], 4, "ab",
                                 [True], [[1, 2]], [None], ["3"]])
def test_sizes_refuses_what_is_not_a_grid_of_sizes(bad):
    with pytest.raises(ValueError, match="dims"):
        V.sizes(bad, "dims")


def test_sizes_minimum_and_count():
    assert V.sizes([8, 16], "dims", minimum=8, count=2).tolist() == [8, 16]
    with pytest.raises(ValueError, match=">= 8"):
        V.sizes([4, 16], "dims", minimum=8)
    with pytest.raises(ValueError, match="at least 2"):
        V.sizes([16], "dims", count=2)
