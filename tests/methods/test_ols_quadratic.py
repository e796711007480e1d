"""ols_quadratic pinned to R 4.2.2 on test_regression's dataset of 24 rows
(``d.csv``), and on the same data with age taking two values only, 40 in the
first twelve rows and 50 in the rest (``d2.csv``)::

    > d <- read.csv("d.csv")
    > p <- function(m) sprintf("%.17g %.17g %.17g %.17g", m[2, 1], m[2, 2], m[2, 3], m[2, 4])
    > f <- lm(y ~ x + age + sex + I(age^2), data = d)
    > p(summary(f)$coefficients); f$df.residual
    "6.6972423114582478 3.167644562155318 2.1142657201732673 0.047938804373488186"
    19
    > p(summary(lm(y ~ x + age + sex + I(age^2), data = d2))$coefficients)   # I(age^2) aliased, NA
    "6.540549759522845 3.1253172871443398 2.0927634408278162 0.049325922698311202"
    > p(summary(lm(y ~ x + age + sex, data = d2))$coefficients)              # the same fit
    "6.540549759522845 3.1253172871443398 2.0927634408278162 0.049325922698311202"
"""

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition
from taskfactory.methods._names import OLS, OLS_QUADRATIC
from taskfactory.methods.ols_quadratic import CURVE_REACH
from taskfactory.use.reward import named_test

from test_regression import D, ROLES


def test_the_gold_is_lm_with_the_square_of_every_numeric_covariate():
    res = tf.analyse("ols_quadratic", D, ROLES)
    assert res.estimate == pytest.approx(6.6972423114582478, rel=1e-10)
    assert res.statistic == pytest.approx(2.1142657201732673, rel=1e-10)
    assert res.pvalue == pytest.approx(0.047938804373488186, rel=1e-9)
    assert res.df == (19.0,)
    assert [term.name for term in res.terms] == ["(Intercept)", "x", "age", "sexmale", "I(age^2)"]
    assert next(term for term in res.terms if term.name == "x").std_error == pytest.approx(3.167644562155318,
                                                                                          rel=1e-10)


def test_a_two_valued_covariate_takes_no_square_as_in_r():
    two_valued = D.assign(age=[40] * 12 + [50] * 12)
    res = tf.analyse("ols_quadratic", two_valued, ROLES)
    assert res.pvalue == pytest.approx(0.049325922698311202, rel=1e-9)
    assert res.estimate == pytest.approx(6.540549759522845, rel=1e-10)
    assert [term.name for term in res.terms] == ["(Intercept)", "x", "age", "sexmale"]


def test_the_naive_test_adjusts_for_the_covariates_as_straight_lines():
    family = tf.get_family("ols_quadratic")
    naive = run_test(family, Condition(method=family.name, roles=ROLES), D, which="naive")
    assert naive.pvalue == pytest.approx(0.056768702279964223, rel=1e-9)   # test_regression's lm(y ~ x + age + sex)
    assert family.accepted == ()


def test_the_curve_shows_in_the_outcome_s_shape_not_in_its_spread():
    """The curved age is drawn as in the linear siblings (values beyond 3 SDs
    kept, where the curve levels off); the outcome's SD is ols_coefficient's
    on the same scenario (within 3 %, 4000 rows), while the square of age
    takes a t far beyond 2."""
    scen = {m: next(s for s in tf.load_scenarios(m) if s.id == "sick_leave_commute")
            for m in ("ols_quadratic", "ols_coefficient")}
    drawn = {}
    for method, s in scen.items():
        family, rng = tf.get_family(method), np.random.default_rng(5)
        params = {**family.draw_params(s, 4000, rng), "confounding": 0.4, "confounder_effect": 0.5}
        cond = Condition(method=method, roles=s.roles, n=4000, effect_value=0.0, params=params, dgp=s.dgp,
                         columns=s.columns())
        drawn[method] = pd.DataFrame(family.generate(cond, rng))
    mean, sd = scen["ols_quadratic"].dgp["covariates"]["age"]
    assert np.abs((drawn["ols_quadratic"]["age"] - mean) / sd).max() > CURVE_REACH
    spreads = [drawn[m]["sick_days"].std() for m in scen]
    assert spreads[0] == pytest.approx(spreads[1], rel=0.03)
    square = next(term for term in tf.analyse("ols_quadratic", drawn["ols_quadratic"], scen["ols_quadratic"].roles).terms
                  if term.name == "I(age^2)")
    assert abs(square.statistic) > 4


@pytest.mark.parametrize("line, label", [
    ("Linear regression with a quadratic term for age", OLS_QUADRATIC.label),
    ("lm with squared terms for the covariates", OLS_QUADRATIC.label),
    ("OLS with polynomial adjustment for age", OLS_QUADRATIC.label),
    ("lm", OLS.label),
    ("multiple linear regression adjusted for age and sex", OLS.label),
])
def test_method_lines_name_the_quadratic_model_apart_from_the_linear_one(line, label):
    task = {"method": "ols_quadratic", "gold": {"kind": "p_value", "p_value": 0.05, "decision": "reject"},
            "accepted": []}
    named, _ = named_test(task, line)
    assert named.label == label
