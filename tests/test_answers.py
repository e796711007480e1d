"""Answer kinds: the gold struct each fills and how an answer is scored."""

import pytest

from taskfactory.answers import COUNT, ESTIMATE, GOLD_FIELDS, INTERVAL, KINDS, P_VALUE, YES_NO, capped_z


def test_each_kind_fills_its_fields_and_leaves_the_others_null():
    gold = INTERVAL.gold(low=0.123, high=0.456)
    assert list(gold) == list(GOLD_FIELDS)
    assert gold == {"kind": "interval", "p_value": None, "decision": None, "estimate": None, "low": 0.123,
                    "high": 0.456, "integer": None, "yes_no": None}
    assert P_VALUE.gold(p_value=0.01, decision="reject")["kind"] == "p_value"
    assert sorted(KINDS) == ["count", "estimate", "integer", "interval", "p_value", "yes_no"]


def test_a_gold_with_missing_or_unknown_fields_is_refused():
    with pytest.raises(ValueError) as err:
        P_VALUE.gold(p_value=0.01)
    assert str(err.value) == "a p_value gold takes p_value, decision; got p_value"
    with pytest.raises(ValueError):
        YES_NO.gold(yes_no=True, estimate=1.0)


def test_p_values_are_scored_in_capped_z_space():
    gold = P_VALUE.gold(p_value=0.03, decision="reject")
    assert capped_z(0.03) == pytest.approx(2.1700903775845606)
    assert P_VALUE.score({"p_value": 0.02}, gold)          # z 2.326, |dz| = 0.156
    assert not P_VALUE.score({"p_value": 0.1}, gold)       # z 1.645, |dz| = 0.526
    assert P_VALUE.score({"p_value": 0.1}, gold, loose=True)
    tiny = P_VALUE.gold(p_value=1e-30, decision="reject")
    assert P_VALUE.score({"p_value": 2.2e-16}, tiny)       # both beyond the cap of z = 5


def test_closed_form_kinds_use_their_tolerances():
    assert INTERVAL.score({"low": 0.1234, "high": 0.4561}, INTERVAL.gold(low=0.123, high=0.456))
    assert not INTERVAL.score({"low": 0.125, "high": 0.456}, INTERVAL.gold(low=0.123, high=0.456))
    assert INTERVAL.score({"low": 0.125, "high": 0.456}, INTERVAL.gold(low=0.123, high=0.456), loose=True)
    assert ESTIMATE.score({"estimate": 1.0005}, ESTIMATE.gold(estimate=1.0))
    assert not ESTIMATE.score({"estimate": float("nan")}, ESTIMATE.gold(estimate=1.0))
    assert COUNT.score({"integer": 3}, COUNT.gold(integer=3)) and not COUNT.score({"integer": 4}, COUNT.gold(integer=3))
    assert YES_NO.score({"yes_no": False}, YES_NO.gold(yes_no=False))
