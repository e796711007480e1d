"""wilcoxon_signed_rank pinned to R 4.2.2.

Every branch R's ``wilcox.test(after, before, paired = TRUE)`` takes with its
defaults: the exact test in either tail, zeros and tied absolute differences
forcing the normal approximation (with tie correction and continuity
correction, and without correction at a zero deviation), differences that
look tied in decimal but are distinct doubles, and the switch-over at 50
non-zero differences.
"""

import itertools

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.make.analysis import run_test
from taskfactory.condition import Condition
from taskfactory.errors import DataError
from taskfactory.methods._ranks import signed_rank_counts

ROLES = {"before": "pre", "after": "post"}
EXACT = "Wilcoxon signed rank exact test"
NORMAL = "Wilcoxon signed rank test with continuity correction"

BEFORE = [12.4, 15.1, 9.8, 20.3, 14.7, 11.2, 17.9, 13.5, 16.0, 10.6]
AFTER = [11.9, 13.0, 10.1, 16.8, 14.0, 12.9, 13.2, 13.3, 12.7, 10.0]


def frame(before, after):
    return pd.DataFrame({"pre": before, "post": after})


def check(res, p, v, method, n, rel=1e-9):
    assert res.pvalue == pytest.approx(p, rel=rel)
    assert res.statistic == pytest.approx(v, rel=1e-12)
    assert res.statistic_name == "V"
    assert res.df == ()
    assert res.estimate is None
    assert res.method == method
    assert res.n == n


def test_exact_lower_tail():
    """
    > before <- c(12.4, 15.1, 9.8, 20.3, 14.7, 11.2, 17.9, 13.5, 16.0, 10.6)
    > after  <- c(11.9, 13.0, 10.1, 16.8, 14.0, 12.9, 13.2, 13.3, 12.7, 10.0)
    > wilcox.test(after, before, paired = TRUE)
    V = 8, p-value = 0.048828125, method = Wilcoxon signed rank exact test
    """
    check(tf.analyse("wilcoxon_signed_rank", frame(BEFORE, AFTER), ROLES), 0.048828125, 8, EXACT, 10)


def test_exact_upper_tail():
    """
    > wilcox.test(before, after, paired = TRUE)
    V = 47, p-value = 0.048828125, method = Wilcoxon signed rank exact test
    """
    check(tf.analyse("wilcoxon_signed_rank", frame(AFTER, BEFORE), ROLES), 0.048828125, 47, EXACT, 10)


def test_zeros_are_dropped_and_force_normal_approximation():
    """
    > b2 <- c(5, 7, 6, 9, 4, 8, 6, 7, 5, 10, 6, 8)
    > a2 <- c(7, 7, 9, 12, 4, 11, 5, 10, 8, 10, 9, 7)
    > wilcox.test(a2, b2, paired = TRUE)
    V = 42, p-value = 0.0200419163127998, method = Wilcoxon signed rank test with continuity correction
    """
    b2 = [5, 7, 6, 9, 4, 8, 6, 7, 5, 10, 6, 8]
    a2 = [7, 7, 9, 12, 4, 11, 5, 10, 8, 10, 9, 7]
    res = tf.analyse("wilcoxon_signed_rank", frame(b2, a2), ROLES)
    check(res, 0.0200419163127998, 42, NORMAL, 12)


def test_tied_absolute_differences_force_normal_approximation():
    """Differences 0.5, 0.5, -0.5, 1.1, 0.5, 1.1, 0.3, 0.5, 1.1 (no zeros):
    > b3 <- c(3.2, 4.1, 2.8, 5.0, 3.9, 4.4, 3.1, 2.6, 4.8)
    > a3 <- c(3.7, 4.6, 2.3, 6.1, 4.4, 5.5, 3.4, 3.1, 5.9)
    > wilcox.test(a3, b3, paired = TRUE)
    V = 41.5, p-value = 0.0268873171658995, method = Wilcoxon signed rank test with continuity correction
    """
    b3 = [3.2, 4.1, 2.8, 5.0, 3.9, 4.4, 3.1, 2.6, 4.8]
    a3 = [3.7, 4.6, 2.3, 6.1, 4.4, 5.5, 3.4, 3.1, 5.9]
    check(tf.analyse("wilcoxon_signed_rank", frame(b3, a3), ROLES), 0.0268873171658995, 41.5, NORMAL, 9)


def test_differences_tied_in_decimal_but_not_in_floating_point():
    """Five differences print as 0.2 but are five distinct doubles
    (10.3 - 10.1 != 20.3 - 20.1), so R sees no ties:
    > b4 <- c(10.1, 20.1, 0.1, 5.5, 1.0, 12.4, 7.7, 3.3)
    > a4 <- c(10.3, 20.3, 0.3, 5.7, 1.2, 9.9, 11.0, 2.1)
    > wilcox.test(a4, b4, paired = TRUE)
    V = 23, p-value = 0.546875, method = Wilcoxon signed rank exact test
    """
    b4 = [10.1, 20.1, 0.1, 5.5, 1.0, 12.4, 7.7, 3.3]
    a4 = [10.3, 20.3, 0.3, 5.7, 1.2, 9.9, 11.0, 2.1]
    check(tf.analyse("wilcoxon_signed_rank", frame(b4, a4), ROLES), 0.546875, 23, EXACT, 8)


def _signed(n):
    return [float(i if i % 3 else -i) for i in range(1, n + 1)]


def test_exact_at_49_differences():
    """
    > d <- (1:49) * ifelse((1:49) %% 3 == 0, -1, 1); bb <- rep(100, 49)
    > wilcox.test(bb + d, bb, paired = TRUE)
    V = 817, p-value = 0.0417038542324235, method = Wilcoxon signed rank exact test
    """
    d = _signed(49)
    res = tf.analyse("wilcoxon_signed_rank", frame([100.0] * 49, [100.0 + x for x in d]), ROLES)
    check(res, 0.0417038542324235, 817, EXACT, 49)


def test_normal_approximation_at_50_differences():
    """
    > d <- (1:50) * ifelse((1:50) %% 3 == 0, -1, 1); bb <- rep(100, 50)
    > wilcox.test(bb + d, bb, paired = TRUE)
    V = 867, p-value = 0.0270634921760479, method = Wilcoxon signed rank test with continuity correction
    """
    d = _signed(50)
    res = tf.analyse("wilcoxon_signed_rank", frame([100.0] * 50, [100.0 + x for x in d]), ROLES)
    check(res, 0.0270634921760479, 867, NORMAL, 50)


def test_a_zero_beside_49_differences_forces_normal_approximation():
    """
    > d <- c((1:49) * ifelse((1:49) %% 3 == 0, -1, 1), 0); bb <- rep(100, 50)
    > wilcox.test(bb + d, bb, paired = TRUE)
    V = 817, p-value = 0.0424330262419392, method = Wilcoxon signed rank test with continuity correction
    """
    d = _signed(49) + [0.0]
    res = tf.analyse("wilcoxon_signed_rank", frame([100.0] * 50, [100.0 + x for x in d]), ROLES)
    check(res, 0.0424330262419392, 817, NORMAL, 50)


def test_zero_deviation_gets_no_continuity_correction():
    """
    > wilcox.test(c(11, 9, 12, 8, 10), c(10, 10, 10, 10, 10), paired = TRUE)
    V = 5, p-value = 1, method = Wilcoxon signed rank test with continuity correction
    """
    res = tf.analyse("wilcoxon_signed_rank", frame([10.0] * 5, [11.0, 9, 12, 8, 10]), ROLES)
    check(res, 1.0, 5, NORMAL, 5)


def test_counts_are_subset_sums():
    assert list(signed_rank_counts(3)) == [1, 1, 1, 2, 1, 1, 1]
    brute = [0] * 56
    for signs in itertools.product((0, 1), repeat=10):
        brute[sum(i + 1 for i, s in enumerate(signs) if s)] += 1
    assert list(signed_rank_counts(10)) == brute
    assert signed_rank_counts(49).sum() == 2.0**49


def test_naive_is_paired_t():
    """
    > t.test(after, before, paired = TRUE)$p.value
    [1] 0.0578610273061061
    """
    fam = tf.get_family("wilcoxon_signed_rank")
    res = fam.naive(Condition(method="wilcoxon_signed_rank", roles=ROLES), frame(BEFORE, AFTER))
    assert res.pvalue == pytest.approx(0.0578610273061061, rel=1e-9)
    assert res.method == "Paired t-test"
    assert res.df == (9.0,)


def test_all_zero_differences_raise():
    """R gives p = NaN when every difference is zero."""
    with pytest.raises(DataError):
        tf.analyse("wilcoxon_signed_rank", frame([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]), ROLES)


def test_the_large_sample_version_is_accepted_where_r_is_exact():
    """R's default is exact here (8 differences, no zeros or ties); exact = FALSE is accepted:
    > wilcox.test(c(5.1, 6.3, 4.4, 7.9, 6.6, 5.8, 8.1, 6.9), c(4.2, 6.05, 4.9, 6.15, 5.0, 4.65, 7.25, 5.35),
    +             paired = TRUE, exact = FALSE)
    V = 34, p-value = 0.029973973586555871 (Wilcoxon signed rank test with continuity correction)"""
    fam = tf.get_family("wilcoxon_signed_rank")
    (alt,) = fam.accepted
    assert alt.call == "wilcox.test(after, before, paired = TRUE, exact = FALSE)"
    data = pd.DataFrame({"post": [5.1, 6.3, 4.4, 7.9, 6.6, 5.8, 8.1, 6.9],
                         "pre": [4.2, 6.05, 4.9, 6.15, 5.0, 4.65, 7.25, 5.35]})
    res = run_test(fam, Condition(method="wilcoxon_signed_rank", roles=ROLES), data, which=alt)
    assert res.method == alt.method == "Wilcoxon signed rank test with continuity correction"
    assert res.statistic == 34.0 and res.pvalue == pytest.approx(0.029973973586555871, rel=1e-12)
    assert tf.analyse("wilcoxon_signed_rank", data, ROLES).method == "Wilcoxon signed rank exact test"
