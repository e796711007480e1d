"""welch_t pinned to R 4.2.2."""

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.errors import DataError

DATA = pd.DataFrame({
    "y": [12.1, 14.3, 11.8, 15.2, 13.9, 12.7, 22.5, 18.1, 25.3, 16.9, 20.4, 27.8, 19.6],
    "g": ["a"] * 6 + ["b"] * 7,
})
ROLES = {"outcome": "y", "group": "g"}


def test_welch_matches_r():
    """
    > y <- c(12.1, 14.3, 11.8, 15.2, 13.9, 12.7, 22.5, 18.1, 25.3, 16.9, 20.4, 27.8, 19.6)
    > g <- rep(c("a", "b"), c(6, 7))
    > t.test(y ~ g)
    t = -5.16702595702797, df = 7.57670492357937, p-value = 0.00101561763017284
    """
    res = tf.analyse("welch_t", DATA, ROLES)
    assert res.pvalue == pytest.approx(0.00101561763017284, rel=1e-9)
    assert res.statistic == pytest.approx(-5.16702595702797, rel=1e-9)
    assert res.df[0] == pytest.approx(7.57670492357937, rel=1e-9)
    assert res.method == "Welch Two Sample t-test"


def test_naive_is_student_t():
    """
    > t.test(y ~ g, var.equal = TRUE)$p.value
    [1] 0.000521906305869637
    """
    from taskfactory.condition import Condition

    fam = tf.get_family("welch_t")
    res = fam.naive(Condition(method="welch_t", roles=ROLES), DATA)
    assert res.pvalue == pytest.approx(0.000521906305869637, rel=1e-9)


def test_out_of_range_values_become_missing():
    """The 27.8 lies outside a plausible range of [0, 26], so the row is dropped:
    > y <- c(12.1, 14.3, 11.8, 15.2, 13.9, 12.7, 22.5, 18.1, 25.3, 16.9, 20.4, 19.6)
    > g <- rep(c("a", "b"), c(6, 6))
    > t.test(y ~ g)$p.value
    [1] 0.00127433709255394
    """
    res = tf.analyse("welch_t", DATA, ROLES, ranges={"y": (0.0, 26.0)})
    assert res.n == 12
    assert res.pvalue == pytest.approx(0.00127433709255394, rel=1e-9)


def test_numbers_stored_as_objects_with_none_are_numbers_with_missing_values():
    """A column of Python objects, numbers (an int among them) and None, is
    read as R reads such a column: numbers with NA, its row dropped:
    > y <- c(12.1, 14.3, 11.8, 15.2, 13.9, 12.7, 22.5, 18.1, 25.3, 16.9, 20.4, NA, 19.6)
    > r <- t.test(y ~ g); sprintf("%.15g", c(r$p.value, r$statistic, r$parameter))
    "0.00127433709255394" "-5.24044093146298" "6.86543161354161"
    """
    cells = pd.Series([12.1, 14.3, 11.8, 15.2, 13.9, 12.7, 22.5, 18.1, 25.3, 16.9, 20.4, None, 19.6], dtype=object)
    res = tf.analyse("welch_t", DATA.assign(y=cells), ROLES)
    assert res.n == 12
    assert res.pvalue == pytest.approx(0.00127433709255394, rel=1e-9)
    assert res.statistic == pytest.approx(-5.24044093146298, rel=1e-9)
    assert res.df[0] == pytest.approx(6.86543161354161, rel=1e-9)
    mixed = pd.Series([12.1, 14.3, 11.8, 15.2, 13.9, 12.7, 22.5, 18.1, 25, 16.9, 20.4, 27.8, 19.6], dtype=object)
    assert type(mixed[8]) is int
    assert tf.analyse("welch_t", DATA.assign(y=mixed), ROLES).pvalue == tf.analyse(
        "welch_t", DATA.assign(y=mixed.astype(float)), ROLES).pvalue


def test_an_infinite_value_outside_the_range_becomes_missing():
    """-Inf lies outside a plausible range of [0, 26], so its row is dropped, as R's
    d$y[!is.na(d$y) & (d$y < 0 | d$y > 26)] <- NA drops it; left in, R's
    t.test stops ("missing value where TRUE/FALSE needed") and analyse refuses it:
    > t.test(y ~ g)$p.value   # y with NA in place of the -Inf
    [1] 0.00127433709255394
    """
    data = DATA.assign(y=DATA["y"].where(DATA["y"] != 27.8, -np.inf))
    assert tf.analyse("welch_t", data, ROLES, ranges={"y": (0.0, 26.0)}).pvalue == pytest.approx(
        0.00127433709255394, rel=1e-9)
    with pytest.raises(DataError) as err:
        tf.analyse("welch_t", data, ROLES)
    assert str(err.value) == "column 'y' (role 'outcome') holds an infinite value (-inf) at row 11"
