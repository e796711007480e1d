"""bh_fdr pinned to R 4.2.2: Welch t-tests of a marker panel,
``p.adjust(method = "BH")``, read at the target (R's p.adjust itself, with
ties and caps at m = 5 and m = 20, is pinned in test_holm_adjusted.py)."""

import pytest

import taskfactory as tf
from taskfactory.errors import DataError

from test_holm_adjusted import DATA, RAW, ROLES


def test_panel_matches_r():
    """
    > p_raw <- sapply(paste0("m", 1:5), function(v) t.test(d[[v]] ~ d[["g"]])$p.value)
    > sprintf("%.17g", p.adjust(p_raw, "BH"))   # four tied adjusted values
    0.077584920004912544 0.077584920004912544 0.077584920004912544 0.077584920004912544 0.59947480308344314
    """
    res = tf.analyse("bh_fdr", DATA, ROLES)
    assert res.pvalue == pytest.approx(0.077584920004912544, rel=1e-9)
    assert res.statistic == pytest.approx(-2.0886523835030881, rel=1e-9)
    assert [t.pvalue for t in res.terms] == pytest.approx([0.077584920004912544] * 4 + [0.59947480308344314],
                                                          rel=1e-9)
    assert list(res.details["p_raw"].values()) == pytest.approx(RAW, rel=1e-9)


def test_target_with_the_largest_p_is_not_adjusted():
    """> p.adjust(p_raw, "BH")[["m5"]]   [1] 0.59947480308344314 (the largest raw p stays)"""
    res = tf.analyse("bh_fdr", DATA, {**ROLES, "target": "m5"})
    assert res.pvalue == pytest.approx(0.59947480308344314, rel=1e-9)


def test_a_constant_marker_is_refused():
    """R stops: > d$m4 <- 1; t.test(m4 ~ g, data = d)  Error: data are essentially constant"""
    with pytest.raises(DataError):
        tf.analyse("bh_fdr", DATA.assign(m4=1.0), ROLES)
