"""cluster_fixed_effects pinned to R 4.2.2 on test_regression's dataset of
24 rows in 6 clusters (``d.csv``), and on the same data with the exposure
made constant within the first cluster::

    > d <- read.csv("d.csv")
    > f <- lm(y ~ x + age + sex + factor(cl), data = d)
    > m <- summary(f)$coefficients
    > sprintf("%.17g %.17g %.17g %.17g", m[2, 1], m[2, 2], m[2, 3], m[2, 4]); f$df.residual
    "4.8245331185105318 3.4223037597414114 1.4097325828479563 0.17901512019553262"
    15
    > d$x[d$cl == "S1"] <- 3
    > summary(lm(y ~ x + age + sex + factor(cl), data = d))$coefficients[2, ]
      Estimate Std. Error    t value   Pr(>|t|)
     3.3596464  3.7736992  0.8902793  0.3873725
"""

import pytest

import taskfactory as tf
from taskfactory.errors import DataError

from test_regression import D, ROLES

CLUSTERED = {**ROLES, "cluster": "cl"}


def test_the_within_estimator_is_lm_with_a_dummy_per_cluster():
    res = tf.analyse("cluster_fixed_effects", D, CLUSTERED)
    assert res.estimate == pytest.approx(4.8245331185105318, rel=1e-10)
    assert res.statistic == pytest.approx(1.4097325828479563, rel=1e-10)
    assert res.pvalue == pytest.approx(0.17901512019553262, rel=1e-9)
    assert res.df == (15.0,)
    assert [term.name for term in res.terms] == ["x", "age", "sexmale"]


def test_a_cluster_whose_exposure_is_constant_adds_nothing_but_its_level():
    d = D.assign(x=D["x"].where(D["cl"] != "S1", 3.0))
    res = tf.analyse("cluster_fixed_effects", d, CLUSTERED)
    assert (res.estimate, res.pvalue) == (pytest.approx(3.3596464, abs=5e-7), pytest.approx(0.3873725, abs=5e-7))


def test_an_exposure_constant_within_every_cluster_is_refused():
    d = D.assign(x=D.groupby("cl")["x"].transform("mean"))
    with pytest.raises(DataError, match="'x' is constant within every value of 'cl'"):
        tf.analyse("cluster_fixed_effects", d, CLUSTERED)
