"""taskfactory.methods._tobit pinned to R 4.2.2 (AER 1.2-10, survival 3.5-3).

The data below are inlined; R read the same columns and printed each coefficient row with
``sprintf("%.15g", ...)``::

    library(AER)
    tb <- data.frame(y = YT, x1 = T1, x2 = T2)      # 14 of the 40 rows at 0
    t <- tobit(y ~ x1 + x2, left = 0, data = tb)
    summary(t)$coefficients                         # Estimate, Std. Error, z value, Pr(>|z|)
    c(t$loglik[2], t$scale)
    tb$y2 <- tb$y + 1
    summary(tobit(y2 ~ x1 + x2, left = 1, data = tb))$coefficients

The expected rows are (term, estimate, std. error, z, p); the ``Log(scale)`` row is in the dict.
"""

import numpy as np
import pytest

from taskfactory.errors import DataError
from taskfactory.methods._tobit import tobit_terms

REL = 1e-6

T1 = [
    0.03, 1.36, 1.22, -0.51, -0.3, -0.53, 0.57, -0.06, 0.75, -1.85, 1.57, -0.1, 0.68, -0.14,
    -0.38, 0.46, 0.82, -0.2, -0.15, 0.69, -0.87, -1.51, 0.39, -0.67, -1.92, -0.81, -0.47, -1.19,
    -1.49, 0.04, 0.9, -0.23, -0.74, 0.38, 0.72, -0.3, 0.54, 1.04, -0.21, -0.81,
]
T2 = [
    0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0,
    0, 1, 0, 0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0,
]
YT = [
    0.83, 0.98, 3.13, 0.0, 0.73, 1.28, 0.0, 0.55, 0.19, 0.0, 3.67, 2.34, 0.0, 0.21,
    0.8, 2.35, 1.98, 0.0, 1.08, 1.44, 0.0, 0.0, 1.6, 0.67, 0.0, 0.03, 0.0, 0.0,
    0.41, 0.74, 0.0, 2.05, 0.84, 3.31, 1.54, 0.0, 0.0, 2.56, 3.3, 0.0,
]

R_TOBIT = [
    ("(Intercept)", 0.627430390835905, 0.269213280860896, 2.33060712617704, 0.0197740853835795),
    ("x1", 1.05226265570054, 0.292787461074923, 3.5939471309233, 0.000325705954488727),
    ("x2", 0.213413898978891, 0.497674871583803, 0.428821930067961, 0.668052818197395),
]
R_LOG_SCALE = (0.245101601645009, 0.147678066792011)
R_LOGLIK, R_SCALE = -53.7940883665113, 1.27775112822661
R_TOBIT_LEFT1 = [
    ("(Intercept)", 1.6274303908359, 0.269213280860896, 6.04513412425893, 1.49285759204656e-09),
    ("x1", 1.05226265570054, 0.292787461074923, 3.5939471309233, 0.000325705954488727),
    ("x2", 0.213413898978891, 0.497674871583804, 0.42882193006796, 0.668052818197395),
]
NAMES = ["(Intercept)", "x1", "x2"]


def _design():
    return np.array(YT), np.column_stack([np.ones(40), T1, T2])


def _check(terms, expected):
    assert [t.name for t in terms] == [row[0] for row in expected]
    for t, (_, est, se, z, p) in zip(terms, expected):
        assert t.estimate == pytest.approx(est, rel=REL)
        assert t.std_error == pytest.approx(se, rel=REL)
        assert t.statistic == pytest.approx(z, rel=REL)
        assert t.pvalue == pytest.approx(p, rel=REL)
        assert t.df is None


def test_tobit_matches_r():
    y, X = _design()
    terms, info = tobit_terms(y, X, NAMES)
    _check(terms, R_TOBIT)
    assert info["log_scale"] == pytest.approx(R_LOG_SCALE[0], rel=REL)
    assert info["se_log_scale"] == pytest.approx(R_LOG_SCALE[1], rel=REL)
    assert info["loglik"] == pytest.approx(R_LOGLIK, rel=REL)
    assert info["scale"] == pytest.approx(R_SCALE, rel=REL)
    assert info["n_censored"] == 14


def test_tobit_other_limit():
    y, X = _design()
    terms, _ = tobit_terms(y + 1.0, X, NAMES, left=1.0)
    _check(terms, R_TOBIT_LEFT1)


def test_values_below_the_limit_are_censored_at_it():
    y, X = _design()
    y = np.where(y == 0.0, -np.linspace(0.1, 2.0, 40), y)  # AER: ifelse(y <= left, left, y)
    terms, _ = tobit_terms(y, X, NAMES)
    _check(terms, R_TOBIT)


def test_no_or_all_censored_raise():
    y, X = _design()
    with pytest.raises(DataError, match="no observation is censored"):
        tobit_terms(y + 5.0, X, NAMES)
    with pytest.raises(DataError, match="every observation is censored"):
        tobit_terms(np.zeros(40), X, NAMES)


def test_estimate_heading_to_infinity_raises():
    # every row with x2 = 1 censored: survreg stops at x2 = -9.1 with an SE of 2.0e3 and p = 0.996
    y, X = _design()
    y = np.where(X[:, 2] == 1.0, 0.0, y)
    with pytest.raises(DataError, match="heads to infinity"):
        tobit_terms(y, X, NAMES)
