"""The grader: parsing completions, the paper's reward, method-aware grading,
the SFT filter, verl's compute_score and ``taskfactory score``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.cli import main
from taskfactory.readers import load_yaml
from taskfactory.errors import ScenarioError
from taskfactory.use.reward import (Answer, Invalid, compute_score, ground_truth, parse_answer, parse_p_value, reward,
                                sft_keep)
from taskfactory.errors import InputError
from taskfactory.use.score import pass_at_k, reported_ks, score

from conftest import PINNED

GOLDEN = load_yaml(Path(__file__).parent / "golden" / "completions.yaml", ScenarioError, "golden completions")
#: Hostile completions (and honest ones beside them), graded against GOLDEN's tasks.
HOSTILE = load_yaml(Path(__file__).parent / "adversarial" / "completions" / "cases.yaml", ScenarioError,
                    "hostile completions")


def golden_text(text) -> str:
    """A golden case's text: as written, or its pieces joined ({repeat, times} written out)."""
    if isinstance(text, str):
        return text
    return "".join(p if isinstance(p, str) else p["repeat"] * p["times"] for p in text)


def task(p: float, decision: str, method: str = "welch_t", accepted=()) -> dict:
    gold = {"kind": "p_value", "p_value": p, "decision": decision}
    return {"task_id": f"{method}-000000000000", "method": method, "gold": gold, "accepted": list(accepted)}


def block(p, decision="reject", method="Welch two-sample t-test") -> str:
    return f"METHOD: {method}\nP_VALUE: {p!r}\nDECISION: {decision}"


@pytest.mark.parametrize("case", GOLDEN["completions"] + HOSTILE["completions"], ids=lambda c: c["name"])
def test_golden_completions_parse_and_score_as_pinned(case):
    kind = case.get("kind", "p_value")
    text = golden_text(case["text"])
    got = parse_answer(text, kind)
    if "invalid" in case:
        assert got == Invalid(case["invalid"])
    else:
        want = dict(case["answer"])
        method = want.pop("method", None)
        assert got == Answer(want, method)
    result = reward(GOLDEN["tasks"][case.get("task", GOLDEN["kind_task"][kind])], text)
    assert (result.valid, result.reason) == ("invalid" not in case, case.get("invalid"))
    assert result.reward == pytest.approx(case["reward"], abs=1e-9)
    if "method" in case:
        assert result.method == case["method"]


@pytest.mark.parametrize("text, p", [
    ("p < 2.2e-16", 2.2e-16), ("p = 1.2e-5", 1.2e-5), ("1.2e-05", 1.2e-5), ("1.2 x 10^-5", 1.2e-5),
    ("1.2×10⁻⁵", 1.2e-5), (".03", 0.03), ("1.2*10^(-5)", 1.2e-5), ("P-value: 0.0132 (two-sided)", 0.0132),
    (r"$1.2 \times 10^{-5}$", 1.2e-5), ("10^-3", 1e-3), ("1e-400", 0.0), ("1", 1.0)])
def test_p_value_forms(text, p):
    assert parse_p_value(text) == p


def test_reward_matches_the_formula_by_hand():
    # z(0.01) = 2.5758293035489, z(0.02) = 2.3263478740408 (qnorm(1 - p/2) in R)
    r = reward(task(0.01, "reject"), block(0.02))
    assert r.valid and r.raw and r.strict
    assert r.z_gold == pytest.approx(2.5758293035489, abs=1e-12)
    assert r.z_hat == pytest.approx(2.3263478740408, abs=1e-12)
    assert r.r_p == pytest.approx(math.exp(-(2.5758293035489 - 2.3263478740408)), abs=1e-12)
    assert r.reward == pytest.approx(0.9 * r.r_p + 0.1, abs=1e-15)
    # wrong decision: only r_p counts, and neither Raw nor Strict
    wrong = reward(task(0.01, "reject"), block(0.02, "fail to reject"))
    assert (wrong.r_c, wrong.raw, wrong.strict) == (0.0, False, False)
    assert wrong.reward == pytest.approx(0.9 * r.r_p, abs=1e-15)
    # |dz| = 0.6745 (p = 0.5 against 1.0): Raw but not Strict
    loose = reward(task(1.0, "fail to reject"), block(0.5, "fail to reject"))
    assert loose.dz == pytest.approx(0.6744897501961, abs=1e-12) and loose.raw and not loose.strict


@pytest.mark.parametrize("p", [1e-300, 1e-100, 1e-16, 1e-7, 0.003, 0.049, 0.05, 0.2, 0.75, 1.0])
def test_the_gold_itself_scores_one_and_z_is_capped(p):
    decision = "reject" if p < 0.05 else "fail to reject"
    r = reward(task(p, decision), block(p, decision))
    assert r.reward == 1.0 and r.strict and r.dz == 0.0
    assert r.z_gold == min(5.0, r.z_gold) and (p > 1e-6 or r.z_gold == 5.0)


def test_capped_z_gives_full_credit_beyond_the_cap():
    r = reward(task(1e-300, "reject"), block(1e-9))
    assert (r.z_hat, r.z_gold, r.reward) == (5.0, 5.0, 1.0)


def test_invalid_answers_score_zero_with_a_reason():
    r = reward(task(0.01, "reject"), "P_VALUE: 5%\nDECISION: reject")
    assert (r.reward, r.valid, r.raw, r.reason) == (0.0, False, False, "'5%' is a percentage")


def test_an_accepted_alternative_is_graded_against_its_own_p_value():
    alt = {"method": "One-way analysis of means (not assuming equal variances)", "r_call": "oneway.test(y ~ g)",
           "p_value": 0.03, "decision": "reject"}
    t = task(0.08, "fail to reject", "one_way_anova", [alt])
    welch = reward(t, block(0.03, "reject", "Welch's ANOVA (oneway.test)"))
    assert welch.graded_against == alt["method"] and welch.reward == 1.0 and welch.method_ok
    paper = reward(t, block(0.03, "reject", "Welch's ANOVA (oneway.test)"), method_aware=False)
    assert paper.graded_against != alt["method"] and not paper.raw
    classical = reward(t, block(0.08, "fail to reject", "one-way ANOVA, oneway.test(var.equal = TRUE)"))
    assert classical.reward == 1.0 and classical.method == "One-way analysis of variance (equal variances)"


def test_the_naive_test_is_graded_against_the_gold_and_is_not_the_right_method():
    r = reward(task(0.2, "fail to reject", "welch_t"), block(0.01, "reject", "Student's t-test, var.equal = TRUE"))
    assert r.method == "Student two-sample t-test" and r.method_ok is False and not r.raw


@pytest.mark.parametrize("line, label", [
    ("Welch Two Sample t-test", "Welch two-sample t-test"),
    ("t.test(y ~ g, var.equal = TRUE)", "Student two-sample t-test"),
    (" Two Sample t-test", "Student two-sample t-test"),
    ("wilcox.test(after, before, paired = TRUE)", "Wilcoxon signed rank test"),
    ("Mann-Whitney U test", "Wilcoxon rank sum test"),
    ("Wilcoxon rank sum test with continuity correction", "Wilcoxon rank sum test with continuity correction"),
    ("Pearson's Chi-squared test", "Pearson chi-square test of independence"),
    ("cor.test(x, y, method = 'kendall')", "Kendall rank correlation test"),
    ("Spearman's rank correlation rho", "Spearman rank correlation test"),
    ("2-sample test for equality of proportions without continuity correction",
     "Two-proportion z-test without continuity correction"),
    ("Welch one-way ANOVA", "Welch one-way ANOVA"),
    ("a permutation test", None)])
def test_method_lines_name_the_test_they_mean(line, label):
    r = reward(task(0.5, "fail to reject", "welch_t"), block(0.5, "fail to reject", line))
    assert r.method == label


def test_sft_filter_keeps_a_matching_decision_within_a_decade():
    t = task(0.001, "reject")
    assert sft_keep(t, block(0.0099))
    assert not sft_keep(t, block(0.0101))
    assert not sft_keep(t, block(0.002, "fail to reject"))


def test_compute_score_takes_verls_signature_and_the_ground_truth_json():
    rec = {**task(0.04, "reject"), "gold": {"kind": "p_value", "p_value": 0.04, "decision": "reject", "estimate": None,
                                          "low": None, "high": None, "integer": None, "yes_no": None}}
    gt = json.dumps(ground_truth(rec))
    assert json.loads(gt)["gold"] == {"kind": "p_value", "p_value": 0.04, "decision": "reject"}
    out = compute_score("taskfactory", block(0.04), gt, extra_info={"split": "train"})
    assert out == {"score": 1.0, "r_p": 1.0, "r_c": 1.0, "raw": 1.0, "strict": 1.0, "valid": 1.0}


def test_closed_form_kinds_score_strict_as_reward_and_loose_as_raw():
    t = {"method": "x", "gold": {"kind": "estimate", "estimate": 1.2345}}
    near, loose, far = (reward(t, f"ESTIMATE: {v}") for v in (1.2352, 1.2400, 1.30))
    assert (near.reward, near.strict, near.raw) == (1.0, True, True)
    assert (loose.reward, loose.strict, loose.raw) == (0.0, False, True)
    assert (far.reward, far.raw) == (0.0, False)
    assert reward({"method": "x", "gold": {"kind": "integer", "integer": 385}}, "ANSWER: 385").reward == 1.0


def test_pass_at_k_is_the_unbiased_estimator():
    assert pass_at_k(5, 0, 1) == 0.0 and pass_at_k(5, 5, 3) == 1.0
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)   # 1 - C(3,2)/C(5,2)


SMALL = {"name": "graded", "seed": 11, "methods": ["welch_t", "one_way_anova", "chi_square_independence"],
         "scenarios": {"welch_t": PINNED["welch_t"][:3], "one_way_anova": ["wheat_nitrogen", "stroop_instructions"],
                       "chi_square_independence": ["trust_by_education"]},
         "n": [100], "effects": ["null", "borderline", "medium"], "perturbations": ["none", "extreme"], "seeds": 2}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("graded") / "corpus"
    tf.build(SMALL, out, progress=False)
    return out


def records(corpus) -> list[dict]:
    from taskfactory.store.corpus import iter_records
    return list(iter_records(corpus))


def test_gold_baseline_scores_one(corpus):
    report = score(corpus, baseline="gold", by=("method", "trap"))
    o = report.overall
    assert o["tasks"] == report.corpus_tasks == len(records(corpus))
    assert (o["raw_pass@1"], o["strict_pass@1"], o["mean_reward"], o["method_accuracy"]) == (1.0, 1.0, 1.0, 1.0)


def test_naive_baseline_fails_exactly_the_naive_traps(corpus):
    recs = [r for r in records(corpus) if r["naive_p"] is not None]
    traps = sum("naive_method" in r["trap_kinds"] for r in recs)
    assert 0 < traps < len(recs)
    o = score(corpus, baseline="naive").overall
    assert o["tasks"] == len(recs)
    assert o["raw_pass@1"] == pytest.approx(1 - traps / len(recs), abs=1e-12)
    assert o["method_accuracy"] == 0.0


def test_runs_give_pass_at_k_and_a_spread(corpus, tmp_path):
    recs = records(corpus)[:4]
    lines = []
    for i, rec in enumerate(recs):
        g = rec["gold"]
        for run in range(3):
            right = run < i   # task i has i right answers of 3 (at most 3)
            p, d = (g["p_value"], g["decision"]) if right else (0.999 if g["decision"] == "reject" else 1e-9,
                                                                  "fail to reject" if g["decision"] == "reject" else "reject")
            lines.append(json.dumps({"task_id": rec["task_id"], "run": run, "p_value": p, "decision": d}))
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    o = score(corpus, path).overall
    assert (o["tasks"], o["answers"]) == (4, 12)
    assert o["raw_pass@1"] == pytest.approx((0 + 1 / 3 + 2 / 3 + 1) / 4)
    assert o["raw_pass@2"] == pytest.approx((0 + 2 / 3 + 1 + 1) / 4)
    assert o["raw_pass@3"] == pytest.approx(3 / 4)
    assert o["raw_pass@1_sd_over_runs"] == pytest.approx(0.25)   # runs score 3/4, 2/4, 1/4 (SD, n - 1)


def test_score_command_prints_the_table_and_json(corpus):
    result = CliRunner().invoke(main, ["score", str(corpus), "--baseline", "gold", "--by", "effect"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"scored {len(records(corpus))} answers to {len(records(corpus))} of {len(records(corpus))} tasks"
    assert any(line.startswith("  borderline ") for line in lines)
    as_json = CliRunner().invoke(main, ["score", str(corpus), "--baseline", "naive", "--json"])
    assert json.loads(as_json.output)["overall"]["method_accuracy"] == 0.0


def test_predictions_must_be_a_regular_file(corpus, tmp_path):
    with pytest.raises(InputError) as err:
        score(corpus, tmp_path)
    assert str(err.value) == f"{tmp_path}: not a regular file (a folder, FIFO or device); give a JSONL file"


def test_pass_at_k_is_linear_and_reported_at_chosen_ks():
    assert reported_ks(1) == [] and reported_ks(3) == [2, 3]
    assert reported_ks(3000) == [2, 3, 4, 5, 6, 7, 8, 9, 10, 16, 32, 64, 128, 256, 512, 1024, 2048, 3000]
    assert pass_at_k(3000, 1500, 1000) == pytest.approx(1 - math.comb(1500, 1000) / math.comb(3000, 1000), rel=1e-12)
    assert pass_at_k(3000, 0, 7) == 0.0 and pass_at_k(3000, 2994, 7) == 1.0


def test_a_task_whose_gold_cannot_grade_is_refused_by_name():
    for gold, message in [({"kind": "p_value", "p_value": float("nan"), "decision": "reject"},
                           "the task's gold.p_value is nan, not a p-value in [0, 1]"),
                          ({"kind": "p_value", "p_value": -0.1, "decision": "reject"},
                           "the task's gold.p_value is -0.1, not a p-value in [0, 1]"),
                          ({"kind": "p_value", "p_value": 0.2, "decision": "maybe"},
                           "the task's gold.decision is 'maybe', not reject or fail to reject"),
                          ({"kind": "guess"}, "the task's gold.kind is 'guess', not one of p_value, estimate, "
                                              "interval, integer, count, yes_no"),
                          ({"kind": "interval", "low": 0.6, "high": 0.2},
                           "the task's gold.low (0.6) is above gold.high (0.2)")]:
        with pytest.raises(InputError) as err:
            reward({"method": "welch_t", "gold": gold}, block(0.2))
        assert str(err.value) == message
    with pytest.raises(InputError) as err:
        forged = [{"method": "x", "p_value": 2.0, "decision": "reject"}]
        reward(task(0.2, "fail to reject", accepted=forged), block(0.2))
    assert str(err.value) == "the task's accepted[0].p_value is 2.0, not a p-value in [0, 1]"
    with pytest.raises(InputError) as err:
        compute_score("taskfactory", block(0.2), '[' * 100_000)
    assert str(err.value) == "the task is text that is not a JSON object"


def test_a_completion_that_is_not_text_is_invalid_with_its_type():
    for value in (None, b"P_VALUE: 0.01\nDECISION: reject", 3, ["METHOD: Welch"]):
        r = reward(task(0.01, "reject"), value)
        assert (r.valid, r.reward, r.reason) == (False, 0.0, f"the completion is not text (got {type(value).__name__})")


def test_an_answer_given_as_fields_is_checked_before_it_is_scored():
    welch, yes_no = task(0.0132, "reject"), {"method": "two_prop", "gold": {"kind": "yes_no", "yes_no": False}}
    for t, given, reason in [(welch, Answer({}), "the answer's p_value is None, not a p-value in [0, 1]"),
                             (yes_no, Answer({"p_value": 0.1, "decision": "reject"}),
                              "the answer's yes_no is None, not true or false"),
                             (welch, Answer({"p_value": "x", "decision": "reject"}),
                              "the answer's p_value is 'x', not a p-value in [0, 1]"),
                             (welch, Answer({"p_value": float("nan"), "decision": "reject"}),
                              "the answer's p_value is nan, not a p-value in [0, 1]")]:
        r = reward(t, given)
        assert (r.valid, r.reward, r.reason) == (False, 0.0, reason)


def test_sft_keep_grades_against_the_test_reward_grades_against():
    odd = task(0.0132, "reject", accepted=[{"method": "Welch two-sample t-test", "decision": "fail to reject"}])
    assert sft_keep(odd, block(0.0132)) and not sft_keep(odd, block(0.2))
    with pytest.raises(InputError) as err:
        reward({"gold": {"kind": "p_value", "p_value": 0.1, "decision": "reject"}}, block(0.1))
    assert str(err.value) == "the task's method is None, not a family name"


def test_a_predictions_file_of_unusable_lines_says_why(corpus, tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 50 + "]" * 50 + "\n" + '{"a": ' * 40 + "1" + "}" * 40 + "\n")
    with pytest.raises(InputError) as err:
        score(corpus, path)
    assert str(err.value) == f"{path}: not JSONL: no line is a JSON object (line 2 is nested more than 32 levels deep)"


def test_a_hand_built_answer_of_the_wrong_shape_is_invalid_not_raised():
    welch = task(0.0132, "reject")
    for given, reason in [(Answer({"p_value": 0.03, "decision": "reject"}, method=123),
                           "the answer's method is int, not text"),
                          (Answer(None), "the answer's values are NoneType, not a mapping"),
                          (Answer({"p_value": 10**400, "decision": "reject"}),
                           "the answer's p_value is " + repr(10**400)[:60] + ", not a p-value in [0, 1]")]:
        r = reward(welch, given)
        assert (r.valid, r.reason) == (False, reason)
