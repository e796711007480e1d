"""binomial_exact pinned to R 4.2.2: ``binom.test(x, n, p = p0)$p.value``.

The R call on the long data is ``binom.test(sum(d$y == "event"), nrow(d), p = p0)``.
"""

import math

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.methods.binomial_exact import binom_test, power, rejection_region, wald_z

ROLES = {"outcome": "y", "positive": "event", "p0": 0.03}

# (x, n, p0, binom.test p)
PINNED = [
    (0, 20, 0.03, 1.0),
    (3, 20, 0.03, 0.021008356378342898),
    (7, 60, 0.04, 0.0098877957356123206),
    (18, 200, 0.05, 0.014425737920953504),
    (1, 40, 0.1, 0.1799901199800289),
    (12, 40, 0.3, 1.0),
    (6, 200, 0.03, 1.0),
]


@pytest.mark.parametrize("x, n, p0, p", PINNED)
def test_binom_test_matches_r(x, n, p0, p):
    res = binom_test(x, n, p0)
    assert res.pvalue == pytest.approx(p, rel=1e-12)
    assert (res.statistic, res.estimate) == (x, x / n)


def test_analyse_counts_the_positive_level():
    data = pd.DataFrame({"y": ["event"] * 3 + ["none"] * 17})
    res = tf.analyse("binomial_exact", data, ROLES)
    assert res.pvalue == pytest.approx(0.021008356378342898, rel=1e-12) and res.method == "Exact binomial test"


def test_wald_z_rejects_outright_with_no_event():
    # 0 of 20 against 0.03: the standard error from the sample is 0
    res = wald_z(0, 20, 0.03)
    assert res.pvalue == 0.0 and res.statistic is None
    # 3 of 20: z = (0.15 - 0.03) / sqrt(0.15 * 0.85 / 20)
    z = (0.15 - 0.03) / math.sqrt(0.15 * 0.85 / 20)
    assert wald_z(3, 20, 0.03).statistic == pytest.approx(z, rel=1e-14)


def test_rejection_region_matches_the_test_and_power_is_exact():
    region = rejection_region(60, 0.04)
    assert [x for x in range(61) if binom_test(x, 60, 0.04).pvalue < 0.05] == [x for x in range(61) if region[x]]
    # with no effect the exact test rejects at most alpha of the time
    assert power(60, 0.04, 0.04) <= 0.05 and power(60, 0.04, 0.25) > 0.9
