"""mcnemar pinned to R 4.2.2.

Each dataset is a table of before (rows) by after (columns) in R's sorted level
order, ``matrix(c(a, c, b, d), 2)`` = [[a, b], [c, d]] with levels neg, pos:

    mcnemar.test(table(d$before, d$after))
    prop.test(c(sum(d$before == "pos"), sum(d$after == "pos")), c(n, n))   # the naive test
"""

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition
from taskfactory.errors import DataError
from taskfactory.methods.mcnemar import power

ROLES = {"before": "b", "after": "a", "positive": "pos"}

# (a, b, c, d, X-squared, p, method)
PINNED = [
    (10, 3, 9, 8, 2.0833333333333335, 0.14891467317876608, "McNemar's Chi-squared test with continuity correction"),
    (20, 5, 5, 10, 0.0, 1.0, "McNemar's Chi-squared test"),
    (40, 12, 30, 18, 6.8809523809523814, 0.0087119129623795828,
     "McNemar's Chi-squared test with continuity correction"),
    (3, 0, 4, 23, 2.25, 0.13361440253771517, "McNemar's Chi-squared test with continuity correction"),
]


def long_data(a, b, c, d) -> pd.DataFrame:
    rows = [("neg", "neg")] * a + [("neg", "pos")] * b + [("pos", "neg")] * c + [("pos", "pos")] * d
    return pd.DataFrame(rows, columns=["b", "a"])


@pytest.mark.parametrize("a, b, c, d, x2, p, method", PINNED)
def test_mcnemar_matches_r(a, b, c, d, x2, p, method):
    res = tf.analyse("mcnemar", long_data(a, b, c, d), ROLES)
    assert res.statistic == pytest.approx(x2, rel=1e-14, abs=1e-15)
    assert res.pvalue == pytest.approx(p, rel=1e-12) and res.method == method


def test_naive_test_treats_the_occasions_as_two_samples():
    # 13 positive before, 19 after, of 30: prop.test(c(13, 19), c(30, 30))
    data = long_data(8, 9, 3, 10)
    res = run_test(tf.get_family("mcnemar"), Condition(method="mcnemar", roles=ROLES), data, which="naive")
    assert res.statistic == pytest.approx(1.6741071428571428, rel=1e-12)
    assert res.pvalue == pytest.approx(0.1957093184246543, rel=1e-12)


def test_no_discordant_pair_and_a_single_level_are_refused():
    with pytest.raises(DataError, match="no pair changed"):
        tf.analyse("mcnemar", long_data(10, 0, 0, 12), ROLES)
    with pytest.raises(DataError, match=r"^'b' has no variation: every analysed row holds 'pos'$"):
        tf.analyse("mcnemar", long_data(0, 0, 4, 26).assign(b="pos"), ROLES)


def test_power_is_alpha_at_most_without_an_effect_and_grows_with_it():
    assert power(60, 0.3, 0.5) <= 0.05 and power(60, 0.3, 0.85) > 0.6
    # the normal law takes over smoothly above EXACT_PAIRS expected discordant pairs
    assert power(1000, 0.29, 0.56) == pytest.approx(power(1000, 0.31, 0.56), abs=0.05)
