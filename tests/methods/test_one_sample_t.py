"""one_sample_t pinned to R 4.2.2.

R's ``t.test.default`` has one computing path for a one-sample two-sided test
(t = (mean - mu) / (sd / sqrt(n)), df = n - 1, p = 2 * pt(-|t|, df)) and three
ways out of it: fewer than 2 values, "data are essentially constant" (standard
error below 10 * eps * |mean|), and an exactly zero standard error at a zero
mean, which R lets through to an infinite statistic. Each is pinned here.
"""

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.errors import DataError, ScenarioError
from taskfactory.registry import get_family
from taskfactory.scenarios import parse_scenario

FILL = [248.3, 251.2, 246.9, 249.5, 247.1, 250.4, 245.8, 248.8, 249.9, 246.2]
TEMPS = [39, 39.4, 39, 39.9, 39.4, 39, 39.5, 39.6, 39.5, 39.2, 39.9, 39.5, 39.1, 38.4, 39.7, 39.3, 39.3, 39.7, 39.6,
         39.5, 39.7, 39.6, 39.3, 38.5, 39.5, 39.3, 39.2, 38.7, 39.1, 39.5, 39.8, 39.3, 39.5, 39.3, 38.7, 39.1, 39.1,
         39.3, 39.7, 39.6, 39.2, 39.2, 39.6, 39.5, 39, 39, 39.4, 39.6, 39.3, 39.7, 39.5, 39.1, 39.4, 38.8, 39.9, 40.1,
         39.2, 38.9, 39.5, 39.2]


def run(values, mu0, ranges=None):
    return tf.analyse("one_sample_t", pd.DataFrame({"y": values}), {"outcome": "y", "mu0": mu0}, ranges=ranges)


def test_below_reference_matches_r():
    """
    > x <- c(248.3, 251.2, 246.9, 249.5, 247.1, 250.4, 245.8, 248.8, 249.9, 246.2)
    > t.test(x, mu = 250)
    t = -2.70878476720184, df = 9, p-value = 0.0240452953294981, mean of x = 248.41
    method: One Sample t-test
    """
    res = run(FILL, 250)
    assert res.pvalue == pytest.approx(0.0240452953294981, rel=1e-9)
    assert res.statistic == pytest.approx(-2.70878476720184, rel=1e-9)
    assert res.df == (9.0,)
    assert res.estimate == pytest.approx(248.41, rel=1e-12)
    assert res.method == "One Sample t-test"
    assert res.statistic_name == "t" and res.n == 10


def test_fractional_reference_matches_r():
    """
    > t.test(c(4.52, 4.38, 4.61, 4.47, 4.55, 4.70, 4.41, 4.58), mu = 4.45)
    t = 2.06666666666666, df = 7, p-value = 0.0775976635301599, mean of x = 4.5275
    """
    res = run([4.52, 4.38, 4.61, 4.47, 4.55, 4.70, 4.41, 4.58], 4.45)
    assert res.pvalue == pytest.approx(0.0775976635301599, rel=1e-9)
    assert res.statistic == pytest.approx(2.06666666666666, rel=1e-9)
    assert res.df == (7.0,)
    assert res.estimate == pytest.approx(4.5275, rel=1e-12)


def test_two_values_are_enough():
    """The smallest sample R accepts:
    > t.test(c(3, 5), mu = 0)
    t = 4, df = 1, p-value = 0.155958260754739
    """
    res = run([3, 5], 0)
    assert res.pvalue == pytest.approx(0.155958260754739, rel=1e-9)
    assert res.statistic == pytest.approx(4.0, rel=1e-12)
    assert res.df == (1.0,)


def test_large_statistic_keeps_tail_precision():
    """Rounded temperatures (ties everywhere do not matter to the t-test):
    > z <- c(39, 39.4, 39, 39.9, ..., 38.9, 39.5, 39.2)   # TEMPS, 60 values
    > t.test(z, mu = 39.0)
    t = 7.6767198496344, df = 59, p-value = 1.9295038605369e-10, mean of x = 39.34
    > t.test(z, mu = 38.0)
    t = 30.2553076426765, df = 59, p-value = 1.26002577832209e-37
    """
    res = run(TEMPS, 39.0)
    assert res.pvalue == pytest.approx(1.9295038605369e-10, rel=1e-9)
    assert res.statistic == pytest.approx(7.6767198496344, rel=1e-9)
    assert res.df == (59.0,)
    assert res.estimate == pytest.approx(39.34, rel=1e-12)
    far = run(TEMPS, 38.0)
    assert far.pvalue == pytest.approx(1.26002577832209e-37, rel=1e-6)
    assert far.statistic == pytest.approx(30.2553076426765, rel=1e-9)


def test_out_of_range_values_become_missing():
    """Plausible range [246, 252]: the 245.8 is dropped.
    > x <- c(248.3, 251.2, 246.9, 249.5, 247.1, 250.4, 248.8, 249.9, 246.2)
    > t.test(x, mu = 250)
    t = -2.27840432756426, df = 8, p-value = 0.0522011753746934
    """
    res = run(FILL, 250, ranges={"y": (246.0, 252.0)})
    assert res.n == 9
    assert res.pvalue == pytest.approx(0.0522011753746934, rel=1e-9)
    assert res.statistic == pytest.approx(-2.27840432756426, rel=1e-9)
    assert res.df == (8.0,)


@pytest.mark.parametrize("values, mu0", [
    ([7.0], 4),                                   # R: not enough 'x' observations
    ([5.0, 5.0, 5.0], 4),                         # R: data are essentially constant
    ([1e10, 1e10 + 1e-6, 1e10 + 2e-6], 0),        # R: data are essentially constant (relative to the mean)
    ([0.0, 0.0, 0.0], 1),                         # R: t = -Inf, p = 0, no error
])
def test_data_r_rejects_or_cannot_test_raise(values, mu0):
    with pytest.raises(DataError):
        run(values, mu0)


def _scenario(mu0, decimals=1):
    raw = {
        "id": "probe", "domain": "testing", "title": "t", "context": "c {mu0}", "question": "q {mu0}?",
        "roles": {"outcome": "y", "mu0": mu0},
        "variables": [
            {"name": "unit_id", "label": "id", "type": "id"},
            {"name": "y", "label": "y", "type": "numeric", "range": [0, 100], "decimals": decimals},
            {"name": "w", "label": "w", "type": "numeric", "range": [0, 10], "dist": {"uniform": [1, 2]}},
        ],
        "dgp": {"one_sample_t": {"sd": 5}},
    }
    return parse_scenario(raw, "one_sample", "probe").for_family("one_sample_t")


def test_scenario_reference_value_is_checked():
    """mu0 must be a number inside the range and on the outcome's rounding grid,
    so that the null mean of the released (rounded) values is exactly mu0."""
    fam = get_family("one_sample_t")
    fam.check_scenario(_scenario(50.5))
    for bad in (50.25, 150, "fifty"):
        with pytest.raises(ScenarioError):
            fam.check_scenario(_scenario(bad))
    with pytest.raises(ScenarioError):
        fam.check_scenario(_scenario(50.5, decimals=0))
