"""Hostile completions against the grader (scripts/fuzz_reward.py makes them):
every call returns a well-formed result with a reason, and the grader's
cache stays bounded. The slowest call and the memory are measured by the
script, not here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from taskfactory.use import reward as grader

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "fuzz_reward.py"


def fuzz():
    spec = importlib.util.spec_from_file_location("fuzz_reward", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def feed(count: int, seed: int) -> dict:
    """Reward ``count`` hostile completions; the sorts and kinds seen, and how many were valid."""
    module, seen, valid = fuzz(), set(), 0
    for sort, kind, task, text in module.completions(count, seed):
        result = grader.reward(task, text)
        module.check(result)
        seen.add((sort, kind))
        valid += result.valid
    return {"seen": seen, "valid": valid}


def test_ten_thousand_hostile_completions_of_every_kind_return_a_result():
    out = feed(10_000, seed=1)
    assert {sort for sort, _ in out["seen"]} == {"random", "mutated", "long"}
    assert {kind for _, kind in out["seen"]} == {"p_value", "estimate", "interval", "integer", "count", "yes_no"}
    assert 0 < out["valid"] < 10_000


def test_the_method_cache_is_bounded_and_holds_short_lines_only():
    welch = fuzz().golden()[0]["welch"]

    def answer(line: str):
        return grader.reward(welch, f"METHOD: {line}\nP_VALUE: 0.0132\nDECISION: reject")

    grader._identified.cache_clear()
    for i in range(grader.METHOD_CACHE_LINES + 500):
        answer(f"test number {i} {'x' * 250}")
    info = grader._identified.cache_info()
    assert info.currsize == info.maxsize == grader.METHOD_CACHE_LINES
    for i in range(100):   # longer than MAX_METHOD_CHARS: named none, and never looked up
        assert answer(f"Welch {i} " + "x" * grader.MAX_METHOD_CHARS).method is None
    assert grader._identified.cache_info()[:2] == info[:2]


@pytest.mark.slow
def test_a_hundred_thousand_hostile_completions_return_a_result():
    out = feed(100_000, seed=0)
    assert len(out["seen"]) == 18 and 0 < out["valid"] < 100_000
