"""pearson_differences and spearman_differences pinned to R 4.2.2: the correlations of
the changes from one period to the next, the rows put in period order first."""

import dataclasses

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.design.catalogue import get_scenario
from taskfactory.condition import Condition
from taskfactory.errors import ScenarioError
from taskfactory.methods._correlation import first_differences

ROLES = {"x": "x", "y": "y", "period": "day"}

#: Rows out of order, and day 8 missing, so the changes 7 -> 8 -> 9 are left out: 10 changes from 12 rows.
#: In R: d <- data.frame(day, x, y) of these columns; d <- d[order(d$day), ]; one_step <- diff(d$day) == 1
SHUFFLED = pd.DataFrame({
    "day": [7, 3, 12, 1, 9, 4, 11, 2, 6, 10, 5, 13],
    "x": [21.4, 19.8, 23.9, 20.3, 22.6, 20.1, 23.0, 19.9, 21.1, 22.2, 20.7, 24.4],
    "y": [5.12, 4.80, 5.51, 4.95, 5.30, 4.71, 5.47, 4.88, 5.02, 5.41, 4.93, 5.66],
})

#: set.seed(29); e <- rnorm(16); f <- 0.5 * e + rnorm(16)
#: x <- round(50 + cumsum(e), 3); y <- round(20 + cumsum(f), 3): 15 changes, no ties.
WALK = pd.DataFrame({
    "day": list(range(1, 17)),
    "x": [48.717, 47.453, 47.668, 48.615, 47.44, 49.55, 49.029, 48.099, 48.518, 49.629, 50.058, 51.983, 52.293,
          52.261, 52.733, 52.391],
    "y": [17.916, 17.265, 18.789, 18.816, 18.511, 21.765, 20.055, 21.34, 21.803, 22.265, 21.643, 22.608, 22.805,
          22.943, 22.967, 22.945],
})


def test_pearson_of_the_changes_matches_r():
    """> cor.test(diff(d$x)[one_step], diff(d$y)[one_step])   # d: SHUFFLED, in day order
    t = 1.20498808224977805, df = 8, p-value = 0.26264057084583875, cor = 0.39194125655530154
    """
    res = tf.analyse("pearson_differences", SHUFFLED, ROLES)
    assert res.pvalue == pytest.approx(0.26264057084583875, rel=1e-9)
    assert res.statistic == pytest.approx(1.20498808224977805, rel=1e-9) and res.df == (8.0,)
    assert res.estimate == pytest.approx(0.39194125655530154, rel=1e-9)
    assert res.method == "Pearson's product-moment correlation" and res.n == 12   # rows analysed; 10 changes


def test_the_naive_test_is_pearsons_r_of_the_levels():
    """> cor.test(d$x, d$y)$p.value   # the same 12 rows
    [1] 1.9385797805608005e-07"""
    fam = tf.get_family("pearson_differences")
    res = run_test(fam, Condition(method=fam.name, roles=ROLES), SHUFFLED, which="naive")
    assert res.pvalue == pytest.approx(1.9385797805608005e-07, rel=1e-9)


def test_spearman_of_the_changes_with_ties_and_kendall_beside_it_match_r():
    """> cor.test(diff(d$x)[one_step], diff(d$y)[one_step], method = "spearman")   # d: SHUFFLED; ties
    S = 130.89649899954838475, p-value = 0.56669513800687421, rho = 0.20668788485122194
    > cor.test(diff(d$x)[one_step], diff(d$y)[one_step], method = "kendall")
    z = 0.35921060405354982, p-value = 0.71943754442339136, tau = 0.08989331499509895
    """
    fam = tf.get_family("spearman_differences")
    res = tf.analyse(fam.name, SHUFFLED, ROLES)
    assert res.pvalue == pytest.approx(0.56669513800687421, rel=1e-9)
    assert res.statistic == pytest.approx(130.89649899954838475, rel=1e-9)
    assert res.estimate == pytest.approx(0.20668788485122194, rel=1e-9)
    (alt,) = fam.accepted
    assert alt.call == 'cor.test(diff(x), diff(y), method = "kendall")'
    tau = run_test(fam, Condition(method=fam.name, roles=ROLES), SHUFFLED, which=alt)
    assert tau.pvalue == pytest.approx(0.71943754442339136, rel=1e-9)
    assert tau.statistic == pytest.approx(0.35921060405354982, rel=1e-9)


def test_spearman_and_kendall_of_untied_changes_take_rs_exact_branches():
    """> cor.test(diff(x), diff(y), method = "spearman")   # 15 changes: Edgeworth series
    S = 284, p-value = 0.064411098176185066, rho = 0.492857142857142771
    > cor.test(diff(x), diff(y), method = "kendall")    # exact
    T = 74, p-value = 0.035897237367888746, tau = 0.409523809523809568"""
    fam = tf.get_family("spearman_differences")
    res = tf.analyse(fam.name, WALK.iloc[::-1], ROLES)   # any row order: the period orders them
    assert res.statistic == pytest.approx(284.0, rel=1e-12)
    assert res.pvalue == pytest.approx(0.064411098176185066, rel=1e-9)
    assert res.details["branch"] == "Edgeworth series"
    tau = run_test(fam, Condition(method=fam.name, roles=ROLES), WALK, which=fam.accepted[0])
    assert tau.statistic == pytest.approx(74.0) and tau.pvalue == pytest.approx(0.035897237367888746, rel=1e-9)


def test_a_repeated_period_joins_no_change():
    """Two rows of day 2 are 0 periods apart: the change between them is left out, as
    ``diff(d$day) == 1`` leaves it out in R, and so are both changes around a missing day."""
    d = pd.DataFrame({"day": [1, 2, 2, 3, 5, 6], "x": [1.0, 2.0, 4.0, 7.0, 11.0, 16.0],
                      "y": [0.5, 0.25, 1.0, 2.0, 3.0, 5.0]})
    changes = first_differences(Condition(method="pearson_differences", roles=ROLES), d)
    assert changes.to_dict("list") == {"x": [1.0, 3.0, 5.0], "y": [-0.25, 1.0, 2.0]}


def test_a_series_recorded_too_coarsely_for_its_changes_is_refused():
    fam = tf.get_family("pearson_differences")
    scen = get_scenario(fam.name, "dryer_throughput_moisture")
    coarse = dataclasses.replace(scen, variables=tuple(
        dataclasses.replace(v, decimals=2) if v.name == "moisture_pct" else v for v in scen.variables))
    with pytest.raises(ScenarioError, match=r"'moisture_pct' is recorded to 2 decimals, too coarse for the changes of "
                                            r"a series of SD 0\.25: a step of at most 0\.005 SD needs more decimals"):
        fam.check_scenario(coarse)
