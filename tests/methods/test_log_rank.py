"""log_rank pinned to R 4.2.2 (survival 3.5-3).

R read the data frames below as ``A <- data.frame(time = c(14, 16, ...), event = c(...), arm = c("new", ...),
age = c(...), stage = c(...))`` (likewise ``B``) and printed every number with ``sprintf("%.17g", ...)``
or ``print(..., digits = 17)``. Times are whole weeks, so many tie (A: 60 subjects on 23 distinct times,
28 % censored; B: 90 subjects on 18 distinct times, 56 % censored).
"""

import numpy as np
import pytest

import taskfactory as tf
from taskfactory.condition import Condition
from taskfactory.errors import DataError
from taskfactory.make.analysis import read_csv_text

from survival_data import A, B, ROLES

REL = 1e-6


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
        data = read_csv_text(ds.csv_text)
        roles = scen.roles
        censored = 1 - data[roles["event"]].mean()
        assert 0.05 < censored < 0.65, (scen.id, censored)
        assert data[roles["time"]].nunique() < len(data)
        assert ds.condition.params["censored"] >= 0.1
