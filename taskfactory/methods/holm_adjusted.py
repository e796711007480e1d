"""A panel of markers compared between two groups, the family-wise error rate
controlled: Welch t-tests of every marker, Holm-adjusted, read at the target.

R: ``p.adjust(sapply(markers, function(v) t.test(d[[v]] ~ d[[group]])$p.value),
method = "holm")[target]``. The tempting wrong test is the target's own Welch
t-test, unadjusted, as if it were the only marker tested.

Its sibling ``bh_fdr`` (the false discovery rate, Benjamini-Hochberg) draws the
same data; the two differ only in the error rate the researcher controls, which
no dataset shows, so the question names it (``question_words``). This module
holds what they share (:class:`MarkerPanel`, ``generate``); ``bh_fdr`` changes
the adjustment.

Data: each marker normal with the scenario's mean and SD in both groups; the
target shifted by the task's effect (Cohen's d, the way ``direction`` says) in
the second listed group, every other marker shifted with probability
:data:`TRUE_SHARE` by a d of random sign and size in :data:`TRUE_D`, drawn per
dataset (``params["effects"]``). Blank cells (the ``missing`` perturbations)
hit only the group and the target: complete cases over a panel of up to 20
columns would otherwise lose most rows. The gold, an adjusted p-value, is
never below the raw one: conservative by construction under the null.
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

import numpy as np
from scipy import stats

from ..effects import effect_for_power, target_p, Z_BORDERLINE
from ..family import Family
from ..kit import column_spec, finish, labels_for, split_sizes
from ..registry import register
from ..result import Term, TestResult
from ..scenarios import NUMERIC_TYPES, require_direction, require_number
from . import _describe
from ._common import grouped, numeric, require, require_varies
from ._names import HOLM_WELCH, WELCH_T
from ._ttest import two_sample

#: Chance that a marker other than the target truly differs between the groups,
#: and the range of its |Cohen's d| (its sign is random).
TRUE_SHARE = 0.4
TRUE_D = (0.3, 0.7)
#: Range of the share of rows in the first listed group.
SHARE = (0.35, 0.65)
#: Marker counts a panel may have.
PANEL_SIZE = (5, 20)
#: Calibration: the error rate the borderline effect is set at, the simulated
#: panels (of the other markers) and their seed, and the largest d searched.
LEVEL = target_p(Z_BORDERLINE)
CALIBRATION_DRAWS = 6000
CALIBRATION_SEED = 20260101
MAX_D = 4.0


def generate(condition, rng):
    dgp, params = condition.dgp, condition.params
    levels = column_spec(condition, "group")["levels"]
    sizes = split_sizes(condition.n, [params["share"], 1.0 - params["share"]])
    target = condition.roles["target"]
    columns = {condition.roles["group"]: labels_for(levels, sizes)}
    for name in condition.roles["markers"]:
        mean, sd = dgp["panel"][name]
        d = dgp.get("direction", 1) * condition.effect_value if name == target else params["effects"][name]
        columns[name] = np.concatenate([rng.normal(mean, sd, sizes[0]), rng.normal(mean + d * sd, sd, sizes[1])])
    return finish(condition, rng, columns)


def holm(p):
    """R's ``p.adjust(p, method = "holm")``: ``pmin(1, cummax((n + 1 - i) * p[o]))[ro]``."""
    p = np.asarray(p, dtype=float)
    n = len(p)
    if n <= 1:
        return p.copy()
    o = np.argsort(p, kind="stable")
    out = np.empty(n)
    out[o] = np.minimum(1.0, np.maximum.accumulate((n + 1 - np.arange(1, n + 1)) * p[o]))
    return out


def benjamini_hochberg(p):
    """R's ``p.adjust(p, method = "BH")``: ``pmin(1, cummin(n / i * p[o]))[ro]``,
    ``o`` the decreasing order and ``i`` running from n down to 1."""
    p = np.asarray(p, dtype=float)
    n = len(p)
    if n <= 1:
        return p.copy()
    o = np.argsort(-p, kind="stable")
    i = np.arange(n, 0, -1)
    out = np.empty(n)
    out[o] = np.minimum(1.0, np.minimum.accumulate(n / i * p[o]))
    return out


def marker_tests(condition, data) -> list[tuple[str, TestResult, float]]:
    """Welch's t-test of every marker between the two groups, in the order of
    the ``markers`` role: ``(marker, result, standard error)``."""
    group, markers, target = (condition.roles[r] for r in ("group", "markers", "target"))
    require(target in markers, f"the target '{target}' must be one of the markers ({', '.join(markers)})")
    require_varies(data, group)
    labels = data[group].astype(str).to_numpy()
    levels = sorted(set(labels))
    require(len(levels) == 2, f"'{group}' has {len(levels)} levels, the test needs 2")
    first = labels == levels[0]
    require(2 <= int(first.sum()) <= len(labels) - 2, f"a level of '{group}' has fewer than 2 values")
    out = []
    for name in condition.roles["markers"]:
        y = numeric(data, name)
        a, b = y[first], y[~first]
        require(float(np.ptp(a)) > 0.0 or float(np.ptp(b)) > 0.0, f"'{name}': the data are essentially constant")
        res = two_sample(a, b)
        require(math.isfinite(res.pvalue), f"'{name}': Welch's t-test gives no p-value (a variance beyond double "
                "precision); R's is NaN, which p.adjust would leave out of the panel")
        out.append((name, res, float(np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b)))))
    return out


def _welch_df_equal_sd(n1: int, n2: int) -> float:
    a, b = 1.0 / n1, 1.0 / n2
    return (a + b) ** 2 / (a * a / (n1 - 1) + b * b / (n2 - 1))


@lru_cache(maxsize=8)
def _other_abs_t(n1: int, n2: int, effects: tuple) -> np.ndarray:
    """Simulated |t| statistics of the markers other than the target (rows:
    panels), each sorted in decreasing order (so their p-values increase):
    t statistics with the non-centrality of their true d."""
    rng = np.random.default_rng(CALIBRATION_SEED)
    df = _welch_df_equal_sd(n1, n2)
    delta = np.asarray(effects, dtype=float) * np.sqrt(n1 * n2 / (n1 + n2))
    z = rng.standard_normal((CALIBRATION_DRAWS, len(effects))) + delta
    t = z / np.sqrt(rng.chisquare(df, (CALIBRATION_DRAWS, len(effects))) / df)
    return -np.sort(-np.abs(t), axis=1)


class MarkerPanel(Family):
    """What the siblings of ``biomarker_panel`` share: roles, data, the Welch
    t-tests of the panel, calibration and hints. A subclass names its
    adjustment (``adjust``, as R's ``p.adjust`` computes it), the error rate
    it controls (``question_words``), and, for the calibration, the
    procedure's thresholds (``thresholds``) and the target's critical raw
    p-value given the other markers (``critical``)."""

    category = "multiple testing"
    question_kind = "biomarker_panel"
    null_p = "adjusted"
    roles = {"group": "category", "markers": "columns", "target": "numeric"}
    min_n = 24
    dgp_keys = ("panel",)
    naive_method = "Welch Two Sample t-test of the target marker alone (no multiplicity adjustment)"
    naive_name = WELCH_T
    medium = 0.5
    effect_unit = "Cohen's d"
    generate = staticmethod(generate)
    r_pvalue = "res$p_adjusted[res$marker == target]"

    @staticmethod
    def adjust(p):
        raise NotImplementedError

    @staticmethod
    def thresholds(m: int, alpha: float) -> np.ndarray:
        """The p-value thresholds the procedure compares the j-th smallest of
        the other m - 1 markers' p-values with (j = 1 ... m - 1)."""
        raise NotImplementedError

    @staticmethod
    def critical(passes: np.ndarray, m: int, alpha: float) -> np.ndarray:
        """The largest raw p-value of the target the procedure rejects at
        ``alpha``, per panel, given which of the other markers' sorted p-values
        fall below their thresholds (``passes``, one panel a row)."""
        raise NotImplementedError

    def draw_params(self, scenario, n, rng):
        """Share of the first listed group; for each marker but the target its
        true Cohen's d: with probability TRUE_SHARE of random sign and size in
        TRUE_D, else 0."""
        share = float(rng.uniform(*SHARE))
        effects = {}
        for name in scenario.roles["markers"]:
            if name == scenario.roles["target"]:
                continue
            real, size, sign = rng.random() < TRUE_SHARE, rng.uniform(*TRUE_D), 1.0 if rng.random() < 0.5 else -1.0
            effects[name] = round(float(sign * size), 4) if real else 0.0
        return {"share": share, "effects": effects}

    def validate(self, scenario):
        group = scenario.variable(scenario.roles["group"])
        if len(group.levels) != 2:
            raise ValueError(f"group '{group.name}' needs exactly 2 levels")
        markers, target = scenario.roles["markers"], scenario.roles["target"]
        if not PANEL_SIZE[0] <= len(markers) <= PANEL_SIZE[1] or len(set(markers)) != len(markers):
            raise ValueError(f"markers must be {PANEL_SIZE[0]} to {PANEL_SIZE[1]} distinct columns")
        if target not in markers:
            raise ValueError(f"target '{target}' must be one of the markers")
        panel = scenario.dgp["panel"]
        if not isinstance(panel, dict) or set(panel) != set(markers):
            raise ValueError("dgp panel must give [mean, sd] for each marker, and only for them")
        for name in markers:
            var = scenario.variable(name)
            if var.type not in NUMERIC_TYPES:
                raise ValueError(f"marker '{name}' must be numeric")
            mean, sd = panel[name]
            require_number(mean, f"dgp panel {name} mean")
            if not require_number(sd, f"dgp panel {name} sd") > 0:
                raise ValueError(f"dgp panel {name} sd must be positive")
            lo, hi = var.range
            if not lo < mean - 4.0 * sd and mean + 4.0 * sd < hi:
                raise ValueError(f"the range of '{name}' must hold its dgp mean +- 4 SD")
        require_direction(scenario)

    def role_columns(self, roles):
        """The group and the markers (the target is one of them, listed once)."""
        return list(dict.fromkeys(super().role_columns(roles)))

    def measured_columns(self, roles):
        """Blank cells hit the group and the target only: the complete cases
        on a panel of up to 20 columns would otherwise lose most rows."""
        return [roles["group"], roles["target"]]

    def analyse(self, condition, data):
        tests = marker_tests(condition, data)
        raw = np.array([res.pvalue for _, res, _ in tests])
        adjusted = self.adjust(raw)
        terms = [Term(name=name, estimate=float(res.estimate), std_error=se, statistic=float(res.statistic),
                      pvalue=float(p), df=float(res.df[0])) for (name, res, se), p in zip(tests, adjusted)]
        out = TestResult.from_terms(terms, condition.roles["target"], self.gold_method(len(tests)), "t",
                                    n=len(data))
        return dataclasses.replace(out, details={"p_raw": {name: float(p) for (name, _, _), p in zip(tests, raw)}})

    def gold_method(self, m: int) -> str:
        raise NotImplementedError

    def naive(self, condition, data):
        _, (a, b) = grouped(data, condition.roles["target"], condition.roles["group"], k=2)
        return dataclasses.replace(two_sample(a, b), method=self.naive_method)

    def effect_for_z(self, z, n, params):
        """Cohen's d of the target at which the procedure rejects it (at the
        borderline's 5 %) as often as a z test whose statistic averages ``z``
        (half the time at the borderline): the target's critical raw p-value
        depends on the other markers' p-values, simulated once per panel
        (their true d in ``params``); the target's t is non-central."""
        n1, n2 = split_sizes(n, [params["share"], 1.0 - params["share"]])
        others = tuple(params["effects"][k] for k in sorted(params["effects"]))
        m = len(others) + 1
        df = _welch_df_equal_sd(n1, n2)
        passes = _other_abs_t(n1, n2, others) >= stats.t.isf(self.thresholds(m, LEVEL) / 2.0, df)
        cut, weight = np.unique(self.critical(passes, m, LEVEL), return_counts=True)
        weight = weight / weight.sum()
        t_cut = stats.t.isf(cut / 2.0, df)
        scale = np.sqrt(n1 * n2 / (n1 + n2))

        def power_of(d):
            nc = d * scale
            return float(np.sum(weight * (stats.nct.sf(t_cut, df, nc) + stats.nct.sf(t_cut, df, -nc))))

        return effect_for_power(power_of, z, MAX_D)

    def hints(self, condition, data):
        return _describe.biomarker_panel(data, condition.roles["markers"], condition.roles["group"])


class HolmAdjusted(MarkerPanel):
    name = "holm_adjusted"
    title = "Welch t-tests over a marker panel, Holm-adjusted"
    canonical = ('p.adjust(sapply(markers, function(v) t.test(d[[v]] ~ d[[group]])$p.value), '
                 'method = "holm")[target]')
    test_name = HOLM_WELCH
    question_words = {"error_rate": "the family-wise error rate"}
    adjust = staticmethod(holm)

    @staticmethod
    def thresholds(m, alpha):
        """Holm's step-down thresholds alpha / (m + 1 - j)."""
        return alpha / (m + 1 - np.arange(1, m))

    @staticmethod
    def critical(passes, m, alpha):
        """Holm: with L the other markers that pass their thresholds in turn
        (from the smallest p-value on), the target is rejected when p <= alpha / (m - L)."""
        passed = np.where(passes.all(axis=1), m - 1, np.argmin(passes, axis=1))
        return alpha / (m - passed)

    def gold_method(self, m):
        return f'Welch Two Sample t-tests of {m} markers, p-values adjusted by p.adjust(method = "holm")'


register(HolmAdjusted())
