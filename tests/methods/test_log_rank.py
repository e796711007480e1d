"""log_rank pinned to R 4.2.2 (survival 3.5-3).

R read the data frames below as ``A <- data.frame(time = c(14, 16, ...), event = c(...), arm = c("new", ...),
age = c(...), stage = c(...))`` (likewise ``B``) and printed every number with ``sprintf("%.17g", ...)``
or ``print(..., digits = 17)``. Times are whole weeks, so many tie (A: 60 subjects on 23 distinct times,
28 % censored; B: 90 subjects on 18 distinct times, 56 % censored).
"""

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.condition import Condition
from taskfactory.errors import DataError

REL = 1e-6
ROLES = {"time": "time", "event": "event", "group": "arm", "covariates": ["age", "stage"]}

A = pd.DataFrame(dict(
    time=[14, 16, 31, 2, 14, 3, 21, 7, 14, 3, 7, 4, 1, 6, 20, 10, 15, 1, 3, 37, 11, 4, 8, 16, 18, 6, 11, 3, 27, 11,
        8, 21, 5, 12, 4, 8, 17, 2, 7, 9, 8, 11, 10, 10, 2, 1, 7, 11, 7, 19, 8, 10, 18, 1, 6, 6, 8, 4, 16, 17],
    event=[1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1,
        1, 1, 0, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1],
    arm=["new", "ctl", "new", "ctl", "new", "ctl", "ctl", "ctl", "ctl", "ctl", "ctl", "new", "ctl", "new", "new",
        "ctl", "new", "new", "ctl", "new", "new", "ctl", "ctl", "new", "ctl", "ctl", "new", "new", "ctl", "ctl",
        "new", "new", "ctl", "ctl", "ctl", "ctl", "ctl", "new", "new", "new", "new", "new", "ctl", "new", "new",
        "ctl", "new", "ctl", "ctl", "new", "ctl", "ctl", "new", "new", "new", "ctl", "new", "ctl", "new", "new"],
    age=[70, 74, 48, 63, 72, 50, 53, 73, 63, 60, 66, 60, 79, 70, 42, 45, 61, 72, 42, 67, 70, 71, 74, 47, 62, 72, 54,
        47, 59, 43, 48, 74, 66, 74, 73, 75, 52, 58, 64, 50, 76, 40, 73, 65, 50, 68, 56, 73, 79, 51, 58, 48, 67, 65,
        73, 72, 79, 78, 75, 46],
    stage=["III", "III", "IV", "III", "IV", "III", "III", "III", "III", "III", "IV", "III", "IV", "III", "IV",
        "III", "IV", "IV", "IV", "III", "IV", "IV", "IV", "IV", "IV", "IV", "III", "IV", "III", "III", "IV", "III",
        "III", "III", "IV", "III", "IV", "III", "IV", "IV", "IV", "IV", "III", "III", "IV", "IV", "IV", "III",
        "III", "III", "III", "III", "IV", "IV", "IV", "IV", "IV", "IV", "IV", "IV"],
))
B = pd.DataFrame(dict(
    time=[10, 2, 5, 6, 7, 6, 8, 10, 2, 20, 6, 3, 1, 8, 4, 17, 1, 6, 3, 3, 4, 10, 1, 1, 1, 8, 6, 1, 3, 2, 10, 3, 2,
        5, 11, 6, 3, 4, 10, 8, 4, 1, 4, 2, 5, 2, 2, 10, 11, 5, 3, 1, 6, 1, 2, 3, 2, 6, 4, 4, 3, 16, 9, 5, 12, 1, 13,
        19, 2, 7, 14, 2, 9, 2, 3, 5, 7, 1, 17, 5, 1, 1, 4, 6, 2, 2, 10, 6, 5, 5],
    event=[1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 0,
        1, 1, 0, 1, 1, 1, 0, 0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0],
    arm=["ctl", "ctl", "new", "ctl", "new", "new", "new", "new", "new", "new", "new", "new", "new", "ctl", "new",
        "new", "ctl", "ctl", "new", "ctl", "ctl", "ctl", "ctl", "new", "new", "new", "ctl", "ctl", "ctl", "new",
        "ctl", "new", "new", "ctl", "ctl", "new", "new", "ctl", "ctl", "ctl", "ctl", "ctl", "ctl", "ctl", "ctl",
        "ctl", "ctl", "new", "ctl", "new", "ctl", "new", "new", "ctl", "ctl", "ctl", "new", "ctl", "new", "new",
        "new", "new", "ctl", "new", "new", "ctl", "new", "new", "new", "ctl", "new", "ctl", "ctl", "new", "new",
        "ctl", "ctl", "ctl", "new", "new", "new", "new", "ctl", "new", "ctl", "ctl", "ctl", "ctl", "new", "new"],
    age=[58, 61, 59, 64, 64, 65, 60, 57, 77, 72, 70, 42, 62, 75, 64, 47, 60, 61, 78, 61, 49, 44, 67, 79, 62, 43, 41,
        71, 51, 59, 77, 50, 71, 43, 40, 41, 51, 59, 40, 64, 73, 60, 44, 72, 42, 60, 79, 54, 57, 50, 52, 49, 41, 69,
        55, 79, 54, 71, 60, 65, 40, 74, 45, 78, 48, 70, 57, 70, 52, 50, 64, 40, 51, 66, 76, 58, 78, 51, 42, 67, 48,
        78, 62, 78, 70, 67, 42, 73, 47, 43],
    stage=["III", "III", "III", "III", "IV", "III", "III", "IV", "IV", "III", "IV", "IV", "III", "III", "III",
        "III", "IV", "III", "III", "III", "IV", "III", "III", "III", "IV", "III", "IV", "IV", "IV", "III", "III",
        "IV", "IV", "III", "III", "IV", "III", "III", "IV", "III", "IV", "III", "IV", "III", "III", "III", "III",
        "III", "IV", "IV", "IV", "III", "III", "III", "III", "III", "IV", "IV", "IV", "IV", "III", "III", "IV",
        "III", "III", "III", "III", "III", "III", "IV", "IV", "IV", "III", "III", "IV", "III", "III", "III", "IV",
        "III", "IV", "IV", "III", "IV", "III", "IV", "III", "III", "IV", "III"],
))


def condition():
    return Condition(method="log_rank", roles=ROLES)


def test_log_rank_with_ties():
    """
    > s <- survdiff(Surv(time, event) ~ arm, data = A); c(s$chisq, s$pvalue)
    4.8589071200885554 0.027503753051927298
    """
    res = tf.analyse("log_rank", A, ROLES)
    assert res.statistic == pytest.approx(4.8589071200885554, rel=REL)
    assert res.pvalue == pytest.approx(0.027503753051927298, rel=REL)
    assert res.df == (1.0,) and res.n == 60 and res.statistic_name == "Chisq"


def test_log_rank_with_heavy_censoring():
    """56 % censored.
    > s <- survdiff(Surv(time, event) ~ arm, data = B); c(s$chisq, s$pvalue)
    6.6166620452754294 0.010102900889982891
    """
    assert 1 - B["event"].mean() > 0.55
    res = tf.analyse("log_rank", B, ROLES)
    assert res.statistic == pytest.approx(6.6166620452754294, rel=REL)
    assert res.pvalue == pytest.approx(0.010102900889982891, rel=REL)


def test_naive_is_welch_t_on_the_recorded_times():
    """
    > tt <- t.test(time ~ arm, data = A); c(tt$statistic, tt$parameter, tt$p.value)
    -1.5526613288408959 53.268825488315308 0.12642569424965319
    > tt <- t.test(time ~ arm, data = B); tt$p.value
    0.15857884724986504
    """
    fam = tf.get_family("log_rank")
    res = fam.naive(condition(), A)
    assert res.statistic == pytest.approx(-1.5526613288408959, rel=REL)
    assert res.df[0] == pytest.approx(53.268825488315308, rel=REL)
    assert res.pvalue == pytest.approx(0.12642569424965319, rel=REL)
    assert fam.naive(condition(), B).pvalue == pytest.approx(0.15857884724986504, rel=REL)


def test_accepted_adjusted_cox_with_a_factor_covariate():
    """The group's row of the Cox model with the covariates (Efron ties; stage a factor):
    > summary(coxph(Surv(time, event) ~ arm + age + stage, data = A))$coefficients["armnew", ]
    coef -0.901344721998788456  se(coef) 0.343457073911126731  z -2.6243300559650762  Pr(>|z|) 0.0086819607038536983
    """
    fam = tf.get_family("log_rank")
    (alt,) = fam.accepted
    res = alt.run(condition(), A)
    assert [t.name for t in res.terms] == ["armnew", "age", "stageIV"]
    assert res.estimate == pytest.approx(-0.901344721998788456, rel=REL)
    assert res.statistic == pytest.approx(-2.6243300559650762, rel=REL)
    assert res.pvalue == pytest.approx(0.0086819607038536983, rel=REL)


def test_too_few_events_in_a_group_are_refused():
    few = A.copy()
    new_events = np.flatnonzero((few["arm"] == "new") & (few["event"] == 1))
    few.loc[new_events[:15], "event"] = 0  # 19 - 15 = 4 events left in 'new'
    with pytest.raises(DataError, match="group 'new' has 4 events, fewer than 5"):
        tf.analyse("log_rank", few, ROLES)


def test_event_must_be_zero_or_one():
    bad = A.copy()
    bad.loc[0, "event"] = 2
    with pytest.raises(DataError, match="0 \\(censored\\) or 1"):
        tf.analyse("log_rank", bad, ROLES)


def test_generated_data_balance_the_groups_and_censor_within_range():
    """The log-rank data: groups independent of the covariates, 10-60 % censored, times tied."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from conftest import dataset, small_grid

    grid = small_grid("log_rank", n=400)
    for k, scen in enumerate(tf.load_scenarios("log_rank")):
        _, ds = dataset(grid, "log_rank", scen.id, 400, "null", seed=k)
        data = tf.analysis.read_csv_text(ds.csv_text)
        roles = scen.roles
        censored = 1 - data[roles["event"]].mean()
        assert 0.05 < censored < 0.65, (scen.id, censored)
        assert data[roles["time"]].nunique() < len(data)
        assert ds.condition.params["censored"] >= 0.1
