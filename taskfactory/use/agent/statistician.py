"""A scripted statistician: looks at a task's data through the sandbox, checks the assumptions, picks the test.

:class:`Statistician` plays the agent environment as an agent would, in five
steps: (1) read the file and list its variables, blank and out-of-range cells,
then apply the stated conventions (impossible values to missing, complete
cases); (2) describe the distributions the question concerns; (3) run the
checks that separate the question kind's candidate tests; (4) say which test
the checks point to, quoting what they printed, and run it; (5) answer in the
task's format. Every number it writes comes from a tool output shown before.

The choice comes from the printed checks through :func:`decide`, never from
the task's family or gold: the statistician knows the question's kind (which
the wording gives and sibling families share), the roles the question names
and the data dictionary, as an analyst reading the task does. The same checks
and rules are what ``scripts/bench_siblings.py`` measures (:func:`choose`).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import random
import re

import pandas as pd

from ...make.columns import roles_of
from ...make.reference import handling_py, reference_py, reference_r
from ...registry import families, get_family
from . import checks_r
from .episode import TOOL_LANGUAGE
from .evaluate import answer_text

#: The level of every check (for two variables, each at half of it).
CHECK_ALPHA = 0.05
#: The octile skewness beyond which paired differences count as asymmetric
#: (set where symmetric differences with heavy tails, the signed-rank
#: sibling's, rarely pass it at the kind's smallest N).
OCTILE_SKEWED = 0.4
#: The Pearson dispersion ratio of a Poisson fit above which overdispersion
#: matters (beside its test at CHECK_ALPHA).
DISPERSION_MATERIAL = 1.2
#: The lag-1 autocorrelation beyond which a series counts as persistent: both
#: variables of a series beyond it call for their changes (an independent
#: series of 40 passes it about 3 times in a thousand).
PERSISTENT = 0.4

_IMPORTS = "import numpy as np\nimport pandas as pd\nfrom scipy import stats\nimport statsmodels.api as sm\n"
#: A printed check: ``<label>: <name> = <value>[, <name> = <value> ...]``.
_CHECK_LINE = re.compile(r"^([A-Z][^:\n]*): ((?:[A-Za-z]\w* = [^,\n]+)(?:, [A-Za-z]\w* = [^,\n]+)*)$", re.M)


#: The languages a trajectory may be in ("mixed": Python or R, drawn per task).
LANGUAGES = ("python", "r", "mixed")


def standalone(code: str) -> bool:
    """Does Python ``code`` run without this package (which the sandbox does not hold)?"""
    return not re.search(r"^\s*(from|import) taskfactory\b", code, re.M)


def kind_families(kind: str) -> list:
    return [f for f in families() if f.question_kind == kind]


# -- the checks, as the code the statistician runs -------------------------------------------------------------

def _design_x(roles: dict) -> str:
    """A Python line building ``X``: the intercept, the exposure, then the
    covariates (text columns as treatment dummies), as lm's model matrix."""
    cols = [roles["exposure"], *roles["covariates"]]
    return f"X = sm.add_constant(pd.get_dummies(d[{cols!r}], drop_first=True, dtype=float), has_constant='add')\n"


def _design(roles: dict) -> str:
    """:func:`_design_x` and the numeric outcome ``y``."""
    return _design_x(roles) + f"y = d[{roles['outcome']!r}].astype(float)\n"


def _residual_normality(roles: dict) -> str:
    return _cluster_design(roles) + (f"y = d[{roles['outcome']!r}].astype(float)\n"
            f"g = d[{roles['group']!r}].astype(str)\n"
            "sd = y.groupby(g).transform('std')\n"
            "r = ((y - y.groupby(g).transform('mean')) / sd)[(g.map(g.value_counts()) > 2) & (sd > 0)]\n"
            "w, p = stats.shapiro(r)\n"
            "print(f'Shapiro-Wilk test of the within-group studentized residuals: W = {w:.4f}, p = {p:.4g}')\n"
            "bf = stats.levene(*[v.to_numpy() for _, v in y.groupby(g)], center='median')\n"
            "print(f'Brown-Forsythe test of equal spreads: F = {bf.statistic:.3f}, p = {bf.pvalue:.4g}')\n")


def _cluster_design(roles: dict) -> str:
    """Where the groups' rows carry a cluster column: in how many clusters the group varies."""
    cluster = roles.get("cluster")
    if cluster is None:
        return ""
    return (f"groups = d.groupby({cluster!r})[{roles['group']!r}].nunique()\n"
            "print('Clusters holding more than one group: count = '\n"
            "      f'{int((groups > 1).sum())}, clusters = {len(groups)}')\n")


def _paired(roles: dict) -> str:
    return (f"diff = d[{roles['after']!r}].astype(float) - d[{roles['before']!r}].astype(float)\n"
            "lo, mid, hi = np.percentile(diff, [12.5, 50.0, 87.5])\n"
            "octile = (hi + lo - 2.0 * mid) / (hi - lo) if hi > lo else 0.0\n"
            f"print(f'Octile skewness of the differences (asymmetric beyond {OCTILE_SKEWED}): value = {{octile:.3f}}')\n"
            "w, p = stats.shapiro(diff)\n"
            "print(f'Shapiro-Wilk test of the differences: W = {w:.4f}, p = {p:.4g}')\n")


def _association(roles: dict) -> str:
    code = "".join(f"w, p = stats.shapiro(d[{roles[r]!r}].astype(float))\n"
                   f"print('Shapiro-Wilk test of ' + {roles[r]!r} + f': W = {{w:.4f}}, p = {{p:.4g}}')\n"
                   for r in ("x", "y"))
    period = roles.get("period")
    if period is None:
        return code
    code += (f"s = d.sort_values({period!r}, kind='stable')\n"
             f"k = np.diff(s[{period!r}].to_numpy(float)) == 1   # changes from one period to the next\n")
    return code + "".join(
        f"v = s[{roles[r]!r}].to_numpy(float)\n"
        "c = v - v.mean()\n"
        f"print('Lag-1 autocorrelation of ' + {roles[r]!r} + ' in the order of ' + {period!r} + "
        f"f' (persistent beyond {PERSISTENT}): r1 = {{float(c[1:] @ c[:-1] / (c @ c)):.4f}}')\n"
        "w, p = stats.shapiro(np.diff(v)[k])\n"
        f"print('Shapiro-Wilk test of the changes in ' + {roles[r]!r} + f': W = {{w:.4f}}, p = {{p:.4g}}')\n"
        for r in ("x", "y"))


def _two_proportions(roles: dict) -> str:
    return _cluster_design(roles) + (
        f"t = pd.crosstab(d[{roles['group']!r}].astype(str), d[{roles['outcome']!r}].astype(str))\n"
        "e = np.outer(t.sum(axis=1), t.sum(axis=0)) / t.to_numpy().sum()\n"
        "print(f'Expected counts under independence (the large-sample test wants 5 or more): "
        "smallest = {e.min():.3f}, cells = {e.size}')\n")


def _regression(roles: dict) -> str:
    covs = roles["covariates"]
    return (_design(roles)
            + "print(f'Outcome values at 0: count = {int((y == 0).sum())}')\n"
            + f"bent = [c for c in {covs!r} if d[c].dtype.kind in 'iuf' and d[c].nunique() > 2]\n"
            "if bent:\n"
            "    Xq = np.column_stack([X, *(d[c].to_numpy(float) ** 2 for c in bent)])\n"
            "    R = np.eye(Xq.shape[1])[Xq.shape[1] - len(bent):]\n"
            "    wald = sm.OLS(y.to_numpy(), Xq).fit(cov_type='HC3').wald_test(R, scalar=True)\n"
            "    print(f'HC3 Wald test of the squared covariates: chi2 = {float(wald.statistic):.3f}, "
            "p = {float(wald.pvalue):.4g}')\n"
            "from statsmodels.stats.diagnostic import het_breuschpagan\n"
            "resid = sm.OLS(y.to_numpy(), X.to_numpy()).fit().resid\n"
            "lm, lm_p, _, _ = het_breuschpagan(resid, X.to_numpy()[:, :2])\n"
            "print(f'Breusch-Pagan test of the residuals against the exposure: LM = {lm:.3f}, p = {lm_p:.4g}')\n")


def _counts(roles: dict) -> str:
    offset = f", offset=np.log(d[{roles['exposure_time']!r}].astype(float))" if roles.get("exposure_time") else ""
    return (_design(roles)
            + f"fit = sm.GLM(y, X, family=sm.families.Poisson(){offset}).fit()\n"
            "ratio = fit.pearson_chi2 / fit.df_resid\n"
            "print(f'Poisson fit, Pearson dispersion: ratio = {ratio:.3f}, "
            "p = {stats.chi2.sf(fit.pearson_chi2, fit.df_resid):.4g}')\n")


def _clustered(roles: dict) -> str:
    cluster, exposure = roles["cluster"], roles["exposure"]
    return (_design(roles)
            + f"sizes = d[{cluster!r}].value_counts()\n"
            "print(f'Clusters: count = {len(sizes)}, smallest = {sizes.min()}, largest = {sizes.max()}')\n"
            f"within = int((d.groupby({cluster!r})[{exposure!r}].nunique() > 1).sum())\n"
            "print(f'Clusters whose exposure varies within: count = {within}')\n"
            "if within:\n"
            f"    Xm = np.column_stack([X, d.groupby({cluster!r})[{exposure!r}].transform('mean').astype(float)])\n"
            f"    fit = sm.OLS(y.to_numpy(), Xm).fit(cov_type='cluster', cov_kwds={{'groups': pd.factorize(d[{cluster!r}])[0]}})\n"
            "    print(f'Cluster mean of the exposure added (Mundlak), cluster-robust: t = {fit.tvalues[-1]:.3f}, "
            "p = {fit.pvalues[-1]:.4g}')\n")


def _time_to_event(roles: dict) -> str:
    group, covs = roles["group"], roles["covariates"]
    return _cluster_design(roles) + (
            f"levels = sorted(d[{group!r}].astype(str).unique())\n"
            f"z = (d[{group!r}].astype(str) == levels[-1]).astype(float)\n"
            f"Xc = sm.add_constant(pd.get_dummies(d[{covs!r}], drop_first=True, dtype=float), has_constant='add')\n"
            "import warnings\n"
            "with warnings.catch_warnings():\n"
            "    warnings.simplefilter('ignore')\n"
            "    fit = sm.GLM(z, Xc, family=sm.families.Binomial()).fit()\n"
            "lr = fit.null_deviance - fit.deviance\n"
            "print(f'Covariate balance between the groups, logistic likelihood-ratio test: "
            "chi2 = {lr:.3f}, p = {stats.chi2.sf(lr, fit.df_model):.4g}')\n")


# The checks of question kinds with one family: what its test assumes, looked at before running it.

def _one_sample(roles: dict) -> str:
    return (f"w, p = stats.shapiro(d[{roles['outcome']!r}].astype(float))\n"
            "print(f'Shapiro-Wilk test of the outcome: W = {w:.4f}, p = {p:.4g}')\n")


def _one_proportion(roles: dict) -> str:
    return (f"k = int((d[{roles['outcome']!r}].astype(str) == {str(roles['positive'])!r}).sum())\n"
            "print(f'Rows with the level tested: count = {k}, rows = {len(d)}')\n")


def _paired_binary(roles: dict) -> str:
    before, after, positive = roles["before"], roles["after"], str(roles["positive"])
    return (f"was, now = d[{before!r}].astype(str) == {positive!r}, d[{after!r}].astype(str) == {positive!r}\n"
            "print(f'Discordant pairs: gained = {int((~was & now).sum())}, lost = {int((was & ~now).sum())}')\n")


def _repeated_conditions(roles: dict) -> str:
    subject, group = roles["subject"], roles["group"]
    return (f"per, k = d.groupby({subject!r})[{group!r}].nunique(), d[{group!r}].nunique()\n"
            "print(f'Subjects with every condition: count = {int((per == k).sum())}, conditions = {k}')\n")


def _two_factors(roles: dict) -> str:
    a, b, outcome = roles["a"], roles["b"], roles["outcome"]
    return (f"cells = d.groupby([{a!r}, {b!r}])[{outcome!r}]\n"
            "print(f'Cells of the two factors: count = {cells.ngroups}, smallest = {cells.size().min()}, "
            "largest = {cells.size().max()}')\n"
            f"w, p = stats.shapiro(d[{outcome!r}] - cells.transform('mean'))\n"
            "print(f'Shapiro-Wilk test of the residuals from the cell means: W = {w:.4f}, p = {p:.4g}')\n")


def _contingency(roles: dict) -> str:
    return (f"t = pd.crosstab(d[{roles['a']!r}].astype(str), d[{roles['b']!r}].astype(str))\n"
            "e = np.outer(t.sum(axis=1), t.sum(axis=0)) / t.to_numpy().sum()\n"
            "print(f'Expected counts under independence: smallest = {e.min():.3f}, cells = {e.size}')\n")


def _stated_shares(roles: dict) -> str:
    return (f"shares = {dict(roles['stated'])!r}\n"
            "print(f'Expected counts under the stated shares: smallest = {len(d) * min(shares.values()):.3f}, "
            "levels = {len(shares)}')\n")


def _binary_outcome(roles: dict) -> str:
    return (_design_x(roles) + f"y = d[{roles['outcome']!r}].astype(str) == {str(roles['positive'])!r}\n"
            + "print(f'Events and coefficients: events = {int(y.sum())}, non_events = {int((~y).sum())}, "
            "coefficients = {X.shape[1]}')\n")


def _instrumented(roles: dict) -> str:
    covs = roles["covariates"]
    return (f"Z = sm.add_constant(pd.get_dummies(d[[{roles['instrument']!r}, *{covs!r}]], drop_first=True, dtype=float), "
            "has_constant='add')\n"
            f"first = sm.OLS(d[{roles['exposure']!r}].astype(float), Z).fit()\n"
            f"F = first.f_test(np.eye(Z.shape[1])[1:2])\n"
            "print(f'First-stage F of the instrument: F = {float(F.fvalue):.2f}, p = {float(F.pvalue):.4g}')\n")


def _panel(roles: dict) -> str:
    unit, exposure = roles["unit"], roles["exposure"]
    return (f"units, periods = d[{unit!r}].nunique(), d[{roles['period']!r}].nunique()\n"
            "print(f'Panel: units = {units}, periods = {periods}, rows = {len(d)}')\n"
            f"within = d[{exposure!r}] - d.groupby({unit!r})[{exposure!r}].transform('mean')\n"
            "print(f'Exposure within units: sd = {within.std():.4g}')\n")


def _policy_change(roles: dict) -> str:
    return (f"cells, units = pd.crosstab(d[{roles['treated']!r}], d[{roles['post']!r}]), d[{roles['unit']!r}].nunique()\n"
            "print(f'Treated by period cells: smallest = {cells.to_numpy().min()}, cells = {cells.size}, units = {units}')\n")


#: Per question kind with one family (or siblings the question's words tell
#: apart): the code of the checks of what its test assumes.
ASSUMPTIONS = {"one_sample": _one_sample, "one_proportion": _one_proportion, "paired_binary": _paired_binary,
               "repeated_conditions": _repeated_conditions, "two_factors": _two_factors,
               "contingency": _contingency, "stated_shares": _stated_shares, "binary_outcome": _binary_outcome,
               "instrumented": _instrumented, "panel": _panel, "policy_change": _policy_change}


def read_checks(text: str) -> dict[str, dict[str, float | str]]:
    """The printed checks of ``text``: {label: {name: value}} (a number where it reads as one)."""
    out = {}
    for label, pairs in _CHECK_LINE.findall(text):
        values = {}
        for pair in pairs.split(", "):
            name, _, value = pair.partition(" = ")
            try:
                values[name] = float(value)
            except ValueError:
                values[name] = value
        out[label] = values
    return out


class MissingCheck(ValueError):
    """A check a rule reads printed nothing (its code failed on these data)."""


def _check(checks: dict, prefix: str, *names: str, optional: bool = False) -> dict:
    """The values of the first check whose label starts with ``prefix`` and
    holds ``names``; {} when ``optional`` and none did, else :class:`MissingCheck`."""
    for label, values in checks.items():
        if label.startswith(prefix) and all(isinstance(values.get(n), float) for n in names):
            return values
    if optional:
        return {}
    raise MissingCheck(f"the checks printed no {prefix!r} line")


def _fmt(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _whole_clusters(checks: dict, summary: str) -> tuple[bool, str]:
    """Whether the checks found every cluster in one group (whole clusters
    assigned), and why then the clusters' ``summary`` are the units."""
    design = _check(checks, "Clusters holding more than one group", "count", "clusters", optional=True)
    return bool(design) and design["count"] == 0, (
        f"each of the {_fmt(design.get('clusters'))} clusters lies in one group (whole clusters were assigned), "
        f"so the clusters' {summary} are the independent units")


def _groups_rule(checks: dict, rank_test: str, welch: str, cluster_means: str) -> tuple[str, str]:
    whole, why = _whole_clusters(checks, "means")
    if whole:
        return cluster_means, why
    p = _check(checks, "Shapiro-Wilk test of the within-group", "p")["p"]
    if p < CHECK_ALPHA:
        return rank_test, f"the within-group residuals are not normal (Shapiro-Wilk p = {_fmt(p)}), so a rank test"
    spreads = _check(checks, "Brown-Forsythe", "p")["p"]
    return welch, (f"the residuals look normal (Shapiro-Wilk p = {_fmt(p)}), and Welch's version does not assume "
                   f"equal spreads (Brown-Forsythe p = {_fmt(spreads)})")


def _paired_rule(checks: dict) -> tuple[str, str]:
    octile = _check(checks, "Octile skewness of the differences", "value")["value"]
    if abs(octile) > OCTILE_SKEWED:
        return "sign_test", (f"the differences are lopsided (octile skewness {_fmt(octile)}), so only their signs "
                             "test a typical change of zero")
    p = _check(checks, "Shapiro-Wilk test of the differences", "p")["p"]
    if p < CHECK_ALPHA:
        return "wilcoxon_signed_rank", (f"the differences are symmetric (octile skewness {_fmt(octile)}) but not "
                                        f"normal (Shapiro-Wilk p = {_fmt(p)})")
    return "paired_t", f"the differences look normal (Shapiro-Wilk p = {_fmt(p)}) and symmetric (octile skewness {_fmt(octile)})"


def _shapiro_pair(checks: dict, prefix: str, what: str) -> tuple[list[float], str]:
    """The p-values of the two Shapiro-Wilk lines whose labels start with
    ``prefix`` (one per variable), and how to quote them."""
    ps = [values["p"] for label, values in checks.items()
          if label.startswith(prefix) and isinstance(values.get("p"), float)]
    if len(ps) != 2:
        raise MissingCheck(f"the checks printed no Shapiro-Wilk line for {what} of each variable")
    return ps, ", ".join(f"p = {_fmt(p)}" for p in ps)


def _association_rule(checks: dict) -> tuple[str, str]:
    lags = [values["r1"] for label, values in checks.items()
            if label.startswith("Lag-1 autocorrelation") and isinstance(values.get("r1"), float)]
    if lags and min(lags) > PERSISTENT:   # two series that wander: only their changes are independent pairs
        ps, shown = _shapiro_pair(checks, "Shapiro-Wilk test of the changes", "the changes")
        persistence = f"both series follow their previous value (lag-1 autocorrelations {', '.join(map(_fmt, lags))})"
        if min(ps) < CHECK_ALPHA / 2:
            return "spearman_differences", (f"{persistence}, and their changes are far from normal (Shapiro-Wilk "
                                            f"{shown}, each judged at half the level), so the ranks of the changes")
        return "pearson_differences", f"{persistence}, and their changes look normal (Shapiro-Wilk {shown})"
    levels = {label: values for label, values in checks.items()
              if not label.startswith("Shapiro-Wilk test of the changes")}
    ps, shown = _shapiro_pair(levels, "Shapiro-Wilk test of", "the values")
    if min(ps) < CHECK_ALPHA / 2:
        return "spearman", (f"a variable is far from normal (Shapiro-Wilk {shown}, each judged at half the level), "
                            "so the ranks carry the association")
    return "pearson", f"both variables look normal (Shapiro-Wilk {shown})"


def _two_proportions_rule(checks: dict) -> tuple[str, str]:
    whole, why = _whole_clusters(checks, "proportions")
    if whole:
        return "cluster_proportions_t", why
    table = _check(checks, "Expected counts under independence", "smallest", "cells")
    smallest = table["smallest"]
    if table["cells"] != 4.0 or smallest < 5:
        return "fisher_exact", (f"the smallest expected count, {_fmt(smallest)}, is too small for the large-sample "
                                "test, so the exact one")
    return "two_proportion_z", f"every expected count is large enough (smallest {_fmt(smallest)})"


def _regression_rule(checks: dict) -> tuple[str, str]:
    """A floor, then a curve and a growing spread, the last two judged at half
    the level each, so that a plain linear model's data pass both 95 % of the time."""
    zeros = _check(checks, "Outcome values at 0", "count")["count"]
    if zeros > 0:
        return "tobit", f"the outcome piles up at 0 ({_fmt(zeros)} values), a floor a censored model handles"
    squares = _check(checks, "HC3 Wald test of the squared", "p", optional=True)   # only with a numeric covariate
    if squares and squares["p"] < CHECK_ALPHA / 2:
        return "ols_quadratic", (f"the squared covariates improve the model (HC3 Wald p = {_fmt(squares['p'])}, "
                                 "judged at half the level), so the adjustment needs the curve")
    spread = _check(checks, "Breusch-Pagan", "p")["p"]
    if spread < CHECK_ALPHA / 2:
        return "ols_robust", (f"the residual spread changes with the exposure (Breusch-Pagan p = {_fmt(spread)}, "
                              "judged at half the level), so HC3 errors")
    return "ols_coefficient", f"no floor, no curve and no change in spread (Breusch-Pagan p = {_fmt(spread)})"


def _counts_rule(checks: dict) -> tuple[str, str]:
    fit = _check(checks, "Poisson fit, Pearson dispersion", "ratio", "p")
    ratio, p = fit["ratio"], fit["p"]
    if ratio > DISPERSION_MATERIAL and p < CHECK_ALPHA:
        return "negative_binomial", f"the counts are overdispersed (Pearson ratio {_fmt(ratio)}, p = {_fmt(p)})"
    return "poisson_regression", f"no material overdispersion (Pearson ratio {_fmt(ratio)}, p = {_fmt(p)})"


def _clustered_rule(checks: dict) -> tuple[str, str]:
    within = _check(checks, "Clusters whose exposure varies within", "count")["count"]
    if not within:
        return "linear_mixed", "the exposure is constant within clusters, so a random intercept per cluster"
    p = _check(checks, "Cluster mean of the exposure", "p")["p"]
    if p < CHECK_ALPHA:
        return "cluster_fixed_effects", (f"the between-cluster slope differs from the within (Mundlak p = {_fmt(p)}), "
                                         "so cluster fixed effects")
    return "linear_mixed", (f"the cluster means of the exposure add nothing (Mundlak p = {_fmt(p)}), so a random "
                            "intercept per cluster")


def _time_to_event_rule(checks: dict) -> tuple[str, str]:
    whole, why = _whole_clusters(checks, "event rates")
    if whole:
        return "cluster_event_rates_t", why
    p = _check(checks, "Covariate balance", "p")["p"]
    if p < CHECK_ALPHA:
        return "cox_ph", f"the covariates differ between the groups (p = {_fmt(p)}), so a Cox model adjusts for them"
    return "log_rank", f"the groups are balanced on the covariates (p = {_fmt(p)})"


#: Per question kind with sibling families: (the code of its checks, the rule
#: that reads what they printed and returns the family and why).
KINDS = {"two_groups": (_residual_normality, lambda c: _groups_rule(c, "mann_whitney", "welch_t", "cluster_means_t")),
         "k_groups": (_residual_normality, lambda c: _groups_rule(c, "kruskal_wallis", "welch_anova",
                                                                  "cluster_means_anova")),
         "paired": (_paired, _paired_rule), "association": (_association, _association_rule),
         "two_proportions": (_two_proportions, _two_proportions_rule), "regression": (_regression, _regression_rule),
         "counts": (_counts, _counts_rule), "clustered_regression": (_clustered, _clustered_rule),
         "time_to_event": (_time_to_event, _time_to_event_rule)}


def decide(kind: str, checks: dict) -> tuple[str, str]:
    """(the family the printed ``checks`` of ``kind`` point to, why, in words
    quoting them); :class:`MissingCheck` where a check it reads is not there."""
    return KINDS[kind][1](checks)


def check_code(kind: str, roles: dict, language: str = "python") -> str:
    """The code of ``kind``'s checks on ``d``: Python (numpy, pandas, scipy.stats
    and statsmodels imported) or its R twin (:mod:`taskfactory.use.agent.checks_r`)."""
    if language == "r":
        return checks_r.checks(kind, roles, OCTILE_SKEWED, PERSISTENT)
    return KINDS[kind][0](roles) if kind in KINDS else ASSUMPTIONS[kind](roles)


def choose(kind: str, data: pd.DataFrame, roles: dict) -> str | None:
    """The family :func:`decide` picks when the checks of ``kind`` run here
    on ``data`` (already handled as the conventions say); None where a check
    it reads printed nothing."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(_IMPORTS + check_code(kind, roles), {"d": data})   # noqa: S102 - the project's own check code
    try:
        return decide(kind, read_checks(printed.getvalue()))[0]
    except MissingCheck:
        return None


def right_choices(record: dict) -> set[str]:
    """The task's family and the families whose canonical call is one of its accepted tests."""
    calls = {a["r_call"] for a in record["accepted"] or []}
    return {record["method"]} | {f.name for f in families() if f.canonical in calls}


# -- the episode ---------------------------------------------------------------------------------------------------

#: What the statistician says before each step's code, a phrasing per task.
_SAY = {
    "read": ["I'll start by reading the file: its columns, their types, blank cells, and values outside the "
             "plausible ranges the data dictionary gives.",
             "First, a look at the file itself: which variables it holds, of what type, and how many cells are blank "
             "or impossible.",
             "Let me load the data and take stock of the variables, the blank cells and any values outside their "
             "plausible ranges."],
    "describe": ["Following the stated conventions, impossible values are now missing and incomplete rows are "
                 "dropped ({rows} rows left). Next, the distributions the question is about.",
                 "With out-of-range values set to missing and complete cases kept, {rows} rows remain. Now the shape "
                 "of the variables the question concerns.",
                 "{rows} complete rows after the conventions (impossible values to missing, complete cases). Let me "
                 "describe the variables the question involves."],
    "check": ["Now the checks that tell this question's candidate tests apart.",
              "Before choosing a test, I'll check the assumptions the candidate tests rest on.",
              "Next, the assumption checks that separate the tests that could answer this question."],
    "run": ["The checks point to the {test}: {why}. Running it on the complete cases.",
            "I'll use the {test}, because {why}.",
            "Decision: the {test}, since {why}. Here it is."],
    "single": ["This question has one standard analysis, the {test}. Running it on the complete cases.",
               "The {test} is the analysis this question calls for. Here it is.",
               "The question is answered by the {test}; running it."],
    "assumed": ["Checked: {why}. This question has one standard analysis, the {test}; running it.",
                "What the {test} rests on, as checked ({why}). Running it on the complete cases.",
                "Checked ({why}); the {test} is the analysis this question calls for."],
    "closed": ["There is no data file; the question gives the numbers. Computing the answer.",
               "The answer follows from the numbers in the question; I'll compute it.",
               "This is a calculation from the stated numbers."],
    "answer": ["The test gives the result above.", "Here is the answer, from the output above.",
               "That settles it."],
}
_ROWS = re.compile(r"^Complete cases on the analysis columns: rows = (\d+)$", re.M)
#: The hints of a guided prompt, one per line.
_HINTS = re.compile(r"^Hints about these data:\n((?:- .*\n?)+)", re.M)


#: First words of test names that are not a person's name (lower-cased inside a sentence).
_COMMON_FIRST_WORDS = {"chi-square", "difference-in-differences", "exact", "instrumental-variable", "linear",
                       "log-rank", "logistic", "negative", "one-sample", "one-way", "paired", "panel", "pooled",
                       "two-sample", "two-way"}


def in_sentence(label: str) -> str:
    """A test's name as written inside a sentence ("the exact sign test", "the Welch two-sample t-test")."""
    first = label.split(" ", 1)[0]
    return label[0].lower() + label[1:] if first.lower() in _COMMON_FIRST_WORDS else label


def _ranges(record: dict, columns: list[str]) -> dict:
    return {e["name"]: tuple(e["range"]) for e in record["data_dictionary"] or []
            if e["name"] in columns and e.get("range") is not None}


def _roles_for(family, roles: dict) -> dict:
    return {role: roles[role] for role in family.roles if role in roles}


def _read_code(record: dict, family, roles: dict, ranges: dict) -> str:
    lines = [_IMPORTS.rstrip("\n"), f'd = pd.read_csv({record["data_filename"]!r}, keep_default_na=False, na_values=[""])',
             'print(f"{len(d)} rows, {d.shape[1]} columns")',
             'print(pd.DataFrame({"type": d.dtypes.astype(str), "blank": d.isna().sum(), '
             '"distinct": d.nunique()}).to_string())']
    for col, (lo, hi) in ranges.items():
        outside = f"int(((d[{col!r}] < {lo!r}) | (d[{col!r}] > {hi!r})).sum())"
        lines.append(f"print({col!r} + ': ' + str({outside}) + ' values outside the plausible range {lo:g} to {hi:g}')")
    lines += handling_py(family, roles, ranges)
    lines.append('print(f"Complete cases on the analysis columns: rows = {len(d)}")')
    return "\n".join(lines) + "\n"


def _describe_code(roles: dict, columns: list[str]) -> str:
    if roles.get("before") and roles.get("after") and roles.get("positive") is not None:
        return f"print(pd.crosstab(d[{roles['before']!r}], d[{roles['after']!r}], margins=True).to_string())\n"
    if roles.get("before") and roles.get("after"):
        return (f"diff = d[{roles['after']!r}].astype(float) - d[{roles['before']!r}].astype(float)\n"
                "print(diff.describe().to_string())\n"
                "print(f'rose: {int((diff > 0).sum())}, fell: {int((diff < 0).sum())}, unchanged: {int((diff == 0).sum())}')\n"
                "print(f'skewness of the differences: {diff.skew():.3f}')\n")
    measure, group = roles.get("outcome") or roles.get("time"), roles.get("group")
    if group and measure and roles.get("event"):
        return (f"by = d.groupby({group!r})\n"
                f"print(pd.DataFrame({{'n': by.size(), 'events': by[{roles['event']!r}].sum(), "
                f"'median follow-up': by[{measure!r}].median()}}).to_string())\n")
    if group and measure:
        return (f"by = d.groupby({group!r})[{measure!r}]\n"
                f"if pd.api.types.is_numeric_dtype(d[{measure!r}]):\n"
                "    print(by.describe().to_string())\n"
                "    print('skewness:', by.skew().round(3).to_dict())\n"
                "else:\n"
                f"    print(pd.crosstab(d[{group!r}], d[{measure!r}], margins=True).to_string())\n")
    return f"print(d[{columns!r}].describe(include='all').T.to_string())\n"


class Statistician:
    """Plays each task through the environment's tools in five steps (see the
    module) in ``language``: "python" (its test in R only where the Python
    solution needs this package, which the sandbox does not hold), "r", or
    "mixed" (either, drawn per task)."""

    def __init__(self, language: str = "python", mode: str = "tools"):
        if language not in LANGUAGES:
            raise ValueError(f"language ({language!r}) must be one of {', '.join(LANGUAGES)}")
        self.language, self.mode = language, mode

    def episode(self, record: dict) -> Episode:
        return Episode(record, self.language, self.mode)

    def close(self) -> None:
        pass


class Episode:
    """One task's replies: called with the messages so far, it returns the next
    assistant message (and no usage), its code as a tool call or, in mode
    "fences", as a fenced block; :attr:`chosen` is the family it chose."""

    def __init__(self, record: dict, language: str = "python", mode: str = "tools"):
        self.record, self.language, self.mode = record, language, mode
        family = get_family(record["method"])
        self.kind = family.question_kind   # the question's kind, which its siblings share
        self.candidates = kind_families(self.kind)
        self.roles = roles_of(record["roles"] or {})
        self.say = random.Random(int.from_bytes(hashlib.sha256(record["task_id"].encode()).digest()[:8], "big"))
        if language == "mixed":
            self.language = self.say.choice(("python", "r"))
        self.tool = "run_r" if self.language == "r" else "run_python"
        if record.get("data_csv") is None:
            self.steps, self.chosen = ["closed"], family   # a calculation from stated numbers: one family per question
        else:
            self.steps = ["read", "describe", *(["check"] if self.kind in KINDS or self.kind in ASSUMPTIONS else []), "run"]
            self.chosen = None
        self.calls = 0

    def __call__(self, messages: list[dict], tools: list[dict]) -> tuple[dict, dict]:
        if self.calls < len(self.steps):
            text, tool, code = self._step(self.steps[self.calls], messages[-1].get("content") or "")
            self.calls += 1
            if self.mode == "fences":
                return {"role": "assistant", "content": f"{text}\n\n```{TOOL_LANGUAGE[tool]}\n{code}```"}, {}
            call = {"id": f"call_{self.calls - 1}", "type": "function",
                    "function": {"name": tool, "arguments": {"code": code}}}
            return {"role": "assistant", "content": text, "tool_calls": [call]}, {}
        answer = answer_text(messages[-1].get("content") or "", self.chosen.test_name.label,
                             self.record.get("alpha") or 0.05)
        return {"role": "assistant", "content": f"{self.say.choice(_SAY['answer'])}\n\n{answer}"}, {}

    def _step(self, step: str, printed: str) -> tuple[str, str, str]:
        """(what the statistician says, the tool, the code it runs) at ``step``, after ``printed``."""
        say, record = self.say, self.record
        if step == "closed":
            return say.choice(_SAY["closed"]), self.tool, record["reference_r" if self.language == "r" else "reference_py"]
        base = self.candidates[0]
        roles = _roles_for(base, self.roles)
        if step == "read":
            ranges = _ranges(record, base.role_columns(roles))
            code = (checks_r.read_code(record["data_filename"], base, roles, ranges) if self.language == "r"
                    else _read_code(record, base, roles, ranges))
            return say.choice(_SAY["read"]), self.tool, code
        if step == "describe":
            rows = _ROWS.search(printed)
            text = say.choice(_SAY["describe"]).format(rows=rows.group(1) if rows else "the complete")
            hints = _HINTS.search(record["prompt"])
            if hints:   # a guided prompt: the statistician reads its hints, then looks for itself
                hint = say.choice(hints.group(1).strip().splitlines())[2:].rstrip(".")
                text += f" The task's hints say: {hint[0].lower()}{hint[1:]}; I'll look for myself."
            describe = checks_r.describe_code if self.language == "r" else _describe_code
            return text, self.tool, describe(roles, base.role_columns(roles))
        if step == "check":
            return say.choice(_SAY["check"]), self.tool, check_code(self.kind, roles, self.language)
        self.chosen, why = self._choose(printed)
        test = in_sentence(self.chosen.test_name.label)
        phrasing = "run" if self.kind in KINDS else "assumed" if why else "single"
        text = say.choice(_SAY[phrasing]).format(test=test, why=why)
        roles = _roles_for(self.chosen, self.roles)
        ranges = _ranges(record, self.chosen.role_columns(roles))
        code = reference_py(self.chosen, roles, ranges, record["data_filename"])
        if self.language == "r" or not standalone(code):
            return text, "run_r", reference_r(self.chosen, roles, ranges, record["data_filename"])
        return text, "run_python", code

    def _choose(self, printed: str):
        """(the family, why) from the printed checks; where the question has one analysis, why is what they showed (None when nothing was checked)."""
        if self.kind in KINDS:
            name, why = decide(self.kind, read_checks(printed))
            return get_family(name), why
        worded = [f for f in self.candidates if f.question_words
                  and all(text in self.record["prompt"] for text in f.question_words.values())]
        seen = "; ".join(f"{label}: {', '.join(f'{k} = {_fmt(v)}' for k, v in values.items())}"
                         for label, values in read_checks(printed).items())
        return (worded[0] if len(worded) == 1 else self.candidates[0]), seen or None
