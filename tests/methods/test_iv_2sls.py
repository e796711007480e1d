"""iv_2sls pinned to R 4.2.2 (AER 1.2-10) on one dataset of 40 rows (``d.csv``
below: an outcome y, an exposure x, an instrument z, a weak instrument w, a
numeric, a two-level and a three-level covariate)::

    > d <- read.csv("d.csv")
    > p <- function(m) sprintf("%.17g %.17g %.17g %.17g", m[2, 1], m[2, 2], m[2, 3], m[2, 4])
    > f <- function(m) sprintf("%.17g", m[2, 3]^2)   # the instrument's first-stage F
    > p(summary(AER::ivreg(y ~ x + age + sex | z + age + sex, data = d))$coefficients)
    "1.3292700703076887 0.41817253642872304 3.1787598527151508 0.0030357922669056936"
    > p(summary(lm(y ~ x + age + sex, data = d))$coefficients)
    "1.8744790424443991 0.30749862955539969 6.0958939724532604 5.1751813988195237e-07"
    > f(summary(lm(x ~ z + age + sex, data = d))$coefficients)
    "51.366377419425099"
    > p(summary(AER::ivreg(y ~ x | z, data = d))$coefficients)   # the same as y ~ x + 1 | z + 1
    "1.3930952925893889 0.41056931850077749 3.393081825199149 0.0016277085722330316"
    > p(summary(lm(y ~ x, data = d))$coefficients)
    "2.029457548507795 0.2862340234248516 7.0902037578373784 1.8574582150214376e-08"
    > m <- summary(AER::ivreg(y ~ x + region + age | z + region + age, data = d))$coefficients
    > rownames(m); p(m)
    "(Intercept)" "x" "regionsouth" "regionwest" "age"
    "1.3078434303304121 0.42225455387625682 3.0972867393010524 0.0038349520616445033"
    > f(summary(lm(x ~ w + age + sex, data = d))$coefficients)   # a weak instrument: R's p-value is unreliable
    "0.0039663816669544784"
    > p(summary(AER::ivreg(y ~ x + age + sex | w + age + sex, data = d))$coefficients)
    "31.828660559488537 476.54770579340561 0.066790082446198981 0.9471183804500285"
    > d$age2 <- 2 * d$age; coef(AER::ivreg(y ~ x + age + age2 | z + age + age2, data = d))["age2"]
    NA
"""

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition
from taskfactory.errors import DataError
from taskfactory.methods.iv_2sls import first_stage_f
from taskfactory.make.reference import fill

D = pd.DataFrame({
    "y": [13.42, 7.55, 8.01, 15.42, 12.54, 10.71, 12.1, 10.0, 11.94, 14.86, 12.17, 7.2, 7.39, 7.94, 10.02, 14.91, 9.4, 12.65, 9.15, 4.44, 6.13, 8.51, 10.17, 7.38, 11.41, 14.61, 9.89, 12.51, 8.31, 12.55, 4.39, 5.6, 14.73, 8.03, 12.61, 12.81, 7.13, 8.2, 14.27, 11.69],
    "x": [4.87, 4.65, 2.89, 7.21, 6.06, 5.63, 6.15, 5.23, 6.26, 6.42, 5.91, 5.54, 4.82, 5.08, 4.71, 5.16, 4.79, 6.11, 5.37, 2.89, 4.5, 4.48, 4.28, 4.1, 4.63, 7.59, 4.56, 6.32, 3.35, 5.31, 2.74, 5.52, 6.94, 5.24, 5.27, 5.37, 4.37, 3.59, 6.3, 5.78],
    "z": [17.6, 20.7, 14.3, 24.2, 21.9, 19.1, 19.1, 20.9, 19.2, 19.3, 22.2, 21.5, 19.8, 19.7, 20.5, 18.2, 18.8, 21.6, 19.6, 15.9, 18.6, 22.0, 19.3, 19.6, 21.9, 25.5, 17.9, 24.0, 16.3, 20.5, 16.5, 24.1, 22.5, 23.4, 17.3, 22.1, 18.4, 18.6, 21.5, 22.6],
    "w": [19.8, 20.3, 17.2, 18.8, 15.6, 16.6, 15.2, 18.3, 18.2, 18.3, 21.4, 19.7, 17.8, 17.8, 16.7, 19.1, 19.2, 25.1, 24.5, 23.8, 26.0, 16.6, 21.9, 22.2, 21.7, 27.2, 27.3, 23.5, 21.4, 16.7, 16.1, 22.7, 20.1, 16.5, 19.2, 21.4, 22.6, 19.5, 19.4, 20.4],
    "age": [54, 41, 40, 53, 51, 56, 47, 58, 43, 37, 29, 36, 52, 33, 41, 62, 52, 59, 37, 25, 57, 34, 46, 47, 37, 57, 57, 49, 45, 47, 36, 43, 44, 38, 52, 34, 41, 27, 49, 51],
    "sex": ['female', 'female', 'female', 'female', 'female', 'male', 'male', 'male', 'female', 'male', 'female', 'male', 'female', 'male', 'male', 'male', 'male', 'female', 'male', 'male', 'female', 'male', 'female', 'female', 'male', 'female', 'male', 'male', 'female', 'male', 'female', 'female', 'female', 'male', 'male', 'female', 'male', 'male', 'male', 'female'],
    "region": ['south', 'north', 'west', 'west', 'north', 'west', 'north', 'north', 'north', 'south', 'north', 'north', 'west', 'south', 'west', 'north', 'north', 'north', 'south', 'north', 'south', 'west', 'south', 'south', 'west', 'north', 'north', 'south', 'south', 'south', 'north', 'south', 'west', 'south', 'west', 'south', 'south', 'north', 'south', 'south'],
})
ROLES = {"outcome": "y", "exposure": "x", "instrument": "z", "covariates": ["age", "sex"]}


def check(res, estimate, se, t, p, df, names):
    assert res.estimate == pytest.approx(estimate, rel=1e-10)
    assert res.statistic == pytest.approx(t, rel=1e-10)
    assert res.pvalue == pytest.approx(p, rel=1e-9)
    assert res.df == (float(df),) and res.statistic_name == "t"
    assert next(term for term in res.terms if term.name == "x").std_error == pytest.approx(se, rel=1e-10)
    assert [term.name for term in res.terms] == names


def naive(roles):
    return run_test(tf.get_family("iv_2sls"), Condition(method="iv_2sls", roles=roles), D, which="naive")


def test_iv_2sls_is_summary_ivreg_with_covariates():
    res = tf.analyse("iv_2sls", D, ROLES)
    check(res, 1.3292700703076887, 0.41817253642872304, 3.1787598527151508, 0.0030357922669056936, 36,
          ["(Intercept)", "x", "age", "sexmale"])
    assert first_stage_f(Condition(method="iv_2sls", roles=ROLES), D) == pytest.approx(51.366377419425099, rel=1e-10)


def test_the_trap_is_the_regression_that_ignores_the_instrument():
    assert naive(ROLES).pvalue == pytest.approx(5.1751813988195237e-07, rel=1e-9)
    assert naive(ROLES).estimate == pytest.approx(1.8744790424443991, rel=1e-10)
    assert naive({**ROLES, "covariates": []}).pvalue == pytest.approx(1.8574582150214376e-08, rel=1e-9)


def test_no_covariates():
    res = tf.analyse("iv_2sls", D, {**ROLES, "covariates": []})
    check(res, 1.3930952925893889, 0.41056931850077749, 3.393081825199149, 0.0016277085722330316, 38,
          ["(Intercept)", "x"])
    code = fill(tf.get_family("iv_2sls").r_code, {**ROLES, "covariates": []}, "r")
    assert code.endswith("res <- summary(AER::ivreg(y ~ x + 1 | z + 1, data = d))$coefficients")


def test_a_three_level_factor_covariate():
    res = tf.analyse("iv_2sls", D, {**ROLES, "covariates": ["region", "age"]})
    check(res, 1.3078434303304121, 0.42225455387625682, 3.0972867393010524, 0.0038349520616445033, 35,
          ["(Intercept)", "x", "regionsouth", "regionwest", "age"])


def test_a_weak_instrument_is_refused():
    """R fits the model (p = 0.947) without a warning, but an instrument whose
    first-stage F is at most 10 gives no reliable test."""
    with pytest.raises(DataError, match=r"the instrument 'w' is weak: its first-stage F given the covariates is 0\.00"):
        tf.analyse("iv_2sls", D, {**ROLES, "instrument": "w"})


def test_collinear_covariates_are_refused():
    """R drops the aliased covariate (NA); the task is redrawn instead."""
    with pytest.raises(DataError, match="collinear"):
        tf.analyse("iv_2sls", D.assign(age2=D["age"] * 2), {**ROLES, "covariates": ["age", "age2"]})


def test_hints_give_numbers_and_name_no_test():
    family = tf.get_family("iv_2sls")
    hints = family.hints(Condition(method="iv_2sls", roles=ROLES), D)
    assert hints[0].startswith("'x' and 'z' correlate at r = ")
    text = " ".join(hints).lower()
    assert not any(word in text for word in ("instrument", "2sls", "least squares", "ivreg", "regression", "test"))
