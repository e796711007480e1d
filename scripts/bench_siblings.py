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
- **data**: the scripted statistician's checks and rules
  (:mod:`taskfactory.use.agent.statistician`, which writes the worked
  trajectories), run here on the released data after the canonical handling,
  pick a family; they should pick the canonical test or an accepted
  alternative in at least 90 % of tasks at every N a family takes.
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
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

import taskfactory as tf
from taskfactory.use.agent.statistician import choose, right_choices
from taskfactory.make.analysis import prepare, read_csv_text
from taskfactory.design.catalogue import get_scenario
from taskfactory.store.corpus import iter_records
from taskfactory.use.report import at_reward_cap
from taskfactory.use.reward import Answer, reward

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
