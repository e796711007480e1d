"""ols_coefficient, ols_robust and ols_cluster pinned to R 4.2.2 (sandwich
3.0, lmtest 0.9) on one dataset of 24 rows in 6 clusters, with a numeric and
a two-level covariate (``d.csv`` below)::

    > d <- read.csv("d.csv")
    > f <- lm(y ~ x + age + sex, data = d)
    > p <- function(m) sprintf("%.17g %.17g %.17g %.17g", m[2, 1], m[2, 2], m[2, 3], m[2, 4])
    > p(summary(f)$coefficients)
    "6.1718538678391477 3.0524903582019745 2.0219077355168418 0.056768702279964223"
    > p(lmtest::coeftest(f, vcov = sandwich::vcovHC(f, type = "HC3")))
    "6.1718538678391477 3.0891570647743527 1.9979087299304965 0.059508932563783173"
    > p(lmtest::coeftest(f, vcov = sandwich::vcovCL(f, cluster = ~cl)))
    "6.1718538678391477 2.8113020898006105 2.1953719915873151 0.040104860525968095"
    > p(summary(lm(y ~ x, data = d))$coefficients)   # the same as lm(y ~ x + 1)
    "6.0336048051781459 2.9332230062046758 2.0569880954892286 0.051735204359220646"
"""

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition
from taskfactory.errors import DataError, InputError
from taskfactory.make.reference import fill

D = pd.DataFrame({
    "y": [127.2, 140.2, 151.7, 144.6, 119.7, 131.7, 136.7, 124.0, 123.5, 131.5, 126.8, 131.6, 142.2, 115.6, 127.3,
          121.4, 133.9, 131.0, 142.7, 119.2, 124.5, 126.1, 147.1, 128.3],
    "x": [3.42, 2.83, 4.47, 3.51, 3.41, 3.17, 3.94, 1.9, 3.7, 2.94, 2.07, 3.25, 3.01, 3.6, 2.53, 3.14, 3.51, 2.24, 3.42,
          3.13, 3.12, 2.13, 3.99, 3.27],
    "age": [50, 64, 62, 45, 47, 45, 56, 49, 57, 32, 66, 49, 57, 49, 46, 55, 58, 48, 48, 57, 41, 35, 54, 43],
    "sex": ["female", "male", "female", "male", "male", "female", "female", "female", "female", "male", "female",
            "female", "male", "female", "male", "female", "female", "female", "female", "female", "male", "male",
            "female", "female"],
    "cl": [f"S{k}" for k in range(1, 7) for _ in range(4)],
})
ROLES = {"outcome": "y", "exposure": "x", "covariates": ["age", "sex"]}


def check(res, estimate, se, t, p, df):
    assert res.estimate == pytest.approx(estimate, rel=1e-10)
    assert res.statistic == pytest.approx(t, rel=1e-10)
    assert res.pvalue == pytest.approx(p, rel=1e-9)
    assert res.df == (float(df),)
    row = next(term for term in res.terms if term.name == "x")
    assert row.std_error == pytest.approx(se, rel=1e-10)
    assert [term.name for term in res.terms] == ["(Intercept)", "x", "age", "sexmale"]


def test_ols_coefficient_is_summary_lm():
    res = tf.analyse("ols_coefficient", D, ROLES)
    check(res, 6.1718538678391477, 3.0524903582019745, 2.0219077355168418, 0.056768702279964223, 20)


def test_ols_robust_is_coeftest_with_hc3():
    res = tf.analyse("ols_robust", D, ROLES)
    check(res, 6.1718538678391477, 3.0891570647743527, 1.9979087299304965, 0.059508932563783173, 20)


def test_ols_cluster_is_coeftest_with_vcovcl_on_the_residual_df():
    res = tf.analyse("ols_cluster", D, {**ROLES, "cluster": "cl"})
    check(res, 6.1718538678391477, 2.8113020898006105, 2.1953719915873151, 0.040104860525968095, 20)


def test_naive_tests_and_the_accepted_hc3():
    """ols_coefficient's trap is the regression without the covariates; the
    robust families' trap is the classical standard error; HC3 is accepted
    beside the classical one for ols_coefficient."""
    cond = Condition(method="ols_coefficient", roles=ROLES)
    family = tf.get_family("ols_coefficient")
    assert run_test(family, cond, D, which="naive").pvalue == pytest.approx(0.051735204359220646, rel=1e-9)
    (alt,) = family.accepted
    assert run_test(family, cond, D, which=alt).pvalue == pytest.approx(0.059508932563783173, rel=1e-9)
    for method in ("ols_robust", "ols_cluster"):
        roles = {**ROLES, "cluster": "cl"} if method == "ols_cluster" else ROLES
        naive = run_test(tf.get_family(method), Condition(method=method, roles=roles), D, which="naive")
        assert naive.pvalue == pytest.approx(0.056768702279964223, rel=1e-9)


def test_no_covariates():
    res = tf.analyse("ols_coefficient", D, {**ROLES, "covariates": []})
    assert res.pvalue == pytest.approx(0.051735204359220646, rel=1e-9)
    assert fill("lm({outcome} ~ {exposure} + {covariates})", {**ROLES, "covariates": []}, "r") == "lm(y ~ x + 1)"
    assert fill("lm({outcome} ~ {exposure} + {covariates})", ROLES, "r") == "lm(y ~ x + age + sex)"


def test_bad_covariates_and_collinear_designs_are_refused():
    with pytest.raises(InputError) as err:
        tf.analyse("ols_coefficient", D, {**ROLES, "covariates": "age"})
    assert str(err.value) == "role 'covariates' must be a list of distinct column names (possibly empty), got 'age'"
    with pytest.raises(DataError):
        tf.analyse("ols_coefficient", D.assign(age2=D["age"] * 2), {**ROLES, "covariates": ["age", "age2"]})


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")   # numpy, on the other rows at this scale
@pytest.mark.parametrize("factor, p", [(1e160, 0.056768702279964264), (1e300, 0.056768702279964119)])
def test_a_covariate_of_extreme_magnitude_matches_r(factor, p):
    """The column norms of lm()'s collinearity check are taken without
    overflow, as LAPACK takes them, so a covariate in units of 1e160 is no
    collinear term; R's exposure row does not move:
    > e <- d; e$age <- e$age * 1e160   # and 1e300
    > p(summary(lm(y ~ x + age + sex, data = e))$coefficients)
    "6.1718538678391459 3.0524903582019745 2.0219077355168413 0.056768702279964264"
    "6.1718538678391477 3.052490358201974 2.0219077355168422 0.056768702279964119"
    """
    res = tf.analyse("ols_coefficient", D.assign(age=D["age"] * factor), ROLES)
    assert res.estimate == pytest.approx(6.1718538678391459, rel=1e-9)
    assert res.statistic == pytest.approx(2.0219077355168413, rel=1e-9)
    assert res.pvalue == pytest.approx(p, rel=1e-9)


def test_hc3_with_a_covariate_whose_variance_underflows_is_refused():
    """R's sandwich mixes every coefficient's scale into each: its HC3 SE of
    the exposure is then Inf, its p 1, noise:
    > f <- lm(y ~ x + age + sex, data = e)   # e$age <- d$age * 1e300
    > p(lmtest::coeftest(f, vcov = sandwich::vcovHC(f, type = "HC3")))
    "6.1718538678391477 Inf 0 1"
    """
    with pytest.raises(DataError) as err:
        tf.analyse("ols_robust", D.assign(age=D["age"] * 1e300), ROLES)
    assert str(err.value) == "the variance of 'age' (0) is beyond double precision: a column's scale is too extreme"
