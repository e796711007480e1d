"""Two-stage least squares (``AER::ivreg``) and the within estimator
(``plm::plm(model = "within")``) of methods._models, pinned to R 4.2.2 (AER
1.2, plm 2.6) on the datasets below::

    > p <- function(m, r) sprintf("%.17g %.17g %.17g %.17g", m[r, 1], m[r, 2], m[r, 3], m[r, 4])
    > d <- data.frame(y = Y, x = X, z = Z, age = AGE)
    > m <- summary(AER::ivreg(y ~ x + age | z + age, data = d))$coefficients; p(m, 2); p(m, 3)
    "0.1173458290668461 0.21762422812035784 0.53921307420765474 0.59415882088571936"
    "0.03221926141119999 0.022732665697762593 1.4173111873268383 0.16782905345500729"
    > p(summary(AER::ivreg(y ~ x | z, data = d))$coefficients, 2)
    "0.048566463485091395 0.227895491722032 0.21310848721978554 0.8327863848362328"
    > q <- data.frame(y = YP, x = XP, w = W, unit = rep(1:8, each = 4), period = rep(1:4, 8))
    > m <- summary(plm::plm(y ~ x + w, data = q, index = c("unit", "period"), model = "within"))$coefficients
    > p(m, 1); p(m, 2)    # df.residual: 22
    "0.49526605389201844 0.12668050118506025 3.9095681597321184 0.00075174596161825286"
    "0.34339519132286561 0.097324043017603432 3.52836956496715 0.0018908348528951931"
"""

import numpy as np
import pytest

from taskfactory.errors import DataError
from taskfactory.methods._models import ivreg_terms, within_terms

Y = [0.17, 1.08, -1.12, 1.22, 2.65, 2.06, 0.86, 1.09, -0.06, 0.06, 0.02, -0.2, 0.47, 1.0, 0.2, 0.63, 0.51, 2.34, 1.27,
     1.01, 1.57, 0.83, 2.36, 1.83, 2.06, 0.99, 1.49, 1.62, 0.57, 0.27]
X = [-0.84, 1.58, -2.14, 0.77, 0.82, -0.03, -1.32, -1.0, -0.28, 0.83, -0.7, -0.04, -1.16, -0.45, 0.47, -0.63, 1.1,
     1.79, -0.53, 1.66, 0.76, -0.44, 0.64, 0.26, 0.31, 0.38, 0.98, 1.32, -0.86, 0.04]
Z = [0.36, 1.51, -1.79, 1.69, -0.05, -0.8, -0.8, -1.08, -0.22, 0.83, 0.58, 0.64, -1.69, -1.57, 1.55, 0.97, 2.18, 1.21,
     -1.02, 1.29, 0.63, 0.21, -0.82, 0.0, -0.15, 0.89, 0.12, 1.58, -0.77, 0.47]
AGE = [44, 33, 31, 48, 44, 39, 43, 35, 42, 35, 42, 48, 37, 47, 32, 38, 29, 39, 41, 38, 38, 51, 51, 30, 49, 26, 34, 39,
       41, 32]
YP = [1.97, 3.79, 3.19, 0.88, 1.55, 1.17, 1.3, 1.71, 1.17, 1.41, 1.96, 1.77, 1.39, 1.6, 3.45, 2.1, 2.85, 3.83, 2.55,
      1.5, 0.49, 1.05, 1.42, 1.63, 3.17, 3.86, 3.65, 2.88, 0.26, 0.06, -0.11, -0.01]
XP = [-0.22, 1.23, 0.89, -0.48, -0.25, -0.85, 0.71, 0.4, -0.99, 0.12, -0.65, -0.35, -0.06, -0.69, 0.3, 0.33, 1.2, 1.87,
      0.5, -0.71, -0.89, -0.2, -0.38, 0.18, 1.86, 0.94, 0.95, 0.07, 0.17, -1.12, -1.94, -1.97]
W = [-0.41, 1.56, 0.77, -1.69, -0.12, 0.26, 0.63, 0.34, -0.64, 0.41, -0.55, -2.24, -0.71, -0.69, 0.95, 1.06, -1.05, 0.17,
     0.09, -1.44, -2.05, -0.09, 0.14, -0.59, -2.71, -0.03, -0.58, -0.89, -0.32, -1.13, 0.56, 0.01]
ONES = np.ones(30)


def check(term, estimate, se, t, p, df):
    assert (term.estimate, term.std_error, term.statistic) == pytest.approx((estimate, se, t), rel=1e-10)
    assert term.pvalue == pytest.approx(p, rel=1e-9)
    assert term.df == df


def test_ivreg_with_an_exogenous_covariate():
    terms = ivreg_terms(Y, np.column_stack([ONES, X, AGE]), ["(Intercept)", "x", "age"], np.column_stack([ONES, Z, AGE]))
    check(terms[1], 0.1173458290668461, 0.21762422812035784, 0.53921307420765474, 0.59415882088571936, 27)
    check(terms[2], 0.03221926141119999, 0.022732665697762593, 1.4173111873268383, 0.16782905345500729, 27)


def test_ivreg_just_identified_without_covariates():
    terms = ivreg_terms(Y, np.column_stack([ONES, X]), ["(Intercept)", "x"], np.column_stack([ONES, Z]))
    check(terms[1], 0.048566463485091395, 0.227895491722032, 0.21310848721978554, 0.8327863848362328, 28)


def test_ivreg_refuses_too_few_or_collinear_instruments():
    with pytest.raises(DataError, match=r"^2 instruments cannot identify 3 coefficients$"):
        ivreg_terms(Y, np.column_stack([ONES, X, AGE]), ["(Intercept)", "x", "age"], np.column_stack([ONES, Z]))
    with pytest.raises(DataError, match="collinear"):
        ivreg_terms(Y, np.column_stack([ONES, X]), ["(Intercept)", "x"], np.column_stack([ONES, np.ones(30)]))


def test_within_estimator_is_plm_within():
    unit = np.repeat(np.arange(1, 9), 4)
    terms = within_terms(YP, np.column_stack([XP, W]), ["x", "w"], unit)
    check(terms[0], 0.49526605389201844, 0.12668050118506025, 3.9095681597321184, 0.00075174596161825286, 22)
    check(terms[1], 0.34339519132286561, 0.097324043017603432, 3.52836956496715, 0.0018908348528951931, 22)


def test_within_refuses_a_regressor_constant_within_units():
    unit = np.repeat(np.arange(1, 9), 4)
    with pytest.raises(DataError, match="collinear"):
        within_terms(YP, np.column_stack([XP, unit * 1.0]), ["x", "unit_level"], unit)
