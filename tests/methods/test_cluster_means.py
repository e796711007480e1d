"""cluster_means_t and cluster_means_anova pinned to R 4.2.2: the groups compared on
the means of their clusters, ``aggregate(outcome ~ cluster + group, d, mean)``."""

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition
from taskfactory.kit import nested_groups

#: Six schools, two in arm a and four in arm b, of 2 to 4 pupils.
SCHOOLS = pd.DataFrame({
    "school": ["S3", "S1", "S2", "S4", "S1", "S5", "S3", "S2", "S6", "S4", "S5", "S6", "S1", "S3", "S2", "S4"],
    "arm": ["b", "a", "a", "b", "a", "b", "b", "a", "b", "b", "b", "b", "a", "b", "a", "b"],
    "score": [51.2, 47.3, 49.8, 55.1, 46.0, 52.4, 53.3, 50.6, 48.9, 54.2, 51.7, 50.1, 48.8, 52.0, 49.1, 56.3],
})
T_ROLES = {"outcome": "score", "group": "arm", "cluster": "school"}

#: Nine wards, three per mattress, of 2 or 3 patients.
WARDS = pd.DataFrame({
    "ward": ["W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8", "W9", "W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8",
             "W9", "W1", "W5"],
    "mattress": ["air", "air", "foam", "foam", "gel", "gel", "air", "foam", "gel", "air", "air", "foam", "foam", "gel",
                 "gel", "air", "foam", "gel", "air", "gel"],
    "days": [21.4, 18.9, 25.3, 27.1, 19.8, 22.6, 20.2, 24.9, 23.1, 19.7, 20.5, 26.2, 25.8, 21.1, 21.9, 18.4, 26.7, 22.4,
             22.3, 20.6],
})
F_ROLES = {"outcome": "days", "group": "mattress", "cluster": "ward"}


def test_student_t_on_the_school_means_matches_r():
    """> m <- aggregate(d[["score"]], by = list(cluster = d[["school"]], group = d[["arm"]]), FUN = mean)
    > t.test(x ~ group, data = m, var.equal = TRUE)
    t = -1.90519098748207383, df = 4, p-value = 0.12946154499255585, estimates 48.6 and 52.229166666666664"""
    res = tf.analyse("cluster_means_t", SCHOOLS, T_ROLES)
    assert res.pvalue == pytest.approx(0.12946154499255585, rel=1e-9)
    assert res.statistic == pytest.approx(-1.90519098748207383, rel=1e-9) and res.df == (4.0,)
    assert res.estimate == pytest.approx(48.6 - 52.22916666666666430, rel=1e-9)
    assert res.method == "Two Sample t-test" and res.n == 16   # rows analysed; 6 school means


def test_welchs_t_on_the_means_is_accepted_and_welchs_t_on_the_rows_is_the_trap():
    """> t.test(x ~ group, data = m)              # t = -2.1383973993412453, df = 2.8318464114518807
    p-value = 0.1273819971612811
    > t.test(score ~ arm, data = d)$p.value     # the rows, as if independent
    [1] 0.0016265160869651848"""
    fam = tf.get_family("cluster_means_t")
    condition = Condition(method=fam.name, roles=T_ROLES)
    (alt,) = fam.accepted
    welch = run_test(fam, condition, SCHOOLS, which=alt)
    assert welch.pvalue == pytest.approx(0.1273819971612811, rel=1e-9)
    assert welch.df[0] == pytest.approx(2.8318464114518807, rel=1e-9)
    assert run_test(fam, condition, SCHOOLS, which="naive").pvalue == pytest.approx(0.0016265160869651848, rel=1e-9)


def test_the_f_test_on_the_ward_means_matches_r():
    """> m <- aggregate(k[["days"]], by = list(cluster = k[["ward"]], group = k[["mattress"]]), FUN = mean)
    > oneway.test(x ~ group, data = m, var.equal = TRUE)
    F = 33.921967262127168, num df = 2, denom df = 6, p-value = 0.00053642531575232347
    > oneway.test(days ~ mattress, data = k)$p.value   # Welch's F on the rows
    [1] 1.9374481054395319e-06"""
    fam = tf.get_family("cluster_means_anova")
    res = tf.analyse(fam.name, WARDS, F_ROLES)
    assert res.pvalue == pytest.approx(5.3642531575232347e-04, rel=1e-9)
    assert res.statistic == pytest.approx(33.921967262127168, rel=1e-9) and res.df == (2.0, 6.0)
    naive = run_test(fam, Condition(method=fam.name, roles=F_ROLES), WARDS, which="naive")
    assert naive.pvalue == pytest.approx(1.9374481054395319e-06, rel=1e-9)


def test_whole_clusters_go_to_groups_in_proportion_and_at_least_two_each():
    rng = np.random.default_rng(3)
    groups = nested_groups(10, [0.15, 0.25, 0.6], rng)
    assert np.bincount(groups).tolist() == [2, 2, 6]
    assert nested_groups(10, [0.5, 0.5], rng).tolist().count(0) == 5
