"""chi_square_independence pinned to R 4.2.2.

Every dataset is a contingency table expanded to one row per unit; in R the same
long data come from

    long <- function(tab, ra, cb) list(
      a = rep(rep(ra, times = ncol(tab)), times = as.vector(tab)),
      b = rep(rep(cb, each = nrow(tab)), times = as.vector(tab)))
"""

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.errors import DataError

ROLES = {"a": "a", "b": "b"}


def long(table, rows, cols):
    """One row per unit of a contingency table, rows shuffled."""
    a, b = [], []
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            a += [r] * table[i][j]
            b += [c] * table[i][j]
    order = np.random.default_rng(1).permutation(len(a))
    return pd.DataFrame({"a": np.array(a, dtype=object)[order], "b": np.array(b, dtype=object)[order]})


def test_three_by_three_has_no_correction():
    """
    > d <- long(matrix(c(12, 7, 9, 5, 14, 10, 8, 9, 16), 3, byrow = TRUE),
    +           c("lower", "tertiary", "upper"), c("high", "low", "moderate"))
    > chisq.test(table(d$a, d$b))
    Pearson's Chi-squared test
    X-squared = 7.742873136715502, df = 4, p-value = 0.101464358340071
    """
    data = long([[12, 7, 9], [5, 14, 10], [8, 9, 16]], ["lower", "tertiary", "upper"], ["high", "low", "moderate"])
    res = tf.analyse("chi_square_independence", data, ROLES)
    assert res.pvalue == pytest.approx(0.101464358340071, rel=1e-9)
    assert res.statistic == pytest.approx(7.742873136715502, rel=1e-9)
    assert res.df == (4.0,)
    assert res.method == "Pearson's Chi-squared test"
    assert res.statistic_name == "X-squared"
    assert res.estimate is None and res.n == 90


def test_two_by_four_either_orientation():
    """
    > d <- long(matrix(c(10, 15, 8, 12, 14, 6, 11, 9), 2, byrow = TRUE),
    +           c("no", "yes"), c("email", "search", "social", "referral"))
    > chisq.test(table(d$a, d$b))      # and table(d$b, d$a): the same
    Pearson's Chi-squared test
    X-squared = 5.149766778056251, df = 3, p-value = 0.161153283222414
    """
    data = long([[10, 15, 8, 12], [14, 6, 11, 9]], ["no", "yes"], ["email", "search", "social", "referral"])
    for roles in (ROLES, {"a": "b", "b": "a"}):
        res = tf.analyse("chi_square_independence", data, roles)
        assert res.pvalue == pytest.approx(0.161153283222414, rel=1e-9)
        assert res.statistic == pytest.approx(5.149766778056251, rel=1e-9)
        assert res.df == (3.0,)
        assert res.method == "Pearson's Chi-squared test"


def test_missing_cells_are_dropped_like_table_does():
    """R's ``table`` leaves out NA, so two extra rows with a missing factor change
    nothing: p-value = 0.101464358340071 as in the 3 x 3 test."""
    data = long([[12, 7, 9], [5, 14, 10], [8, 9, 16]], ["lower", "tertiary", "upper"], ["high", "low", "moderate"])
    data = pd.concat([data, pd.DataFrame({"a": [None, "upper"], "b": ["low", None]})], ignore_index=True)
    res = tf.analyse("chi_square_independence", data, ROLES)
    assert res.n == 90
    assert res.pvalue == pytest.approx(0.101464358340071, rel=1e-9)


def test_two_by_two_takes_yates_correction():
    """A table that shrinks to 2 x 2 gets R's continuity correction:
    > d <- long(matrix(c(20, 10, 12, 18), 2, byrow = TRUE), c("a1", "a2"), c("b1", "b2"))
    > chisq.test(table(d$a, d$b))
    Pearson's Chi-squared test with Yates' continuity correction
    X-squared = 3.28125, df = 1, p-value = 0.0700755385933413
    """
    data = long([[20, 10], [12, 18]], ["a1", "a2"], ["b1", "b2"])
    res = tf.analyse("chi_square_independence", data, ROLES)
    assert res.pvalue == pytest.approx(0.0700755385933413, rel=1e-9)
    assert res.statistic == pytest.approx(3.28125, rel=1e-12)
    assert res.df == (1.0,)
    assert res.method == "Pearson's Chi-squared test with Yates' continuity correction"


def test_two_by_two_correction_capped_at_the_deviation():
    """|x - E| = 0.4 < 0.5, so R's correction is 0.4 and the statistic is 0:
    > d <- long(matrix(c(10, 10, 16, 14), 2, byrow = TRUE), c("a1", "a2"), c("b1", "b2"))
    > chisq.test(table(d$a, d$b))
    Pearson's Chi-squared test with Yates' continuity correction
    X-squared = 0, df = 1, p-value = 1
    """
    res = tf.analyse("chi_square_independence", long([[10, 10], [16, 14]], ["a1", "a2"], ["b1", "b2"]), ROLES)
    assert res.statistic == pytest.approx(0.0, abs=1e-12)
    assert res.pvalue == pytest.approx(1.0, rel=1e-12)
    assert res.method == "Pearson's Chi-squared test with Yates' continuity correction"


def test_two_by_two_exact_independence_drops_the_correction_name():
    """x equals E, so R's correction is 0 and the method keeps its plain name:
    > d <- long(matrix(c(10, 10, 15, 15), 2, byrow = TRUE), c("a1", "a2"), c("b1", "b2"))
    > chisq.test(table(d$a, d$b))
    Pearson's Chi-squared test
    X-squared = 0, df = 1, p-value = 1
    """
    res = tf.analyse("chi_square_independence", long([[10, 10], [15, 15]], ["a1", "a2"], ["b1", "b2"]), ROLES)
    assert res.statistic == pytest.approx(0.0, abs=1e-12)
    assert res.pvalue == pytest.approx(1.0, rel=1e-12)
    assert res.method == "Pearson's Chi-squared test"


def test_small_expected_count_is_a_data_error():
    """R computes a p-value but warns, so the table is redrawn instead:
    > d <- long(matrix(c(2, 3, 1, 10, 12, 9, 11, 8, 14), 3, byrow = TRUE),
    +           c("r1", "r2", "r3"), c("c1", "c2", "c3"))
    > res <- chisq.test(table(d$a, d$b)); min(res$expected)
    [1] 1.97142857142857
    Warning message:
    In chisq.test(table(d$a, d$b)) : Chi-squared approximation may be incorrect
    """
    data = long([[2, 3, 1], [10, 12, 9], [11, 8, 14]], ["r1", "r2", "r3"], ["c1", "c2", "c3"])
    with pytest.raises(DataError, match="expected count"):
        tf.analyse("chi_square_independence", data, ROLES)


def test_single_level_factor_is_a_data_error():
    """A one-row table would make R's ``chisq.test`` a goodness-of-fit test."""
    data = long([[12, 7, 9]], ["only"], ["high", "low", "moderate"])
    with pytest.raises(DataError, match=r"^'a' has no variation: every analysed row holds 'only'$"):
        tf.analyse("chi_square_independence", data, ROLES)


def test_generated_margins_and_effect():
    """The DGP keeps the margins and has Cohen's w equal to the effect value."""
    fam = tf.get_family("chi_square_independence")
    scen = tf.load_scenarios("chi_square_independence")[0]
    params = fam.draw_params(scen, 100, np.random.default_rng(4))
    p, q, m = (np.asarray(params[k]) for k in ("a_shares", "b_shares", "pattern"))
    assert 100 * p.min() * q.min() >= 11.0 - 1e-9
    joint = np.outer(p, q) * (1.0 + 0.3 * m)
    assert joint.sum(axis=1) == pytest.approx(p, abs=1e-12)
    assert joint.sum(axis=0) == pytest.approx(q, abs=1e-12)
    indep = np.outer(p, q)
    assert np.sqrt(np.sum((joint - indep) ** 2 / indep)) == pytest.approx(0.3, rel=1e-12)
    assert joint.min() > 0.0
