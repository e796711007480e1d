"""cluster_event_rates_t pinned to R 4.2.2: the groups compared on their clusters'
events per unit of follow-up, ``aggregate(cbind(events, time), by = list(cluster,
group), FUN = sum)``."""

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition

#: Eight hospitals of 4 to 6 patients, four under each care pathway; 23 events.
HOSPITALS = pd.DataFrame({
    "hospital": [
        "H5", "H7", "H4", "H5", "H1", "H2", "H4", "H3", "H4", "H1", "H1", "H3",
        "H2", "H6", "H3", "H1", "H8", "H6", "H2", "H3", "H6", "H4", "H7", "H4",
        "H8", "H7", "H7", "H5", "H3", "H8", "H8", "H3", "H2", "H5", "H6", "H7",
        "H8", "H1", "H7", "H6",
    ],
    "care": [
        "bundle", "bundle", "bundle", "bundle", "usual", "bundle", "bundle", "usual",
        "bundle", "usual", "usual", "usual", "bundle", "usual", "usual", "usual",
        "usual", "usual", "bundle", "usual", "usual", "bundle", "bundle", "bundle",
        "usual", "bundle", "bundle", "bundle", "usual", "usual", "usual", "usual",
        "bundle", "bundle", "usual", "bundle", "usual", "usual", "bundle", "usual",
    ],
    "days": [
        33, 68, 53, 37, 53, 34, 45, 32, 61, 2, 45, 51, 7, 67, 31, 29, 31, 69, 5, 24,
        53, 27, 75, 25, 4, 31, 50, 10, 32, 37, 33, 15, 71, 21, 40, 64, 39, 34, 63, 42,
    ],
    "event": [
        1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1,
        0, 1, 1, 1, 1, 0, 0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0,
    ],
    "age": [
        76, 72, 89, 54, 81, 60, 80, 70, 59, 61, 51, 81, 63, 56, 51, 50, 71, 87, 86, 56,
        65, 88, 50, 50, 56, 62, 87, 57, 59, 89, 84, 62, 83, 76, 64, 78, 62, 75, 79, 57,
    ],
})
ROLES = {"time": "days", "event": "event", "group": "care", "covariates": ["age"], "cluster": "hospital"}


def test_student_t_on_the_hospitals_event_rates_matches_r():
    """> m <- aggregate(cbind(events = d[["event"]], time = d[["days"]]),
    +                by = list(cluster = d[["hospital"]], group = d[["care"]]), FUN = sum)
    > t.test(events / time ~ group, data = m, var.equal = TRUE)
    t = -0.130786304339392506, df = 6, p-value = 0.900219285808620096,
    estimates 0.017968664043461098 and 0.019204959620272709"""
    res = tf.analyse("cluster_event_rates_t", HOSPITALS, ROLES)
    assert res.pvalue == pytest.approx(0.900219285808620096, rel=1e-9)
    assert res.statistic == pytest.approx(-0.130786304339392506, rel=1e-9) and res.df == (6.0,)
    assert res.estimate == pytest.approx(0.017968664043461098 - 0.019204959620272709, rel=1e-9)
    assert res.method == "Two Sample t-test" and res.n == 40   # rows analysed; 8 hospital rates


def test_welchs_t_on_the_rates_is_accepted_and_the_log_rank_test_of_the_rows_is_the_trap():
    """> t.test(events / time ~ group, data = m)   # t = -0.13078630433939251, df = 5.53514999323591361
    p-value = 0.90056679475525359
    > survdiff(Surv(days, event) ~ care, data = d)$pvalue   # the rows, as if independent
    [1] 0.32698974234586525"""
    fam = tf.get_family("cluster_event_rates_t")
    condition = Condition(method=fam.name, roles=ROLES)
    (alt,) = fam.accepted
    welch = run_test(fam, condition, HOSPITALS, which=alt)
    assert welch.pvalue == pytest.approx(0.90056679475525359, rel=1e-9)
    assert welch.df[0] == pytest.approx(5.53514999323591361, rel=1e-9)
    naive = run_test(fam, condition, HOSPITALS, which="naive")
    assert naive.pvalue == pytest.approx(0.32698974234586525, rel=1e-9)


def test_a_hospital_whose_follow_up_sums_to_zero_is_refused():
    zero = HOSPITALS.assign(days=HOSPITALS["days"].where(HOSPITALS["hospital"] != "H6", 0))
    with pytest.raises(tf.DataError, match="^a cluster's 'days' sums to 0$"):
        tf.analyse("cluster_event_rates_t", zero, ROLES)
