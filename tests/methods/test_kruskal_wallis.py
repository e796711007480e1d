"""kruskal_wallis pinned to R 4.2.2."""

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.condition import Condition

ROLES = {"outcome": "y", "group": "g"}
TIES = pd.DataFrame({
    "y": [3.0, 5, 5, 2, 4, 7, 5, 8, 6, 7, 9, 2, 3, 3, 5, 4],
    "g": ["x"] * 5 + ["y"] * 6 + ["z"] * 5,
})


def test_no_ties_match_r():
    """
    > y <- c(23.1, 25.4, 21.8, 24.9, 27.3, 29.0, 26.1, 28.4, 30.2, 22.6, 24.0, 25.7, 23.3, 26.8, 24.4)
    > g <- rep(c("b", "a", "c"), c(4, 5, 6))
    > kruskal.test(y ~ g)
    Kruskal-Wallis chi-squared = 8.88083333333334, df = 2, p-value = 0.0117910245691791
    """
    data = pd.DataFrame({
        "y": [23.1, 25.4, 21.8, 24.9, 27.3, 29.0, 26.1, 28.4, 30.2, 22.6, 24.0, 25.7, 23.3, 26.8, 24.4],
        "g": ["b"] * 4 + ["a"] * 5 + ["c"] * 6,
    })
    res = tf.analyse("kruskal_wallis", data, ROLES)
    assert res.pvalue == pytest.approx(0.0117910245691791, rel=1e-9)
    assert res.statistic == pytest.approx(8.88083333333334, rel=1e-9)
    assert res.df == (2.0,)
    assert res.method == "Kruskal-Wallis rank sum test"
    assert res.statistic_name == "Kruskal-Wallis chi-squared" and res.n == 15


def test_ties_use_the_tie_correction():
    """
    > y <- c(3, 5, 5, 2, 4, 7, 5, 8, 6, 7, 9, 2, 3, 3, 5, 4)
    > g <- rep(c("x", "y", "z"), c(5, 6, 5))
    > kruskal.test(y ~ g)
    Kruskal-Wallis chi-squared = 9.93778280542986, df = 2, p-value = 0.00695084945790692
    """
    res = tf.analyse("kruskal_wallis", TIES, ROLES)
    assert res.pvalue == pytest.approx(0.00695084945790692, rel=1e-9)
    assert res.statistic == pytest.approx(9.93778280542986, rel=1e-9)


def test_heavy_ties_in_four_groups():
    """Scores on a 1-5 scale:
    > y <- c(1, 2, 2, 3, 3, 3, 4, 2, 3, 3, 4, 4, 5, 5, 1, 1, 2, 2, 3, 4, 3, 4, 4, 5, 5, 5, 4)
    > g <- rep(c("grp_1", "grp_2", "grp_3", "grp_4"), c(7, 7, 6, 7))
    > kruskal.test(y ~ g)
    Kruskal-Wallis chi-squared = 11.7956349206349, df = 3, p-value = 0.00811704549143242
    """
    data = pd.DataFrame({
        "y": [1.0, 2, 2, 3, 3, 3, 4, 2, 3, 3, 4, 4, 5, 5, 1, 1, 2, 2, 3, 4, 3, 4, 4, 5, 5, 5, 4],
        "g": ["grp_1"] * 7 + ["grp_2"] * 7 + ["grp_3"] * 6 + ["grp_4"] * 7,
    })
    res = tf.analyse("kruskal_wallis", data, ROLES)
    assert res.pvalue == pytest.approx(0.00811704549143242, rel=1e-9)
    assert res.statistic == pytest.approx(11.7956349206349, rel=1e-9)
    assert res.df == (3.0,)


def test_a_group_with_one_value_is_allowed():
    """R ranks a single-value group like any other:
    > y <- c(4.2, 3.1, 5.6, 2.8, 7.9, 6.4, 8.8, 5.1, 12.5)
    > g <- c("a", "a", "a", "a", "b", "b", "b", "b", "c")
    > kruskal.test(y ~ g)
    Kruskal-Wallis chi-squared = 5.66666666666666, df = 2, p-value = 0.05881647164243
    """
    data = pd.DataFrame({"y": [4.2, 3.1, 5.6, 2.8, 7.9, 6.4, 8.8, 5.1, 12.5], "g": ["a"] * 4 + ["b"] * 4 + ["c"]})
    res = tf.analyse("kruskal_wallis", data, ROLES)
    assert res.pvalue == pytest.approx(0.05881647164243, rel=1e-9)
    assert res.statistic == pytest.approx(5.66666666666666, rel=1e-9)


def test_all_values_tied_is_a_data_error():
    """
    > kruskal.test(c(2, 2, 2, 2, 2, 2) ~ rep(c("a", "b", "c"), each = 2))
    Kruskal-Wallis chi-squared = NaN, df = 2, p-value = NA
    """
    data = pd.DataFrame({"y": [2.0] * 6, "g": ["a", "a", "b", "b", "c", "c"]})
    with pytest.raises(tf.DataError):
        tf.analyse("kruskal_wallis", data, ROLES)


def test_naive_is_the_classical_anova():
    """
    > oneway.test(y ~ g, var.equal = TRUE)   # the tied data above
    F = 12.9261363636364, num df = 2, denom df = 13, p-value = 0.000811755058788343
    """
    fam = tf.get_family("kruskal_wallis")
    res = fam.naive(Condition(method="kruskal_wallis", roles=ROLES), TIES)
    assert res.pvalue == pytest.approx(0.000811755058788343, rel=1e-9)
    assert res.statistic == pytest.approx(12.9261363636364, rel=1e-9)
    assert res.df == (2.0, 13.0)
    assert res.method == "One-way analysis of means"
