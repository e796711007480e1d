"""logistic_regression, poisson_regression and negative_binomial pinned to
R 4.2.2 (MASS 7.3) on one dataset of 40 rows (``d.csv`` below), with a
numeric and a two-level covariate::

    > d <- read.csv("d.csv")
    > p <- function(m) sprintf("%.17g %.17g %.17g %.17g", m[2, 1], m[2, 2], m[2, 3], m[2, 4])
    > p(summary(glm(ev == "yes" ~ x + age + sex, family = binomial, data = d))$coefficients)
    "0.086109918354383919 0.47435267506162765 0.18153142773611758 0.85595046715839707"
    > m <- summary(glm(ev == "yes" ~ x, family = binomial, data = d))$coefficients; sprintf("%.17g %.17g", m[2, 3], m[2, 4])
    "0.47331287652150361 0.63598997683073577"
    > p(summary(glm(cp ~ x + age + sex + offset(log(t)), family = poisson, data = d))$coefficients)
    "0.28885776586887735 0.10867176594266907 2.6580755669441065 0.007858826958968463"
    > p(summary(glm(cp ~ x + age + sex, family = poisson, data = d))$coefficients)
    "0.26200733925777936 0.10889851053201507 2.405977253295414 0.016129268961321792"
    > f <- MASS::glm.nb(cnb ~ x + age + sex + offset(log(t)), data = d); p(summary(f)$coefficients); f$theta
    "0.81611982144743755 0.17840538718769805 4.5745245382574025 4.7730266773515669e-06"   theta 2.2128390341214232
    > p(summary(glm(cnb ~ x + age + sex + offset(log(t)), family = poisson, data = d))$coefficients)
    "0.78186672695939341 0.10192090711568405 7.6713085576440694 1.7025043974503868e-14"
"""

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition
from taskfactory.errors import DataError

D = pd.DataFrame({
    "ev": ['no', 'no', 'no', 'no', 'no', 'no', 'no', 'no', 'no', 'yes', 'yes', 'yes', 'no', 'yes', 'yes', 'no', 'no', 'no', 'no', 'no', 'no', 'no', 'no', 'no', 'no', 'no', 'no', 'no', 'yes', 'no', 'no', 'no', 'no', 'no', 'no', 'yes', 'yes', 'no', 'no', 'no'],
    "x": [0.79, 0.47, 2.36, 1.07, 1.06, 2.64, 0.62, 1.44, 2.2, 2.03, 2.04, 2.98, 1.18, 1.22, 0.22, 1.29, 1.62, 1.91, 1.36, 1.37, 1.07, 1.66, 2.13, 1.44, 2.22, 4.14, 2.0, 0.33, 3.43, 2.29, 0.67, 2.91, 2.02, 1.29, 1.07, 0.89, 1.72, 2.65, 1.73, 2.09],
    "age": [42, 37, 48, 54, 61, 51, 44, 42, 57, 66, 53, 38, 40, 66, 52, 33, 49, 38, 44, 45, 43, 56, 49, 44, 54, 58, 34, 47, 40, 48, 37, 50, 50, 47, 40, 46, 39, 36, 52, 39],
    "sex": ['female', 'male', 'female', 'female', 'male', 'male', 'male', 'female', 'female', 'male', 'female', 'male', 'female', 'male', 'female', 'male', 'male', 'female', 'male', 'male', 'male', 'female', 'female', 'male', 'female', 'male', 'male', 'female', 'male', 'female', 'female', 'male', 'female', 'male', 'male', 'male', 'male', 'male', 'male', 'female'],
    "t": [0.55, 1.89, 1.73, 1.99, 2.32, 1.81, 1.91, 1.73, 2.04, 1.12, 1.88, 2.18, 0.98, 2.98, 2.37, 2.89, 1.23, 1.61, 1.15, 0.62, 0.54, 1.12, 2.65, 0.91, 2.22, 1.12, 0.66, 0.98, 2.19, 1.75, 1.87, 1.63, 1.19, 1.72, 2.81, 1.0, 2.33, 1.13, 0.98, 1.31],
    "cp": [0, 2, 0, 1, 7, 6, 3, 4, 2, 1, 2, 5, 2, 5, 2, 2, 2, 2, 2, 1, 0, 4, 6, 2, 4, 7, 1, 0, 2, 4, 0, 3, 2, 3, 5, 0, 5, 1, 1, 3],
    "cnb": [0, 0, 6, 4, 1, 0, 1, 2, 2, 3, 2, 6, 0, 4, 0, 4, 2, 2, 5, 0, 0, 0, 1, 5, 10, 9, 0, 0, 17, 3, 0, 12, 0, 3, 3, 0, 2, 0, 1, 6],
})
BINARY = {"outcome": "ev", "positive": "yes", "exposure": "x", "covariates": ["age", "sex"]}
POISSON = {"outcome": "cp", "exposure": "x", "covariates": ["age", "sex"], "exposure_time": "t"}
NB = {**POISSON, "outcome": "cnb"}


def check(res, estimate, se, z, p, rel=1e-6):
    assert res.estimate == pytest.approx(estimate, rel=rel)
    assert res.statistic == pytest.approx(z, rel=rel)
    assert res.pvalue == pytest.approx(p, rel=rel)
    assert next(t for t in res.terms if t.name == "x").std_error == pytest.approx(se, rel=rel)
    assert res.statistic_name == "z" and res.df == ()
    assert [t.name for t in res.terms] == ["(Intercept)", "x", "age", "sexmale"]


def naive(method, roles):
    return run_test(tf.get_family(method), Condition(method=method, roles=roles), D, which="naive")


def test_logistic_regression_is_glm_binomial_wald_z():
    res = tf.analyse("logistic_regression", D, BINARY)
    check(res, 0.086109918354383919, 0.47435267506162765, 0.18153142773611758, 0.85595046715839707)


def test_logistic_trap_is_the_regression_without_the_covariates():
    res = naive("logistic_regression", BINARY)
    assert res.pvalue == pytest.approx(0.63598997683073577, rel=1e-9)
    assert res.statistic == pytest.approx(0.47331287652150361, rel=1e-9)
    assert [t.name for t in res.terms] == ["(Intercept)", "x"]


def test_poisson_regression_with_the_offset_and_its_trap_without():
    res = tf.analyse("poisson_regression", D, POISSON)
    check(res, 0.28885776586887735, 0.10867176594266907, 2.6580755669441065, 0.007858826958968463)
    assert naive("poisson_regression", POISSON).pvalue == pytest.approx(0.016129268961321792, rel=1e-6)


def test_negative_binomial_is_glm_nb_and_its_trap_the_poisson_fit():
    res = tf.analyse("negative_binomial", D, NB)
    check(res, 0.81611982144743755, 0.17840538718769805, 4.5745245382574025, 4.7730266773515669e-06, rel=1e-5)
    assert naive("negative_binomial", NB).pvalue == pytest.approx(1.7025043974503868e-14, rel=1e-6)


def test_counts_and_binary_outcomes_are_checked():
    with pytest.raises(DataError, match=r"^'cp' must hold counts$"):
        tf.analyse("poisson_regression", D.assign(cp=D["cp"] + 0.5), POISSON)
    with pytest.raises(DataError, match=r"^'ev' has no variation: every analysed row holds 'no'$"):
        tf.analyse("logistic_regression", D.assign(ev="no"), BINARY)
    with pytest.raises(DataError, match=r"^'t' must be positive \(its log is the offset\)$"):
        tf.analyse("poisson_regression", D.assign(t=D["t"] - 1.0), POISSON)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")   # numpy, on the other rows at this scale
def test_a_covariate_of_extreme_magnitude_matches_r():
    """A covariate in units of 1e160 is no collinear term (the column norms
    are taken without overflow, as LAPACK takes them), and R's exposure row
    does not move:
    > e <- d; e$age <- e$age * 1e160
    > p(summary(glm(ev == "yes" ~ x + age + sex, family = binomial, data = e))$coefficients)
    "0.086109918354384501 0.4743526750616277 0.18153142773611877 0.85595046715839618"
    > p(summary(glm(cp ~ x + age + sex + offset(log(t)), family = poisson, data = e))$coefficients)
    "0.28885776586887746 0.1086717659426691 2.658075566944107 0.0078588269589684508"
    """
    scaled = D.assign(age=D["age"] * 1e160)
    check(tf.analyse("logistic_regression", scaled, BINARY), 0.086109918354384501, 0.4743526750616277,
          0.18153142773611877, 0.85595046715839618)
    check(tf.analyse("poisson_regression", scaled, POISSON), 0.28885776586887746, 0.1086717659426691,
          2.658075566944107, 0.0078588269589684508)
