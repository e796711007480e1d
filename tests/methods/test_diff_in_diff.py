"""diff_in_diff pinned to R 4.2.2 (sandwich 3.0, lmtest 0.9) on 8 counties
(4 in the state that raised its wage) over 4 quarters (2 before, 2 after;
``did.csv``: the columns of D below)::

    > p <- function(m, r) sprintf("%.17g %.17g %.17g %.17g", m[r, 1], m[r, 2], m[r, 3], m[r, 4])
    > D <- read.csv("did.csv")
    > f <- lm(teen_employment_pct ~ raised_wage * after_rise, data = D)
    > p(lmtest::coeftest(f, vcov = sandwich::vcovCL(f, cluster = ~county)), 4)
    "-3.5374999999999877 1.4768952930498052 -2.3952273506776578 0.023541101696333201"
    > p(summary(f)$coefficients, 4)
    "-3.5374999999999877 2.3441273505751128 -1.5090903653899566 0.14247831014342979"

An unbalanced panel (three outcomes blank: CO01 misses quarter 4, CO05
quarters 2 and 3)::

    > E <- D; E$teen_employment_pct[c(4, 18, 19)] <- NA; E <- na.omit(E)
    > f <- lm(teen_employment_pct ~ raised_wage * after_rise, data = E)
    > p(lmtest::coeftest(f, vcov = sandwich::vcovCL(f, cluster = ~county)), 4)
    "-3.2232142857142874 1.7304685334535359 -1.8626251927746091 0.074307235228124519"
    > p(summary(f)$coefficients, 4)
    "-3.2232142857142874 2.4862874698339028 -1.2963964645365869 0.20667872751330879"

Small clusters: only CO01, CO02 (treated), CO05 and CO06, 4 clusters of 4 rows::

    > S <- D[D$county %in% c("CO01", "CO02", "CO05", "CO06"), ]
    > f <- lm(teen_employment_pct ~ raised_wage * after_rise, data = S)
    > p(lmtest::coeftest(f, vcov = sandwich::vcovCL(f, cluster = ~county)), 4)
    "-0.80000000000000782 0.9309493362512673 -0.85933784884732367 0.40699362234011327"
    > p(summary(f)$coefficients, 4)
    "-0.80000000000000782 1.3033610397737072 -0.61379769349167124 0.550807648585242"

Every county treated: ``coef(f)`` has NA for raised_wage and the interaction
(a singular design), which the family refuses.
"""

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition
from taskfactory.errors import DataError

D = pd.DataFrame({
    "county": [f"CO{u:02d}" for u in range(1, 9) for _ in range(4)],
    "quarter": [1, 2, 3, 4] * 8,
    "raised_wage": [1] * 16 + [0] * 16,
    "after_rise": [0, 0, 1, 1] * 8,
    "teen_employment_pct": [40.1, 39.7, 41.4, 37.9, 41.8, 41.3, 41.3, 42.1, 48.0, 47.7, 44.5, 39.7, 46.5, 45.6, 45.0,
                            39.3, 40.7, 40.7, 40.5, 40.4, 40.5, 38.3, 42.2, 40.1, 42.5, 42.9, 43.3, 44.0, 48.4, 45.9,
                            46.7, 51.5],
})
ROLES = {"outcome": "teen_employment_pct", "treated": "raised_wage", "post": "after_rise", "unit": "county",
         "period": "quarter"}
FAMILY = tf.get_family("diff_in_diff")
TERM = "raised_wage:after_rise"


def check(res, estimate, se, t, p, df):
    assert (res.estimate, res.statistic) == pytest.approx((estimate, t), rel=1e-10)
    assert res.pvalue == pytest.approx(p, rel=1e-9)
    assert res.df == (float(df),)
    row = next(term for term in res.terms if term.name == TERM)
    assert row.std_error == pytest.approx(se, rel=1e-10)
    assert [term.name for term in res.terms] == ["(Intercept)", "raised_wage", "after_rise", TERM]


def naive(data):
    return run_test(FAMILY, Condition(method="diff_in_diff", roles=ROLES), data, which="naive")


def test_did_is_coeftest_with_vcovcl_by_unit():
    res = tf.analyse("diff_in_diff", D, ROLES)
    check(res, -3.5374999999999877, 1.4768952930498052, -2.3952273506776578, 0.023541101696333201, 28)
    check(naive(D), -3.5374999999999877, 2.3441273505751128, -1.5090903653899566, 0.14247831014342979, 28)


def test_unbalanced_panel():
    e = D.copy()
    e.loc[[3, 17, 18], "teen_employment_pct"] = np.nan
    res = tf.analyse("diff_in_diff", e, ROLES)
    check(res, -3.2232142857142874, 1.7304685334535359, -1.8626251927746091, 0.074307235228124519, 25)
    check(naive(e), -3.2232142857142874, 2.4862874698339028, -1.2963964645365869, 0.20667872751330879, 25)


def test_small_clusters():
    s = D[D["county"].isin(["CO01", "CO02", "CO05", "CO06"])].reset_index(drop=True)
    res = tf.analyse("diff_in_diff", s, ROLES)
    check(res, -0.80000000000000782, 0.9309493362512673, -0.85933784884732367, 0.40699362234011327, 12)
    check(naive(s), -0.80000000000000782, 1.3033610397737072, -0.61379769349167124, 0.550807648585242, 12)


def test_a_singular_design_is_refused():
    with pytest.raises(DataError, match=r"^'raised_wage' has no variation: every analysed row holds 1$"):
        tf.analyse("diff_in_diff", D.assign(raised_wage=1), ROLES)
    with pytest.raises(DataError, match=r"^'after_rise' has no variation: every analysed row holds 0$"):
        tf.analyse("diff_in_diff", D.assign(after_rise=0), ROLES)


def test_indicators_other_than_0_and_1_are_refused():
    with pytest.raises(DataError, match="must hold 0 and 1"):
        tf.analyse("diff_in_diff", D.assign(raised_wage=D["raised_wage"] * 2), ROLES)


def test_effect_for_z_is_the_exact_variance_of_the_contrast():
    """On a balanced panel the estimate is the treated less the comparison
    units' mean of (post mean - pre mean); its variance per unit is the
    shift's plus the AR(1) shocks' contrast."""
    from taskfactory.effects import t_critical
    from taskfactory.methods.diff_in_diff import shock_contrast
    assert shock_contrast(1, 1, 0.5) == pytest.approx(2 - 2 * 0.5)
    assert shock_contrast(2, 2, 0.0) == pytest.approx(1.0)
    params = {"pre": 2, "post": 2, "treated_share": 0.5, "rho": 0.0, "unit_share": 0.2, "shift": 0.3,
              "trend": 0.0, "gap": 0.0}
    variance = (0.3 + 0.8 * 1.0) * (1 / 20 + 1 / 20)
    assert FAMILY.effect_for_z(1.96, 40, params) == pytest.approx(t_critical(1.96, 156) * np.sqrt(variance))


def test_hints_describe_the_design_and_serial_correlation():
    hints = FAMILY.hints(Condition(method="diff_in_diff", roles=ROLES), D)
    assert hints[0].startswith("The 32 rows hold 8 values of 'county' (4 to 4 rows each): 4 with 'raised_wage' = 1")
    assert "raised_wage = 1 and after_rise = 1" in hints[1]
    assert "correlate at r = " in hints[2]
