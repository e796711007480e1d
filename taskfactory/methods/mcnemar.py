"""McNemar's test of a binary outcome measured twice on the same units.

R: ``mcnemar.test(table(before, after))`` with its default continuity
correction: X-squared = (|b - c| - 1)^2 / (b + c) on 1 df, b and c the two
kinds of discordant pairs; when b = c R applies no correction (X-squared 0,
p = 1). A table without discordant pairs gives R a NaN and is redrawn. The tempting wrong
test compares the before and after proportions as if they came from two
independent samples (``prop.test`` on the margins), ignoring the pairing.

The data: each unit is discordant with a drawn probability (15 to 40 %);
concordant units are positive on both occasions at the scenario's rate; a
discordant unit moved toward the positive level with probability r / (1 + r),
r the discordant ratio, whose log is the effect, in the scenario's direction.
"""

import dataclasses
import math
from functools import lru_cache

import numpy as np
from scipy import stats

from ..effects import effect_for_power
from ..family import Family
from ..kit import column_spec, finish
from ..registry import register
from ..result import TestResult
from ..scenarios import require_direction
from . import _describe
from ._common import chisq_yates, indicator, require, require_varies
from ._names import MCNEMAR, PROP_TEST
from ._dist import chi2_sf, norm_cdf, norm_sf

CRITICAL = float(stats.chi2.isf(0.05, 1))
DISCORDANT = (0.15, 0.4)
MAX_LOG_RATIO = 6.0
#: Expected discordant pairs above which calibration uses the normal law.
EXACT_PAIRS = 300


def generate(condition, rng):
    params, n = condition.params, condition.n
    positive = condition.roles["positive"]
    negative = next(lv for lv in column_spec(condition, "before")["levels"] if lv != positive)
    toward = 1.0 / (1.0 + np.exp(-params["direction"] * condition.effect_value))
    discordant = rng.random(n) < params["discordant"]
    up = rng.random(n) < toward          # a discordant unit that turned positive
    both = rng.random(n) < params["p"]   # a concordant unit positive on both occasions
    before = np.where(discordant, ~up, both)
    after = np.where(discordant, up, both)
    return finish(condition, rng, {
        condition.roles["before"]: np.where(before, positive, negative).astype(object),
        condition.roles["after"]: np.where(after, positive, negative).astype(object),
    })


def _pairs(condition, data) -> tuple[int, int, int]:
    """(pairs that turned positive, pairs that turned negative, all pairs)."""
    roles = condition.roles
    require_varies(data, roles["before"], roles["after"])   # R's table(before, after) must be 2 x 2
    before, after = (indicator(data, roles[role], roles["positive"]) for role in ("before", "after"))
    return int(np.sum(~before & after)), int(np.sum(before & ~after)), len(before)


def mcnemar(up: int, down: int, n: int) -> TestResult:
    """R's ``mcnemar.test`` (continuity correction) from the discordant counts."""
    require(up + down > 0, "no pair changed, so R's statistic is NaN")
    corrected = up != down   # R corrects only an asymmetric table
    statistic = (abs(up - down) - (1.0 if corrected else 0.0)) ** 2 / (up + down)
    method = "McNemar's Chi-squared test" + (" with continuity correction" if corrected else "")
    return TestResult(statistic=float(statistic), pvalue=float(chi2_sf(statistic, 1)), method=method,
                      df=(1.0,), n=n, statistic_name="McNemar's chi-squared")


def unpaired(up: int, down: int, n: int, positive_both: int) -> TestResult:
    """``prop.test`` of the before and after shares as two independent samples of n."""
    before, after = positive_both + down, positive_both + up
    require(0 < before + after < 2 * n, "every measurement has the same level")
    res = chisq_yates(np.array([[before, n - before], [after, n - after]]),
                      "2-sample test for equality of proportions with continuity correction")
    return dataclasses.replace(res, estimate=(before - after) / n)


@lru_cache(maxsize=4096)
def _rejections(m: int) -> np.ndarray:
    """``reject[b]``: McNemar's test of b up and m - b down changes rejects at 5 %."""
    gap = np.abs(2 * np.arange(m + 1) - m)
    return np.maximum(gap - 1.0, 0.0) ** 2 / max(m, 1) > CRITICAL


def power(n: int, discordant: float, toward: float) -> float:
    """The probability that McNemar's test rejects (a table without
    discordant pairs is redrawn, so it is left out): summed exactly over the
    likely numbers of discordant pairs and their split while those are few;
    beyond ``EXACT_PAIRS`` expected discordant pairs, the normal law of b - c
    (the test is then as good as continuous)."""
    mean, sd = n * discordant, math.sqrt(n * discordant * (1.0 - discordant))
    if mean > EXACT_PAIRS:
        shift, spread = mean * (2.0 * toward - 1.0), math.sqrt(4.0 * mean * toward * (1.0 - toward))
        edge = 1.0 + math.sqrt(CRITICAL * mean)
        return float(norm_sf((edge - shift) / spread) + norm_cdf((-edge - shift) / spread))
    ms = np.arange(max(1, int(mean - 8 * sd)), min(n, int(math.ceil(mean + 8 * sd))) + 1)
    weights = stats.binom.pmf(ms, n, discordant)
    splits = stats.binom.pmf(np.arange(ms[-1] + 1), ms[:, None], toward)   # one call; row i beyond ms[i] unused
    rejects = np.array([splits[i, :m + 1] @ _rejections(int(m)) for i, m in enumerate(ms)])
    return float(weights @ rejects / weights.sum())


class McNemar(Family):
    name = "mcnemar"
    title = "McNemar's test"
    category = "paired"
    question_kind = "paired_binary"
    null_p = "discrete"
    canonical = "mcnemar.test(table(before, after))"
    test_name = MCNEMAR
    roles = {"before": "category", "after": "category", "positive": "level"}
    min_n = 30
    dgp_keys = ("p",)
    naive_method = "two-sample test of the before and after proportions ignoring the pairing (prop.test)"
    naive_name = PROP_TEST
    medium = math.log(2.0)
    effect_unit = "log of the discordant ratio (pairs turning in the scenario's direction over the others)"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """The share of discordant units, the concordant units' rate of the
        positive level (the scenario's), and the direction (the scenario's)."""
        return {"discordant": float(rng.uniform(*DISCORDANT)), "p": float(scenario.dgp["p"]),
                "direction": scenario.dgp.get("direction", 1)}

    def validate(self, scenario):
        before, after = scenario.variable(scenario.roles["before"]), scenario.variable(scenario.roles["after"])
        if before.name == after.name or before.levels != after.levels or len(before.levels) != 2:
            raise ValueError("before and after must be different columns with the same 2 levels")
        if scenario.roles["positive"] not in before.levels:
            raise ValueError(f"positive ({scenario.roles['positive']!r}) must be a level of '{before.name}'")
        p = scenario.dgp["p"]
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.05 <= p <= 0.95:
            raise ValueError(f"dgp p ({p!r}) must be a proportion from 0.05 to 0.95")
        require_direction(scenario)

    def analyse(self, condition, data):
        return mcnemar(*_pairs(condition, data))

    def naive(self, condition, data):
        up, down, n = _pairs(condition, data)
        positive = str(condition.roles["positive"])
        both = int(np.sum((data[condition.roles["before"]].astype(str).to_numpy() == positive)
                          & (data[condition.roles["after"]].astype(str).to_numpy() == positive)))
        return unpaired(up, down, n, both)

    def effect_for_z(self, z, n, params):
        """The log discordant ratio at which McNemar's test rejects as often as
        a z test whose statistic averages ``z``, summed over the binomial
        numbers of discordant pairs and their split."""
        return effect_for_power(lambda log_ratio: power(n, params["discordant"], 1.0 / (1.0 + math.exp(-log_ratio))),
                                z, MAX_LOG_RATIO)

    def hints(self, condition, data):
        return _describe.paired_binary(data, condition.roles["before"], condition.roles["after"],
                                       str(condition.roles["positive"]))


register(McNemar())
