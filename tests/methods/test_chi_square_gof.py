"""chi_square_gof pinned to R 4.2.2.

R's ``chisq.test(table(outcome), p = p0)``: X-squared = sum (O - E)^2 / E on
k - 1 df with no continuity correction, the levels in the order of ``p0`` and
a level absent from the sample counted as zero. An expected count below 5
(where R warns) is refused; so are shares that do not sum to 1 (R's error)
and a sample level the shares do not name.
"""

import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.errors import DataError, InputError
from taskfactory.make.reference import fill
from taskfactory.scenarios import shares_text

SNAP = {"red": 0.25, "pink": 0.5, "white": 0.25}
ABC = {"a": 0.4, "b": 0.1, "c": 0.5}


def sample(**counts):
    return pd.DataFrame({"y": [level for level, k in counts.items() for _ in range(k)]})


def test_three_levels():
    """> y <- c(rep("red", 14), rep("pink", 33), rep("white", 13))
    > p0 <- c("red" = 0.25, "pink" = 0.5, "white" = 0.25)
    > r <- chisq.test(table(factor(y, levels = names(p0))), p = p0)
    > sprintf("%.17g %.17g %d", r$statistic, r$p.value, r$parameter)
    "0.6333333333333333 0.72857357251139299 2"
    """
    res = tf.analyse("chi_square_gof", sample(red=14, pink=33, white=13), {"outcome": "y", "stated": SNAP})
    assert res.pvalue == pytest.approx(0.72857357251139299, rel=1e-12)
    assert res.statistic == pytest.approx(0.6333333333333333, rel=1e-12)
    assert (res.df, res.statistic_name, res.n) == ((2.0,), "X-squared", 60)
    assert res.method == "Chi-squared test for given probabilities"


def test_a_level_absent_from_the_sample_counts_zero():
    """> y <- c(rep("a", 30), rep("b", 12), rep("c", 58)); p <- c("a" = 0.4, "b" = 0.1, "c" = 0.5)
    > r <- chisq.test(table(factor(y, levels = names(p))), p = p)   # "4.1799999999999997 0.12368713581745483"
    > y <- c(rep("a", 30), rep("c", 25))   # no b: expected 5.5 for b, no warning
    > r <- chisq.test(table(factor(y, levels = names(p))), p = p)   # "8.6363636363636367 0.013324087145492417"
    """
    full = tf.analyse("chi_square_gof", sample(a=30, b=12, c=58), {"outcome": "y", "stated": ABC})
    assert full.pvalue == pytest.approx(0.12368713581745483, rel=1e-12)
    res = tf.analyse("chi_square_gof", sample(a=30, c=25), {"outcome": "y", "stated": ABC})
    assert res.pvalue == pytest.approx(0.013324087145492417, rel=1e-12)
    assert res.statistic == pytest.approx(8.6363636363636367, rel=1e-12)


def test_small_expected_counts_and_unknown_levels_are_refused():
    with pytest.raises(DataError, match=r"^an expected count is below 5 \(4\.9\); R warns"):
        tf.analyse("chi_square_gof", sample(a=20, b=9, c=20), {"outcome": "y", "stated": ABC})
    with pytest.raises(DataError, match=r"^'y' holds the level 'd', which the stated shares give none$"):
        tf.analyse("chi_square_gof", sample(a=30, b=12, c=58, d=1), {"outcome": "y", "stated": ABC})


@pytest.mark.parametrize("p0, message", [
    ({"a": 0.5, "b": 0.4}, "role 'stated' sums to 0.9; shares must sum to 1"),
    ({"a": 1.0}, "role 'stated' must map at least two levels to their shares, got {'a': 1.0}"),
    ({"a": 0.5, "b": True, "c": 0.5}, "role 'stated' gives 'b' the share True; shares are numbers between 0 and 1"),
    (0.5, "role 'stated' must map at least two levels to their shares, got 0.5"),
])
def test_malformed_shares_are_refused(p0, message):
    with pytest.raises(InputError) as err:
        tf.analyse("chi_square_gof", sample(a=30, b=12, c=58), {"outcome": "y", "stated": p0})
    assert str(err.value) == message


def test_shares_reach_the_prompt_and_the_reference_code_in_order():
    assert shares_text(SNAP) == "red 25 %, pink 50 % and white 25 %"
    assert fill("p0 <- {stated}", {"stated": SNAP}, "r") == 'p0 <- c("red" = 0.25, "pink" = 0.5, "white" = 0.25)'
    assert fill("p0 = {stated}", {"stated": SNAP}, "py") == "p0 = {'red': 0.25, 'pink': 0.5, 'white': 0.25}"
