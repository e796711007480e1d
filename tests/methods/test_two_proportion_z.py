"""two_proportion_z pinned to R 4.2.2.

Each dataset is given by its counts: ``x`` rows with the positive outcome out of
``n`` rows per group, in R's (sorted) group order. The R call on the long data,

    x <- tapply(d$y == "cured", d$g, sum); n <- tapply(d$y == "cured", d$g, length)
    prop.test(x, n)

is ``prop.test(x, n)`` on those counts (R's default continuity correction, the
gold); ``prop.test(x, n, correct = FALSE)`` is the accepted alternative.
"""

import dataclasses

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition
from taskfactory.errors import DataError, ScenarioError

ROLES = {"outcome": "y", "group": "g", "positive": "cured"}
METHOD = "2-sample test for equality of proportions with continuity correction"
UNCORRECTED = "2-sample test for equality of proportions without continuity correction"


def uncorrected(data):
    """The accepted alternative, run as the build runs it."""
    fam = tf.get_family("two_proportion_z")
    (alt,) = fam.accepted
    assert alt.method == UNCORRECTED and alt.call == "prop.test(successes, totals, correct = FALSE)"
    return run_test(fam, Condition(method="two_proportion_z", roles=ROLES), data, which=alt)


@pytest.mark.parametrize("x, n, statistic, p", [
    # > r <- prop.test(c(14, 25), c(31, 37)); sprintf("%.17g %.17g", r$statistic, r$p.value)
    ((14, 25), (31, 37), 2.6067093875770175, 0.1064123629260162),
    # > prop.test(c(150, 60), c(300, 280))
    ((150, 60), (300, 280), 49.956361157075449, 1.5720360549195547e-12),
    # > prop.test(c(3, 9), c(20, 22))
    ((3, 9), (20, 22), 2.2932954545454542, 0.12993378478262205),
    # > prop.test(c(20, 21), c(40, 40)): |O - E| = 0.5 = the correction, so X-squared = 0
    ((20, 21), (40, 40), 0.0, 1.0),
])
def test_gold_is_r_default_with_continuity_correction(x, n, statistic, p):
    res = tf.analyse("two_proportion_z", long(["a", "b"], x, n), ROLES)
    assert res.method == METHOD and res.df == (1.0,)
    assert res.statistic == pytest.approx(statistic, rel=1e-12, abs=1e-12)
    assert res.pvalue == pytest.approx(p, rel=1e-12)


def long(groups, x, n, negative="not_cured"):
    """One row per unit: ``x[i]`` of the ``n[i]`` rows of ``groups[i]`` are cured; rows shuffled."""
    g, y = [], []
    for level, k, m in zip(groups, x, n):
        g += [level] * m
        y += ["cured"] * k + [negative] * (m - k)
    order = np.random.default_rng(2).permutation(len(g))
    return pd.DataFrame({"g": np.array(g, dtype=object)[order], "y": np.array(y, dtype=object)[order]})


def test_unequal_groups_in_sorted_order():
    """The groups are listed as placebo, drug; R orders them drug, placebo:
    > prop.test(c(14, 25), c(31, 37), correct = FALSE)
    2-sample test for equality of proportions without continuity correction
    X-squared = 3.462175960507439, df = 1, p-value = 0.062787637100841
    prop 1 = 0.451612903225806, prop 2 = 0.675675675675676
    """
    data = long(["placebo", "drug"], [25, 14], [37, 31])
    res = uncorrected(data)
    assert res.pvalue == pytest.approx(0.062787637100841, rel=1e-9)
    assert res.statistic == pytest.approx(3.462175960507439, rel=1e-9)
    assert res.df == (1.0,)
    assert res.estimate == pytest.approx(0.451612903225806 - 0.675675675675676, rel=1e-12)
    assert res.method == UNCORRECTED
    assert res.statistic_name == "X-squared"
    assert res.n == 68


def test_tiny_p_value_keeps_its_precision():
    """
    > prop.test(c(150, 60), c(300, 280), correct = FALSE)
    X-squared = 51.1858797573083, df = 1, p-value = 8.40208308748805e-13
    """
    res = uncorrected(long(["a", "b"], [150, 60], [300, 280]))
    assert res.pvalue == pytest.approx(8.40208308748805e-13, rel=1e-9)
    assert res.statistic == pytest.approx(51.1858797573083, rel=1e-9)
    assert res.estimate == pytest.approx(0.5 - 60 / 280, rel=1e-12)


def test_expected_counts_just_above_five():
    """The smallest expected count is 5.714 (no warning from R):
    > prop.test(c(3, 9), c(20, 22), correct = FALSE)
    X-squared = 3.4459090909090904, df = 1, p-value = 0.0634085298634493
    """
    res = uncorrected(long(["a", "b"], [3, 9], [20, 22]))
    assert res.pvalue == pytest.approx(0.0634085298634493, rel=1e-9)
    assert res.statistic == pytest.approx(3.4459090909090904, rel=1e-9)


def test_expected_count_below_five_is_a_data_error():
    """R computes a p-value but warns, so the data are redrawn instead:
    > prop.test(c(2, 6), c(20, 22), correct = FALSE)$p.value
    [1] 0.154524825424471
    Warning message:
    In prop.test(c(2, 6), c(20, 22), correct = FALSE) :
      Chi-squared approximation may be incorrect
    (expected successes 20 * 8/42 = 3.81 and 22 * 8/42 = 4.19)
    """
    with pytest.raises(DataError, match="expected count"):
        tf.analyse("two_proportion_z", long(["a", "b"], [2, 6], [20, 22]), ROLES)


def test_group_without_successes_is_a_data_error():
    """R gives a p-value without a warning (every expected count is at least 6):
    > prop.test(c(0, 12), c(30, 30), correct = FALSE)
    X-squared = 15, df = 1, p-value = 1.07511176729501e-04
    but a group with no success (or no failure) is degenerate, so it is redrawn."""
    with pytest.raises(DataError, match="no 'cured'"):
        tf.analyse("two_proportion_z", long(["a", "b"], [0, 12], [30, 30]), ROLES)


def test_group_without_failures_is_a_data_error():
    """
    > prop.test(c(30, 18), c(30, 30), correct = FALSE)
    X-squared = 15, df = 1, p-value = 1.07511176729501e-04
    (prop 1 = 1), redrawn like a group without successes."""
    with pytest.raises(DataError, match="no 'cured'"):
        tf.analyse("two_proportion_z", long(["a", "b"], [30, 18], [30, 30]), ROLES)


def test_missing_cells_are_dropped():
    """Rows with a missing group or outcome leave the counts of the first test:
    p-value = 0.1064123629260162 (prop.test(c(14, 25), c(31, 37)))."""
    data = long(["placebo", "drug"], [25, 14], [37, 31])
    data = pd.concat([data, pd.DataFrame({"g": [None, "drug"], "y": ["cured", None]})], ignore_index=True)
    res = tf.analyse("two_proportion_z", data, ROLES)
    assert res.n == 68
    assert res.pvalue == pytest.approx(0.1064123629260162, rel=1e-12)


def test_group_must_have_two_levels():
    data = long(["a", "b", "c"], [10, 12, 14], [25, 25, 25])
    with pytest.raises(DataError, match="3 levels"):
        tf.analyse("two_proportion_z", data, ROLES)


def test_outcome_must_be_binary():
    data = long(["a", "b"], [10, 12], [25, 25])
    data.loc[:3, "y"] = "relapsed"
    with pytest.raises(DataError, match="binary"):
        tf.analyse("two_proportion_z", data, ROLES)


def test_positive_level_must_be_a_level_of_the_outcome():
    scen = tf.load_scenarios("two_proportion_z")[0]
    fam = tf.get_family("two_proportion_z")
    bad = dataclasses.replace(scen, roles={**scen.roles, "positive": "cured"})
    with pytest.raises(ScenarioError, match="positive"):
        fam.check_scenario(bad)


def test_generated_proportions_differ_by_cohens_h():
    """The null draws both groups from one proportion; an effect h moves the
    second listed group by h on the arcsine scale."""
    fam = tf.get_family("two_proportion_z")
    scen = tf.load_scenarios("two_proportion_z")[0]
    params = fam.draw_params(scen, 4000, np.random.default_rng(8))
    for h in (0.0, 0.5):
        cond = Condition(method="two_proportion_z", roles=dict(scen.roles), n=4000, effect_value=h,
                         params=params, dgp=dict(scen.dgp), columns=scen.columns())
        frame = pd.DataFrame(fam.generate(cond, np.random.default_rng(9)))
        first, second = scen.variable(scen.roles["group"]).levels
        share = frame.groupby(scen.roles["group"])[scen.roles["outcome"]].apply(lambda s: np.mean(s == scen.roles["positive"]))
        observed = 2 * np.arcsin(np.sqrt(share[second])) - 2 * np.arcsin(np.sqrt(share[first]))
        assert observed == pytest.approx(h, abs=0.1)
