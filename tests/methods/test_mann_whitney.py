"""mann_whitney pinned to R 4.2.2.

Every branch R's ``wilcox.test(outcome ~ group)`` takes with its defaults: the
exact test in either tail and with the p-value capped at 1, the normal
approximation with ties, with no ties once a group reaches 50 values, and with
a zero deviation; factor order; and the exact/asymptotic switch-over.
"""

import math

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition
from taskfactory.errors import DataError
from taskfactory.methods._ranks import rank_sum_counts

ROLES = {"outcome": "y", "group": "g"}
EXACT = "Wilcoxon rank sum exact test"
NORMAL = "Wilcoxon rank sum test with continuity correction"

Y = [1.83, 0.47, 2.91, 1.12, 0.76, 3.48, 5.62, 2.35, 9.81, 4.07, 12.6, 6.93, 3.71]
G = ["a"] * 6 + ["b"] * 7


def frame(y, g):
    return pd.DataFrame({"y": y, "g": g})


def check(res, p, w, method, rel=1e-9):
    assert res.pvalue == pytest.approx(p, rel=rel)
    assert res.statistic == pytest.approx(w, rel=1e-12)
    assert res.statistic_name == "W"
    assert res.df == ()
    assert res.estimate is None
    assert res.method == method


def test_exact_lower_tail():
    """
    > y <- c(1.83, 0.47, 2.91, 1.12, 0.76, 3.48, 5.62, 2.35, 9.81, 4.07, 12.6, 6.93, 3.71)
    > g <- c("a", "a", "a", "a", "a", "a", "b", "b", "b", "b", "b", "b", "b")
    > wilcox.test(y ~ g)
    W = 2, p-value = 0.00466200466200466, method = Wilcoxon rank sum exact test
    """
    check(tf.analyse("mann_whitney", frame(Y, G), ROLES), 0.00466200466200466, 2, EXACT)


def test_exact_upper_tail_and_factor_order():
    """The first level in R's (sorted) order is 'control', listed second here:
    > g2 <- ifelse(g == "a", "treated", "control")
    > wilcox.test(y ~ g2)
    W = 40, p-value = 0.00466200466200466, method = Wilcoxon rank sum exact test
    """
    g2 = ["treated" if v == "a" else "control" for v in G]
    check(tf.analyse("mann_whitney", frame(Y, g2), ROLES), 0.00466200466200466, 40, EXACT)


def test_exact_p_value_is_capped_at_one():
    """
    > wilcox.test(c(1, 4, 2, 3) ~ c("x", "x", "y", "y"))
    W = 2, p-value = 1, method = Wilcoxon rank sum exact test
    """
    check(tf.analyse("mann_whitney", frame([1.0, 4.0, 2.0, 3.0], ["x", "x", "y", "y"]), ROLES), 1.0, 2, EXACT)


def test_ties_in_small_groups_give_normal_approximation():
    """Ties (within and across groups) rule out the exact test even though both
    groups are small:
    > y3 <- c(2.1, 3.4, 3.4, 1.8, 5.0, 2.1, 4.4, 6.2, 3.4, 7.9, 5.0, 8.3)
    > g3 <- rep(c("control", "exposed"), c(5, 7))
    > wilcox.test(y3 ~ g3)
    W = 7, p-value = 0.100734406428624, method = Wilcoxon rank sum test with continuity correction
    """
    y3 = [2.1, 3.4, 3.4, 1.8, 5.0, 2.1, 4.4, 6.2, 3.4, 7.9, 5.0, 8.3]
    g3 = ["control"] * 5 + ["exposed"] * 7
    check(tf.analyse("mann_whitney", frame(y3, g3), ROLES), 0.100734406428624, 7, NORMAL, rel=1e-9)


def test_zero_deviation_gets_no_continuity_correction():
    """W equals its null mean, so sign(z) = 0 and the p-value is 1:
    > wilcox.test(c(1, 2, 2, 3, 1, 2, 2, 3) ~ rep(c("a", "b"), c(4, 4)))
    W = 8, p-value = 1, method = Wilcoxon rank sum test with continuity correction
    """
    res = tf.analyse("mann_whitney", frame([1.0, 2, 2, 3, 1, 2, 2, 3], ["a"] * 4 + ["b"] * 4), ROLES)
    check(res, 1.0, 8, NORMAL)


def test_exact_just_below_the_switch_over():
    """Both groups below 50 and no ties:
    > x <- 2 * (0:48); yy <- 4 * (0:29) + 1
    > wilcox.test(c(x, yy) ~ rep(c("a", "b"), c(49, 30)))
    W = 600, p-value = 0.175300896352176, method = Wilcoxon rank sum exact test
    """
    y = [2.0 * i for i in range(49)] + [4.0 * j + 1 for j in range(30)]
    check(tf.analyse("mann_whitney", frame(y, ["a"] * 49 + ["b"] * 30), ROLES), 0.175300896352176, 600, EXACT)


def test_normal_approximation_at_fifty_without_ties():
    """A group of 50 switches to the normal approximation (no tie term):
    > x <- 2 * (0:49); yy <- 4 * (0:29) + 1
    > wilcox.test(c(x, yy) ~ rep(c("a", "b"), c(50, 30)))
    W = 625, p-value = 0.215979087382631, method = Wilcoxon rank sum test with continuity correction
    """
    y = [2.0 * i for i in range(50)] + [4.0 * j + 1 for j in range(30)]
    check(tf.analyse("mann_whitney", frame(y, ["a"] * 50 + ["b"] * 30), ROLES), 0.215979087382631, 625, NORMAL)


def test_largest_exact_table():
    """
    > x <- 2 * (0:48); yy <- 2 * (0:48) + 7
    > wilcox.test(c(x, yy) ~ rep(c("a", "b"), c(49, 49)))
    W = 1035, p-value = 0.242240975618722, method = Wilcoxon rank sum exact test
    """
    y = [2.0 * i for i in range(49)] + [2.0 * j + 7 for j in range(49)]
    check(tf.analyse("mann_whitney", frame(y, ["a"] * 49 + ["b"] * 49), ROLES), 0.242240975618722, 1035, EXACT)


def test_counts_are_the_gaussian_binomial():
    assert list(rank_sum_counts(2, 3)) == [1, 1, 2, 2, 2, 1, 1]
    assert rank_sum_counts(12, 7).sum() == math.comb(19, 7)
    assert list(rank_sum_counts(7, 12)) == list(rank_sum_counts(12, 7))


def test_naive_is_welch_t():
    """
    > t.test(y ~ g)$p.value
    [1] 0.013920422816205
    """
    fam = tf.get_family("mann_whitney")
    res = fam.naive(Condition(method="mann_whitney", roles=ROLES), frame(Y, G))
    assert res.pvalue == pytest.approx(0.013920422816205, rel=1e-9)
    assert res.method == "Welch Two Sample t-test"


def test_undefined_data_raise():
    with pytest.raises(DataError, match=r"^'y' has no variation: every analysed row holds 3\.0$"):
        tf.analyse("mann_whitney", frame([3.0, 3.0, 3.0, 3.0], ["a", "a", "b", "b"]), ROLES)
    with pytest.raises(DataError):
        tf.analyse("mann_whitney", frame([1.0, 2.0, 3.0], ["a", "a", "a"]), ROLES)


def test_the_large_sample_version_is_accepted_where_r_is_exact():
    """R's default is exact here (no ties, both n < 50); exact = FALSE is a convention, so accepted:
    > wilcox.test(c(1.1, 2.3, 0.7, 5.2, 3.3, 4.8), c(6.1, 2.9, 7.4, 8.8, 5.9, 9.3, 4.1), exact = FALSE)
    W = 5, p-value = 0.026809130715595857 (Wilcoxon rank sum test with continuity correction)"""
    fam = tf.get_family("mann_whitney")
    (alt,) = fam.accepted
    assert alt.call == "wilcox.test(outcome ~ group, exact = FALSE)"
    data = pd.DataFrame({"y": [1.1, 2.3, 0.7, 5.2, 3.3, 4.8, 6.1, 2.9, 7.4, 8.8, 5.9, 9.3, 4.1],
                         "g": ["a"] * 6 + ["b"] * 7})
    res = run_test(fam, Condition(method="mann_whitney", roles=ROLES), data, which=alt)
    assert res.method == alt.method == "Wilcoxon rank sum test with continuity correction"
    assert res.statistic == 5.0 and res.pvalue == pytest.approx(0.026809130715595857, rel=1e-12)
    assert tf.analyse("mann_whitney", data, ROLES).method == "Wilcoxon rank sum exact test"
