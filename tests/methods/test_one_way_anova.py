"""one_way_anova pinned to R 4.2.2."""

import pandas as pd
import pytest

import taskfactory as tf

ROLES = {"outcome": "y", "group": "g"}
THREE = pd.DataFrame({
    "y": [23.1, 25.4, 21.8, 24.9, 27.3, 29.0, 26.1, 28.4, 30.2, 22.6, 24.0, 25.7, 23.3, 26.8, 24.4],
    "g": ["b"] * 4 + ["a"] * 5 + ["c"] * 6,
})


def test_three_unequal_groups_match_r():
    """
    > y <- c(23.1, 25.4, 21.8, 24.9, 27.3, 29.0, 26.1, 28.4, 30.2, 22.6, 24.0, 25.7, 23.3, 26.8, 24.4)
    > g <- rep(c("b", "a", "c"), c(4, 5, 6))
    > oneway.test(y ~ g, var.equal = TRUE)
    F = 10.8103334069331, num df = 2, denom df = 12, p-value = 0.00206751914518459
    """
    res = tf.analyse("one_way_anova", THREE, ROLES)
    assert res.pvalue == pytest.approx(0.00206751914518459, rel=1e-9)
    assert res.statistic == pytest.approx(10.8103334069331, rel=1e-9)
    assert res.df == (2.0, 12.0)
    assert res.method == "One-way analysis of means"
    assert res.statistic_name == "F" and res.n == 15


def test_five_groups_with_a_constant_group_match_r():
    """A group without variation is fine for the pooled variance:
    > y <- c(5.2, 5.2, 5.2, 6.1, 7.4, 6.8, 7.9, 4.4, 5.0, 3.9, 4.7, 6.3, 6.9, 5.8, 8.2, 7.7, 9.1)
    > g <- rep(c("north", "east", "south", "west", "centre"), c(3, 4, 4, 3, 3))
    > oneway.test(y ~ g, var.equal = TRUE)
    F = 22.8836974789916, num df = 4, denom df = 12, p-value = 1.52836085370628e-05
    """
    data = pd.DataFrame({
        "y": [5.2, 5.2, 5.2, 6.1, 7.4, 6.8, 7.9, 4.4, 5.0, 3.9, 4.7, 6.3, 6.9, 5.8, 8.2, 7.7, 9.1],
        "g": ["north"] * 3 + ["east"] * 4 + ["south"] * 4 + ["west"] * 3 + ["centre"] * 3,
    })
    res = tf.analyse("one_way_anova", data, ROLES)
    assert res.pvalue == pytest.approx(1.52836085370628e-05, rel=1e-9)
    assert res.statistic == pytest.approx(22.8836974789916, rel=1e-9)
    assert res.df == (4.0, 12.0)


def test_two_groups_give_the_squared_student_t():
    """
    > y <- c(12.4, 15.1, 13.8, 14.6, 11.9, 16.3, 17.2, 15.8, 18.4, 16.9, 17.7)
    > g <- rep(c("control", "treated"), c(5, 6))
    > oneway.test(y ~ g, var.equal = TRUE)
    F = 24.8579106102179, num df = 1, denom df = 9, p-value = 0.000753470735855034
    > t.test(y ~ g, var.equal = TRUE)
    t = -4.98577081404851, df = 9, p-value = 0.000753470735855034
    """
    data = pd.DataFrame({
        "y": [12.4, 15.1, 13.8, 14.6, 11.9, 16.3, 17.2, 15.8, 18.4, 16.9, 17.7],
        "g": ["control"] * 5 + ["treated"] * 6,
    })
    res = tf.analyse("one_way_anova", data, ROLES)
    assert res.pvalue == pytest.approx(0.000753470735855034, rel=1e-9)
    assert res.statistic == pytest.approx(4.98577081404851**2, rel=1e-9)
    assert res.df == (1.0, 9.0)


def test_out_of_range_values_become_missing():
    """29.0 and 30.2 lie outside a plausible range of [0, 28.5], so their rows are dropped:
    > keep <- y <= 28.5
    > oneway.test(y[keep] ~ g[keep], var.equal = TRUE)
    F = 4.96277915632754, num df = 2, denom df = 10, p-value = 0.0318381265260171
    """
    res = tf.analyse("one_way_anova", THREE, ROLES, ranges={"y": (0.0, 28.5)})
    assert res.n == 13
    assert res.pvalue == pytest.approx(0.0318381265260171, rel=1e-9)
    assert res.statistic == pytest.approx(4.96277915632754, rel=1e-9)
    assert res.df == (2.0, 10.0)


def test_a_level_left_without_rows_drops_out():
    """R builds the factor from the rows that remain, so the empty level vanishes:
    > y <- c(23.1, 25.4, 21.8, 24.9, 27.3, 29.0, 26.1, 28.4, 30.2, 41.0, 43.5, 40.2)
    > g <- rep(c("b", "a", "c"), c(4, 5, 3))
    > keep <- y <= 35
    > oneway.test(y[keep] ~ g[keep], var.equal = TRUE)
    F = 16.5834557023984, num df = 1, denom df = 7, p-value = 0.00473558462456397
    """
    data = pd.DataFrame({
        "y": [23.1, 25.4, 21.8, 24.9, 27.3, 29.0, 26.1, 28.4, 30.2, 41.0, 43.5, 40.2],
        "g": ["b"] * 4 + ["a"] * 5 + ["c"] * 3,
    })
    res = tf.analyse("one_way_anova", data, ROLES, ranges={"y": (0.0, 35.0)})
    assert res.pvalue == pytest.approx(0.00473558462456397, rel=1e-9)
    assert res.statistic == pytest.approx(16.5834557023984, rel=1e-9)
    assert res.df == (1.0, 7.0)


def test_a_group_with_one_value_is_a_data_error():
    """
    > oneway.test(c(1, 2, 3, 4, 5, 6, 7) ~ rep(c("a", "b", "c"), c(3, 3, 1)), var.equal = TRUE)
    Error in oneway.test(...) : not enough observations
    """
    data = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 6, 7], "g": ["a"] * 3 + ["b"] * 3 + ["c"]})
    with pytest.raises(tf.DataError):
        tf.analyse("one_way_anova", data, ROLES)


def test_no_variation_within_any_group_is_a_data_error():
    """
    > oneway.test(c(1, 1, 1, 2, 2, 2, 3, 3, 3) ~ rep(c("a", "b", "c"), each = 3), var.equal = TRUE)
    F = Inf, num df = 2, denom df = 6, p-value = 0
    """
    data = pd.DataFrame({"y": [1.0, 1, 1, 2, 2, 2, 3, 3, 3], "g": ["a"] * 3 + ["b"] * 3 + ["c"] * 3})
    with pytest.raises(tf.DataError):
        tf.analyse("one_way_anova", data, ROLES)


def test_has_no_naive_test():
    fam = tf.get_family("one_way_anova")
    assert fam.naive_method is None
