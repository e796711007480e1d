"""paired_t pinned to R 4.2.2.

R's ``t.test(after, before, paired = TRUE)`` keeps complete pairs, forms
``after - before`` and runs the one-sample path on the differences (stopping
with "data are essentially constant" when they do not vary). The naive test is
``t.test(after, before)``, Welch's two-sample test.
"""

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.condition import Condition
from taskfactory.errors import DataError, ScenarioError
from taskfactory.registry import get_family
from taskfactory.scenarios import parse_scenario

ROLES = {"before": "b", "after": "a"}
DATA = pd.DataFrame({
    "b": [52, 47, 61, 44, 50, 39, 55, 48, 58, 45, 49, 53],
    "a": [47, 45, 55, 44, 46, 38, 50, 47, 51, 46, 44, 50],
})


def naive(data):
    return get_family("paired_t").naive(Condition(method="paired_t", roles=ROLES), data)


def test_paired_matches_r():
    """
    > before <- c(52, 47, 61, 44, 50, 39, 55, 48, 58, 45, 49, 53)
    > after  <- c(47, 45, 55, 44, 46, 38, 50, 47, 51, 46, 44, 50)
    > t.test(after, before, paired = TRUE)
    t = -4.29764673302267, df = 11, p-value = 0.00126091489396172, mean difference = -3.16666666666667
    method: Paired t-test
    """
    res = tf.analyse("paired_t", DATA, ROLES)
    assert res.pvalue == pytest.approx(0.00126091489396172, rel=1e-9)
    assert res.statistic == pytest.approx(-4.29764673302267, rel=1e-9)
    assert res.df == (11.0,)
    assert res.estimate == pytest.approx(-3.16666666666667, rel=1e-12)
    assert res.method == "Paired t-test"
    assert res.statistic_name == "t" and res.n == 12


def test_naive_is_welch_ignoring_pairs():
    """
    > t.test(after, before)
    t = -1.45899000543832, df = 19.6313072769274, p-value = 0.160383881247546
    method: Welch Two Sample t-test
    """
    res = naive(DATA)
    assert res.pvalue == pytest.approx(0.160383881247546, rel=1e-9)
    assert res.statistic == pytest.approx(-1.45899000543832, rel=1e-9)
    assert res.df[0] == pytest.approx(19.6313072769274, rel=1e-9)
    assert res.estimate == pytest.approx(-3.16666666666667, rel=1e-12)
    assert res.method == "Welch Two Sample t-test"


def test_incomplete_pair_is_dropped():
    """R's complete.cases(x, y) drops the pair whose before value is missing:
    > b2 <- before; b2[4] <- NA
    > t.test(after, b2, paired = TRUE)
    t = -4.64938345020777, df = 10, p-value = 0.000908896724016312, mean difference = -3.45454545454545
    > t.test(after[-4], before[-4])
    t = -1.5146776853925, df = 18.1087975038714, p-value = 0.147113736667031
    """
    data = DATA.astype(float)
    data.loc[3, "b"] = np.nan
    res = tf.analyse("paired_t", data, ROLES)
    assert res.n == 11
    assert res.pvalue == pytest.approx(0.000908896724016312, rel=1e-9)
    assert res.statistic == pytest.approx(-4.64938345020777, rel=1e-9)
    assert res.df == (10.0,)
    assert res.estimate == pytest.approx(-3.45454545454545, rel=1e-12)
    nv = naive(data.dropna())
    assert nv.pvalue == pytest.approx(0.147113736667031, rel=1e-9)
    assert nv.df[0] == pytest.approx(18.1087975038714, rel=1e-9)


def test_out_of_range_value_drops_its_pair():
    """A before value of 61 outside the plausible range [30, 60] is missing, so
    its pair goes:
    > t.test(after[-3], before[-3], paired = TRUE)
    t = -3.84677629467476, df = 10, p-value = 0.00322916540482004
    """
    res = tf.analyse("paired_t", DATA, ROLES, ranges={"b": (30.0, 60.0), "a": (30.0, 60.0)})
    assert res.n == 11
    assert res.pvalue == pytest.approx(0.00322916540482004, rel=1e-9)
    assert res.statistic == pytest.approx(-3.84677629467476, rel=1e-9)


def test_decimal_differences_match_r():
    """Differences of decimals carry binary rounding, as in R:
    > t.test(c(5.1, 5.3, 5.0), c(4.9, 5.0, 5.2), paired = TRUE)
    t = 0.654653670707975, df = 2, p-value = 0.579915974791598, mean difference = 0.0999999999999996
    """
    res = tf.analyse("paired_t", pd.DataFrame({"a": [5.1, 5.3, 5.0], "b": [4.9, 5.0, 5.2]}), ROLES)
    assert res.pvalue == pytest.approx(0.579915974791598, rel=1e-9)
    assert res.statistic == pytest.approx(0.654653670707975, rel=1e-9)
    assert res.df == (2.0,)
    assert res.estimate == pytest.approx(0.0999999999999996, rel=1e-12)


@pytest.mark.parametrize("after, before", [
    ([5.0, 6.0, 7.0], [4.0, 5.0, 6.0]),   # R: data are essentially constant (every difference is 1)
    ([5.0], [4.0]),                       # R: not enough 'x' observations
])
def test_data_r_rejects_raise(after, before):
    with pytest.raises(DataError):
        tf.analyse("paired_t", pd.DataFrame({"a": after, "b": before}), ROLES)


def _scenario(after_range=(0, 100), after_decimals=1):
    raw = {
        "id": "probe", "domain": "testing", "title": "t", "context": "c", "question": "q?",
        "roles": {"before": "y0", "after": "y1"},
        "variables": [
            {"name": "unit_id", "label": "id", "type": "id"},
            {"name": "y0", "label": "y0", "type": "numeric", "range": [0, 100], "decimals": 1},
            {"name": "y1", "label": "y1", "type": "numeric", "range": list(after_range), "decimals": after_decimals},
            {"name": "w", "label": "w", "type": "numeric", "range": [0, 10], "dist": {"uniform": [1, 2]}},
        ],
        "dgp": {"paired_t": {"mean": 50, "sd": 5}},
    }
    return parse_scenario(raw, "paired", "probe").for_family("paired_t")


def test_scenario_columns_must_match():
    """Before and after share range and rounding, so the null pair stays exchangeable."""
    fam = get_family("paired_t")
    fam.check_scenario(_scenario())
    for bad in (_scenario(after_range=(0, 120)), _scenario(after_decimals=2)):
        with pytest.raises(ScenarioError):
            fam.check_scenario(bad)
