"""holm_adjusted pinned to R 4.2.2: Welch t-tests of a marker panel,
``p.adjust(method = "holm")``, read at the target; the question words of the
biomarker_panel siblings; the calibration's critical value."""

import numpy as np
import pandas as pd
import pytest

import taskfactory as tf
from taskfactory.condition import Condition
from taskfactory.errors import DataError, ScenarioError
from taskfactory.methods.holm_adjusted import HolmAdjusted, benjamini_hochberg, holm
from taskfactory.scenarios import parse_scenario

#: set.seed(3); g <- rep(c("a", "b"), c(8, 9)); five markers drawn in R and rounded (see each test).
DATA = pd.DataFrame({
    "g": ["a"] * 8 + ["b"] * 9,
    "m1": [8.08, 9.41, 10.52, 7.7, 10.39, 10.06, 10.17, 12.23, 10.06, 15.03, 11.01, 10.24, 11.07, 13.01, 12.8,
           11.88, 10.59],
    "m2": [4.35, 6.22, 5.2, 4.42, 4.06, 4.8, 3.33, 4.52, 4.09, 6.94, 6.72, 5.09, 3.49, 6.55, 6.48, 6.29, 6.3],
    "m3": [94.7, 110.6, 119.5, 100.6, 85.3, 111.9, 111.8, 95.3, 145.5, 108.1, 125.2, 86, 117.6, 137, 113.2, 106.5,
           130.9],
    "m4": [-0.809, 0.267, -1.737, -1.411, -0.454, -1.035, 1.362, 0.917, -0.485, 0.874, 1.218, 0.556, 0.652, 1.474,
           -0.181, -0.119, 1.255],
    "m5": [43.6, 50.9, 49.8, 52.3, 55.1, 51.3, 51.2, 53.7, 59, 51.5, 39.1, 46.6, 63.6, 44.8, 54.2, 59, 55.1],
})
ROLES = {"group": "g", "markers": ["m1", "m2", "m3", "m4", "m5"], "target": "m3"}
#: > p_raw <- sapply(paste0("m", 1:5), function(v) t.test(d[[v]] ~ d[["g"]])$p.value)
RAW = [0.020352577875315997, 0.039794110454480114, 0.055874727938563372, 0.062067936003930034, 0.59947480308344314]

P20 = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262, 0.5719, 0.6528,
       0.7590, 1.0000, 0.0344, 0.0001, 0.9, 0.2, 0.05]


def test_p_adjust_holm_matches_r_with_ties_and_caps():
    """
    > p.adjust(c(0.01, 0.04, 0.03, 0.04, 0.5), "holm")
    [1] 0.05 0.12 0.12 0.12 0.50
    > sprintf("%.17g", p.adjust(p20, "holm"))   # p20 as P20: m = 20, ties, a 1
    """
    assert holm([0.01, 0.04, 0.03, 0.04, 0.5]) == pytest.approx([0.05, 0.12, 0.12, 0.12, 0.5], rel=1e-12)
    r20 = [0.002, 0.0072000000000000007, 0.032300000000000002, 0.152, 0.30149999999999999, 0.38919999999999999,
           0.38919999999999999, 0.4128, 0.45900000000000002, 1, 1, 1, 1, 1, 1, 0.4128, 0.002, 1, 1,
           0.45900000000000002]
    assert holm(P20) == pytest.approx(r20, rel=1e-12)
    assert holm([0.3]) == [0.3]


def test_p_adjust_bh_matches_r_with_ties_and_caps():
    """
    > p.adjust(c(0.01, 0.04, 0.03, 0.04, 0.5), "BH")
    [1] 0.05 0.05 0.05 0.05 0.50
    > sprintf("%.17g", p.adjust(p20, "BH"))
    """
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.04, 0.5]) == pytest.approx([0.05] * 4 + [0.5], rel=1e-12)
    r20 = [0.001, 0.002666666666666667, 0.0094999999999999998, 0.037999999999999999, 0.067000000000000004, 0.0688,
           0.0688, 0.0688, 0.083333333333333343, 0.46285714285714286, 0.5682666666666667, 0.71487499999999993,
           0.76800000000000013, 0.84333333333333338, 1, 0.0688, 0.001, 0.94736842105263153, 0.30769230769230771,
           0.083333333333333343]
    assert benjamini_hochberg(P20) == pytest.approx(r20, rel=1e-12)


def test_panel_matches_r():
    """
    > res <- p.adjust(p_raw, "holm")   # sprintf("%.17g", ...)
    0.10176288937657998 0.15917644181792046 0.16762418381569011 0.16762418381569011 0.59947480308344314
    > t.test(m3 ~ g, data = d)
    t = -2.0886523835030881, df = 13.723177120418379, p-value = 0.055874727938563372
    """
    res = tf.analyse("holm_adjusted", DATA, ROLES)
    assert res.pvalue == pytest.approx(0.16762418381569011, rel=1e-9)
    assert res.statistic == pytest.approx(-2.0886523835030881, rel=1e-9)
    assert res.df[0] == pytest.approx(13.723177120418379, rel=1e-9)
    assert res.target == "m3" and res.n == 17
    adjusted = [0.10176288937657998, 0.15917644181792046, 0.16762418381569011, 0.16762418381569011,
                0.59947480308344314]
    assert [t.pvalue for t in res.terms] == pytest.approx(adjusted, rel=1e-9)
    assert list(res.details["p_raw"].values()) == pytest.approx(RAW, rel=1e-9)


def test_naive_is_the_targets_unadjusted_welch_test():
    """> t.test(m3 ~ g, data = d)$p.value   [1] 0.055874727938563372"""
    res = tf.get_family("holm_adjusted").naive(Condition(method="holm_adjusted", roles=ROLES), DATA)
    assert res.pvalue == pytest.approx(0.055874727938563372, rel=1e-9)


def test_a_constant_marker_is_refused():
    """R stops: > d$m2 <- 5; t.test(m2 ~ g, data = d)  Error: data are essentially constant"""
    data = DATA.assign(m2=5.0)
    with pytest.raises(DataError):
        tf.analyse("holm_adjusted", data, ROLES)
    with pytest.raises(DataError):  # R: not enough 'x' observations
        tf.analyse("holm_adjusted", DATA.iloc[7:], ROLES)


def test_a_target_outside_the_markers_is_refused():
    with pytest.raises(DataError, match=r"^the target 'm9' must be one of the markers \(m1, m2"):
        tf.analyse("holm_adjusted", DATA.assign(m9=DATA["m1"]), {**ROLES, "target": "m9"})


@pytest.mark.parametrize("method, small", [("holm_adjusted", 0.01), ("bh_fdr", 0.05)])
def test_critical_value_is_where_the_adjustment_starts_to_reject_the_target(method, small):
    """The calibration's critical raw p of the target, against p.adjust itself
    (holm_adjusted's and bh_fdr's, with half the other markers' p below ``small``)."""
    fam = tf.get_family(method)
    rng = np.random.default_rng(4)
    for m in (5, 12, 20):
        others = np.sort(np.where(rng.random((300, m - 1)) < 0.5, rng.random((300, m - 1)) * small,
                                  rng.random((300, m - 1))), axis=1)
        passes = others <= fam.thresholds(m, 0.05)
        cut = fam.critical(passes, m, 0.05)
        for row, c in zip(others, cut):
            assert fam.adjust(np.append(row, c * 0.999))[-1] <= 0.05
            assert fam.adjust(np.append(row, c * 1.001))[-1] > 0.05


def test_question_words_fill_the_shared_question():
    """The siblings share each scenario; only the error rate differs."""
    texts = {}
    for method in ("holm_adjusted", "bh_fdr"):
        grid = tf.load_grid({"seed": 1, "methods": [method], "n": [40], "seeds": 1})
        from conftest import dataset
        from taskfactory.make.task import record

        scen = tf.load_scenarios(method)[0]
        c, ds = dataset(grid, method, scen.id, 40, "null")
        rec = record(grid, c, ds)
        texts[method] = rec["question"]
        assert "{" not in rec["prompt"]
    assert "the family-wise error rate" in texts["holm_adjusted"]
    assert "the false discovery rate" in texts["bh_fdr"]
    assert texts["holm_adjusted"].replace("family-wise error", "false discovery") == texts["bh_fdr"]


def test_a_question_word_one_family_lacks_is_refused():
    raw = {"id": "probe", "domain": "x", "title": "x", "context": "{n} rows.", "question": "Controlling {error_rate}?",
           "roles": {"outcome": "y", "group": "g"},
           "variables": [{"name": "i", "label": "id", "type": "id"},
                         {"name": "g", "label": "g", "type": "category", "levels": ["a", "b"]},
                         {"name": "y", "label": "y", "type": "numeric", "range": [0, 1]},
                         {"name": "z", "label": "z", "type": "numeric", "range": [0, 1], "dist": {"uniform": [0, 1]}}],
           "dgp": {"holm_adjusted": {}, "bh_fdr": {}}}
    words = {"holm_adjusted": ["error_rate"], "bh_fdr": ["error_rate"]}
    scen = parse_scenario(raw, "biomarker_panel", "probe", words=words)
    assert scen.question == "Controlling {error_rate}?"
    with pytest.raises(ScenarioError, match="names '{error_rate}', a question word 'welch_t' does not define"):
        parse_scenario({**raw, "dgp": {"holm_adjusted": {}, "welch_t": {}}}, "biomarker_panel", "probe", words=words)
    with pytest.raises(ScenarioError, match="question names '{error_rate}'; allowed"):
        parse_scenario({**raw, "dgp": {"welch_t": {}}}, "biomarker_panel", "probe", words=words)
    with pytest.raises(ScenarioError, match="a question word 'bh_fdr' does not define"):
        parse_scenario(raw, "k", "probe", words={"holm_adjusted": ["error_rate"]})


def test_a_family_with_bad_question_words_is_refused():
    class Bad(HolmAdjusted):
        question_words = {"Error rate": "x"}

    with pytest.raises(ValueError, match="question_words"):
        Bad.check_definition()


@pytest.mark.slow
@pytest.mark.parametrize("method", ["holm_adjusted", "bh_fdr"])
def test_gold_is_conservative_under_the_null(method):
    """The adjusted p is never below the raw one; the raw (naive) p is uniform
    for a null target (tests/test_families.py checks it), the gold rejects less."""
    grid = tf.load_grid({"seed": 5, "methods": [method], "n": [40], "seeds": 1})
    from conftest import dataset

    gold, raw = [], []
    for k, scen in enumerate(tf.load_scenarios(method) * 25):
        _, ds = dataset(grid, method, scen.id, 40, "null", seed=k)
        gold.append(ds.gold.pvalue)
        raw.append(ds.naive.pvalue)
    gold, raw = np.array(gold), np.array(raw)
    assert np.all(gold >= raw)
    assert np.mean(gold < 0.05) <= 0.05
