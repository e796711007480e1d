"""kendall pinned to R 4.2.2.

R's ``cor.test(x, y, method = "kendall")`` reports tau-b. With ties in either
variable (the family's data always tie) it refers S to a normal distribution
with the tie-corrected variance and no continuity correction, warning "Cannot
compute exact p-value with ties"; with no ties and n < 50 it uses the exact
distribution of T, the number of concordant pairs. Both routes are pinned,
as is the accepted Spearman test and the tempting Pearson test.
"""

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition

ROLES = {"x": "a", "y": "b"}
METHOD = "Kendall's rank correlation tau"


def frame(a, b):
    return pd.DataFrame({"a": np.asarray(a, dtype=float), "b": np.asarray(b, dtype=float)})


# Both variables rounded to a coarse step, as the family's data are.
COARSE = frame([20, 25, 15, 30, 20, 25, 35, 20, 15, 25, 30, 20, 10, 25, 40, 20, 25, 30, 15, 20],
               [3.5, 3, 4, 3, 3.5, 2.5, 2.5, 4, 4.5, 3, 3.5, 3.5, 4.5, 3, 2, 3, 3.5, 2.5, 4, 3])
X12 = [1.2, 3.4, 2.2, 5.1, 4.4, 0.7, 6.3, 2.9, 3.8, 5.6, 1.9, 4.9]
ONE_TIED = frame(X12, [2, 3, 2, 4, 3, 1, 4, 3, 3, 4, 2, 5])
UNTIED = frame(X12, [2.1, 3.3, 1.9, 4.2, 3.1, 1.4, 4.6, 2.8, 3.9, 4.4, 2.5, 5.0])


def test_ties_in_both_use_the_tie_corrected_normal_approximation():
    """> x <- c(20, 25, 15, 30, 20, 25, 35, 20, 15, 25, 30, 20, 10, 25, 40, 20, 25, 30, 15, 20)
    > y <- c(3.5, 3, 4, 3, 3.5, 2.5, 2.5, 4, 4.5, 3, 3.5, 3.5, 4.5, 3, 2, 3, 3.5, 2.5, 4, 3)
    > r <- cor.test(x, y, method = "kendall"); sprintf("%.17g %.17g %.17g", r$statistic, r$p.value, r$estimate)
    "-4.0127052544247563 6.0026845510660947e-05 -0.73817401992186404"
    """
    res = tf.analyse("kendall", COARSE, ROLES)
    assert res.pvalue == pytest.approx(6.0026845510660947e-05, rel=1e-9)
    assert res.statistic == pytest.approx(-4.0127052544247563, rel=1e-12)
    assert res.estimate == pytest.approx(-0.73817401992186404, rel=1e-12)
    assert (res.statistic_name, res.method, res.n) == ("z", METHOD, 20)


def test_ties_in_one_variable_only():
    """> x <- c(1.2, 3.4, 2.2, 5.1, 4.4, 0.7, 6.3, 2.9, 3.8, 5.6, 1.9, 4.9)
    > y <- c(2, 3, 2, 4, 3, 1, 4, 3, 3, 4, 2, 5)
    > r <- cor.test(x, y, method = "kendall"); sprintf("%.17g %.17g %.17g", r$statistic, r$p.value, r$estimate)
    "3.4227553574990042 0.00061989841460334972 0.80403025220736957"
    """
    res = tf.analyse("kendall", ONE_TIED, ROLES)
    assert res.pvalue == pytest.approx(0.00061989841460334972, rel=1e-9)
    assert res.statistic == pytest.approx(3.4227553574990042, rel=1e-12)
    assert res.estimate == pytest.approx(0.80403025220736957, rel=1e-12)


def test_no_ties_and_n_under_50_use_the_exact_distribution():
    """> y <- c(2.1, 3.3, 1.9, 4.2, 3.1, 1.4, 4.6, 2.8, 3.9, 4.4, 2.5, 5.0)
    > r <- cor.test(x, y, method = "kendall"); sprintf("%.17g %.17g %.17g", r$statistic, r$p.value, r$estimate)
    "59 0.0001074234407567598 0.78787878787878785"
    """
    res = tf.analyse("kendall", UNTIED, ROLES)
    assert res.pvalue == pytest.approx(0.0001074234407567598, rel=1e-9)
    assert (res.statistic, res.statistic_name) == (59.0, "T")
    assert res.estimate == pytest.approx(0.78787878787878785, rel=1e-12)


def test_spearman_is_accepted_and_pearson_is_the_trap():
    """> r <- cor.test(x, y, method = "spearman"); sprintf("%.17g", r$p.value)   # COARSE, ties: t approximation
    "1.2573656339179967e-05"
    > sprintf("%.17g", cor.test(x, y)$p.value)
    "2.5341271541017482e-06"
    """
    family = tf.get_family("kendall")
    cond = Condition(method="kendall", roles=ROLES)
    (alt,) = family.accepted
    assert alt.method == "Spearman's rank correlation rho"
    assert run_test(family, cond, COARSE, which=alt).pvalue == pytest.approx(1.2573656339179967e-05, rel=1e-9)
    assert run_test(family, cond, COARSE, which="naive").pvalue == pytest.approx(2.5341271541017482e-06, rel=1e-9)
