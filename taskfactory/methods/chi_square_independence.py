"""Pearson's chi-square test of independence on an r x c contingency table.

R: ``chisq.test(table(a, b))`` on two category columns, one row per unit. The
released tables have at least three levels in one factor, so R applies no
continuity correction (Yates' correction is R's branch for 2 x 2 tables only,
reproduced here for tables that shrink to 2 x 2). R warns that the chi-square
approximation may be incorrect when an expected count is below 5; such a table
is redrawn rather than given an unreliable gold. There is no tempting wrong test
of the same data.

The data are multinomial on a joint distribution with the factors' margins
``p`` and ``q`` and cell probabilities ``p_i q_j (1 + w M_ij)``, where the
association pattern ``M`` has zero weighted row and column means and unit
weighted norm, so the margins stay ``p`` and ``q`` and Cohen's w is exactly
``w``.
"""

import math

import numpy as np
from scipy import optimize

from ..effects import chi2_noncentrality
from ..kit import column_spec, finish
from ..family import Family
from ..registry import register
from ._names import CHI_SQUARE
from . import _describe
from ..result import TestResult
from ._common import require, require_varies
from ._dist import chi2_sf

MIN_N = 100
MIN_EXPECTED = 11.0
MARGIN_CONCENTRATION = 200.0
PATTERN_CANDIDATES = 20


def _shrunk_margins(p, q, n):
    """Mix both margins with the uniform just enough that the smallest cell of
    the independence table expects ``MIN_EXPECTED`` units among ``n``; then an
    expected count below 5 (R's warning) is rare."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)

    def mixed(s):
        return (1.0 - s) * p + s / len(p), (1.0 - s) * q + s / len(q)

    def slack(s):
        a, b = mixed(s)
        return n * a.min() * b.min() - MIN_EXPECTED

    if slack(0.0) < 0.0:
        p, q = mixed(optimize.brentq(slack, 0.0, 1.0, xtol=1e-12) if slack(1.0) > 0.0 else 1.0)
    return p, q


def _pattern(p, q, rng):
    """An association pattern with zero weighted margins and unit weighted norm.

    Of ``PATTERN_CANDIDATES`` random double-centred patterns the one with the
    least negative cell is kept, so that a strong association still leaves
    every cell probability positive.
    """
    best = None
    for _ in range(PATTERN_CANDIDATES):
        g = rng.normal(size=(len(p), len(q)))
        g = g - (g @ q)[:, None]
        g = g - (p @ g)[None, :]
        g = g / np.sqrt(np.sum(np.outer(p, q) * g * g))
        if best is None or g.min() > best.min():
            best = g
    return best


def generate(condition, rng):
    params = condition.params
    p, q = np.asarray(params["a_shares"]), np.asarray(params["b_shares"])
    tilt = 1.0 + condition.effect_value * np.asarray(params["pattern"])
    if tilt.min() <= 0.0:
        raise ValueError(f"Cohen's w of {condition.effect_value:g} leaves a cell without probability under "
                         "these margins")
    cells = (np.outer(p, q) * tilt).ravel()
    counts = rng.multinomial(condition.n, cells / cells.sum())
    cell = np.repeat(np.arange(cells.size), counts)
    levels_a = np.asarray(column_spec(condition, "a")["levels"], dtype=object)
    levels_b = np.asarray(column_spec(condition, "b")["levels"], dtype=object)
    return finish(condition, rng, {
        condition.roles["a"]: levels_a[cell // len(q)],
        condition.roles["b"]: levels_b[cell % len(q)],
    })


def pearson_table(x):
    """Pearson's chi-square test of independence on the table ``x``, as R's
    ``chisq.test`` computes it with its defaults.

    Returns ``(statistic, df, p-value, method)``; raises :class:`DataError` when
    an expected count is below 5, where R warns that the approximation may be
    incorrect.
    """
    x = np.asarray(x, dtype=float)
    n = x.sum()
    expected = np.outer(x.sum(axis=1), x.sum(axis=0)) / n
    require(bool(np.all(expected >= 5.0)), f"an expected count is below 5 ({expected.min():.3g}); "
                                           "R warns that the chi-square approximation may be incorrect")
    method = "Pearson's Chi-squared test"
    yates = 0.0
    if x.shape == (2, 2):
        yates = min(0.5, float(np.abs(x - expected).min()))
        if yates > 0.0:
            method += " with Yates' continuity correction"
    statistic = float(np.sum((np.abs(x - expected) - yates) ** 2 / expected))
    df = (x.shape[0] - 1) * (x.shape[1] - 1)
    return statistic, df, float(chi2_sf(statistic, df)), method


class ChiSquareIndependence(Family):
    name = "chi_square_independence"
    title = "Pearson chi-square test of independence"
    category = "contingency"
    question_kind = "contingency"
    canonical = "chisq.test(table(a, b))"
    test_name = CHI_SQUARE
    roles = {"a": "category", "b": "category"}
    min_n = MIN_N
    dgp_keys = ("a_shares", "b_shares")
    medium = 0.3
    effect_unit = "Cohen's w"
    effect_bounds = (0.0, math.sqrt(2.0))
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """The two margins (the scenario's shares, jittered and, at small N, moved
        toward the uniform) and the association pattern."""
        base_a = np.asarray(scenario.dgp["a_shares"], dtype=float)
        base_b = np.asarray(scenario.dgp["b_shares"], dtype=float)
        p = rng.dirichlet(MARGIN_CONCENTRATION * base_a / base_a.sum())
        q = rng.dirichlet(MARGIN_CONCENTRATION * base_b / base_b.sum())
        p, q = _shrunk_margins(p, q, n)
        return {"a_shares": p.tolist(), "b_shares": q.tolist(), "pattern": _pattern(p, q, rng).tolist()}

    def validate(self, scenario):
        if scenario.roles["a"] == scenario.roles["b"]:
            raise ValueError("roles a and b must name different columns")
        sizes = []
        for role in ("a", "b"):
            levels = scenario.variable(scenario.roles[role]).levels
            shares = scenario.dgp[f"{role}_shares"]
            if not (isinstance(shares, list) and len(shares) == len(levels)):
                raise ValueError(f"dgp {role}_shares ({shares!r}) needs one share per level of '{scenario.roles[role]}'")
            if not all(isinstance(s, (int, float)) and not isinstance(s, bool) and s > 0 for s in shares):
                raise ValueError(f"dgp {role}_shares must be positive numbers")
            if abs(sum(shares) - 1.0) > 1e-6:
                raise ValueError(f"dgp {role}_shares must sum to 1")
            sizes.append(len(levels))
        if max(sizes) < 3:
            raise ValueError("one factor needs at least 3 levels (a 2 x 2 table belongs to another test)")
        if MIN_EXPECTED * sizes[0] * sizes[1] > MIN_N:
            raise ValueError(f"a {sizes[0]} x {sizes[1]} table is too large for N = {MIN_N}: "
                             f"at most {int(MIN_N // MIN_EXPECTED)} cells")

    def analyse(self, condition, data):
        require_varies(data, condition.roles["a"], condition.roles["b"])
        a = data[condition.roles["a"]].astype(str).to_numpy()
        b = data[condition.roles["b"]].astype(str).to_numpy()
        levels_a, ia = np.unique(a, return_inverse=True)
        levels_b, ib = np.unique(b, return_inverse=True)
        require(len(levels_a) >= 2 and len(levels_b) >= 2, "each factor needs at least 2 observed levels")
        table = np.zeros((len(levels_a), len(levels_b)))
        np.add.at(table, (ia, ib), 1.0)
        statistic, df, pvalue, method = pearson_table(table)
        return TestResult(statistic=statistic, pvalue=pvalue, method=method, df=(float(df),), n=len(a),
                          statistic_name="X-squared")

    def effect_for_z(self, z, n, params):
        """Cohen's w: Pearson's X-squared has non-centrality N w^2 on (r - 1)(c - 1) df."""
        df = (len(params["a_shares"]) - 1) * (len(params["b_shares"]) - 1)
        return float(np.sqrt(chi2_noncentrality(z, df) / n))

    def hints(self, condition, data):
        return _describe.table(data, condition.roles["a"], condition.roles["b"])


register(ChiSquareIndependence())
