"""friedman pinned to R 4.2.2: ``friedman.test(y, group, subject)``.

R's default method ranks within subjects with mean ranks for ties and the
tie correction; the naive test is ``oneway.test(y ~ group, var.equal = TRUE)``.
"""

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition
from taskfactory.errors import DataError

ROLES = {"outcome": "y", "group": "g", "subject": "s"}


def frame(y, levels, subjects):
    return pd.DataFrame({"y": y, "g": np.tile(levels, subjects), "s": np.repeat(np.arange(1, subjects + 1), len(levels))})


TIED = frame([1, 2, 3, 4, 6, 5, 7, 9, 8, 2, 1, 3, 5, 5, 6], ["b", "a", "c"], 5)
FOUR = frame([3.1, 2.2, 5.0, 4.4, 2.0, 2.5, 3.3, 3.9, 6.1, 4.2, 8.8, 7.7, 1.5, 1.1, 2.9, 2.0, 5.5, 5.1, 5.9, 6.4,
              2.2, 2.8, 4.1, 3.0], ["w", "x", "y", "z"], 6)


def test_friedman_matches_r_with_ties():
    # y <- c(1,2,3, 4,6,5, 7,9,8, 2,1,3, 5,5,6); friedman.test(y, rep(c("b","a","c"), 5), rep(1:5, each = 3))
    res = tf.analyse("friedman", TIED, ROLES)
    assert res.statistic == pytest.approx(4.5263157894736841, rel=1e-14)
    assert res.pvalue == pytest.approx(0.10402147666803763, rel=1e-12) and res.df == (2.0,)


def test_friedman_and_the_naive_anova_match_r_on_four_conditions():
    res = tf.analyse("friedman", FOUR, ROLES)
    assert res.statistic == pytest.approx(14.800000000000001, rel=1e-14)
    assert res.pvalue == pytest.approx(0.001995790028753643, rel=1e-12)
    naive = run_test(tf.get_family("friedman"), Condition(method="friedman", roles=ROLES), FOUR, which="naive")
    assert naive.statistic == pytest.approx(1.4428692730830286, rel=1e-12)
    assert naive.pvalue == pytest.approx(0.26008670836168096, rel=1e-12)


def test_incomplete_subjects_are_left_out_as_r_needs_complete_blocks():
    # R stops on the rows left; without subject 2 the test is that of the other five subjects
    partial = FOUR.drop(index=[5])
    without = FOUR[FOUR["s"] != 2]
    assert tf.analyse("friedman", partial, ROLES) == tf.analyse("friedman", without, ROLES)


def test_a_subject_measured_twice_under_one_condition_is_refused():
    with pytest.raises(DataError, match="two measurements under one condition"):
        tf.analyse("friedman", pd.concat([FOUR, FOUR.iloc[[0]]]), ROLES)
