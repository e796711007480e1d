"""pearson pinned to R 4.2.2."""

import math

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.errors import DataError
from taskfactory.methods._correlation import pearson_r

ROLES = {"x": "a", "y": "b"}

POSITIVE = pd.DataFrame({
    "a": [50.3, 63.6, 62.2, 44.9, 47.0, 44.7, 55.7, 49.4, 57.5, 31.5],
    "b": [132.7, 124.7, 130.3, 116.9, 115.8, 121.6, 128.9, 118.1, 121.8, 118.1],
})

NEGATIVE = pd.DataFrame({
    "a": [2.13, 1.49, 3.39, 2.33, 1.08, 2.19, 2.53, 1.81, 1.51, 3.04, 3.9, 2.77, 2.26, 3.38],
    "b": [9.3, 8.87, 8.4, 9.44, 9.19, 8.04, 8.76, 9.11, 9.97, 7.15, 7.13, 7.67, 7.26, 8.07],
})


def test_positive_correlation_matches_r():
    """
    > x <- c(50.3, 63.6, 62.2, 44.9, 47.0, 44.7, 55.7, 49.4, 57.5, 31.5)
    > y <- c(132.7, 124.7, 130.3, 116.9, 115.8, 121.6, 128.9, 118.1, 121.8, 118.1)
    > cor.test(x, y)
    t = 1.95305418150033, df = 8, p-value = 0.0865826079379676, cor = 0.568208959003519
    """
    res = tf.analyse("pearson", POSITIVE, ROLES)
    assert res.pvalue == pytest.approx(0.0865826079379676, rel=1e-9)
    assert res.statistic == pytest.approx(1.95305418150033, rel=1e-9)
    assert res.df == (8.0,)
    assert res.estimate == pytest.approx(0.568208959003519, rel=1e-9)
    assert res.statistic_name == "t"
    assert res.method == "Pearson's product-moment correlation"


def test_negative_correlation_matches_r():
    """
    > x <- c(2.13, 1.49, 3.39, 2.33, 1.08, 2.19, 2.53, 1.81, 1.51, 3.04, 3.9, 2.77, 2.26, 3.38)
    > y <- c(9.3, 8.87, 8.4, 9.44, 9.19, 8.04, 8.76, 9.11, 9.97, 7.15, 7.13, 7.67, 7.26, 8.07)
    > cor.test(x, y)
    t = -3.21567063666568, df = 12, p-value = 0.0074137923442861, cor = -0.68033803245375
    """
    res = tf.analyse("pearson", NEGATIVE, ROLES)
    assert res.pvalue == pytest.approx(0.0074137923442861, rel=1e-9)
    assert res.statistic == pytest.approx(-3.21567063666568, rel=1e-9)
    assert res.df == (12.0,)
    assert res.estimate == pytest.approx(-0.68033803245375, rel=1e-9)


def test_out_of_range_values_become_missing():
    """The 31.5 lies outside a plausible range of [35, 80], so its row is dropped:
    > x <- c(50.3, 63.6, 62.2, 44.9, 47.0, 44.7, 55.7, 49.4, 57.5)
    > y <- c(132.7, 124.7, 130.3, 116.9, 115.8, 121.6, 128.9, 118.1, 121.8)
    > cor.test(x, y)
    t = 1.71768984266615, df = 7, p-value = 0.129551881996798
    """
    res = tf.analyse("pearson", POSITIVE, ROLES, ranges={"a": (35.0, 80.0)})
    assert res.n == 9
    assert res.df == (7.0,)
    assert res.pvalue == pytest.approx(0.129551881996798, rel=1e-9)
    assert res.statistic == pytest.approx(1.71768984266615, rel=1e-9)


def test_constant_column_and_too_few_rows_are_data_errors():
    """R: cor.test on a constant column gives NA (sd zero); on 2 rows it stops
    with "not enough finite observations"."""
    constant = POSITIVE.assign(b=5.0)
    with pytest.raises(DataError):
        tf.analyse("pearson", constant, ROLES)
    with pytest.raises(DataError):
        tf.analyse("pearson", POSITIVE.head(2), ROLES)


SCALED_X = [65.8, 61.8, 53.1, 46.1, 47.2, 22.1, 52.5, 44.4, 54.0, 54.5, 65.2, 45.7]
SCALED_Y = [8.2, 13.7, 2.6, 4.8, 5.0, -3.8, 7.0, -0.9, 11.9, -0.6, 7.7, 4.1]


@pytest.mark.parametrize("factor, t, p", [
    (1e160, 3.23987176574335, 0.00887134304400392),
    (1e300, 3.23987176574335, 0.00887134304400393),
    (1e-300, 3.23987176574334, 0.00887134304400396),
])
def test_extreme_magnitudes_match_r(factor, t, p):
    """Cross-products of values near 1e160 overflow, near 1e-300 underflow;
    R's cor sums in long double and is unmoved (the data: 12 draws of
    np.random.default_rng(20260101), x normal(50, 10), y = 0.1 x + normal(0, 4)):
    > x <- c(65.8, 61.8, 53.1, 46.1, 47.2, 22.1, 52.5, 44.4, 54.0, 54.5, 65.2, 45.7)
    > y <- c(8.2, 13.7, 2.6, 4.8, 5.0, -3.8, 7.0, -0.9, 11.9, -0.6, 7.7, 4.1)
    > for (f in c(1e160, 1e300, 1e-300)) { r <- cor.test(x * f, y); cat(sprintf("%.15g", c(r$statistic, r$p.value, r$estimate))) }
    3.23987176574335 0.00887134304400392 0.71562436264811
    3.23987176574335 0.00887134304400393 0.71562436264811
    3.23987176574334 0.00887134304400396 0.715624362648109
    """
    data = pd.DataFrame({"a": np.array(SCALED_X) * factor, "b": SCALED_Y})
    res = tf.analyse("pearson", data, ROLES)
    assert res.statistic == pytest.approx(t, rel=1e-9)
    assert res.pvalue == pytest.approx(p, rel=1e-9)
    assert res.estimate == pytest.approx(0.71562436264811, rel=1e-9)


def test_the_scaling_leaves_r_unchanged_bit_for_bit():
    """pearson_r scales each column by a power of two, which is exact: on
    ordinary data r equals the plain centred cross-product formula to the
    bit, and scaling a column by a power of two leaves it unchanged."""
    rng = np.random.default_rng(11)
    for n in (5, 40, 1000):
        x, y = rng.normal(170, 9, n).round(1), rng.lognormal(3, 0.7, n).round(2)
        dx, dy = x - x.mean(), y - y.mean()
        plain = min(1.0, max(-1.0, float(np.dot(dx, dy) / math.sqrt(float(np.dot(dx, dx)) * float(np.dot(dy, dy))))))
        assert pearson_r(x, y) == plain
        assert pearson_r(np.ldexp(x, 600), np.ldexp(y, -700)) == plain
