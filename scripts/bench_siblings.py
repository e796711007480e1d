#!/usr/bin/env python3
"""Can the wording, the file's shape, or only the data tell sibling families apart, and what does looking pay?

Builds (or reads) a corpus of every question kind with more than one family
(but those whose question names what the researcher wants, such as the error
rate of a panel of tests, which no data can show) and measures:

- **text**: a text-only classifier (TF-IDF on the basic prompt, logistic
  regression) predicting the family within each question kind, with the
  scenarios held out in cross-validation (grouped folds), against the
  majority rate. The wording should teach nothing: accuracy at most the
  majority rate plus 5 points.
- **data**: a small rule set that looks only at the released data (normality
  of the within-group studentized residuals, of the paired differences or of
  each variable; the octile skewness of the paired differences; the smallest
  expected count of a 2 x 2 table; outcome values at 0, the HC3 Wald test of
  the squares of its numeric covariates or Breusch-Pagan on a regression's
  residuals; the Pearson dispersion of a Poisson fit, tested and above 1.2;
  the balance of the covariates between the groups of a time-to-event
  comparison; after the canonical handling; each test at 5 %) and picks a family; it should pick the
  canonical test or an accepted alternative in at least 90 % of tasks at every N a family
  takes.
- **artefacts**: gradient boosting on what the file's shape shows without statistics (rows,
  group sizes, shares and order, level counts, rows per cluster), scenarios held out: at
  most the majority rate plus 5 points.
- **blind policy**: each sibling's canonical test run on every task of its kind and named
  on the METHOD line, graded as ``taskfactory score`` grades; the best of them is what a
  policy that never looks at the data earns (the gold earns 1).
- **cap**: the share of tasks whose gold z is at the reward's cap, where tests score alike.

    python scripts/bench_siblings.py [--corpus DIR] [--seeds 4] [--n 40 60 200] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.diagnostic import het_breuschpagan
from statsmodels.tools.sm_exceptions import PerfectSeparationWarning

import taskfactory as tf
from taskfactory.analysis import prepare, read_csv_text
from taskfactory.catalogue import get_scenario
from taskfactory.corpus import iter_records
from taskfactory.methods._models import model_matrix
from taskfactory.methods.ols_quadratic import quadratic_design, squared
from taskfactory.report import at_reward_cap
from taskfactory.reward import Answer, reward

#: The level of an analyst's checks: a normality test (for two variables,
#: each at half of it), Breusch-Pagan, the Poisson dispersion test and the
#: balance of a survival comparison's covariates.
CHECK_ALPHA = 0.05
#: The octile skewness beyond which paired differences count as asymmetric
#: (set where symmetric differences with heavy tails, the signed-rank
#: sibling's, rarely pass it at the kind's smallest N).
OCTILE_SKEWED = 0.4
#: The Pearson dispersion ratio of a Poisson fit above which overdispersion
#: matters to an analyst (beside its test at CHECK_ALPHA).
DISPERSION_MATERIAL = 1.2
COLUMNS = ["task_id", "method", "scenario", "n", "prompt", "prompt_style", "data_csv", "roles", "accepted",
           "gold", "gold_z", "alpha", "effect", "data_dictionary"]


def kinds() -> dict[str, list[str]]:
    """Question kinds with more than one registered family, except those whose
    siblings differ in what the question asks for (``Family.question_words``,
    such as the error rate to control), which no data can show."""
    by_kind = defaultdict(list)
    for family in tf.families():
        by_kind[family.question_kind].append(family.name)
    return {kind: names for kind, names in by_kind.items()
            if len(names) > 1 and not any(tf.get_family(name).question_words for name in names)}


def grid(seeds: int, n=(40, 60, 200)) -> dict:
    """The sibling families at sizes ``n``, each where its range of N allows."""
    methods = [name for names in kinds().values() for name in names]
    outside = [{"method": m, "n": k} for m in methods for k in n
               if k < tf.get_family(m).min_n or k > (tf.get_family(m).max_n or k)]
    return {"name": "siblings", "seed": 29, "methods": methods, "n": list(n), "effects": ["null", "medium"],
            "prompt_styles": ["basic"], "perturbations": ["none", "missing"], "seeds": seeds, "exclude": outside}


def _not_normal(x: np.ndarray, alpha: float = CHECK_ALPHA) -> bool:
    return len(x) >= 3 and float(np.ptp(x)) > 0 and stats.shapiro(x).pvalue < alpha


def _octile_skewness(x: np.ndarray) -> float:
    """Hinkley's quantile skewness at the octiles, (q7/8 + q1/8 - 2 median) /
    (q7/8 - q1/8): 0 for a symmetric distribution, whatever its tails."""
    low, mid, high = np.percentile(x, [12.5, 50.0, 87.5])
    return float((high + low - 2.0 * mid) / (high - low)) if high > low else 0.0


def _studentized_residuals(data, group: str, outcome: str) -> np.ndarray:
    """Each value less its group's mean, over its group's SD, pooled: the
    residuals an analyst checks before a t-test or ANOVA (spreads may differ)."""
    parts = []
    for _, g in data.groupby(group)[outcome]:
        values = g.to_numpy(float)
        if len(values) > 2 and values.std() > 0:
            parts.append((values - values.mean()) / values.std(ddof=1))
    return np.concatenate(parts) if parts else np.empty(0)


def choose(kind: str, data, roles: dict) -> str:
    """The family a careful analyst would pick from the data alone."""
    if kind in ("two_groups", "k_groups"):
        if _not_normal(_studentized_residuals(data, roles["group"], roles["outcome"])):
            return "mann_whitney" if kind == "two_groups" else "kruskal_wallis"
        return "welch_t" if kind == "two_groups" else "welch_anova"  # Welch's F is accepted for equal spreads
    if kind == "paired":
        d = data[roles["after"]].to_numpy(float) - data[roles["before"]].to_numpy(float)
        if abs(_octile_skewness(d)) > OCTILE_SKEWED:  # a symmetry check heavy tails do not fool
            return "sign_test"
        return "wilcoxon_signed_rank" if _not_normal(d) else "paired_t"
    if kind == "association":
        skewed = any(_not_normal(data[roles[r]].to_numpy(float), CHECK_ALPHA / 2) for r in ("x", "y"))
        return "spearman" if skewed else "pearson"
    if kind == "two_proportions":
        counts = data.groupby([roles["group"], roles["outcome"]]).size().unstack(fill_value=0).to_numpy(float)
        expected = np.outer(counts.sum(axis=1), counts.sum(axis=0)) / counts.sum()
        return "fisher_exact" if counts.shape != (2, 2) or expected.min() < 5 else "two_proportion_z"
    if kind == "regression":
        if (data[roles["outcome"]].to_numpy(float) == 0).any():  # an outcome piling up at its floor
            return "tobit"
        if _curved(data, roles):
            return "ols_quadratic"
        return "ols_robust" if _heteroscedastic(data, roles) else "ols_coefficient"  # HC3 is accepted beside lm
    if kind == "counts":
        return "negative_binomial" if _overdispersed(data, roles) else "poisson_regression"
    if kind == "clustered_regression":  # the mixed model is accepted beside the cluster-robust t, not vice versa
        return "cluster_fixed_effects" if _between_differs(data, roles) else "linear_mixed"
    if kind == "time_to_event":  # adjusting is accepted beside the log-rank test of balanced groups
        return "cox_ph" if _imbalanced(data, roles) else "log_rank"
    raise ValueError(f"no rule for question kind '{kind}'")


def _heteroscedastic(data, roles: dict) -> bool:
    """Breusch-Pagan (studentized, Koenker) test of the adjusted model's
    residuals against the exposure (the residual plot an analyst looks at)."""
    X, _ = model_matrix(data, [roles["exposure"], *roles["covariates"]])
    y = data[roles["outcome"]].to_numpy(float)
    resid = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    return het_breuschpagan(resid, X[:, :2])[1] < CHECK_ALPHA


def _curved(data, roles: dict) -> bool:
    """The squares of the numeric covariates, added to the adjusted model,
    improve it (their Wald test with HC3 errors, which unequal spreads do not
    fool: the check of a confounder's functional form)."""
    bent = len(squared(data, roles["covariates"]))
    if not bent:
        return False
    full, _ = quadratic_design(data, roles)
    y = data[roles["outcome"]].to_numpy(float)
    squares = np.eye(full.shape[1])[full.shape[1] - bent:]
    return float(sm.OLS(y, full).fit(cov_type="HC3").wald_test(squares, scalar=True).pvalue) < CHECK_ALPHA


def _overdispersed(data, roles: dict) -> bool:
    """The Poisson fit's Pearson chi-square is above what a Poisson sample
    would show (chi-square on the residual df) and by a margin that matters:
    a dispersion ratio above :data:`DISPERSION_MATERIAL` (at large N the test
    alone flags ratios too close to 1 to change a conclusion)."""
    X, _ = model_matrix(data, [roles["exposure"], *roles["covariates"]])
    y = data[roles["outcome"]].to_numpy(float)
    fit = sm.GLM(y, X, family=sm.families.Poisson(), offset=np.log(data[roles["exposure_time"]].to_numpy(float))).fit()
    ratio = fit.pearson_chi2 / fit.df_resid
    return ratio > DISPERSION_MATERIAL and stats.chi2.sf(fit.pearson_chi2, fit.df_resid) < CHECK_ALPHA


def _between_differs(data, roles: dict) -> bool:
    """A regression-based Hausman test (Mundlak's): the cluster mean of an
    exposure that varies within clusters, added to the pooled model, has a
    cluster-robust t beyond the check's level."""
    cluster = data[roles["cluster"]]
    exposure = data[roles["exposure"]].astype(float)
    if not (data.groupby(cluster)[roles["exposure"]].nunique() > 1).any():
        return False
    X, _ = model_matrix(data, [roles["exposure"], *roles["covariates"]])
    X = np.column_stack([X, exposure.groupby(cluster).transform("mean").to_numpy()])
    fit = sm.OLS(data[roles["outcome"]].to_numpy(float), X).fit(
        cov_type="cluster", cov_kwds={"groups": pd.factorize(cluster)[0]})
    return fit.pvalues[-1] < CHECK_ALPHA


def _imbalanced(data, roles: dict) -> bool:
    """Do the covariates differ between the groups: the likelihood-ratio test
    of a logistic regression of the group on the covariates (a perfect
    separation, which statsmodels warns of, is imbalance at its plainest)."""
    X, _ = model_matrix(data, roles["covariates"])
    levels = sorted(data[roles["group"]].astype(str).unique())
    y = (data[roles["group"]].astype(str) == levels[-1]).to_numpy(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PerfectSeparationWarning)
        fit = sm.GLM(y, X, family=sm.families.Binomial()).fit()
    return stats.chi2.sf(fit.null_deviance - fit.deviance, fit.df_model) < CHECK_ALPHA


def right_choices(rec: dict) -> set[str]:
    """The family itself and the families whose canonical call is one of its accepted tests."""
    calls = {a["r_call"] for a in rec["accepted"] or []}
    return {rec["method"]} | {f.name for f in tf.families() if f.canonical in calls}


def data_rules(records: list[dict]) -> dict:
    """Per family and N: tasks, share the rules got right."""
    kind_of = {name: kind for kind, names in kinds().items() for name in names}
    cells = defaultdict(lambda: [0, 0])
    for rec in records:
        family = tf.get_family(rec["method"])
        scen = get_scenario(rec["method"], rec["scenario"])
        data = prepare(family, read_csv_text(rec["data_csv"]), scen.roles, scen.ranges())
        picked = choose(kind_of[rec["method"]], data, scen.roles)
        cell = cells[(rec["method"], rec["n"])]
        cell[0] += 1
        cell[1] += picked in right_choices(rec)
    return {f"{m} n={n}": {"tasks": t, "right": r / t} for (m, n), (t, r) in sorted(cells.items())}


def text_classifier(records: list[dict]) -> dict:
    """Per question kind: grouped-CV accuracy of TF-IDF + logistic regression
    on the prompt, and the majority rate."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold, cross_val_score
    from sklearn.pipeline import make_pipeline

    out = {}
    for kind, names in kinds().items():
        recs = [r for r in records if r["method"] in names]
        if len({r["method"] for r in recs}) < 2 or len({r["scenario"] for r in recs}) < 2:
            continue  # a kind this corpus does not hold two families and two scenarios of
        labels = [r["method"] for r in recs]
        groups = [r["scenario"] for r in recs]
        folds = min(5, len(set(groups)))
        model = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True),
                              LogisticRegression(max_iter=2000))
        scores = cross_val_score(model, [r["prompt"] for r in recs], labels, groups=groups,
                                 cv=GroupKFold(n_splits=folds))
        majority = max(labels.count(name) for name in names) / len(labels)
        out[kind] = {"tasks": len(recs), "accuracy": float(np.mean(scores)), "majority": majority}
    return out


def _blind_answers(rec: dict) -> dict:
    """{sibling: the reward, Raw and Strict of running its canonical test on
    this task's data and naming it on the METHOD line}, None where the test
    refuses these data (where R warns and still answers, as glm.nb does on
    Poisson counts whose theta runs off)."""
    kind = tf.get_family(rec["method"]).question_kind
    scen = get_scenario(rec["method"], rec["scenario"])
    data = read_csv_text(rec["data_csv"])
    out = {}
    for name in kinds()[kind]:
        sibling = tf.get_family(name)
        roles = {role: scen.roles[role] for role in sibling.roles if role in scen.roles}
        try:
            p = tf.analyse(name, data, roles, alpha=rec["alpha"], ranges=scen.ranges()).pvalue
        except tf.TaskFactoryError:
            out[name] = None
            continue
        decision = "reject" if p < rec["alpha"] else "fail to reject"
        result = reward(rec, Answer({"p_value": p, "decision": decision}, sibling.test_name.label))
        out[name] = (result.reward, result.raw, result.strict)
    return out


def blind_policies(records: list[dict], jobs: int) -> dict:
    """Per question kind: each sibling's test run as a fixed policy on every
    task of the kind (mean reward, Raw, Strict, overall and per family, a
    refused task scoring 0; the share it refuses and its mean reward where it
    runs, which bound what it earns in R, where a refusal here is a warning
    there), and the best of them, the policy that never looks at the data."""
    with ProcessPoolExecutor(jobs) as pool:
        answers = list(pool.map(_blind_answers, records, chunksize=32))
    kind_of = {name: kind for kind, names in kinds().items() for name in names}
    out = {}
    for kind, names in kinds().items():
        rows = [(rec["method"], a) for rec, a in zip(records, answers) if kind_of[rec["method"]] == kind]
        if not rows:
            continue
        policies = {}
        for name in names:
            scores = np.array([a[name] or (0.0, False, False) for _, a in rows], dtype=float)
            ran = np.array([a[name] is not None for _, a in rows])
            by_family = {fam: float(np.mean([(a[name] or (0.0,))[0] for m, a in rows if m == fam]))
                         for fam in names if any(m == fam for m, _ in rows)}
            policies[name] = {"reward": float(scores[:, 0].mean()), "raw": float(scores[:, 1].mean()),
                              "strict": float(scores[:, 2].mean()), "refused": float(1.0 - ran.mean()),
                              "reward_where_run": float(scores[ran, 0].mean()) if ran.any() else None,
                              "by_family": by_family}
        best = max(policies, key=lambda name: policies[name]["reward"])
        out[kind] = {"tasks": len(rows), "blind": best, "policies": policies}
    total = sum(row["tasks"] for row in out.values())
    overall = sum(row["tasks"] * row["policies"][row["blind"]]["reward"] for row in out.values()) / max(total, 1)
    return {"overall": overall, "tasks": total, "kinds": out}


def _artefacts(rec: dict) -> dict:
    """Numbers a look at the file's shape gives without any statistics: rows,
    columns, blank cells; per category role but the outcome (whose shares are
    data, as the expected counts of a table) its level count, the first-listed
    level's share, the smallest and largest shares; per cluster or unit role
    the count of clusters and rows per cluster."""
    data = read_csv_text(rec["data_csv"])
    types = {entry["name"]: entry["type"] for entry in rec["data_dictionary"]}
    feats = {"n": rec["n"], "rows": len(data), "columns": data.shape[1],
             "blank": float(data.isna().to_numpy().mean())}
    for role, column in sorted((rec["roles"] or {}).items()):
        if role == "outcome" or not isinstance(column, str) or column not in data:
            continue
        values = data[column].dropna().astype(str)
        if types.get(column) == "category" and len(values):
            shares = values.value_counts(normalize=True, sort=False)
            feats |= {f"{role}_levels": len(shares), f"{role}_first": float(shares.iloc[0]),
                      f"{role}_min": float(shares.min()), f"{role}_max": float(shares.max())}
        elif role in ("cluster", "unit") and len(values):
            sizes = values.value_counts().to_numpy(float)
            feats |= {f"{role}_count": len(sizes), f"{role}_mean": sizes.mean(), f"{role}_min": sizes.min(),
                      f"{role}_max": sizes.max(), f"{role}_sd": sizes.std()}
    return feats


def artefact_classifier(records: list[dict]) -> dict:
    """Per question kind: grouped-CV accuracy (scenarios held out) of gradient
    boosting on :func:`_artefacts`, and the majority rate."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import GroupKFold, cross_val_score

    out = {}
    for kind, names in kinds().items():
        recs = [r for r in records if r["method"] in names]
        if len({r["method"] for r in recs}) < 2 or len({r["scenario"] for r in recs}) < 2:
            continue
        feats = [_artefacts(r) for r in recs]
        keys = sorted({k for f in feats for k in f})
        X = np.array([[f.get(k, np.nan) for k in keys] for f in feats], dtype=float)
        labels = [r["method"] for r in recs]
        groups = [r["scenario"] for r in recs]
        scores = cross_val_score(HistGradientBoostingClassifier(max_iter=100, random_state=0), X, labels,
                                 groups=groups, cv=GroupKFold(n_splits=min(5, len(set(groups)))))
        majority = max(labels.count(name) for name in names) / len(labels)
        out[kind] = {"tasks": len(recs), "accuracy": float(np.mean(scores)), "majority": majority}
    return out


def above_chance(row: dict) -> bool:
    """A classifier's accuracy is above the majority rate plus 5 points by more
    than twice its binomial standard error over the kind's tasks (on a few
    hundred tasks a classifier of pure noise scatters by several points)."""
    se = math.sqrt(row["majority"] * (1.0 - row["majority"]) / row["tasks"])
    return row["accuracy"] > row["majority"] + 0.05 + 2.0 * se


def load(corpus: Path) -> list[dict]:
    """The basic-style tasks of sibling families (those the rules and the classifier judge)."""
    siblings = {name for names in kinds().values() for name in names}
    return [r for r in iter_records(corpus, columns=COLUMNS)
            if r["prompt_style"] == "basic" and r["method"] in siblings and r["data_csv"] is not None]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", help="a corpus to read (default: build the sibling grid into a scratch folder)")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--n", type=int, nargs="+", default=[40, 60, 200], help="sample sizes (default 40 60 200)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", dest="json_out", help="write the figures to this JSON file")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="siblings-") as tmp:
        corpus = Path(args.corpus) if args.corpus else Path(tmp) / "corpus"
        if not args.corpus:
            start = time.perf_counter()
            summary = tf.build(grid(args.seeds, tuple(args.n)), corpus, jobs=args.jobs, progress=False)
            print(f"built {summary.tasks} tasks in {time.perf_counter() - start:.1f} s")
        records = load(corpus)
    text = text_classifier(records)
    artefacts = artefact_classifier(records)
    rules = data_rules(records)
    blind = blind_policies(records, args.jobs)
    capped = at_reward_cap(pd.DataFrame(records, columns=["gold_z", "effect"]))
    print(f"{'question kind':<22} {'tasks':>6} {'blind test':<22} {'reward':>7} {'Raw':>6} {'Strict':>7} {'refused':>8}")
    for kind, row in blind["kinds"].items():
        best = row["policies"][row["blind"]]
        print(f"{kind:<22} {row['tasks']:>6} {row['blind']:<22} {best['reward']:>7.3f} {best['raw']:>6.3f}"
              f" {best['strict']:>7.3f} {best['refused']:>8.3f}")
    print(f"{'every kind':<22} {blind['tasks']:>6} {'':<22} {blind['overall']:>7.3f}")
    print(f"{'question kind':<22} {'tasks':>6} {'artefact accuracy':>18} {'majority':>9}")
    for kind, row in artefacts.items():
        print(f"{kind:<22} {row['tasks']:>6} {row['accuracy']:>18.3f} {row['majority']:>9.3f}")
    print(f"gold z at the reward's cap: {capped['share']:.3f} of the tasks; "
          + ", ".join(f"{k} {v:.3f}" for k, v in capped["share_by_effect"].items()))
    print(f"{'question kind':<16} {'tasks':>6} {'text accuracy':>14} {'majority':>9}")
    for kind, row in text.items():
        print(f"{kind:<16} {row['tasks']:>6} {row['accuracy']:>14.3f} {row['majority']:>9.3f}")
    print(f"{'family and N':<36} {'tasks':>6} {'data rules right':>17}")
    for key, row in rules.items():
        print(f"{key:<36} {row['tasks']:>6} {row['right']:>17.3f}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"text": text, "artefacts": artefacts, "data": rules,
                                                  "blind": blind, "capped": capped}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
