"""fisher_exact pinned to R 4.2.2.

Each dataset is a 2 x 2 table of group (rows, R's sorted order) by outcome; the
R calls on the long data are

    fisher.test(table(d$g, d$y))          # the gold: p and the conditional MLE odds ratio
    chisq.test(table(d$g, d$y))           # the naive test (Yates; R warns on sparse tables)

and the tables below are those R builds (``matrix(c(...), 2)``, column-major).
"""

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition
from taskfactory.methods._common import chisq_yates
from taskfactory.methods.fisher_exact import fisher_2x2, power, rejection_region, sparse, sparse_counts, sparse_tables
from scipy import stats

ROLES = {"outcome": "y", "group": "g", "positive": "event"}

# (table rows, fisher p, conditional MLE OR, Yates X-squared, its p): R 4.2.2
PINNED = [
    ([[3, 1], [1, 3]], 0.48571428571428582, 6.4083088670057879, 0.5, 0.47950012218695348),
    ([[1, 7], [9, 3]], 0.019766611097880426, 0.057884211483764429, 5.2083333333333339, 0.022478873366125231),
    ([[0, 5], [12, 8]], 0.039130434782608726, 0.0, 3.6157852564102564, 0.057233696398138259),
    ([[2, 9], [18, 11]], 0.03095030514385352, 0.14297819668118328, 4.5141065830721008, 0.033616438418446963),
]


def long_data(table) -> pd.DataFrame:
    """Rows of groups a, b by outcome event, none (the table's columns in R's sorted order)."""
    rows = []
    for group, (events, others) in zip("ab", table):
        rows += [(group, "event")] * events + [(group, "none")] * others
    return pd.DataFrame(rows, columns=["g", "y"])


@pytest.mark.parametrize("table, p, odds, x2, p_naive", PINNED)
def test_fisher_and_naive_chi_square_match_r(table, p, odds, x2, p_naive):
    cond = Condition(method="fisher_exact", roles=ROLES)
    family = tf.get_family("fisher_exact")
    gold = run_test(family, cond, long_data(table))
    assert gold.pvalue == pytest.approx(p, rel=1e-12) and gold.statistic is None
    # R's uniroot stops at a tolerance of .Machine$double.eps^0.25: its estimate is good to about 1e-4
    assert gold.estimate == pytest.approx(odds, rel=1e-4, abs=1e-12)
    naive = run_test(family, cond, long_data(table), which="naive")
    assert naive.statistic == pytest.approx(x2, rel=1e-12) and naive.pvalue == pytest.approx(p_naive, rel=1e-12)


def test_public_analyse_takes_any_2x2_table():
    res = tf.analyse("fisher_exact", long_data([[1, 7], [9, 3]]), ROLES)
    assert res.pvalue == pytest.approx(0.019766611097880426, rel=1e-12)
    assert res.method == "Fisher's Exact Test for Count Data"


def test_r_sums_to_just_above_one_and_the_gold_does_not():
    # fisher.test(matrix(c(3, 3, 3, 3), 2))$p.value prints 1 (1.0000000000000002 in full)
    assert fisher_2x2(np.array([[3, 3], [3, 3]])).pvalue == 1.0


def test_rejection_region_and_power_agree_with_the_test_table_by_table():
    region = rejection_region(9, 12)
    for x1 in range(10):
        for x2 in range(13):
            p = fisher_2x2(np.array([[x1, 9 - x1], [x2, 12 - x2]])).pvalue
            assert (p < 0.05) == region[x1, x2]
    # with no effect the conditional test rejects at most alpha of the time
    assert power(15, 15, 0.1, 0.1) <= 0.05 and power(15, 15, 0.05, 0.6) > 0.8


def test_yates_correction_is_capped_at_the_smallest_gap():
    # chisq.test(matrix(c(5, 5, 5, 5), 2)): X-squared = 0, p = 1 (the correction cannot pass zero)
    res = chisq_yates(np.array([[5, 5], [5, 5]]))
    assert res.statistic == 0.0 and res.pvalue == 1.0


def test_power_where_no_sparse_table_can_be_drawn_is_the_limit_of_a_growing_effect():
    """At N = 4800 a rate of 0.9 in the larger group leaves no sparse table a
    double can hold; the calibration's search meets such rates and must get a
    number (1, the limit), not 0 / 0."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert power(1200, 3600, 0.001, 0.9) == 1.0
        assert 0.0 < power(1200, 3600, 0.001, 0.003) < 1.0


def test_sparse_counts_draw_the_binomial_tables_given_sparseness():
    """The draw's law is that of the two binomials given a sparse table (what
    rejection sampling over whole tables gives): over 20,000 draws for 12 and
    28 rows at rates 0.1 and 0.3, each table's share is within 4 binomial SEs
    of its conditional probability, from the full grid of tables."""
    n1, n2, p1, p2 = 12, 28, 0.1, 0.3
    w = np.outer(stats.binom.pmf(np.arange(n1 + 1), n1, p1), stats.binom.pmf(np.arange(n2 + 1), n2, p2))
    exact = w * sparse_tables(n1, n2) / (w * sparse_tables(n1, n2)).sum()
    rng = np.random.default_rng(11)
    seen = np.zeros_like(exact)
    for _ in range(20_000):
        seen[sparse_counts((n1, n2), (p1, p2), rng)] += 1
    share = seen / seen.sum()
    se = np.sqrt(exact * (1 - exact) / seen.sum())
    assert np.all(np.abs(share - exact) <= 4 * se + 1e-12)
    assert seen[~sparse_tables(n1, n2)].sum() == 0 and (exact > 0.01).sum() >= 10


def test_a_strong_effect_at_the_largest_n_still_gives_a_sparse_table():
    """With 1,440 and 3,360 rows and rates 0.002 and 0.05 a sparse table is
    rare (5e-54 of the binomials' mass) but is the one drawn."""
    sizes = (1440, 3360)
    for seed in range(20):
        x1, x2 = sparse_counts(sizes, (0.002, 0.05), np.random.default_rng(seed))
        assert sparse(sizes, x1 + x2)
