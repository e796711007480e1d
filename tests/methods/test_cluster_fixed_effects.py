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

The accepted within-between model, on the same data with the clusters' levels
of y moved apart (``d2.csv``: y plus -10, 5, 8, -3, 12 and -6 in S1 to S6, so
that the fit is not singular)::

    > d2$.cluster_mean <- ave(d2$x, d2$cl)
    > m <- summary(lmerTest::lmer(y ~ x + .cluster_mean + age + sex + (1 | cl), data = d2))$coefficients
    > sprintf("%.17g %.17g %.17g %.17g %.17g", m[2, 1], m[2, 2], m[2, 3], m[2, 4], m[2, 5])
    "4.2882954186136519 3.4211843502802233 15.015038568331445 1.2534534767944923 0.22920773098950895"
"""

import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition
from taskfactory.errors import DataError
from taskfactory.methods._names import CLUSTER_WITHIN, LINEAR_MIXED, WITHIN_BETWEEN
from taskfactory.use.reward import named_test

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


def test_the_accepted_within_between_model_is_lmer_with_the_cluster_mean():
    levels = {"S1": -10, "S2": 5, "S3": 8, "S4": -3, "S5": 12, "S6": -6}
    d2 = D.assign(y=D["y"] + D["cl"].map(levels))
    family = tf.get_family("cluster_fixed_effects")
    (alt,) = family.accepted
    res = run_test(family, Condition(method=family.name, roles=CLUSTERED), d2, which=alt)
    assert res.estimate == pytest.approx(4.2882954186136519, rel=1e-8)
    assert res.df[0] == pytest.approx(15.015038568331445, rel=1e-8)
    assert res.pvalue == pytest.approx(0.22920773098950895, rel=1e-8)
    assert [term.name for term in res.terms] == ["(Intercept)", "x", ".cluster_mean", "age", "sexmale"]


@pytest.mark.parametrize("line, label", [
    ("Linear regression with school fixed effects", CLUSTER_WITHIN.label),
    ("within estimator (lm with factor(school))", CLUSTER_WITHIN.label),
    ("Mundlak within-between mixed model", WITHIN_BETWEEN.label),
    ("linear mixed model with the cluster mean of homework", WITHIN_BETWEEN.label),
    ("lmer random intercept", LINEAR_MIXED.label),
])
def test_method_lines_name_the_within_tests_apart_from_the_mixed_model(line, label):
    task = {"method": "cluster_fixed_effects", "gold": {"kind": "p_value", "p_value": 0.2, "decision": "fail to reject"},
            "accepted": []}
    named, _ = named_test(task, line)
    assert named.label == label
