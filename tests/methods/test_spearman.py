"""spearman pinned to R 4.2.2.

R's ``cor.test(x, y, method = "spearman")`` takes one of three routes: with no
ties and n <= 9, the exact permutation distribution of S; with no ties and
10 <= n <= 1290, the Edgeworth series of Algorithm AS 89; with ties, or
n > 1290, a t approximation on n - 2 df. Each route is pinned below, in both
tails, as is AS 89 itself (R's ``stats:::C_pRho``) on a table of (n, s, tail).
"""

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition
from taskfactory.errors import DataError
from taskfactory.methods._correlation import prho

ROLES = {"x": "a", "y": "b"}
METHOD = "Spearman's rank correlation rho"


def frame(a, b):
    return pd.DataFrame({"a": np.asarray(a, dtype=float), "b": np.asarray(b, dtype=float)})


SEVEN = frame([16.95, 4.78, 39.97, 22.75, 18.73, 14.94, 26.0], [1.42, 3.15, 11.12, 1.2, 5.75, 3.12, 9.96])
NINE = frame([6.45, 9.82, 14.09, 4.16, 18.2, 9.0, 16.36, 5.93, 29.63],
             [6.35, 2.63, 4.05, 13.85, 8.75, 0.9, 4.52, 5.98, 1.45])
TWELVE = frame([3.65, 35.16, 2.83, 17.63, 36.76, 2.02, 7.39, 2.7, 12.76, 45.47, 75.65, 1.69],
               [1.04, 11.23, 5.0, 5.92, 3.59, 1.46, 2.48, 1.16, 1.93, 10.16, 12.92, 0.96])
FIFTEEN_X = [8.01, 2.77, 6.15, 33.42, 8.26, 2.37, 37.98, 16.99, 82.32, 10.65, 6.3, 2.35, 37.58, 130.59, 4.4]
FIFTEEN_TIED = frame(FIFTEEN_X, [2.05, 10.47, 2.07, 1.17, 2.53, 8.32, 3.25, 2.22, 1.77, 2.07, 5.15, 1.3, 0.43, 1.22, 3.06])
FIFTEEN = frame(FIFTEEN_X, [2.05, 10.47, 2.07, 1.17, 2.53, 8.32, 3.25, 2.22, 1.77, 2.08, 5.15, 1.3, 0.43, 1.22, 3.06])


def big(n):
    """x = 1..n and y = x + 21500 ((389 x) mod 1291) / 1291: no ties, rho near 0.06."""
    i = np.arange(1, n + 1)
    return frame(i, i + 21500 * ((i * 389) % 1291) / 1291)


def check(res, p, s, rho, rel=1e-9):
    assert res.pvalue == pytest.approx(p, rel=rel)
    assert res.statistic == pytest.approx(s, rel=1e-9, abs=1e-9)
    assert res.estimate == pytest.approx(rho, rel=1e-9, abs=1e-12)
    assert res.df == ()
    assert res.statistic_name == "S"
    assert res.method == METHOD


def test_exact_permutation_lower_tail():
    """n = 7, no ties, rho > 0: P(S <= 28) by enumeration.
    > x <- c(16.95, 4.78, 39.97, 22.75, 18.73, 14.94, 26.0)
    > y <- c(1.42, 3.15, 11.12, 1.2, 5.75, 3.12, 9.96)
    > cor.test(x, y, method = "spearman")
    S = 28, p-value = 0.266666666666667, rho = 0.5
    """
    res = tf.analyse("spearman", SEVEN, ROLES)
    check(res, 0.266666666666667, 28.0, 0.5)
    assert res.details["branch"] == "exact permutation"


def test_exact_permutation_upper_tail():
    """n = 9, no ties, rho < 0: P(S >= 166) by enumeration.
    > x <- c(6.45, 9.82, 14.09, 4.16, 18.2, 9.0, 16.36, 5.93, 29.63)
    > y <- c(6.35, 2.63, 4.05, 13.85, 8.75, 0.9, 4.52, 5.98, 1.45)
    > cor.test(x, y, method = "spearman")
    S = 166, p-value = 0.3125, rho = -0.383333333333333
    """
    res = tf.analyse("spearman", NINE, ROLES)
    check(res, 0.3125, 166.0, -0.383333333333333)


def test_zero_correlation_caps_p_at_one():
    """S equal to its mean (n^3 - n) / 6: p = min(2 P, 1).
    > cor.test(1:5, c(1, 5, 4, 3, 2), method = "spearman")
    S = 20, p-value = 1, rho = 0
    """
    res = tf.analyse("spearman", frame([1, 2, 3, 4, 5], [1, 5, 4, 3, 2]), ROLES)
    check(res, 1.0, 20.0, 0.0)


def test_edgeworth_lower_tail():
    """n = 12, no ties, rho > 0: AS 89's Edgeworth series.
    > x <- c(3.65, 35.16, 2.83, 17.63, 36.76, 2.02, 7.39, 2.7, 12.76, 45.47, 75.65, 1.69)
    > y <- c(1.04, 11.23, 5.0, 5.92, 3.59, 1.46, 2.48, 1.16, 1.93, 10.16, 12.92, 0.96)
    > cor.test(x, y, method = "spearman")
    S = 48, p-value = 0.00144087257368034, rho = 0.832167832167832
    """
    res = tf.analyse("spearman", TWELVE, ROLES)
    check(res, 0.00144087257368034, 48.0, 0.832167832167832)
    assert res.details["branch"] == "Edgeworth series"


def test_edgeworth_upper_tail():
    """n = 15, no ties, rho < 0.
    > x <- c(8.01, 2.77, 6.15, 33.42, 8.26, 2.37, 37.98, 16.99, 82.32, 10.65, 6.3, 2.35, 37.58, 130.59, 4.4)
    > y <- c(2.05, 10.47, 2.07, 1.17, 2.53, 8.32, 3.25, 2.22, 1.77, 2.08, 5.15, 1.3, 0.43, 1.22, 3.06)
    > cor.test(x, y, method = "spearman")
    S = 834, p-value = 0.0665923053091992, rho = -0.489285714285714
    """
    res = tf.analyse("spearman", FIFTEEN, ROLES)
    check(res, 0.0665923053091992, 834.0, -0.489285714285714)


def test_edgeworth_in_the_extreme_tail():
    """A perfect monotone relation at n = 20: the series, not 2 / 20!, gives R's p.
    > cor.test(1:20, exp(1:20), method = "spearman")
    S = 0, p-value = 5.9763561534304e-06, rho = 1
    """
    res = tf.analyse("spearman", frame(np.arange(1, 21), np.exp(np.arange(1, 21))), ROLES)
    check(res, 5.9763561534304e-06, 0.0, 1.0)


def test_edgeworth_clamped_to_zero():
    """At n = 10 the series falls below zero in the extreme tail and is clamped.
    > cor.test(1:10, (1:10)^2, method = "spearman")
    S = 3.66373598126302e-14, p-value = 0, rho = 1
    """
    res = tf.analyse("spearman", frame(np.arange(1, 11), np.arange(1, 11) ** 2), ROLES)
    assert res.pvalue == 0.0
    assert res.estimate == pytest.approx(1.0)
    assert abs(res.statistic) < 1e-9


def test_ties_use_the_t_approximation():
    """n = 15 with a tie in y (2.07 twice): R warns and uses the t approximation.
    > y[10] <- 2.07   # the data above with the tie
    > cor.test(x, y, method = "spearman")
    S = 838.248547211023, p-value = 0.0595336383405055, rho = -0.496872405733969
    Warning message: Cannot compute exact p-value with ties
    """
    res = tf.analyse("spearman", FIFTEEN_TIED, ROLES)
    check(res, 0.0595336383405055, 838.248547211023, -0.496872405733969)
    assert res.details["branch"] == "t approximation"


def test_perfect_correlation_with_ties():
    """
    > cor.test(c(1,1,2,3,4,5,6,7,8,9), c(2,2,3,4,5,6,7,8,9,10), method = "spearman")
    S = 0, p-value = 0, rho = 1
    """
    res = tf.analyse("spearman", frame([1, 1, 2, 3, 4, 5, 6, 7, 8, 9], [2, 2, 3, 4, 5, 6, 7, 8, 9, 10]), ROLES)
    assert res.pvalue == 0.0
    assert res.statistic == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("n, s, p, branch", [
    (1289, 337022092, 0.0450813388425853, "Edgeworth series"),
    (1290, 337457058, 0.0413657248128528, "Edgeworth series"),
    (1291, 339056894, 0.0501085339782042, "t approximation"),
])
def test_large_n_switch_over(n, s, p, branch):
    """Without ties R keeps AS 89 up to n = 1290 and uses the t approximation above
    (at n = 1290 the t approximation would give 0.0413546572349056).
    > i <- 1:n; y <- i + 21500 * ((i * 389) %% 1291) / 1291
    > cor.test(i, y, method = "spearman")
    n = 1289: S = 337022092, p-value = 0.0450813388425853
    n = 1290: S = 337457058, p-value = 0.0413657248128528
    n = 1291: S = 339056894, p-value = 0.0501085339782042
    """
    res = tf.analyse("spearman", big(n), ROLES)
    assert res.details["branch"] == branch
    assert res.pvalue == pytest.approx(p, rel=1e-9)
    assert res.statistic == pytest.approx(s, rel=1e-12)


# (n, s, lower.tail, R's .Call(stats:::C_pRho, s, n, lower.tail))
PRHO_R = [
    (2, 1, False, 0.5),
    (2, 2, False, 0.5),
    (3, 8, True, 0.83333333333333337),
    (3, 6, False, 0.5),
    (4, 9, False, 0.54166666666666663),
    (4, 20, False, 0.041666666666666664),
    (5, 0, False, 1.0),
    (5, 1, False, 0.9916666666666667),
    (5, 26, True, 0.65833333333333333),
    (5, 41, False, 0.0),
    (6, 35, True, 0.5),
    (6, 18, False, 0.85138888888888886),
    (7, 32, False, 0.84880952380952379),
    (7, 66, True, 0.643452380952381),
    (8, 1, True, 2.4801587301587302e-05),
    (8, 70, True, 0.33229166666666665),
    (9, 177, False, 0.09689980158730159),
    (9, 173, True, 0.88509149029982359),
    (9, 240, False, 2.7557319223985893e-06),
    (9, 241, False, 0.0),
    (10, 2, True, 0.0),
    (10, 14, True, 6.5081197232637594e-05),
    (10, 47, True, 0.011322552842797359),
    (10, 59, True, 0.023243627559594741),
    (10, 165, True, 0.49320943562188907),
    (10, 330, False, 0.0),
    (11, 22, True, 2.7770413286823913e-05),
    (11, 202, True, 0.39829620055948384),
    (11, 235, False, 0.42472604472372688),
    (12, 35, True, 6.998544912967513e-05),
    (12, 57, False, 0.99872352574224865),
    (12, 112, False, 0.98133274431681516),
    (20, 1, True, 2.9740511128232361e-06),
    (20, 20, True, 3.1939372779395082e-06),
    (20, 1327, False, 0.50507215800495098),
    (20, 2431, False, 9.4252481632890977e-07),
    (20, 2660, False, 2.988178076715192e-06),
    (20, 2661, False, 0.0),
    (50, 6205, True, 2.9659160198599778e-08),
    (50, 15744, True, 0.04384321998803415),
    (50, 31452, False, 9.4042834131094564e-05),
    (200, 1122136, False, 0.98740627177730456),
    (200, 1500403, False, 0.038512864373320556),
    (200, 1768609, False, 1.3567514772430069e-06),
    (1289, 290147170, True, 6.9394066830048351e-12),
    (1289, 357012669, False, 0.49748265772158495),
    (1289, 383483505, False, 0.0037994685130799751),
    (1290, 357753197, True, 0.49887600986161107),
    (1290, 357759885, True, 0.49914363180283239),
    (1290, 400092050, False, 1.0439064100173738e-05),
]


@pytest.mark.parametrize("n, s, lower, p", PRHO_R)
def test_as89_matches_r(n, s, lower, p):
    """AS 89 against R's C routine, e.g.
    > .Call(stats:::C_pRho, 15744, 50, TRUE)
    [1] 0.04384321998803415
    """
    assert prho(n, float(s), lower) == pytest.approx(p, rel=1e-9, abs=1e-300)


def test_naive_is_pearson():
    """
    > cor.test(x, y)   # the n = 7 data above
    t = 2.32701442455597, df = 5, p-value = 0.0674615697339328
    """
    fam = tf.get_family("spearman")
    res = fam.naive(Condition(method="spearman", roles=ROLES), SEVEN)
    assert res.pvalue == pytest.approx(0.0674615697339328, rel=1e-9)
    assert res.statistic == pytest.approx(2.32701442455597, rel=1e-9)
    assert res.df == (5.0,)
    assert res.method == "Pearson's product-moment correlation"


def test_naive_pearson_on_edgeworth_data():
    """
    > cor.test(x, y)   # the n = 12 data above
    t = 5.54336265383025, df = 10, p-value = 0.000246373286185552
    """
    fam = tf.get_family("spearman")
    res = fam.naive(Condition(method="spearman", roles=ROLES), TWELVE)
    assert res.pvalue == pytest.approx(0.000246373286185552, rel=1e-9)


def test_constant_column_is_a_data_error():
    """R's cor gives NA for a constant column ("the standard deviation is zero")."""
    with pytest.raises(DataError):
        tf.analyse("spearman", SEVEN.assign(b=3.0), ROLES)


KENDALL = [
    # > r <- cor.test(x, y, method = "kendall"); sprintf("%.17g %.17g %.17g", r$statistic, r$p.value, r$estimate)
    # exact branch (n = 11 < 50, no ties): T = 50
    ([3.1, 1.2, 5.5, 4.4, 2.0, 6.7, 7.1, 0.5, 8.8, 9.3, 2.7], [2.0, 1.1, 3.9, 5.2, 2.5, 4.8, 7.7, 0.9, 6.1, 9.9, 1.4],
     "T", 50.0, 1.3227513227520582e-04, 8.1818181818181823e-01),
    # exact branch in the lower tail (n = 8): T = 1
    ([1, 2, 3, 4, 5, 6, 7, 8], [8, 7, 6, 5, 4, 3, 1, 2], "T", 1.0, 0.00039682539682539683, -0.92857142857142860315),
    # ties: normal approximation with R's tie-corrected variance, no continuity correction
    ([1, 2, 2, 3, 4, 4, 4, 5, 6, 7, 8, 8], [2, 1, 3, 3, 5, 4, 6, 6, 5, 8, 7, 9],
     "z", 3.49875180439225141882, 0.00046744148056981807, 0.80655653082637868145),
]


@pytest.mark.parametrize("x, y, name, statistic, p, tau", KENDALL)
def test_kendall_is_accepted_and_matches_r(x, y, name, statistic, p, tau):
    fam = tf.get_family("spearman")
    (alt,) = fam.accepted
    assert alt.call == 'cor.test(x, y, method = "kendall")' and alt.method == "Kendall's rank correlation tau"
    res = run_test(fam, Condition(method="spearman", roles={"x": "x", "y": "y"}), pd.DataFrame({"x": x, "y": y}),
                   which=alt)
    assert res.statistic_name == name and res.statistic == pytest.approx(statistic, rel=1e-12)
    assert res.pvalue == pytest.approx(p, rel=1e-10) and res.estimate == pytest.approx(tau, rel=1e-12)


def test_kendall_at_n_60_uses_the_normal_approximation():
    """> i <- 1:60; x <- (i * 37) %% 61 / 7; y <- x + 3 * sin(i); cor.test(x, y, method = "kendall")
    z = 6.3524163292670748, p-value = 2.1195872215039832e-10, tau = 0.56271186440677967"""
    i = np.arange(1, 61)
    x = (i * 37) % 61 / 7
    y = x + 3 * np.sin(i)
    fam = tf.get_family("spearman")
    res = run_test(fam, Condition(method="spearman", roles={"x": "x", "y": "y"}), pd.DataFrame({"x": x, "y": y}),
                   which=fam.accepted[0])
    assert res.statistic_name == "z" and res.statistic == pytest.approx(6.3524163292670748, rel=1e-12)
    assert res.pvalue == pytest.approx(2.1195872215039832e-10, rel=1e-10) and res.estimate == pytest.approx(0.56271186440677967, rel=1e-12)
