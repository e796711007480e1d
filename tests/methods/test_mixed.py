"""taskfactory.methods._mixed pinned to R 4.2.2 (lme4 1.1-31, lmerTest 3.1-3, nloptr 2.0.3 on NLopt 2.7.1).

The data below are inlined; R read the same columns and printed each coefficient row with
``sprintf("%.15g", ...)``::

    library(lmerTest)
    mx <- data.frame(y = Y1, expo = rep(EXPO_G, each = 5), x = X1, g = rep(1:8, each = 5))
    f <- lmer(y ~ expo + x + (1 | g), mx)
    summary(f)$coefficients                       # Estimate, Std. Error, df, t value, Pr(>|t|)
    c(sigma(f)^2, VarCorr(f)$g[1], getME(f, "theta"), REMLcrit(f)); f@optinfo$feval
    # the exact REML optimum, for contrast:
    getME(update(f, control = lmerControl(optCtrl = list(xtol_abs = 1e-12, ftol_abs = 1e-14))), "theta")

    d <- data.frame(y = Y3, arm = rep(ARM_G, SIZES2), age = AGE, g = rep(1:10, SIZES2))
    f3 <- lmer(y ~ arm + age + (1 | g), d)       # the same two tables

    sg <- data.frame(y = Y2, expo = rep(EXPO_G, each = 5), x = X2, g = rep(1:8, each = 5))
    lmer(y ~ expo + x + (1 | g), sg)              # boundary (singular) fit: see help('isSingular')

The expected rows are (term, estimate, std. error, df, t, p).
"""

import math

import numpy as np
import pandas as pd
import pytest

from taskfactory.errors import DataError
from taskfactory.methods._mixed import _exact_theta, _nloptwrap, _Reml, lmer_terms
from taskfactory.methods._models import model_matrix

REL = 1e-5

EXPO_G = [1.03, 1.64, 1.15, -0.97, -1.39, 0.07, 0.86, 0.51]  # the exposure of clusters 1..8 (5 rows each)
X1 = [
    1.81, 0.75, 0.64, -0.73, -1.11, 1.48, 0.05, 0.81, -1.38, -0.44, -1.29, -0.78, 0.9, -1.48,
    -0.53, 0.16, -0.67, -0.25, -0.22, 0.42, -0.43, 0.27, 0.06, 0.42, 0.22, 1.66, -0.66, 1.2,
    -0.4, -0.96, 1.21, -0.44, -0.39, -1.39, -2.1, 0.63, -1.17, 0.78, 1.85, -0.11,
]
Y1 = [
    0.57, 0.96, 1.58, 0.21, -0.34, 2.13, 1.69, 1.95, 1.3, 3.27, 0.98, 2.87, 3.08, 1.85,
    1.26, -0.18, 1.91, 0.21, 0.66, 1.04, 1.06, 0.05, -0.41, 0.29, 0.01, 3.56, 2.04, 2.83,
    2.1, 2.95, 2.47, 1.87, 3.26, 1.87, 2.05, 1.4, 1.43, 2.62, 1.29, 1.14,
]
X2 = [
    -0.43, -0.3, 0.35, -0.12, -0.2, -1.11, -0.01, -0.44, 1.17, 0.65, -0.02, 0.67, -0.34, 1.05,
    -0.01, 0.58, -1.29, 0.35, -1.69, -2.04, -0.3, -0.9, 0.16, 2.24, -0.83, -0.62, 0.21, 0.49,
    -0.18, -0.21, 0.7, 0.52, -1.03, -0.08, 0.04, -1.05, 0.26, -0.86, 0.97, 0.19,
]
Y2 = [
    0.11, 0.06, -1.23, 0.08, 1.36, -1.55, 0.86, 0.12, -0.64, 2.0, 0.76, -1.2, 0.07, 0.58,
    -0.19, 0.68, -0.07, 0.67, 1.44, -0.68, 0.2, -0.46, 0.13, -1.19, -0.58, -0.2, 0.9, 1.15,
    -1.32, -0.79, 0.65, -1.99, -0.46, -0.1, 1.26, 0.69, -0.33, -0.37, -0.25, 1.52,
]
ARM_G = ["treated", "control", "control", "control", "treated", "treated", "treated", "control", "treated",
         "control"]  # the arm of clusters 1..10
SIZES2 = [7, 5, 6, 5, 3, 5, 7, 7, 7, 6]
AGE = [
    32, 35, 40, 34, 38, 67, 39, 59, 22, 35, 55, 43, 64, 42, 51, 49, 50, 53, 46, 30,
    23, 33, 25, 26, 34, 50, 37, 59, 68, 37, 32, 54, 49, 58, 51, 34, 66, 49, 56, 54,
    58, 58, 41, 22, 44, 65, 27, 59, 53, 55, 31, 24, 33, 51, 39, 33, 40, 56,
]
Y3 = [
    4.24, 3.55, 3.37, 3.88, 4.01, 5.14, 3.37, 3.01, 0.64, 3.5, 4.39, 1.4, 3.83, 2.52,
    3.13, 3.02, 4.18, 3.63, 4.34, 4.81, 4.51, 4.02, 4.79, 5.32, 6.94, 5.87, 5.33, 3.3,
    4.14, 5.22, 4.87, 5.92, 3.71, 4.84, 2.43, 3.57, 4.94, 4.76, 3.58, 5.03, 2.75, 2.91,
    4.14, 2.73, 5.11, 4.67, 3.17, 2.09, 3.0, 3.95, 2.32, 3.03, 2.16, 1.57, 0.93, 2.83,
    2.12, 2.61,
]

R_MX = [
    ("(Intercept)", 1.3469122406741, 0.313057924101172, 5.96372821790892, 4.30243778221316, 0.00515058838246985),
    ("expo", 0.506815554082442, 0.296067818756349, 5.97167164348306, 1.7118225013828, 0.138006948415791),
    ("x", 0.214481466558695, 0.118888741542795, 32.2869931086883, 1.80405195458723, 0.0805602967529655),
]
R_MX_INFO = {"sigma2": 0.462217991175588, "tau2": 0.599486776051913, "theta": 1.13884961911788,
             "reml": 99.3776944326677}
R_MX_FEVAL = 15
R_MX_EXACT_THETA = 1.13889592343821

R_ARM = [
    ("(Intercept)", 2.57692553072918, 0.634498188605407, 23.3445543852068, 4.06135994870706, 0.000471558870218368),
    ("armtreated", 1.09491232938877, 0.649150172811246, 7.40642628116974, 1.68668572427099, 0.133168997782765),
    ("age", 0.0155980591563033, 0.010186923386556, 49.7031706818259, 1.53118449647796, 0.132064365522073),
]
R_ARM_INFO = {"sigma2": 0.800508731229096, "tau2": 0.907711307640698, "theta": 1.06485588702901,
              "reml": 175.511213443717}


def _mx(y=Y1, x=X1):
    g = np.repeat(np.arange(1, 9), 5)
    X = np.column_stack([np.ones(40), np.repeat(EXPO_G, 5), x])
    return np.array(y), X, ["(Intercept)", "expo", "x"], g


def _check(terms, expected):
    assert [t.name for t in terms] == [row[0] for row in expected]
    for t, (_, est, se, df, tval, p) in zip(terms, expected):
        assert t.estimate == pytest.approx(est, rel=REL)
        assert t.std_error == pytest.approx(se, rel=REL)
        assert t.df == pytest.approx(df, rel=REL)
        assert t.statistic == pytest.approx(tval, rel=REL)
        assert t.pvalue == pytest.approx(p, rel=REL)


def test_lmer_matches_r():
    terms, info = lmer_terms(*_mx())
    _check(terms, R_MX)
    for key, value in R_MX_INFO.items():
        assert info[key] == pytest.approx(value, rel=REL)
    assert info["iterations"] == R_MX_FEVAL
    assert info["n_clusters"] == 8 and info["optimum"] == "nloptwrap"


def test_lmer_follows_lme4s_optimizer_not_the_optimum():
    # lme4's BOBYQA stops 4e-5 (relative) short of the REML optimum here; the fit follows lme4.
    y, X, _names, g = _mx()
    exact, _ = _exact_theta(_Reml(y, X, g - 1, 8))
    assert exact == pytest.approx(R_MX_EXACT_THETA, rel=1e-8)
    _terms, info = lmer_terms(*_mx())
    assert abs(info["theta"] / exact - 1.0) > 1e-5


# NLopt 2.7.1's own BOBYQA (libnlopt through ctypes, with lme4's options: lower bound 0, nloptr's xtol_rel 1e-4,
# xtol_abs = ftol_abs = 1e-8, NLopt's default initial step) evaluated these points, in this order:
NLOPT_TRACES = [
    (lambda t: (t - 0.3) ** 2 + 0.1 * t**4, 1.7, 0.2948712352010858, 3,
     [1.7, 2.9749999999999996, 0.42500000000000004, 0.6866220735785953, 0.17000000000000015, 0.294155216493021,
      0.306905216493021, 0.29479930135693033, 0.29352430135693036, 0.2948712352010858]),
    (lambda t: (t + 0.2) ** 2 + 5.0, 0.8, 0.0, 4,
     [0.8, 1.4000000000000001, 0.19999999999999996, 0.0, 0.06000000000000005, 0.006000000000000002,
      0.003000000000021639, 6.000000000000002e-05, 3.00000000000002e-05, 0.0]),
    (lambda t: 1000.0 + 1e-3 * math.log1p((t - 2.5) ** 2), 0.4, 2.5000021950114735, 4,
     [0.4, 0.7000000000000001, 0.09999999999999998, 1.0, 1.6, 2.8000000000000003, 3.451630219865829,
      2.5057078451378203, 2.53570784513782, 2.4757078451378205, 2.5000021950114735, 2.5030021950114736,
      2.4997021950114733, 2.5000321950114737, 2.5000001260459563]),
]


@pytest.mark.parametrize("fun, x0, xmin, status, trace", NLOPT_TRACES)
def test_bobyqa_port_replays_nlopt(fun, x0, xmin, status, trace):
    seen = []

    def f(t):
        seen.append(t)
        return fun(t)

    x, _fx, evals, rc = _nloptwrap(f, x0)
    assert seen == pytest.approx(trace, rel=1e-12, abs=1e-300)
    assert (x, evals, rc) == (pytest.approx(xmin, rel=1e-12), len(trace), status)


def test_lmer_with_a_text_factor_from_model_matrix():
    data = pd.DataFrame({"y": Y3, "arm": np.repeat(ARM_G, SIZES2), "age": AGE,
                         "g": np.repeat(np.arange(1, 11), SIZES2)})
    X, names = model_matrix(data, ["arm", "age"])
    terms, info = lmer_terms(data["y"], X, names, data["g"])
    _check(terms, R_ARM)
    for key, value in R_ARM_INFO.items():
        assert info[key] == pytest.approx(value, rel=REL)


def test_cluster_labels_may_be_text_in_any_order():
    y, X, names, g = _mx()
    labels = np.array(list("hgfedcba"))[g - 1]
    order = np.random.default_rng(3).permutation(40)
    terms, _ = lmer_terms(y[order], X[order], names, labels[order])
    _check(terms, R_MX)


def test_singular_fit_raises():
    with pytest.raises(DataError, match="singular"):
        lmer_terms(*_mx(Y2, X2))


def test_too_few_clusters_raise():
    y, X, names, _g = _mx()
    with pytest.raises(DataError, match="at least 2 clusters"):
        lmer_terms(y, X[:, [0, 2]], names[::2], np.ones(40))
    with pytest.raises(DataError, match="number of clusters"):
        lmer_terms(y, X, names, np.arange(40))


def test_badly_scaled_predictor_raises():
    y, X, names, g = _mx()
    X = X.copy()
    X[:, 2] *= 5000.0
    with pytest.raises(DataError, match="different scales"):
        lmer_terms(y, X, names, g)
