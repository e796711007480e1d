"""sign_test pinned to R 4.2.2, and its generator's skewed changes.

R's ``binom.test(sum(after > before), sum(after != before))``: units that did
not change drop out; the two-sided p-value of a binomial with p = 1/2.
"""

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.condition import Condition
from taskfactory.errors import DataError

ROLES = {"before": "pre", "after": "post"}
BEFORE = [12.4, 15.1, 9.8, 20.3, 14.7, 11.2, 17.9, 13.5, 16.0, 10.6]
AFTER = [11.9, 13.0, 10.1, 16.8, 14.0, 12.9, 13.2, 13.3, 12.7, 10.0]


def frame(before, after):
    return pd.DataFrame({"pre": before, "post": after})


def test_two_of_ten_rose():
    """
    > before <- c(12.4, 15.1, 9.8, 20.3, 14.7, 11.2, 17.9, 13.5, 16.0, 10.6)
    > after  <- c(11.9, 13.0, 10.1, 16.8, 14.0, 12.9, 13.2, 13.3, 12.7, 10.0)
    > binom.test(sum(after > before), sum(after != before))
    number of successes = 2, number of trials = 10, p-value = 0.10937499999999994
    """
    res = tf.analyse("sign_test", frame(BEFORE, AFTER), ROLES)
    assert res.pvalue == pytest.approx(0.10937499999999994, rel=1e-12)
    assert (res.statistic, res.statistic_name, res.estimate, res.n) == (2.0, "number of successes", 0.2, 10)
    assert res.method == "Exact sign test (binomial test of the positive differences)"
    assert tf.analyse("sign_test", frame(AFTER, BEFORE), ROLES).pvalue == pytest.approx(0.10937499999999994, rel=1e-12)


def test_unchanged_units_drop_out():
    """Three of the twelve units did not change:
    > b2 <- c(5, 7, 6, 9, 4, 8, 6, 7, 5, 10, 6, 8)
    > a2 <- c(7, 7, 9, 12, 4, 11, 5, 10, 8, 10, 9, 7)
    > binom.test(sum(a2 > b2), sum(a2 != b2))
    number of successes = 7, number of trials = 9, p-value = 0.17968750000000006
    """
    b2 = [5, 7, 6, 9, 4, 8, 6, 7, 5, 10, 6, 8]
    a2 = [7, 7, 9, 12, 4, 11, 5, 10, 8, 10, 9, 7]
    res = tf.analyse("sign_test", frame(b2, a2), ROLES)
    assert res.pvalue == pytest.approx(0.17968750000000006, rel=1e-12)
    assert (res.statistic, res.estimate, res.n) == (7.0, 7 / 9, 12)


def test_an_odd_count_of_changes():
    """
    > binom.test(41, 63)$p.value
    [1] 0.022574972673257292
    """
    before = np.zeros(63)
    after = np.where(np.arange(63) < 41, 1.5, -0.25)
    res = tf.analyse("sign_test", frame(before, after), ROLES)
    assert res.pvalue == pytest.approx(0.022574972673257292, rel=1e-12)


def test_no_change_at_all_is_refused():
    """R stops: binom.test(0, 0) has no trials."""
    with pytest.raises(DataError, match="no unit's measurement changed"):
        tf.analyse("sign_test", frame([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]), ROLES)
    with pytest.raises(DataError, match="no paired observations"):
        tf.analyse("sign_test", frame([1.0, float("nan")], [float("nan"), 2.0]), ROLES)


def test_naive_is_the_signed_rank_test():
    """
    > wilcox.test(after, before, paired = TRUE)$p.value
    [1] 0.048828125
    """
    fam = tf.get_family("sign_test")
    res = fam.naive(Condition(method="sign_test", roles=ROLES), frame(BEFORE, AFTER))
    assert res.pvalue == pytest.approx(0.048828125, rel=1e-12)
    assert res.method == "Wilcoxon signed rank exact test"


def _draw(theta, n=20000, direction=1, seed=3):
    fam = tf.get_family("sign_test")
    scen = tf.load_scenarios("sign_test")[0]
    rng = np.random.default_rng(seed)
    params = fam.draw_params(scen, n, rng)
    dgp = {**scen.dgp, "direction": direction}
    cond = Condition(method="sign_test", roles=scen.roles, n=n, effect_value=theta, params=params, dgp=dgp,
                     columns=scen.columns())
    data = pd.DataFrame(fam.generate(cond, rng))
    return data[scen.roles["after"]].to_numpy() - data[scen.roles["before"]].to_numpy(), scen, params


def test_the_effect_is_the_share_that_rises_and_the_changes_are_skewed():
    """With no effect half the units rise, so the median change is 0, while
    the long upper tail puts the mean change and the Walsh averages' median
    above it; with the effect theta, a share theta rises (falls where the
    scenario's direction is -1), the long tail still pointing up."""
    d, scen, params = _draw(0.5)
    sd = scen.dgp["noise"] * np.sqrt(2.0 * (1.0 - params["noisy_share"]
                                            + params["noisy_share"] * params["noisy_factor"] ** 2))
    assert np.mean(d > 0) == pytest.approx(0.5, abs=0.01)
    assert np.std(d) == pytest.approx(sd, rel=0.05)
    assert np.mean(d) > 0.25 * sd
    walsh = (d[:2000, None] + d[None, :2000]) / 2
    assert np.median(walsh) > 0.05 * sd
    up, _, _ = _draw(0.7)
    down, _, _ = _draw(0.7, direction=-1)
    assert np.mean(up > 0) == pytest.approx(0.7, abs=0.01)
    assert np.mean(down < 0) == pytest.approx(0.7, abs=0.01)
    for changes in (d, up, down):
        low, mid, high = np.percentile(changes, [12.5, 50, 87.5])
        assert (high + low - 2 * mid) / (high - low) > 0.45


def test_effect_for_z():
    fam = tf.get_family("sign_test")
    assert fam.effect_for_z(1.96, 100, {}) == pytest.approx(0.598)
    assert fam.effect_for_z(40.0, 100, {}) == 0.99


@pytest.mark.parametrize("line, label", [
    ("Exact sign test", "Exact sign test"),
    ("sign test of the paired differences", "Exact sign test"),
    ("Exact binomial test", "Exact sign test"),   # R's method string for the call
    ("binom.test(sum(after > before), sum(after != before))", "Exact sign test"),
    ("Wilcoxon signed rank test", "Wilcoxon signed rank test"),
])
def test_answers_name_it_as_r_and_textbooks_do(line, label):
    from taskfactory.use.reward import _identify

    named, _ = _identify(line, "sign_test")
    assert named.label == label
    assert _identify("Exact binomial test", "binomial_exact")[0].label == "Exact binomial test"
