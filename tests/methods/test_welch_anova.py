"""welch_anova pinned to R 4.2.2."""

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.condition import Condition

ROLES = {"outcome": "y", "group": "g"}
FOUR = pd.DataFrame({
    "y": [101.2, 98.7, 103.5, 99.9, 100.4, 102.1, 97.8, 100.9, 101.6, 99.3,
          108.4, 95.1, 112.9, 104.0, 91.7,
          96.2, 97.5, 95.8, 96.9, 97.1, 96.4, 95.9,
          110.2, 89.4, 121.5, 99.0],
    "g": ["plant_a"] * 10 + ["plant_b"] * 5 + ["plant_c"] * 7 + ["plant_d"] * 4,
})


def test_three_groups_match_r():
    """
    > y <- c(23.1, 25.4, 21.8, 24.9, 27.3, 29.0, 26.1, 28.4, 30.2, 22.6, 24.0, 25.7, 23.3, 26.8, 24.4)
    > g <- rep(c("b", "a", "c"), c(4, 5, 6))
    > oneway.test(y ~ g)
    F = 9.87198699631189, num df = 2, denom df = 7.24852558806231, p-value = 0.00852255410650315
    """
    data = pd.DataFrame({
        "y": [23.1, 25.4, 21.8, 24.9, 27.3, 29.0, 26.1, 28.4, 30.2, 22.6, 24.0, 25.7, 23.3, 26.8, 24.4],
        "g": ["b"] * 4 + ["a"] * 5 + ["c"] * 6,
    })
    res = tf.analyse("welch_anova", data, ROLES)
    assert res.pvalue == pytest.approx(0.00852255410650315, rel=1e-9)
    assert res.statistic == pytest.approx(9.87198699631189, rel=1e-9)
    assert res.df[0] == 2.0 and res.df[1] == pytest.approx(7.24852558806231, rel=1e-9)
    assert res.method == "One-way analysis of means (not assuming equal variances)"
    assert res.statistic_name == "F" and res.n == 15


def test_four_groups_large_spreads_in_small_groups_match_r():
    """
    > y <- c(101.2, 98.7, 103.5, 99.9, 100.4, 102.1, 97.8, 100.9, 101.6, 99.3,
    +        108.4, 95.1, 112.9, 104.0, 91.7, 96.2, 97.5, 95.8, 96.9, 97.1, 96.4, 95.9,
    +        110.2, 89.4, 121.5, 99.0)
    > g <- rep(c("plant_a", "plant_b", "plant_c", "plant_d"), c(10, 5, 7, 4))
    > oneway.test(y ~ g)
    F = 13.9733322480871, num df = 3, denom df = 7.54322896767249, p-value = 0.00187120053560836
    """
    res = tf.analyse("welch_anova", FOUR, ROLES)
    assert res.pvalue == pytest.approx(0.00187120053560836, rel=1e-9)
    assert res.statistic == pytest.approx(13.9733322480871, rel=1e-9)
    assert res.df[0] == 3.0 and res.df[1] == pytest.approx(7.54322896767249, rel=1e-9)


def test_naive_is_the_classical_anova():
    """On the same data the pooled-variance F misses the difference:
    > oneway.test(y ~ g, var.equal = TRUE)
    F = 1.66734357946347, num df = 3, denom df = 22, p-value = 0.203034463109241
    """
    fam = tf.get_family("welch_anova")
    res = fam.naive(Condition(method="welch_anova", roles=ROLES), FOUR)
    assert res.pvalue == pytest.approx(0.203034463109241, rel=1e-9)
    assert res.statistic == pytest.approx(1.66734357946347, rel=1e-9)
    assert res.df == (3.0, 22.0)
    assert res.method == "One-way analysis of means"


def test_two_groups_give_the_squared_welch_t():
    """With k = 2 the (k - 2) term vanishes and the test is Welch's t:
    > y <- c(12.4, 15.1, 13.8, 14.6, 11.9, 16.3, 17.2, 15.8, 18.4, 16.9, 17.7)
    > g <- rep(c("control", "treated"), c(5, 6))
    > oneway.test(y ~ g)
    F = 23.0785700751595, num df = 1, denom df = 6.86972194280878, p-value = 0.00206169942581012
    > t.test(y ~ g)
    t = -4.80401603610557, df = 6.86972194280878, p-value = 0.00206169942581012
    """
    data = pd.DataFrame({
        "y": [12.4, 15.1, 13.8, 14.6, 11.9, 16.3, 17.2, 15.8, 18.4, 16.9, 17.7],
        "g": ["control"] * 5 + ["treated"] * 6,
    })
    res = tf.analyse("welch_anova", data, ROLES)
    assert res.pvalue == pytest.approx(0.00206169942581012, rel=1e-9)
    assert res.statistic == pytest.approx(23.0785700751595, rel=1e-9)
    assert res.df[1] == pytest.approx(6.86972194280878, rel=1e-9)


def test_tiny_p_value_keeps_its_precision():
    """
    > y <- c(10.1, 10.4, 9.8, 10.0, 10.3, 20.2, 20.5, 19.7, 20.1, 20.6, 30.4, 29.8, 30.1, 30.3, 29.9)
    > g <- rep(c("low", "mid", "high"), each = 5)
    > oneway.test(y ~ g)
    F = 7546.18914829097, num df = 2, denom df = 7.81851664181989, p-value = 1.4280102424739e-13
    """
    data = pd.DataFrame({
        "y": [10.1, 10.4, 9.8, 10.0, 10.3, 20.2, 20.5, 19.7, 20.1, 20.6, 30.4, 29.8, 30.1, 30.3, 29.9],
        "g": ["low"] * 5 + ["mid"] * 5 + ["high"] * 5,
    })
    res = tf.analyse("welch_anova", data, ROLES)
    assert res.pvalue == pytest.approx(1.4280102424739e-13, rel=1e-6)
    assert res.statistic == pytest.approx(7546.18914829097, rel=1e-9)
    assert res.df[1] == pytest.approx(7.81851664181989, rel=1e-9)


def test_a_group_without_variation_is_a_data_error():
    """Welch's weight n_i / s_i^2 is infinite:
    > oneway.test(c(5, 5, 5, 6, 7, 8, 4, 6, 9) ~ rep(c("a", "b", "c"), each = 3))
    F = NaN, num df = 2, denom df = NaN, p-value = NA
    """
    data = pd.DataFrame({"y": [5.0, 5, 5, 6, 7, 8, 4, 6, 9], "g": ["a"] * 3 + ["b"] * 3 + ["c"] * 3})
    with pytest.raises(tf.DataError):
        tf.analyse("welch_anova", data, ROLES)


def test_a_group_with_one_value_is_a_data_error():
    """
    > oneway.test(c(1, 2, 3, 4, 5, 6, 7) ~ rep(c("a", "b", "c"), c(3, 3, 1)))
    Error in oneway.test(...) : not enough observations
    """
    data = pd.DataFrame({"y": [1.0, 2, 3, 4, 5, 6, 7], "g": ["a"] * 3 + ["b"] * 3 + ["c"]})
    with pytest.raises(tf.DataError):
        tf.analyse("welch_anova", data, ROLES)
