#!/usr/bin/env python3
"""Can the wording, or only the data, tell sibling families apart?

Builds (or reads) a corpus of every question kind with more than one family
(but those whose question names what the researcher wants, such as the error
rate of a panel of tests, which no data can show) and measures two things:

- **text**: a text-only classifier (TF-IDF on the basic prompt, logistic
  regression) predicting the family within each question kind, with the
  scenarios held out in cross-validation (grouped folds), against the
  majority rate. The wording should teach nothing: accuracy at most the
  majority rate plus 5 points.
- **data**: a small rule set that looks only at the released data (normality
  of the within-group studentized residuals, of the paired differences or of
  each variable; the smallest expected count of a 2 x 2 table; outcome values
  at 0 or Breusch-Pagan on a regression's residuals; the Pearson dispersion of a Poisson fit; the
  balance of the covariates between the groups of a time-to-event comparison;
  after the canonical handling) and picks a family; it should pick the canonical test or
  an accepted alternative in at least 90 % of tasks at N >= 60.

    python scripts/bench_siblings.py [--corpus DIR] [--seeds 4] [--n 60 200]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.diagnostic import het_breuschpagan

import taskfactory as tf
from taskfactory.analysis import prepare, read_csv_text
from taskfactory.catalogue import get_scenario
from taskfactory.corpus import iter_records
from taskfactory.methods._models import model_matrix

#: A normality test rejecting at this level marks a sample as not normal.
NORMALITY_ALPHA = 0.01
COLUMNS = ["task_id", "method", "scenario", "n", "prompt", "prompt_style", "data_csv", "roles", "accepted"]


def kinds() -> dict[str, list[str]]:
    """Question kinds with more than one registered family, except those whose
    siblings differ in what the question asks for (``Family.question_words``,
    such as the error rate to control), which no data can show."""
    by_kind = defaultdict(list)
    for family in tf.families():
        by_kind[family.question_kind].append(family.name)
    return {kind: names for kind, names in by_kind.items()
            if len(names) > 1 and not any(tf.get_family(name).question_words for name in names)}


def grid(seeds: int, n=(60, 200)) -> dict:
    """The sibling families at sizes ``n``, each where its range of N allows."""
    methods = [name for names in kinds().values() for name in names]
    outside = [{"method": m, "n": k} for m in methods for k in n
               if k < tf.get_family(m).min_n or k > (tf.get_family(m).max_n or k)]
    return {"name": "siblings", "seed": 29, "methods": methods, "n": list(n), "effects": ["null", "medium"],
            "prompt_styles": ["basic"], "perturbations": ["none", "missing"], "seeds": seeds, "exclude": outside}


def _not_normal(x: np.ndarray) -> bool:
    return len(x) >= 3 and float(np.ptp(x)) > 0 and stats.shapiro(x).pvalue < NORMALITY_ALPHA


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
        return "wilcoxon_signed_rank" if _not_normal(d) else "paired_t"
    if kind == "association":
        skewed = any(_not_normal(data[roles[r]].to_numpy(float)) for r in ("x", "y"))
        return "spearman" if skewed else "pearson"
    if kind == "two_proportions":
        counts = data.groupby([roles["group"], roles["outcome"]]).size().unstack(fill_value=0).to_numpy(float)
        expected = np.outer(counts.sum(axis=1), counts.sum(axis=0)) / counts.sum()
        return "fisher_exact" if counts.shape != (2, 2) or expected.min() < 5 else "two_proportion_z"
    if kind == "regression":
        if (data[roles["outcome"]].to_numpy(float) == 0).any():  # an outcome piling up at its floor
            return "tobit"
        return "ols_robust" if _heteroscedastic(data, roles) else "ols_coefficient"  # HC3 is accepted beside lm
    if kind == "counts":
        return "negative_binomial" if _overdispersed(data, roles) else "poisson_regression"
    if kind == "clustered_regression":  # the mixed model is accepted beside the cluster-robust t, not vice versa
        return "linear_mixed"
    if kind == "time_to_event":  # adjusting is accepted beside the log-rank test of balanced groups
        return "cox_ph" if _imbalanced(data, roles) else "log_rank"
    raise ValueError(f"no rule for question kind '{kind}'")


def _heteroscedastic(data, roles: dict) -> bool:
    """Breusch-Pagan (studentized, Koenker) test of the adjusted model's
    residuals against the exposure (the residual plot an analyst looks at), at 1 %."""
    X, _ = model_matrix(data, [roles["exposure"], *roles["covariates"]])
    y = data[roles["outcome"]].to_numpy(float)
    resid = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    return het_breuschpagan(resid, X[:, :2])[1] < NORMALITY_ALPHA


def _overdispersed(data, roles: dict) -> bool:
    """The Poisson fit's Pearson chi-square over its residual df, 1 % above
    what a Poisson sample would show (chi-square on the residual df)."""
    X, _ = model_matrix(data, [roles["exposure"], *roles["covariates"]])
    y = data[roles["outcome"]].to_numpy(float)
    fit = sm.GLM(y, X, family=sm.families.Poisson(), offset=np.log(data[roles["exposure_time"]].to_numpy(float))).fit()
    return stats.chi2.sf(fit.pearson_chi2, fit.df_resid) < NORMALITY_ALPHA


def _imbalanced(data, roles: dict) -> bool:
    """Do the covariates differ between the groups: the likelihood-ratio test
    of a logistic regression of the group on the covariates, at 5 %."""
    X, _ = model_matrix(data, roles["covariates"])
    levels = sorted(data[roles["group"]].astype(str).unique())
    y = (data[roles["group"]].astype(str) == levels[-1]).to_numpy(float)
    fit = sm.GLM(y, X, family=sm.families.Binomial()).fit()
    return stats.chi2.sf(fit.null_deviance - fit.deviance, fit.df_model) < 0.05


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


def load(corpus: Path) -> list[dict]:
    """The basic-style tasks of sibling families (those the rules and the classifier judge)."""
    siblings = {name for names in kinds().values() for name in names}
    return [r for r in iter_records(corpus, columns=COLUMNS)
            if r["prompt_style"] == "basic" and r["method"] in siblings and r["data_csv"] is not None]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", help="a corpus to read (default: build the sibling grid into a scratch folder)")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--n", type=int, nargs="+", default=[60, 200], help="sample sizes (default 60 200)")
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
    rules = data_rules(records)
    print(f"{'question kind':<16} {'tasks':>6} {'text accuracy':>14} {'majority':>9}")
    for kind, row in text.items():
        print(f"{kind:<16} {row['tasks']:>6} {row['accuracy']:>14.3f} {row['majority']:>9.3f}")
    print(f"{'family and N':<36} {'tasks':>6} {'data rules right':>17}")
    for key, row in rules.items():
        print(f"{key:<36} {row['tasks']:>6} {row['right']:>17.3f}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"text": text, "data": rules}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
