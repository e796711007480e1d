"""linear_mixed (and ols_cluster's accepted mixed model) pinned to R 4.2.2 (lme4 1.1-31, lmerTest 3.1-3,
sandwich 3.0, lmtest 0.9).

Each dataset below is clusters C01, C02, ... of the given sizes, a cluster-level exposure ``x``
(one value per cluster), and per row ``y``, ``age`` and ``sex`` (f/m for female/male). R read the
same columns (``d.csv``) and printed each row with ``sprintf("%.17g", ...)``::

    > library(lmerTest)
    > p <- function(m, i = 2) sprintf("%.17g", m[i, ])
    > f <- lmer(y ~ x + age + sex + (1 | cl), data = d)       # UNEQUAL (10 clusters of 3 to 12) and SMALL (14 of 2-3)
    > summary(f)$coefficients                                 # Estimate, Std. Error, df, t value, Pr(>|t|)
    > fl <- lm(y ~ x + age + sex, data = d)
    > p(lmtest::coeftest(fl, vcov = sandwich::vcovCL(fl, cluster = ~cl)))   # ols_cluster's test
    > p(summary(fl)$coefficients)                                           # the naive test
    > f <- lmer(y ~ x + 1 + (1 | cl), data = d)                # PLAIN: no covariates (9 clusters of 3 to 11)
    > f <- lmer(y ~ x + age + sex + (1 | cl), data = d)       # FLAT: no cluster effect in the data
    boundary (singular) fit: see help('isSingular')            # theta 0: refused

The expected rows are (estimate, std. error, df, t, p).
"""

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition
from taskfactory.errors import DataError
from taskfactory.make.reference import fill

REL = 1e-6  # lme4's optimizer path is reproduced; what is left is rounding (~1e-7 relative)


def frame(sizes, x, y, age, sex):
    cl = [f"C{k + 1:02d}" for k, m in enumerate(sizes) for _ in range(m)]
    xs = [v for v, m in zip(x, sizes) for _ in range(m)]
    return pd.DataFrame({"y": y, "x": xs, "age": age, "sex": ["male" if s == "m" else "female" for s in sex],
                         "cl": cl})


UNEQUAL = frame(
    sizes=[7, 3, 9, 5, 12, 4, 6, 8, 5, 10],
    x=[10.7, 11.6, 10.7, 7.4, 11.8, 10.9, 8.9, 11.2, 10.7, 10.6],
    y=[
        58.0, 65.0, 51.3, 46.5, 57.5, 48.8, 50.9, 50.1, 51.6, 46.9, 47.6, 49.7, 50.3, 47.2, 46.2, 48.2, 46.8,
        44.5, 56.6, 43.6, 40.1, 46.8, 40.9, 43.0, 54.9, 52.2, 46.1, 59.5, 50.3, 51.8, 45.0, 53.0, 58.5, 48.8,
        56.4, 43.2, 47.2, 49.4, 43.8, 48.2, 49.4, 53.8, 50.3, 54.4, 49.3, 49.2, 52.9, 55.1, 53.2, 54.3, 56.1,
        49.5, 58.6, 48.5, 42.8, 48.9, 51.8, 47.9, 46.1, 36.8, 52.6, 47.8, 38.4, 42.3, 39.9, 35.6, 43.8, 38.0,
        47.3,
    ],
    age=[
        60, 55, 59, 47, 58, 38, 43, 57, 30, 37, 30, 43, 65, 30, 40, 41, 62, 33, 45, 35, 25, 55, 27, 36, 45, 44,
        29, 65, 55, 64, 28, 54, 37, 47, 62, 36, 54, 31, 38, 64, 42, 46, 37, 29, 42, 50, 43, 56, 39, 50, 56, 62,
        42, 26, 54, 46, 60, 43, 40, 27, 43, 51, 56, 59, 33, 49, 57, 35, 39,
    ],
    sex="fffmfffmfmmffffmmfffmmfffmffmfmfffffmfmfmfmmmfmmmmmmfmffmfffmfmfmmmmf",
)

SMALL = frame(
    sizes=[2, 3, 2, 3, 3, 2, 2, 3, 2, 3, 3, 2, 2, 3],
    x=[10.4, 9.0, 9.2, 5.1, 13.6, 12.3, 9.3, 11.5, 10.6, 8.9, 12.0, 9.4, 9.3, 8.4],
    y=[
        47.2, 42.4, 43.1, 39.6, 41.1, 55.3, 51.7, 45.3, 49.0, 41.5, 61.1, 53.8, 57.9, 46.1, 51.9, 45.1, 44.5,
        50.7, 52.6, 51.5, 47.3, 48.3, 47.0, 51.0, 45.8, 58.6, 48.9, 46.6, 61.4, 46.5, 54.0, 42.3, 51.9, 40.3,
        50.9,
    ],
    age=[
        63, 42, 34, 50, 63, 64, 60, 53, 40, 41, 26, 32, 38, 39, 48, 45, 53, 61, 60, 56, 65, 38, 62, 62, 34, 44,
        48, 53, 53, 29, 44, 29, 64, 33, 43,
    ],
    sex="fffmfffmfffffmfmmmffffmfffmmmmfmmfm",
)

PLAIN = frame(
    sizes=[6, 9, 4, 11, 5, 8, 7, 3, 10],
    x=[14.1, 4.9, 10.8, 8.9, 9.1, 9.6, 6.0, 9.5, 8.3],
    y=[
        58.3, 58.8, 46.1, 50.9, 54.8, 57.3, 32.2, 48.7, 47.7, 39.4, 36.2, 42.4, 44.1, 49.8, 52.6, 50.9, 53.2,
        54.6, 59.3, 49.0, 54.7, 41.0, 48.6, 40.3, 48.5, 52.3, 46.1, 43.6, 46.5, 42.6, 42.7, 53.9, 60.8, 46.9,
        43.6, 42.2, 39.8, 51.1, 52.7, 44.5, 47.2, 51.0, 50.0, 40.4, 44.1, 43.4, 44.8, 46.5, 42.2, 48.8, 54.4,
        46.6, 50.1, 59.4, 56.5, 61.2, 44.4, 60.4, 49.9, 57.2, 59.7, 58.0, 56.9,
    ],
    age=[
        26, 29, 43, 41, 61, 46, 42, 42, 52, 49, 32, 55, 56, 64, 57, 36, 38, 51, 51, 53, 60, 37, 63, 25, 28, 64,
        63, 37, 30, 37, 26, 61, 52, 48, 35, 44, 32, 56, 44, 26, 35, 53, 46, 40, 35, 28, 49, 52, 46, 63, 63, 33,
        49, 50, 35, 37, 44, 55, 36, 54, 51, 33, 40,
    ],
    sex="fffmffmfmfmfmfmfmfmmffffmfmffffffmmmmmfmmffffmffmfmfffffmfmfffm",
)

FLAT = frame(
    sizes=[5, 6, 4, 7, 5, 6, 5, 4],
    x=[7.8, 8.5, 8.4, 10.5, 9.5, 10.3, 11.7, 11.7],
    y=[
        40.3, 47.0, 43.4, 49.7, 48.7, 47.8, 40.6, 40.4, 56.6, 52.5, 43.7, 44.6, 53.9, 45.4, 44.2, 57.3, 51.2,
        47.6, 49.1, 51.6, 49.2, 54.9, 54.1, 51.1, 55.9, 48.4, 42.1, 51.9, 56.2, 46.1, 52.6, 49.6, 48.8, 43.9,
        63.3, 52.9, 54.9, 48.1, 44.5, 58.4, 46.2, 56.9,
    ],
    age=[
        25, 42, 46, 64, 34, 58, 27, 38, 55, 48, 63, 55, 62, 58, 30, 63, 59, 30, 65, 55, 37, 30, 40, 62, 57, 34,
        45, 59, 51, 37, 29, 64, 34, 46, 53, 38, 46, 36, 59, 49, 32, 38,
    ],
    sex="fmmffmmmmmfffmmfmfmfmmfffffffffmfmffmfmffm",
)

ROLES = {"outcome": "y", "exposure": "x", "covariates": ["age", "sex"], "cluster": "cl"}
PLAIN_ROLES = {**ROLES, "covariates": []}

# summary(lmer(y ~ x + age + sex + (1 | cl), UNEQUAL))$coefficients
R_UNEQUAL = [
    ("(Intercept)", 32.580041554741072, 10.44398344260116, 9.0182033136778426, 3.1195033708926241, 0.012298569858669664),
    ("x", 1.0622567164692158, 0.99293738566569678, 9.0322209408207375, 1.0698123887812374, 0.31245841945414721),
    ("age", 0.13723641621315188, 0.045046491487809655, 58.793226667115967, 3.0465506120557779, 0.0034632640407007338),
    ("sexmale", -2.1365745453447493, 1.0762428257762215, 61.468208379758764, -1.9852160629305768, 0.05158708690827802),
]
# the x rows of SMALL (y ~ x + age + sex) and PLAIN (y ~ x + 1)
R_SMALL = (1.1874649020029915, 0.55499222876314391, 9.1498140840485451, 2.1396063592626811, 0.060570116179152832)
R_PLAIN = (1.1941767435711352, 0.51201926991104452, 7.884836679360248, 2.3322886729997587, 0.048441517588195544)
# p(lmtest::coeftest(fl, vcov = sandwich::vcovCL(fl, cluster = ~cl))): estimate, SE, t, p
R_CL = {"UNEQUAL": (1.0918556289181172, 0.65598171076912437, 1.6644604735060984, 0.10083429866661368),
        "SMALL": (1.2207843644470819, 0.40868452174554276, 2.9871069235334851, 0.0054642774935267672),
        "PLAIN": (1.1668868439857367, 0.21809353615663118, 5.3503962774380334, 1.3960280308891623e-06)}
# p(summary(fl)$coefficients) on UNEQUAL: the naive test
R_NAIVE = (1.0918556289181172, 0.56582453404238986, 1.9296717678847037, 0.05801411632588846)


def check_row(res, estimate, se, df, t, p):
    assert res.estimate == pytest.approx(estimate, rel=REL)
    assert res.statistic == pytest.approx(t, rel=REL)
    assert res.df[0] == pytest.approx(df, rel=REL)
    assert res.pvalue == pytest.approx(p, rel=REL)
    assert next(term for term in res.terms if term.name == "x").std_error == pytest.approx(se, rel=REL)


def test_unequal_clusters_with_a_numeric_and_a_factor_covariate():
    res = tf.analyse("linear_mixed", UNEQUAL, ROLES)
    assert [term.name for term in res.terms] == [row[0] for row in R_UNEQUAL]
    for term, (_, estimate, se, df, t, p) in zip(res.terms, R_UNEQUAL):
        assert (term.estimate, term.std_error, term.df, term.statistic, term.pvalue) == pytest.approx(
            (estimate, se, df, t, p), rel=REL)
    check_row(res, *R_UNEQUAL[1][1:])
    assert res.statistic_name == "t" and res.n == len(UNEQUAL) == 69


def test_small_clusters():
    check_row(tf.analyse("linear_mixed", SMALL, ROLES), *R_SMALL)


def test_no_covariates():
    res = tf.analyse("linear_mixed", PLAIN, PLAIN_ROLES)
    check_row(res, *R_PLAIN)
    assert [term.name for term in res.terms] == ["(Intercept)", "x"]


def test_a_singular_fit_is_refused():
    """No cluster effect: lme4's estimate of the random intercept's SD is 0, a
    boundary fit whose Satterthwaite df R computes but should not be trusted."""
    with pytest.raises(DataError, match="singular"):
        tf.analyse("linear_mixed", FLAT, ROLES)


def test_a_single_cluster_is_refused():
    with pytest.raises(DataError):
        tf.analyse("linear_mixed", UNEQUAL.assign(cl="C01"), ROLES)


@pytest.mark.parametrize("name", ["UNEQUAL", "SMALL", "PLAIN"])
def test_the_cluster_robust_t_on_the_same_data(name):
    """ols_cluster's test on these data, which linear_mixed accepts (from 50
    clusters, its range of N, the vcovCL t keeps its level)."""
    data = {"UNEQUAL": UNEQUAL, "SMALL": SMALL, "PLAIN": PLAIN}[name]
    roles = PLAIN_ROLES if name == "PLAIN" else ROLES
    family = tf.get_family("linear_mixed")
    (alt,) = family.accepted
    assert alt.call == tf.get_family("ols_cluster").canonical and alt.r_pvalue == "res[2, 4]"
    res = run_test(family, Condition(method="linear_mixed", roles=roles), data, which=alt)
    estimate, se, t, p = R_CL[name]
    assert (res.estimate, res.statistic, res.pvalue) == pytest.approx((estimate, t, p), rel=1e-9)
    assert res.df == (float(len(data) - (2 if name == "PLAIN" else 4)),)


def test_the_naive_test_ignores_the_clusters():
    family = tf.get_family("linear_mixed")
    res = run_test(family, Condition(method="linear_mixed", roles=ROLES), UNEQUAL, which="naive")
    estimate, se, t, p = R_NAIVE
    assert (res.estimate, res.statistic, res.pvalue) == pytest.approx((estimate, t, p), rel=1e-9)


def test_ols_cluster_accepts_the_mixed_model():
    family = tf.get_family("ols_cluster")
    (alt,) = family.accepted
    assert alt.call == tf.get_family("linear_mixed").canonical and alt.r_pvalue == "res[2, 5]"
    res = run_test(family, Condition(method="ols_cluster", roles=ROLES), UNEQUAL, which=alt)
    check_row(res, *R_UNEQUAL[1][1:])


def test_reference_solutions(tmp_path):
    family = tf.get_family("linear_mixed")
    r = fill(family.r_code, ROLES, "r")
    assert "lmerTest::lmer(y ~ x + age + sex + (1 | cl), data = d)" in r
    assert "lmerTest::lmer(y ~ x + 1 + (1 | cl), data = d)" in fill(family.r_code, PLAIN_ROLES, "r")
    assert family.r_pvalue == "res[2, 5]"  # lmerTest's columns: Estimate, Std. Error, df, t value, Pr(>|t|)
    scope = {"d": UNEQUAL.copy()}
    exec(fill(family.py_code, ROLES, "py"), scope)
    assert scope["p_value"] == pytest.approx(R_UNEQUAL[1][5], rel=REL)
