"""The closed-form families: answers pinned to R, and the drawn questions."""

from __future__ import annotations

import re

import pytest

import taskfactory as tf
from taskfactory.store.corpus import iter_records
from taskfactory.methods._proportions import pooled_z, wilson
from taskfactory.methods.holm import holm_rejections
from taskfactory.methods.sample_size import is_whole, required_n
from taskfactory.methods.two_prop import separated
from taskfactory.use.score import score
from taskfactory.make.columns import drawn_params

CLOSED = ["wilson_ci", "two_prop", "two_prop_z", "sample_size", "holm"]


@pytest.mark.parametrize("x, n, low, high", [
    (12, 80, 0.087940405061635515, 0.244132285613233468),     # prop.test(12, 80, correct = FALSE)$conf.int
    (433, 4800, 0.082428228006879711, 0.098643829902840208),  # prop.test(433, 4800, correct = FALSE)$conf.int
    (30, 60, 0.37735024241555776, 0.62264975758444230)])     # prop.test(30, 60, correct = FALSE)$conf.int
def test_wilson_interval_matches_r(x, n, low, high):
    got = wilson(x, n)
    assert got[0] == pytest.approx(low, abs=1e-14) and got[1] == pytest.approx(high, abs=1e-14)


def test_pooled_z_matches_r():
    # r <- prop.test(c(45, 30), c(100, 110), correct = FALSE); sign(45/100 - 30/110) * sqrt(r$statistic)
    assert pooled_z(45, 100, 30, 110) == pytest.approx(2.6776289828310733, abs=1e-13)
    assert pooled_z(7, 60, 19, 55) == pytest.approx(-2.9299298648363239, abs=1e-13)


def test_two_prop_reads_the_overlap_of_wilson_intervals():
    # prop.test(30, 60) [0.3774, 0.6226] and prop.test(42, 60) [0.5749, 0.8010] overlap;
    # prop.test(12, 80) [0.0879, 0.2441] and prop.test(40, 60) [0.5406, 0.7727] do not
    apart, gap = separated({"x1": 30, "n1": 60, "x2": 42, "n2": 60})
    assert not apart and gap == pytest.approx(0.57491292053085519 - 0.62264975758444230, abs=1e-14)
    assert separated({"x1": 12, "n1": 80, "x2": 40, "n2": 60})[0]


def test_sample_size_by_hand_and_in_r():
    # ceiling(1.96^2 * 0.25 / 0.03^2) = 1068 (1067.11); 4.5 points: 475 (474.27); 5 points: 385 (384.16)
    assert [required_n(m) for m in (3, 4.5, 5)] == [1068, 475, 385]
    # exactly whole: 9604 / points^2 at 1, 2, 3.5, 7 points; never drawn
    assert [is_whole(m) for m in (1, 2, 3.5, 7, 3)] == [True, True, True, True, False]
    assert required_n(3.5) == 784


def test_holm_count_matches_r():
    # sum(p.adjust(c(0.001, 0.0125, 0.02, 0.04, 0.3), "holm") <= 0.05) == 2 (adjusted 0.005 0.050 0.060 0.080 0.300)
    assert holm_rejections([0.001, 0.0125, 0.02, 0.04, 0.3]) == 2
    assert holm_rejections([4.168e-05, 0.0744, 0.2278, 0.9388, 0.004012, 0.8448, 0.05238, 0.1445, 2.254e-07,
                            1.56e-05]) == 4   # R: 4
    assert holm_rejections([0.2, 0.3]) == 0 and holm_rejections([0.001, 0.002]) == 2


@pytest.fixture(scope="module")
def closed_corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("closed") / "corpus"
    grid = {"name": "closed", "seed": 5, "methods": CLOSED, "n": [30, 4800], "effects": ["null"],
            "prompt_styles": ["basic", "guided"], "seeds": 3}
    tf.build(grid, out, progress=False)
    return out


def test_closed_form_tasks_state_their_numbers_and_solve_them(closed_corpus):
    recs = list(iter_records(closed_corpus))
    assert sorted({r["method"] for r in recs}) == sorted(CLOSED)
    for rec in recs:
        params = {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in drawn_params(rec["dgp_params"]).items()}
        words = set(re.findall(r"\d+", rec["prompt"]))
        assert rec["data_csv"] is None and rec["naive_method"] is None and not rec["trap"]
        if rec["method"] == "wilson_ci":
            assert {str(params["successes"]), str(rec["n"])} <= words
            assert (rec["gold"]["low"], rec["gold"]["high"]) == wilson(params["successes"], rec["n"])
        elif rec["method"] in ("two_prop", "two_prop_z"):
            assert params["n1"] + params["n2"] == rec["n"]
            assert {str(params[k]) for k in ("x1", "n1", "x2", "n2")} <= words
        elif rec["method"] == "holm":
            assert ", ".join(f"{p:.4g}" for p in params["p_list"]) in rec["prompt"] and rec["gold"]["kind"] == "count"
            assert rec["gold"]["integer"] == holm_rejections(params["p_list"])
        elif rec["method"] == "sample_size":
            assert not is_whole(params["margin_points"]) and rec["gold"]["integer"] == required_n(params["margin_points"])


def test_two_prop_answers_are_not_all_one_way(closed_corpus):
    answers = [r["gold"]["yes_no"] for r in iter_records(closed_corpus) if r["method"] == "two_prop"]
    assert 0.2 < sum(answers) / len(answers) < 0.8


def test_closed_form_corpus_verifies_and_its_gold_scores_one(closed_corpus):
    assert tf.verify(closed_corpus).ok
    o = score(closed_corpus, baseline="gold").overall
    assert (o["raw_pass@1"], o["strict_pass@1"], o["mean_reward"]) == (1.0, 1.0, 1.0)
