"""The tobit family pinned to R 4.2.2 (AER 1.2-10, survival 3.5-3) on one
dataset of 36 rows, 19 of them (53 %) at 0, with a numeric and a two-level
covariate (``d.csv`` below, the columns of ``D``)::

    > library(AER)
    > d <- read.csv("d.csv")
    > p <- function(m, i = 2) sprintf("%.17g %.17g %.17g %.17g", m[i, 1], m[i, 2], m[i, 3], m[i, 4])
    > p(summary(tobit(units ~ hours + age + sex, left = 0, data = d))$coefficients)
    "0.78413987052174594 0.51071673963700881 1.535371390174272 0.12469262718173529"
    > p(summary(lm(units ~ hours + age + sex, data = d))$coefficients)      # the naive test
    "0.48770932196917127 0.28335159793363146 1.7212160634555724 0.094867910847575398"
    > p(summary(tobit(units ~ hours + 1, left = 0, data = d))$coefficients)  # no covariates
    "1.4516940825828883 0.59474679702239053 2.440860698789499 0.014652305451627967"
    > d2 <- d; d2$units <- 0
    > tobit(units ~ hours + age + sex, left = 0, data = d2)                 # every row censored
    Warning message: Ran out of iterations and did not converge
    > d3 <- d; d3$units[d3$sex == "female"] <- 0                            # every female row censored
    > summary(tobit(units ~ hours + age + sex, left = 0, data = d3))$coefficients["sexmale", ]
    9.5734e+01 1.7374e+04 0.0055 0.9956                                    # an estimate heading to infinity
    > d1 <- d; d1$units <- d1$units + 1                                     # no row censored
    > p(summary(tobit(units ~ hours + age + sex, left = 0, data = d1))$coefficients)
    "0.48770932196917072 0.26714644846027874 1.8256253256598576 0.067906718314673181"   # the normal MLE
    > p(summary(tobit(units ~ hours + age + sex, left = 5, data = d))$coefficients)   # 21 rows at or below 5
    "0.59892827808689697 0.48847628622910749 1.2261153611170077 0.22015526600976468"
    > d4 <- d; d4$units <- d4$units - 3                                   # the limit moved with the outcome
    > p(summary(tobit(units ~ hours + age + sex, left = -3, data = d4))$coefficients)
    "0.78413987052174583 0.51071673963700881 1.5353713901742718 0.12469262718173534"
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import taskfactory as tf
from taskfactory import kit
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition
from taskfactory.errors import DataError, InputError
from taskfactory.methods import tobit as tobit_module

D = pd.DataFrame({
    "units": [0.0, 0.0, 25.1, 18.7, 7.7, 0.0, 0.0, 0.0, 0.0, 33.8, 0.0, 0.0, 10.1, 0.0, 15.0, 0.0, 3.9, 23.8, 11.4,
              33.3, 0.0, 18.9, 0.0, 0.0, 0.0, 4.9, 13.8, 0.0, 0.0, 24.2, 6.4, 16.6, 0.0, 0.0, 30.6, 0.0],
    "hours": [33.8, 35.3, 54.9, 40.3, 50.2, 41.5, 37.6, 39.7, 44.1, 44.4, 46.7, 35.2, 40.8, 39.8, 42.8, 35.1, 42.1,
              43.6, 38.7, 48.4, 40.8, 33.6, 28.5, 37.5, 45.8, 53.8, 40.8, 38.4, 37.2, 36.8, 32.7, 39.4, 42.5, 36.6,
              49.8, 39.5],
    "age": [36, 50, 39, 40, 49, 52, 46, 38, 37, 57, 49, 50, 64, 37, 67, 72, 59, 51, 38, 53, 40, 44, 41, 47, 56, 39,
            35, 35, 35, 31, 36, 56, 39, 46, 33, 46],
    "sex": ["male", "female", "male", "male", "male", "female", "female", "male", "female", "male", "female",
            "female", "female", "female", "female", "female", "male", "male", "male", "male", "female", "male",
            "female", "male", "male", "male", "male", "female", "male", "male", "male", "female", "female", "female",
            "male", "female"],
})
ROLES = {"outcome": "units", "exposure": "hours", "covariates": ["age", "sex"]}


def check(res, estimate, se, z, p):
    assert res.estimate == pytest.approx(estimate, rel=1e-6)
    assert res.statistic == pytest.approx(z, rel=1e-6)
    assert res.pvalue == pytest.approx(p, rel=1e-6)
    row = next(term for term in res.terms if term.name == "hours")
    assert row.std_error == pytest.approx(se, rel=1e-6)


def test_heavy_censoring_with_a_factor_covariate_is_aer_tobit():
    assert int((D["units"] == 0).sum()) == 19
    res = tf.analyse("tobit", D, ROLES)
    check(res, 0.78413987052174594, 0.51071673963700881, 1.535371390174272, 0.12469262718173529)
    assert res.statistic_name == "z" and res.df == ()
    assert [term.name for term in res.terms] == ["(Intercept)", "hours", "age", "sexmale"]


def test_no_covariates():
    res = tf.analyse("tobit", D, {**ROLES, "covariates": []})
    check(res, 1.4516940825828883, 0.59474679702239053, 2.440860698789499, 0.014652305451627967)


def test_a_left_role_moves_the_limit_as_r_s_left_argument_does():
    res = tf.analyse("tobit", D, {**ROLES, "left": 5})
    check(res, 0.59892827808689697, 0.48847628622910749, 1.2261153611170077, 0.22015526600976468)
    assert res.method == "Tobit regression (AER::tobit, left = 5), Wald z test of the coefficient"
    shifted = tf.analyse("tobit", D.assign(units=D["units"] - 3.0), {**ROLES, "left": -3.0})
    check(shifted, 0.78413987052174583, 0.51071673963700881, 1.5353713901742718, 0.12469262718173534)
    assert tf.analyse("tobit", D, {**ROLES, "left": 0}).method == tf.analyse("tobit", D, ROLES).method


def test_the_limit_reaches_the_call_the_title_and_both_reference_codes():
    family = tf.get_family("tobit")
    roles = {**ROLES, "left": -2.5}
    assert family.canonical_for(roles) == "summary(AER::tobit(outcome ~ exposure + covariates, left = -2.5))"
    assert family.title_for(roles) == "Tobit regression coefficient (censored at -2.5)"
    assert "left = {left}, data = d" in family.code_for(roles, "r")
    assert "{left}" in family.code_for(roles, "py") and "<= 0" not in family.code_for(roles, "py")
    for lang in ("r", "py"):
        assert family.code_for(ROLES, lang) == family.code_for({**ROLES, "left": 0.0}, lang)
        assert "{left}" not in family.code_for(ROLES, lang)
    with pytest.raises(InputError, match=r"^role 'left' must be a finite number, got 'floor'$"):
        tf.analyse("tobit", D, {**ROLES, "left": "floor"})


def test_the_naive_test_is_lm_on_the_observed_outcome():
    family = tf.get_family("tobit")
    naive = run_test(family, Condition(method="tobit", roles=ROLES), D, which="naive")
    assert naive.pvalue == pytest.approx(0.094867910847575398, rel=1e-9)
    assert naive.estimate == pytest.approx(0.48770932196917127, rel=1e-9)
    assert family.naive_name == tf.get_family("ols_coefficient").test_name


def test_every_or_no_row_censored_and_a_level_all_censored_are_refused():
    """R warns that survreg ran out of iterations when every row is censored, and
    reports an estimate heading to infinity (SE 1.7e4) when every row of one
    level is; with no row censored R gives the normal MLE, which a tobit task
    never needs: all three are redrawn (every row censored is a constant
    outcome, refused as such)."""
    with pytest.raises(DataError, match=r"^'units' has no variation: every analysed row holds 0\.0$"):
        tf.analyse("tobit", D.assign(units=0.0), ROLES)
    with pytest.raises(DataError, match="heads to infinity"):
        tf.analyse("tobit", D.assign(units=np.where(D["sex"] == "female", 0.0, D["units"])), ROLES)
    with pytest.raises(DataError, match="no observation is censored"):
        tf.analyse("tobit", D.assign(units=D["units"] + 1.0), ROLES)


def _params(share, rho=0.5, gamma=0.6, aligned=1):
    return {"confounding": rho, "confounder_effect": gamma, "censoring_z": float(stats.norm.ppf(share)),
            "aligned": aligned, "coefficients": 4, "censored_share": share}


def test_information_without_censoring_is_least_squares_and_falls_with_it():
    family = tf.get_family("tobit")
    assert tobit_module.effect_variance(0.0, _params(1e-12)) == pytest.approx(1.0, rel=1e-6)
    shares = [0.15, 0.3, 0.5]
    variances = [tobit_module.effect_variance(0.0, _params(s)) for s in shares]
    assert 1.0 < variances[0] < variances[1] < variances[2] < 2.5
    # the effect at z = 1.96 grows with the censoring and shrinks as 1 / sqrt(n)
    e = [family.effect_for_z(1.96, 400, _params(s)) for s in shares]
    assert e == sorted(e)
    assert family.effect_for_z(1.96, 1600, _params(0.3)) == pytest.approx(e[1] / 2, rel=0.02)
    assert family.effect_for_z(0.0, 400, _params(0.3)) == 0.0


def test_generate_censors_about_the_drawn_share():
    family = tf.get_family("tobit")
    scen = tf.load_scenarios("tobit")[0]
    rng = np.random.default_rng(3)
    params = {**family.draw_params(scen, 4000, rng), "censored_share": 0.3, "censoring_z": float(stats.norm.ppf(0.3))}
    cond = Condition(method="tobit", roles=scen.roles, n=4000, effect_value=family.medium, params=params,
                     dgp=scen.dgp, columns=scen.columns())
    table = family.generate(cond, rng)
    y = table[scen.roles["outcome"]]
    assert abs(float(np.mean(y == 0)) - 0.3) < 0.04
    assert y.min() == 0.0 and sum(kit.clipped_counts(table, cond.columns).values()) <= 40


def test_linear_siblings_keep_their_outcome_far_above_zero():
    """ols_coefficient, ols_robust and ols_quadratic draw an outcome whose mean
    is at least 15 residual SDs above 0 (ols_robust's error SD reaches 4.5 times
    its mean at the ends of the exposure: the lowest of 4800 rows lies 8 to 12
    SDs below the mean, and more than 15 in fewer than 0.1 % of datasets;
    ols_quadratic's outcome, its hump included and scaled to the linear
    siblings' spread, has its lowest of 4800 rows at most 9 SDs below the mean
    in 1000 datasets), so nothing piles up at 0; every regression scenario's
    outcome range starts at 0."""
    for method in ("ols_coefficient", "ols_robust", "ols_quadratic"):
        for scen in tf.load_scenarios(method):
            mean, sd = scen.dgp["outcome"]
            assert mean >= 15 * sd, (method, scen.id)
            assert scen.variable(scen.roles["outcome"]).range[0] == 0


def test_a_template_that_lacks_a_term_to_rewrite_is_named():
    from taskfactory.family import rewrite

    assert rewrite("left = 0, data = d", tobit_module.LIMIT_TERMS["r"], "tobit") == "left = {left}, data = d"
    with pytest.raises(ValueError, match=r"^tobit's reference template has no 'left = 0,' to rewrite$"):
        rewrite("right = 4, data = d", tobit_module.LIMIT_TERMS["r"], "tobit")
