"""panel_fixed_effects pinned to R 4.2.2 (plm 2.6) on one panel of 6 states
over 5 years (``panel.csv``: the columns of P below)::

    > p <- function(m, r) sprintf("%.17g %.17g %.17g %.17g", m[r, 1], m[r, 2], m[r, 3], m[r, 4])
    > P <- read.csv("panel.csv")
    > m <- summary(plm::plm(fatality_rate ~ beer_tax, data = P, index = c("state", "year"), model = "within"))
    > p(m$coefficients, 1); m$df    # 1 23 1
    "-1.2655215935394026 0.53682488870156575 -2.3574197474345073 0.027285357504542508"
    > p(summary(lm(fatality_rate ~ beer_tax, data = P))$coefficients, 2)
    "-0.063660667176945268 0.39290109654598576 -0.16202720668531992 0.87244801923509274"

An unbalanced panel: two outcomes and four exposures blank, so ST01 and ST03
miss a year and ST06 keeps a single year (which still counts as a unit in the
residual df, as plm counts it)::

    > U <- P; U$fatality_rate[c(2, 12)] <- NA; U$beer_tax[26:29] <- NA; U <- na.omit(U)
    > m <- summary(plm::plm(fatality_rate ~ beer_tax, data = U, index = c("state", "year"), model = "within"))
    > p(m$coefficients, 1); m$df    # 1 17 1
    "-2.1917666136857474 0.6127609233939304 -3.5768707337701908 0.0023226115282948155"
    > p(summary(lm(fatality_rate ~ beer_tax, data = U))$coefficients, 2)
    "-0.055514592301195834 0.48594917124577958 -0.11423950401824659 0.91008412031489239"

R refuses an exposure constant within every state (``Error: empty model``) and
warns on a state measured twice in one year ("duplicate couples (id-time) in
resulting pdata.frame").
"""

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition
from taskfactory.errors import DataError

P = pd.DataFrame({
    "state": [f"ST{u:02d}" for u in range(1, 7) for _ in range(5)],
    "year": [1, 2, 3, 4, 5] * 6,
    "fatality_rate": [1.806, 1.905, 2.235, 1.809, 2.086, 2.164, 2.069, 2.542, 2.289, 1.941, 1.995, 2.003, 1.997, 2.082,
                      2.011, 2.058, 2.251, 1.818, 1.959, 1.884, 2.207, 1.862, 1.916, 1.961, 2.249, 2.174, 1.842, 1.908,
                      1.984, 1.729],
    "beer_tax": [0.555, 0.653, 0.512, 0.502, 0.588, 0.605, 0.586, 0.506, 0.575, 0.631, 0.421, 0.49, 0.379, 0.426, 0.383,
                 0.45, 0.371, 0.489, 0.48, 0.454, 0.315, 0.467, 0.504, 0.517, 0.391, 0.422, 0.383, 0.396, 0.54, 0.397],
})
ROLES = {"outcome": "fatality_rate", "exposure": "beer_tax", "unit": "state", "period": "year"}
FAMILY = tf.get_family("panel_fixed_effects")


def unbalanced():
    u = P.copy()
    u.loc[[1, 11], "fatality_rate"] = np.nan
    u.loc[25:28, "beer_tax"] = np.nan
    return u


def check(res, estimate, se, t, p, df):
    assert (res.estimate, res.statistic) == pytest.approx((estimate, t), rel=1e-10)
    assert res.pvalue == pytest.approx(p, rel=1e-9)
    assert res.df == (float(df),)
    row = next(term for term in res.terms if term.name == "beer_tax")
    assert row.std_error == pytest.approx(se, rel=1e-10)


def naive(data):
    return run_test(FAMILY, Condition(method="panel_fixed_effects", roles=ROLES), data, which="naive")


def test_balanced_panel_is_plm_within():
    res = tf.analyse("panel_fixed_effects", P, ROLES)
    check(res, -1.2655215935394026, 0.53682488870156575, -2.3574197474345073, 0.027285357504542508, 23)
    assert res.n == 30
    pooled = naive(P)
    assert pooled.pvalue == pytest.approx(0.87244801923509274, rel=1e-9)
    assert pooled.estimate == pytest.approx(-0.063660667176945268, rel=1e-10)


def test_unbalanced_panel_and_a_unit_of_one_row():
    res = tf.analyse("panel_fixed_effects", unbalanced(), ROLES)
    check(res, -2.1917666136857474, 0.6127609233939304, -3.5768707337701908, 0.0023226115282948155, 17)
    assert naive(unbalanced()).pvalue == pytest.approx(0.91008412031489239, rel=1e-9)


def test_row_order_does_not_matter():
    shuffled = P.sample(frac=1.0, random_state=3).reset_index(drop=True)
    res = tf.analyse("panel_fixed_effects", shuffled, ROLES)
    assert res.pvalue == pytest.approx(0.027285357504542508, rel=1e-9)


def test_exposure_constant_within_units_is_refused():
    flat = P.assign(beer_tax=P.groupby("state")["beer_tax"].transform("mean"))
    with pytest.raises(DataError, match="collinear"):
        tf.analyse("panel_fixed_effects", flat, ROLES)


def test_a_unit_twice_in_one_period_is_refused():
    with pytest.raises(DataError, match="appears twice"):
        tf.analyse("panel_fixed_effects", pd.concat([P, P.iloc[[2]]], ignore_index=True), ROLES)


def test_too_few_rows_for_the_unit_effects_are_refused():
    one_each = P.groupby("state").head(1)
    with pytest.raises(DataError):
        tf.analyse("panel_fixed_effects", one_each, ROLES)


def test_effect_for_z_uses_the_within_df():
    params = {"periods": 5, "between": 1.0, "unit_sd": 1.5, "unit_corr": 0.5}
    from taskfactory.effects import t_critical
    assert FAMILY.effect_for_z(1.96, 40, params) == pytest.approx(t_critical(1.96, 40 * 5 - 40 - 1) / np.sqrt(160))


def test_hints_report_within_and_between_spread():
    hints = FAMILY.hints(Condition(method="panel_fixed_effects", roles=ROLES), P)
    assert hints[0].startswith("The 30 rows hold 6 values of 'state' (5 to 5 rows each) over 5 values of 'year'")
    assert "within units" in hints[1] and "between the unit means" in hints[1]
    assert not any("fixed" in h or "plm" in h for h in hints)
