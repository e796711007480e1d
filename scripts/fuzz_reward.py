#!/usr/bin/env python3
"""Hostile completions against the grader: every call must return a result
with a reason, fast, in flat memory.

    python scripts/fuzz_reward.py [--count 100000] [--seed 0] [--json]

Completions come in three sorts, for every answer kind: random text (answer
labels, numbers, decision words, markup and JSON in random order, and random
unicode), mutations of the golden completions under tests/golden/, and long
texts of about 1 MB (repeated labels, parentheses, digits, negations,
braces). The script prints the calls, how many were valid, the slowest call
and its sort, the median call (and the median long one), and the resident
memory after the first tenth of the calls and at the end (the grader's caches
are bounded, so the two agree).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

from taskfactory.readers import load_yaml
from taskfactory.use.reward import reward

GOLDEN = Path(__file__).resolve().parent.parent / "tests" / "golden" / "completions.yaml"
SORTS = ("random", "mutated", "long")
#: One in this many completions is long (about 1 MB).
LONG_EVERY = 500
LONG_CHARS = 1 << 20

TOKENS = ["METHOD:", "P_VALUE:", "DECISION:", "ANSWER:", "ESTIMATE:", "LOWER:", "UPPER:", "COUNT:", "p =", "p <",
          "p >", "0.03", ".5", "1e-400", "10^400", "10^-", "1.2 x 10^-5", "×10⁻⁵", "²", "(", ")", "(or 0.3)", "%",
          "reject", "fail to reject", "not", "or", "no", "yes", "Welch", "Student's", "instead of", "{", "}", "\"",
          "\"p_value\":", "\"decision\":", "\"yes_no\":", "true", "null", "[", "]", "**", "`", "$", "\\times", "\n",
          "\r", "\r\n", "\u2028", "\x85", "\ufeff", "\u200b", "\x00", "\ud800", "<reject | fail to reject>", "|", "-",
          "999999999999999999999999", "nan", "inf", "  ", ":", "=", ","]
LONG_UNITS = ["(", "a", "0", "9", "not ", "{", "[", "P_VALUE: ", "P_VALUE: 0.03\n", "DECISION: reject or \n", "x",
              "{\"p_value\": 0.1, \"decision\": \"reject\"}\n", "METHOD: Welch not Student ", "\n", "e-", "*", "10^"]


def golden() -> tuple[dict, dict, list[tuple[str, str]]]:
    """The golden file's tasks, the task of each kind, and (kind, text) of its completions."""
    doc = load_yaml(GOLDEN, ValueError, "golden completions")
    texts = []
    for case in doc["completions"]:
        text = case["text"]
        if not isinstance(text, str):
            text = "".join(p if isinstance(p, str) else p["repeat"] * p["times"] for p in text)
        texts.append((case.get("kind", "p_value"), text))
    return doc["tasks"], doc["kind_task"], texts


def random_text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(0, 40)):
        if rng.random() < 0.8:
            parts.append(rng.choice(TOKENS))
        else:
            parts.append("".join(chr(rng.randint(0, 0x2FFF)) for _ in range(rng.randint(1, 8))))
        parts.append(rng.choice(["", " ", "\n"]))
    return "".join(parts)


def mutate(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 6)):
        where = rng.randint(0, len(chars))
        action = rng.random()
        if action < 0.3 and chars:
            del chars[min(where, len(chars) - 1)]
        elif action < 0.6:
            chars[where:where] = list(rng.choice(TOKENS))
        elif action < 0.8:
            chars[where:where] = list(random_text(rng))
        elif chars:
            lines = "".join(chars).split("\n")
            rng.shuffle(lines)
            chars = list("\n".join(lines * rng.randint(1, 3)))
    return "".join(chars)


def long_text(rng: random.Random) -> str:
    unit = rng.choice(LONG_UNITS)
    body = unit * (LONG_CHARS // len(unit))
    return rng.choice(["", "P_VALUE: ", "METHOD: ", "ANSWER: "]) + body + rng.choice(["", "\nDECISION: reject", ")"])


def completions(count: int, seed: int = 0):
    """(sort, kind, task, text) of ``count`` hostile completions, cycling over the answer kinds."""
    rng = random.Random(seed)
    tasks, kind_task, texts = golden()
    kinds = list(kind_task)
    for i in range(count):
        kind = kinds[i % len(kinds)]
        if i % LONG_EVERY == LONG_EVERY - 1:
            kind, sort, text = kinds[i // LONG_EVERY % len(kinds)], "long", long_text(rng)
        elif rng.random() < 0.5:
            sort, text = "random", random_text(rng)
        else:
            sort, text = "mutated", mutate(rng, rng.choice(texts)[1])
        yield sort, kind, tasks[kind_task[kind]], text


def check(result) -> None:
    """Raise AssertionError unless ``result`` is a well-formed reward."""
    assert 0.0 <= result.reward <= 1.0, result
    assert result.valid or (result.reason and result.reward == 0.0), result


def resident_mb() -> float:
    """This process's resident memory now, in MB (Linux)."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def run(count: int, seed: int) -> dict:
    tasks, kind_task, _ = golden()
    for kind in kind_task:   # warm: the families are registered and the caches filled once
        reward(tasks[kind_task[kind]], "METHOD: Welch\nP_VALUE: 0.01\nDECISION: reject\nANSWER: 1")
    times, slowest, valid, early = [], (0.0, None), 0, None
    for i, (sort, kind, task, text) in enumerate(completions(count, seed)):
        start = time.perf_counter()
        result = reward(task, text)
        took = time.perf_counter() - start
        check(result)
        valid += result.valid
        times.append(took)
        if took > slowest[0]:
            slowest = (took, sort)
        if i + 1 == count // 10:
            early = resident_mb()
    return {"calls": count, "valid": valid, "slowest_ms": round(slowest[0] * 1e3, 3), "slowest_sort": slowest[1],
            "median_us": round(statistics.median(times) * 1e6, 1),
            "long_median_ms": round(statistics.median(times[LONG_EVERY - 1::LONG_EVERY] or [0.0]) * 1e3, 3),
            "resident_mb_after_a_tenth": round(early or 0.0, 1), "resident_mb_at_the_end": round(resident_mb(), 1)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    out = run(args.count, args.seed)
    print(json.dumps(out) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
