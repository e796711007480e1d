"""cox_ph pinned to R 4.2.2 (survival 3.5-3).

R read the data frames below as ``A <- data.frame(time = c(14, 16, ...), event = c(...), arm = c("new", ...),
age = c(...), stage = c(...))`` (likewise ``B``) and printed every number with ``sprintf("%.17g", ...)``
or ``print(..., digits = 17)``. Times are whole weeks, so many tie (A: 60 subjects on 23 distinct times,
28 % censored; B: 90 subjects on 18 distinct times, 56 % censored) and Efron's handling of ties
matters (R's Breslow estimates, quoted, differ). ``VETERAN`` is ``survival::veteran`` (137 men with
lung cancer), columns time, status, trt, karno and age as R prints them.
"""

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.condition import Condition
from taskfactory.errors import DataError
from taskfactory.make.analysis import read_csv_text

from survival_data import A, B, ROLES

REL = 1e-6
VETERAN = pd.DataFrame(dict(
    time=[72, 411, 228, 126, 118, 10, 82, 110, 314, 100, 42, 8, 144, 25, 11, 30, 384, 4, 54, 13, 123, 97, 153, 59,
        117, 16, 151, 22, 56, 21, 18, 139, 20, 31, 52, 287, 18, 51, 122, 27, 54, 7, 63, 392, 10, 8, 92, 35, 117,
        132, 12, 162, 3, 95, 177, 162, 216, 553, 278, 12, 260, 200, 156, 182, 143, 105, 103, 250, 100, 999, 112, 87,
        231, 242, 991, 111, 1, 587, 389, 33, 25, 357, 467, 201, 1, 30, 44, 283, 15, 25, 103, 21, 13, 87, 2, 20, 7,
        24, 99, 8, 99, 61, 25, 95, 80, 51, 29, 24, 18, 83, 31, 51, 90, 52, 73, 8,  36, 48, 7, 140, 186, 84, 19, 45,
        80, 52, 164, 19, 53, 15, 43, 340, 133, 111, 231, 378, 49],
    status=[1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1,
        0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
        1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
    trt=[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2,
        2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
        2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2],
    karno=[60, 70, 60, 60, 70, 20, 40, 80, 50, 70, 60, 40, 30, 80, 70, 60, 60, 40, 80, 60, 40, 60, 60, 30, 80, 30,
        50, 60, 80, 40, 20, 80, 30, 75, 70, 60, 30, 60, 80, 60, 70, 50, 50, 40, 40, 20, 70, 40, 80, 80, 50, 80, 30,
        80, 50, 80, 50, 70, 60, 40, 80, 80, 70, 90, 90, 80, 80, 70, 60, 90, 80, 80, 50, 50, 70, 70, 20, 60, 90, 30,
        20, 70, 90, 80, 50, 70, 60, 90, 50, 30, 70, 20, 30, 60, 40, 30, 20, 60, 70, 80, 85, 70, 70, 70, 50, 30, 40,
        40, 40, 99, 80, 60, 60, 60, 60, 50, 70, 10, 40, 70, 90, 80, 50, 40, 40,  60, 70, 30, 60, 30, 60, 80, 75, 60,
        70, 80, 30],
    age=[69, 64, 38, 63, 65, 49, 69, 68, 43, 70, 81, 63, 63, 52, 48, 61, 42, 35, 63, 56, 55, 67, 63, 65, 46, 53, 69,
        68, 43, 55, 42, 64, 65, 65, 55, 66, 60, 67, 53, 62, 67, 72, 48, 68, 67, 61, 60, 62, 38, 50, 63, 64, 43, 34,
        66, 62, 52, 47, 63, 68, 45, 41, 66, 62, 60, 66, 38, 53, 37, 54, 60, 48, 52, 70, 50, 62, 65, 58, 62, 64, 63,
        58, 64, 52, 35, 63, 70, 51, 40, 69, 36, 71, 62, 60, 44, 54, 66, 49, 72, 68, 62, 71, 70, 61, 71, 59, 67, 60,
        69, 57, 39, 62, 50, 43, 70, 66, 61, 81, 58, 63, 60, 62, 42, 69, 63,  45, 68, 39, 66, 63, 49, 64, 65, 64, 67,
        65, 37],
))


def check(res, expected):
    """The coefficient table matches R's rows (term, coef, se(coef), z, Pr(>|z|)); the gold is the group's."""
    assert [t.name for t in res.terms] == [row[0] for row in expected]
    for t, (name, est, se, z, p) in zip(res.terms, expected):
        assert (t.estimate, t.std_error, t.statistic, t.pvalue) == pytest.approx((est, se, z, p), rel=REL), name
    assert res.target == expected[0][0] and res.pvalue == res.terms[0].pvalue and res.statistic_name == "z"


def test_cox_with_ties_and_a_factor_covariate():
    """
    > print(summary(coxph(Surv(time, event) ~ arm + age + stage, data = A))$coefficients, digits = 17)
                             coef           exp(coef)             se(coef)  z                     Pr(>|z|)
    armnew  -0.901344721998788456 0.40602330400572412 0.343457073911126731 -2.6243300559650762 0.0086819607038536983
    age      0.018340767749108783 1.01850999261809538 0.015033789166260299  1.2199697325987646 0.2224763490651498754
    stageIV  0.648753947574110423 1.91315545117856933 0.344010005128306207  1.8858577887353687 0.0593141210535292132
    (ties = "breslow" gives armnew -0.874204113719800002, p 0.010976830699816271: Efron's ties matter)
    """
    res = tf.analyse("cox_ph", A, ROLES)
    check(res, [
        ("armnew", -0.901344721998788456, 0.343457073911126731, -2.6243300559650762, 0.0086819607038536983),
        ("age", 0.018340767749108783, 0.015033789166260299, 1.2199697325987646, 0.2224763490651498754),
        ("stageIV", 0.648753947574110423, 0.344010005128306207, 1.8858577887353687, 0.0593141210535292132),
    ])
    assert res.pvalue != pytest.approx(0.010976830699816271, rel=0.01)


def test_cox_with_heavy_censoring():
    """56 % censored.
    > print(summary(coxph(Surv(time, event) ~ arm + age + stage, data = B))$coefficients, digits = 17)
    armnew  -0.972841055548497868 0.37800757058952239 0.357464532297860960 -2.7215037231662138 0.0064985653067004372
    age      0.019726778890127274 1.01992263755977253 0.013272550475330429  1.4862839607800522 0.1372040273644543062
    stageIV  0.629907469197143910 1.87743685048774833 0.332732382750655253  1.8931354501469948 0.0583398588825130571
    """
    res = tf.analyse("cox_ph", B, ROLES)
    check(res, [
        ("armnew", -0.972841055548497868, 0.357464532297860960, -2.7215037231662138, 0.0064985653067004372),
        ("age", 0.019726778890127274, 0.013272550475330429, 1.4862839607800522, 0.1372040273644543062),
        ("stageIV", 0.629907469197143910, 0.332732382750655253, 1.8931354501469948, 0.0583398588825130571),
    ])


def test_naive_is_the_log_rank_test():
    """
    > s <- survdiff(Surv(time, event) ~ arm, data = A); c(s$chisq, s$pvalue)
    4.8589071200885554 0.027503753051927298
    """
    res = tf.get_family("cox_ph").naive(Condition(method="cox_ph", roles=ROLES), A)
    assert res.statistic == pytest.approx(4.8589071200885554, rel=REL)
    assert res.pvalue == pytest.approx(0.027503753051927298, rel=REL)


def test_veteran_lung_cancer_trial():
    """survival::veteran, the treatment as text:
    > v <- veteran; v$treatment <- ifelse(v$trt == 1, "standard", "test")
    > print(summary(coxph(Surv(time, status) ~ treatment + karno + age, data = v))$coefficients, digits = 17)
                                    coef  exp(coef)            se(coef)                     z   Pr(>|z|)
    treatmenttest  0.1895464419233778564 1.20870125709712695 0.1855306650230591770  1.02164481488717551 3.0694903877254937e-01
    karno         -0.0344438968387490926 0.96614254181683690 0.0052324149005547682 -6.58279159687760362 4.6169609792316250e-11
    age           -0.0038644178739745743 0.99614303937970361 0.0091873846581506605 -0.42062219203440293 6.7403098605855960e-01
    > s <- survdiff(Surv(time, status) ~ treatment, data = v); c(s$chisq, s$pvalue)
    0.0082273432023507696 0.92772723334007379
    """
    data = VETERAN.assign(treatment=np.where(VETERAN["trt"] == 1, "standard", "test"))
    roles = {"time": "time", "event": "status", "group": "treatment", "covariates": ["karno", "age"]}
    check(tf.analyse("cox_ph", data, roles), [
        ("treatmenttest", 0.1895464419233778564, 0.1855306650230591770, 1.02164481488717551, 3.0694903877254937e-01),
        ("karno", -0.0344438968387490926, 0.0052324149005547682, -6.58279159687760362, 4.6169609792316250e-11),
        ("age", -0.0038644178739745743, 0.0091873846581506605, -0.42062219203440293, 6.7403098605855960e-01),
    ])
    assert tf.analyse("log_rank", data, roles).pvalue == pytest.approx(0.92772723334007379, rel=REL)


def test_monotone_likelihood_is_refused():
    """Every death has the highest score of its risk set, so coef(score) runs to infinity:
    > C <- data.frame(time = 1:40, event = rep(c(1, 1, 0, 1), 10), arm = rep(c("ctl", "new"), 20),
    +                 score = 100 - (1:40))
    > coxph(Surv(time, event) ~ arm + score, data = C)
    Warning message: In coxph.fit(...) : Ran out of iterations and did not converge
    (coef(score) 16.985, se 929.04)
    """
    data = pd.DataFrame({"time": np.arange(1, 41), "event": [1, 1, 0, 1] * 10, "arm": ["ctl", "new"] * 20,
                         "score": 100 - np.arange(1, 41)})
    roles = {"time": "time", "event": "event", "group": "arm", "covariates": ["score"]}
    with pytest.raises(DataError):
        tf.analyse("cox_ph", data, roles)


def test_too_few_events_in_a_group_are_refused():
    few = A.copy()
    few.loc[np.flatnonzero((few["arm"] == "new") & (few["event"] == 1))[:-4], "event"] = 0
    with pytest.raises(DataError, match="group 'new' has 4 events, fewer than 5"):
        tf.analyse("cox_ph", few, ROLES)


def test_generated_groups_differ_on_the_covariates():
    """The cox_ph data: the prognostic score differs between the groups (confounding a look can see)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from conftest import dataset, small_grid

    grid = small_grid("cox_ph", n=400)
    scen = tf.load_scenarios("cox_ph")[0]
    _, ds = dataset(grid, "cox_ph", scen.id, 400, "null", seed=1)
    data = read_csv_text(ds.csv_text)
    age = data.groupby(scen.roles["group"])["age"].mean()
    assert abs(age.iloc[0] - age.iloc[1]) > 2.0  # years, with an SD of 9 in each group
    assert any("Mean 'age' by 'regimen'" in h for h in ds.hints)
