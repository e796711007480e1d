"""cluster_proportions_t pinned to R 4.2.2: the groups compared on the shares of
the positive outcome in their clusters, ``aggregate(outcome == positive, by =
list(cluster, group), FUN = mean)``."""

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition

#: Eight villages of 4 to 6 children, four villages in each arm.
VILLAGES = pd.DataFrame({
    "village": [
        "V4", "V4", "V8", "V1", "V7", "V6", "V5", "V5", "V5", "V3", "V3", "V7",
        "V6", "V8", "V6", "V2", "V1", "V7", "V6", "V1", "V3", "V1", "V5", "V4",
        "V3", "V8", "V2", "V8", "V4", "V7", "V7", "V4", "V8", "V2", "V3", "V3",
        "V2", "V1", "V5", "V7",
    ],
    "arm": [
        "spray", "spray", "bednet", "bednet", "spray", "bednet", "spray", "spray",
        "spray", "bednet", "bednet", "spray", "bednet", "bednet", "bednet", "spray",
        "bednet", "spray", "bednet", "bednet", "bednet", "bednet", "spray", "spray",
        "bednet", "bednet", "spray", "bednet", "spray", "spray", "spray", "spray",
        "bednet", "spray", "bednet", "bednet", "spray", "bednet", "spray", "spray",
    ],
    "status": [
        "clear", "infected", "infected", "clear", "infected", "clear", "infected", "infected",
        "infected", "clear", "clear", "infected", "infected", "infected", "clear", "clear",
        "infected", "infected", "clear", "infected", "clear", "infected", "clear", "infected",
        "clear", "clear", "infected", "clear", "infected", "infected", "infected", "clear",
        "clear", "clear", "clear", "clear", "clear", "clear", "infected", "infected",
    ],
})
ROLES = {"outcome": "status", "group": "arm", "positive": "infected", "cluster": "village"}


def test_student_t_on_the_village_shares_matches_r():
    """> m <- aggregate(d[["status"]] == "infected", by = list(cluster = d[["village"]], group = d[["arm"]]),
    +                FUN = mean)
    > t.test(x ~ group, data = m, var.equal = TRUE)
    t = -1.71679015055790418, df = 6, p-value = 0.13682986432843280, estimates 0.3125 and 0.6625"""
    res = tf.analyse("cluster_proportions_t", VILLAGES, ROLES)
    assert res.pvalue == pytest.approx(0.13682986432843280, rel=1e-9)
    assert res.statistic == pytest.approx(-1.71679015055790418, rel=1e-9) and res.df == (6.0,)
    assert res.estimate == pytest.approx(0.3125 - 0.6625, rel=1e-9)
    assert res.method == "Two Sample t-test" and res.n == 40   # rows analysed; 8 village shares


def test_welchs_t_on_the_shares_is_accepted_and_fishers_test_on_the_rows_is_the_trap():
    """> t.test(x ~ group, data = m)   # t = -1.71679015055790418, df = 5.69711030924760653
    p-value = 0.13945834938372806
    > fisher.test(table(d$arm, d$status))$p.value   # the rows, as if independent: 6 of 20 against 14 of 20
    [1] 0.025644776943321311"""
    fam = tf.get_family("cluster_proportions_t")
    condition = Condition(method=fam.name, roles=ROLES)
    (alt,) = fam.accepted
    welch = run_test(fam, condition, VILLAGES, which=alt)
    assert welch.pvalue == pytest.approx(0.13945834938372806, rel=1e-9)
    assert welch.df[0] == pytest.approx(5.69711030924760653, rel=1e-9)
    naive = run_test(fam, condition, VILLAGES, which="naive")
    assert naive.pvalue == pytest.approx(0.025644776943321311, rel=1e-9)


def test_constant_outcomes_and_constant_shares_are_refused_as_r_refuses_them():
    """R's t.test stops ("data are essentially constant") when every village
    has the same share."""
    with pytest.raises(tf.DataError, match="^'status' has no variation: every analysed row holds 'clear'$"):
        tf.analyse("cluster_proportions_t", VILLAGES.assign(status="clear"), ROLES)
    halves = VILLAGES.assign(status=np.where(VILLAGES.groupby("village").cumcount() % 2 == 0, "infected", "clear"))
    halves = halves[halves.groupby("village")["village"].transform("size") % 2 == 0]   # even villages: shares 1/2
    with pytest.raises(tf.DataError, match="^'share of infected per cluster' has no variation: every analysed row holds 0.5$"):
        tf.analyse("cluster_proportions_t", halves, ROLES)
