"""``taskfactory report``: one self-contained HTML page describing a corpus.

The page has six sections, each built from the corpus's shards (only the
small columns listed in :data:`COLUMNS` and what scoring reads, never the
CSVs or scripts) and its manifest:

1. **Composition**: tasks per family, N, effect, prompt style, perturbation
   and split, and the tasks each family rejected at build time.
2. **Calibration**: for the families whose answer is a p-value, one gold
   p-value per dataset (``data_id``: the prompt styles of a dataset share it):
   the null p-values' histogram and Kolmogorov-Smirnov p-value against
   uniform, the null reject rate with its 95 % Clopper-Pearson interval, the
   borderline reject rate per N, the power (the reject rate at ``medium``, or
   at the corpus's first other level beyond the null and the borderline, such
   as a ``target_z`` one) per N, and the share of gold z values at the
   reward's cap, where every test scores alike.
3. **Traps**: the share of tasks whose tempting analysis decides otherwise,
   per family and perturbation, and the gold z against the naive test's z.
4. **Perturbations**: blank and impossible cells per row, and the rows the
   canonical test analysed against the rows drawn.
5. **Floors**: what trivial answers score: the share of tasks whose gold z
   is at the reward's cap, the Raw score of always answering "fail to
   reject", and the Raw score of a constant p-value per family and N fitted on
   half of the datasets (see :func:`_floors`).
6. **Agents**: the answers of each ``--predictions`` file and of the corpus's
   own gold and naive tests, scored by :func:`taskfactory.use.score.score`: Raw
   and Strict pass@1 and pass@k per family, effect, prompt style,
   perturbation and trap, and a reliability plot of the reported z against
   the gold z (both the reward's capped z, :func:`taskfactory.answers.capped_z`).

``report(corpus, out, predictions)`` writes ``out/index.html`` (the plots embedded as
base64 PNG, no network, no JavaScript), the PNG files beside it and
``out/summary.json``, which holds every number the page shows, nested by
section. matplotlib, numpy, pandas and scipy are imported only when a report
is made.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from pathlib import Path

from ..errors import InputError
from ..folders import check_new_folder

MISSING_MATPLOTLIB = "taskfactory report needs matplotlib: pip install 'taskfactory[report]'"
#: The record columns the report reads.
COLUMNS = ["data_id", "method", "n", "effect", "prompt_style", "perturbation", "split", "answer_kind", "alpha",
           "gold_p", "gold_z", "gold_decision", "naive_p", "trap", "n_blank_cells", "n_impossible_values", "n_rows",
           "n_analysed"]
SECTIONS = ("1. Composition", "2. Calibration", "3. Traps", "4. Perturbations", "5. Floors", "6. Agents",
            "7. Difficulty", "8. Prompt lengths", "9. A task as the agent sees it")
#: The record columns the Agents section breaks the scores down by, and their titles.
AGENT_BREAKDOWNS = {"method": "family", "effect": "effect", "prompt_style": "prompt style",
                    "perturbation": "perturbation", "trap": "trap"}
#: When a figure is flagged as off its expectation: the fewest datasets a rate needs, a KS p-value below
#: this, a borderline reject rate outside this range (and its interval excluding a half), a share of gold z
#: at the reward's cap above this.
FLAG_MIN_DATASETS = 20
FLAG_KS_P = 0.001
FLAG_BORDERLINE = (0.3, 0.7)
FLAG_CAP_SHARE = 0.05
#: Bins of the gold z in the reliability plot: [0, cap] in this many equal bins.
RELIABILITY_BINS = 10
DPI = 100
PANEL_COLUMNS = 5


def _r(x):
    """A float rounded to 4 significant digits (as the page shows it); None stays None."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return float(f"{float(x):.4g}")


def _shown(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _pyplot():
    """matplotlib's Figure class with the Agg backend, or InputError when it is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError(MISSING_MATPLOTLIB) from None
    return Figure


def load_frame(corpus):
    """The report's columns of every task of ``corpus`` as a pandas DataFrame."""
    import pandas as pd

    from ..store.corpus import iter_records

    return pd.DataFrame(list(iter_records(corpus, columns=COLUMNS)), columns=COLUMNS)


# --- the numbers -------------------------------------------------------------------

def _counts(series) -> dict:
    return {str(k): int(v) for k, v in sorted(series.value_counts().items(), key=lambda kv: _key(kv[0]))}


def _key(v):
    return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))


def _pvalue_tasks(df):
    return df[(df["answer_kind"] == "p_value") & df["gold_p"].notna()]


def _composition(df, manifest) -> dict:
    counts = manifest.get("counts", {})
    return {"tasks": int(len(df)),
            "by_method": _counts(df["method"]), "by_n": _counts(df["n"]), "by_effect": _counts(df["effect"]),
            "by_prompt_style": _counts(df["prompt_style"]), "by_perturbation": _counts(df["perturbation"]),
            "by_split": _counts(df["split"]),
            "rejected": int(counts.get("rejected", 0) or 0),
            "rejected_by_method": {str(k): int(v) for k, v in sorted(counts.get("rejected_by_method", {}).items())}}


def _rate(k: int, n: int) -> dict:
    from scipy.stats import binomtest

    if n == 0:
        return {"datasets": 0, "rejects": 0, "reject_rate": None, "ci_low": None, "ci_high": None}
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return {"datasets": n, "rejects": k, "reject_rate": _r(k / n), "ci_low": _r(ci.low), "ci_high": _r(ci.high)}


def datasets(df):
    """One p-value task per dataset (the prompt styles of a dataset share its gold)."""
    return _pvalue_tasks(df).drop_duplicates("data_id")


def _null_p(method: str) -> str | None:
    """What the family's gold p-value does under the null (``Family.null_p``); None when unregistered."""
    from ..registry import family_names, get_family

    return get_family(method).null_p if method in family_names() else None


def power_effect(df) -> str | None:
    """The effect level whose reject rate by N the report shows as power:
    ``medium`` where the corpus has it, else its first level (by name) beyond
    the null and the borderline; None without one."""
    levels = sorted(set(df["effect"].astype(str)) - {"null", "borderline"})
    return "medium" if "medium" in levels else (levels[0] if levels else None)


def at_reward_cap(ds) -> dict:
    """Share of the datasets of ``ds`` (a frame with ``gold_z`` and ``effect``)
    whose gold z is at the reward's cap, overall and per effect level."""
    from ..answers import SCORE_Z_CAP

    at_cap = ds["gold_z"].astype(float) >= SCORE_Z_CAP
    return {"cap": SCORE_Z_CAP, "share": _r(at_cap.mean()) if len(ds) else None,
            "share_by_effect": {str(e): _r(at_cap[ds["effect"] == e].mean()) for e in sorted(set(ds["effect"]))}}


def _calibration(df) -> dict:
    import numpy as np
    from scipy.stats import kstest

    ds = datasets(df)
    power = power_effect(ds)
    alphas = sorted(set(ds["alpha"].astype(float)))
    out = {"unit": "datasets (one per data_id)", "alpha": alphas[0] if len(alphas) == 1 else None,
           "power_effect": power, "at_reward_cap": at_reward_cap(ds), "families": {}}
    for method, g in sorted(ds.groupby("method"), key=lambda kv: kv[0]):
        null = g[g["effect"] == "null"]
        ps = null["gold_p"].to_numpy(dtype=float)
        rej = int((null["gold_decision"] == "reject").sum())
        fam = {"null_p_expected": _null_p(method), "null": _rate(rej, len(ps)), "null_ks_p": _r(kstest(ps, "uniform").pvalue) if len(ps) else None,
               "null_histogram": {"bin_edges": [_r(e) for e in np.linspace(0, 1, 11)],
                                  "counts": [int(c) for c in np.histogram(ps, bins=10, range=(0.0, 1.0))[0]]},
               "borderline_by_n": {}, "power_by_n": {}}
        for effect, key in (("borderline", "borderline_by_n"), (power, "power_by_n")):
            sub = g[g["effect"] == effect]
            for n, h in sorted(sub.groupby("n"), key=lambda kv: kv[0]):
                fam[key][str(int(n))] = _rate(int((h["gold_decision"] == "reject").sum()), len(h))
        out["families"][method] = fam
    return out


def _traps(df) -> dict:
    from ..result import z_of_p

    out = {"unit": "tasks", "share_by_method": {}, "share_by_method_and_perturbation": {}, "naive_vs_gold_z": {}}
    for method, g in sorted(df.groupby("method"), key=lambda kv: kv[0]):
        out["share_by_method"][method] = _r(g["trap"].astype(bool).mean())
        out["share_by_method_and_perturbation"][method] = {
            str(p): _r(h["trap"].astype(bool).mean()) for p, h in sorted(g.groupby("perturbation"), key=lambda kv: kv[0])}
    ds = datasets(df)
    ds = ds[ds["naive_p"].notna() & ds["gold_z"].notna()]
    for method, g in sorted(ds.groupby("method"), key=lambda kv: kv[0]):
        dz = [z_of_p(p) - z for p, z in zip(g["naive_p"], g["gold_z"])]
        out["naive_vs_gold_z"][method] = {"datasets": int(len(g)), "mean_naive_minus_gold_z": _r(sum(dz) / len(dz)),
                                          "share_naive_z_higher": _r(sum(d > 0 for d in dz) / len(dz))}
    out["share"] = _r(df["trap"].astype(bool).mean()) if len(df) else None
    return out


def _perturbations(df) -> dict:
    rows = df[df["n_rows"].notna() & (df["n_rows"] > 0)]
    out = {"unit": "tasks with a dataset", "by_perturbation": {}}
    for p, g in sorted(rows.groupby("perturbation"), key=lambda kv: kv[0]):
        analysed = g[g["n_analysed"].notna()]
        out["by_perturbation"][str(p)] = {
            "tasks": int(len(g)),
            "mean_blank_cells_per_row": _r((g["n_blank_cells"] / g["n_rows"]).mean()),
            "mean_impossible_values_per_row": _r((g["n_impossible_values"] / g["n_rows"]).mean()),
            "mean_n_analysed_over_n": _r((analysed["n_analysed"] / analysed["n"]).mean()) if len(analysed) else None}
    return out


def half(data_id: str) -> int:
    """0 or 1: the half of the datasets a data id falls in, by its last hex digit."""
    return int(data_id[-1], 16) % 2


def _floors(df) -> dict:
    from ..answers import P_VALUE, SCORE_Z_CAP
    from ..result import Z_CAP

    pt = _pvalue_tasks(df)
    out = {"unit": "p-value tasks", "tasks": int(len(pt)), "reward_z_cap": SCORE_Z_CAP, "record_z_cap": Z_CAP,
           "share_at_reward_cap": _r((pt["gold_z"] >= SCORE_Z_CAP).mean()) if len(pt) else None,
           "share_at_record_cap": _r((pt["gold_z"] >= Z_CAP).mean()) if len(pt) else None,
           "always_fail_to_reject_raw": _r((pt["gold_decision"] == "fail to reject").mean()) if len(pt) else None,
           "by_method": {}, "constant_p": {"by_method_and_n": {}}}
    for method, g in sorted(pt.groupby("method"), key=lambda kv: kv[0]):
        out["by_method"][method] = {"tasks": int(len(g)), "share_at_reward_cap": _r((g["gold_z"] >= SCORE_Z_CAP).mean()),
                                    "always_fail_to_reject_raw": _r((g["gold_decision"] == "fail to reject").mean())}
    halves = pt["data_id"].map(half)
    fit, held = pt[halves == 0], pt[halves == 1]
    right = close = total = 0
    for (method, n), h in sorted(held.groupby(["method", "n"]), key=lambda kv: kv[0]):
        f = fit[(fit["method"] == method) & (fit["n"] == n)]
        if not len(f):
            continue
        p = float(f["gold_p"].median())
        matches = (p < h["alpha"]).map({True: "reject", False: "fail to reject"}) == h["gold_decision"]
        # Strict as the reward counts it: the decision, and the z within the p-value's strict tolerance
        near = h["gold_p"].map(lambda gold: P_VALUE.score({"p_value": p}, {"p_value": gold}))
        k, strict = int(matches.sum()), int((matches & near).sum())
        right, close, total = right + k, close + strict, total + len(h)
        out["constant_p"]["by_method_and_n"].setdefault(method, {})[str(int(n))] = {
            "fit_tasks": int(len(f)), "constant_p": _r(p), "scored_tasks": int(len(h)), "raw": _r(k / len(h)),
            "strict": _r(strict / len(h))}
    out["constant_p"]["scored_tasks"] = total
    out["constant_p"]["raw"] = _r(right / total) if total else None
    out["constant_p"]["strict"] = _r(close / total) if total else None
    return out


def source_labels(predictions) -> list[str]:
    """One label per predictions file: its name without the extension; a
    name two files share (or a file and a baseline, ``gold`` or ``naive``)
    followed by the file's place among the files: ``run (1)``, ``run (2)``."""
    from collections import Counter

    from .score import BASELINES

    stems = [Path(p).stem for p in predictions]
    shared = Counter(stems + list(BASELINES))
    labels = [stem if shared[stem] == 1 else f"{stem} ({place})" for place, stem in enumerate(stems, start=1)]
    if len(set(labels + list(BASELINES))) < len(labels) + len(BASELINES):   # a file named like a numbered label
        labels = [f"{stem} ({place})" for place, stem in enumerate(stems, start=1)]
    return labels


def _pass_k(overall: dict) -> int | None:
    """The k of pass@k a scored source reaches: the fewest answers of any task
    it answers (``score`` reports pass@2 .. pass@k); None without answers."""
    ks = [int(k) for key in overall if key.startswith("raw_pass@") and (k := key[len("raw_pass@"):]).isdigit()]
    return max(ks) if ks else None


def _reliability(answers: dict, gold_z: dict) -> dict:
    """The reported z (the reward's capped z of an answer's p-value) against
    the gold z, binned by gold z: per bin the answers, their mean gold z and
    the mean and quartiles of their reported z. Answers without a usable
    p-value (invalid, or to a task without one) are left out."""
    import numpy as np

    from ..answers import SCORE_Z_CAP, capped_z
    from .completions import Answer

    pairs = []
    for task_id, runs in answers.items():
        if task_id not in gold_z:
            continue
        for given in runs.values():
            if isinstance(given, Answer):   # read_predictions and the baselines give answers, parsed
                pairs.append((gold_z[task_id], capped_z(given.values["p_value"])))
    edges = np.linspace(0.0, SCORE_Z_CAP, RELIABILITY_BINS + 1)
    out = {"unit": "answers with a p-value; z two-sided, capped at the reward's cap", "z_cap": SCORE_Z_CAP,
           "answers": len(pairs), "bin_edges": [_r(e) for e in edges], "bins": []}
    if not pairs:
        return out
    gold, reported = np.array(pairs).T
    where = np.clip(np.digitize(gold, edges[1:-1]), 0, RELIABILITY_BINS - 1)
    for b in range(RELIABILITY_BINS):
        g, r = gold[where == b], reported[where == b]
        if len(g):
            q25, q75 = np.quantile(r, [0.25, 0.75])
            out["bins"].append({"bin": b, "answers": int(len(g)), "mean_gold_z": _r(g.mean()),
                                "mean_reported_z": _r(r.mean()), "reported_z_q25": _r(q25), "reported_z_q75": _r(q75)})
    return out


def agents(corpus, predictions=(), fmt: str | None = None) -> dict:
    """The Agents section: every predictions file (result files of the
    framework ``fmt``, when given) and the corpus's gold and naive answers,
    each scored by :func:`taskfactory.use.score.score` (the same errors for a bad
    file, the same figures and unscored lines) broken down by
    :data:`AGENT_BREAKDOWNS`, with its k and its reliability bins."""
    from ..answers import capped_z
    from ..store.corpus import iter_records
    from .score import BASELINES, baseline_answers, read_predictions, score

    sources = [(label, str(path), None) for label, path in zip(source_labels(predictions), predictions)]
    sources += [(name, None, name) for name in BASELINES]
    scored = {label: score(corpus, path, tuple(AGENT_BREAKDOWNS), baseline, fmt=fmt)
              for label, path, baseline in sources}
    records = list(iter_records(corpus, columns=["task_id", "method", "answer_kind", "gold", "naive_p",
                                                  "naive_decision", "naive_method"]))
    kinds = {rec["task_id"]: rec["answer_kind"] for rec in records}
    gold_z = {rec["task_id"]: capped_z(rec["gold"]["p_value"]) for rec in records
              if rec["answer_kind"] == "p_value" and rec["gold"]["p_value"] is not None}
    out = {"unit": "answers, scored as taskfactory score scores them", "breakdowns": dict(AGENT_BREAKDOWNS),
           "sources": {}}
    for label, path, baseline in sources:
        answers = read_predictions(path, kinds, fmt)[0] if path else baseline_answers(records, baseline)
        result = scored[label].as_dict()
        out["sources"][label] = {"source": "predictions" if path else "baseline", "path": path,
                                 "k": _pass_k(result["overall"]), **result,
                                 "reliability": _reliability(answers, gold_z)}
    return out


def _about(corpus, manifest, df) -> dict:
    """What the corpus is: its name, what it was made from and by, and when."""
    import datetime

    from .._version import __version__
    from ..store.corpus import MANIFEST, ORIGIN_GRID

    built = datetime.datetime.fromtimestamp((Path(corpus) / MANIFEST).stat().st_mtime, datetime.timezone.utc)
    return {"grid_name": manifest.get("name"), "tasks": int(len(df)), "origin": manifest.get("origin", ORIGIN_GRID),
            "grid_sha256": manifest.get("grid_sha256"), "factory_version": manifest.get("factory_version"),
            "report_version": __version__, "built_utc": built.strftime("%Y-%m-%d %H:%M")}


def _length_stats(chars) -> dict:
    import numpy as np

    chars = np.asarray(chars, dtype=float)
    return {"median": _r(np.median(chars)), "p95": _r(np.percentile(chars, 95)), "max": _r(chars.max())}


def _texts(corpus) -> dict:
    """The lengths of the prompts and CSVs (per family and N: what sets a trainer's
    ``max_prompt_length``) and a task as the agent sees it."""
    import numpy as np
    import pyarrow.compute as pc

    from ..store.corpus import check_shards, read_columns
    from .export import CHARS_PER_TOKEN, INLINE_MAX

    parts = [read_columns(shard.path, ["task_id", "method", "n", "split", "prompt", "data_csv"])
             for shard in check_shards(corpus)]
    cols = {name: np.concatenate([pc.fill_null(pc.utf8_length(t[name]), 0).to_numpy() if name in ("prompt", "data_csv")
                                  else t[name].to_numpy() for t in parts]) for name in ("method", "n", "prompt", "data_csv")}
    inline = cols["prompt"] + cols["data_csv"]
    by = {}
    for key in sorted(set(zip(cols["method"].tolist(), cols["n"].tolist()))):
        at = (cols["method"] == key[0]) & (cols["n"] == key[1])
        by.setdefault(key[0], {})[str(key[1])] = {
            "tasks": int(at.sum()), "prompt_chars": _length_stats(cols["prompt"][at]),
            "csv_chars": _length_stats(cols["data_csv"][at]),
            "inline_tokens_max": int(-(-inline[at].max() // CHARS_PER_TOKEN)),
            "inline_share": _r(float((cols["data_csv"][at] <= INLINE_MAX).mean()))}
    return {"lengths": {"unit": f"characters; tokens estimated at {CHARS_PER_TOKEN} characters a token",
                        "chars_per_token": CHARS_PER_TOKEN, "inline_max_chars": INLINE_MAX,
                        "prompt_chars": _length_stats(cols["prompt"]), "csv_chars": _length_stats(cols["data_csv"]),
                        "inline_tokens": {k: int(-(-v // CHARS_PER_TOKEN)) for k, v in _length_stats(inline).items()},
                        "inline_share": _r(float((cols["data_csv"] <= INLINE_MAX).mean())),
                        "by_method_and_n": by},
            "example": _example(corpus)}


def _example(corpus, rows: int = 8) -> dict | None:
    """A task as the agent sees it: the first of the test split (else of the corpus) with a dataset."""
    from ..store.corpus import iter_records
    from .tasks import Task

    first = None
    for rec in iter_records(corpus, columns=["task_id", "split", "data_csv"]):
        if rec["data_csv"] is not None and (first is None or (rec["split"] == "test") > (first["split"] == "test")):
            first = rec
            if rec["split"] == "test":
                break
    if first is None:
        return None
    from ..store.corpus import find_task

    view = Task(find_task(corpus, first["task_id"])).agent_view()
    return {"task_id": first["task_id"], "prompt": view["prompt"], "data_filename": view["data_filename"],
            "csv_head": "".join(view["data_csv"].splitlines(keepends=True)[:rows + 1])}


def _difficulty(corpus) -> dict:
    """The distribution of the tasks' difficulty (:mod:`taskfactory.use.difficulty`) per family, in bins of 0.2."""
    import numpy as np

    from ..store.corpus import iter_records
    from .difficulty import BIN_EDGES, FIELDS, difficulty

    values: dict[str, list] = {}
    for rec in iter_records(corpus, columns=list(FIELDS)):
        d = difficulty(rec)
        if d is not None:
            values.setdefault(rec["method"], []).append(d)
    edges = list(BIN_EDGES)

    def bins(v):
        return [int(c) for c in np.histogram(v, bins=edges)[0]]

    every = [d for v in values.values() for d in v]
    return {"unit": "p-value tasks; 0 easy, 1 hard", "bin_edges": edges,
            "overall": {"tasks": len(every), "mean": _r(np.mean(every)) if every else None, "counts": bins(every)},
            "by_method": {m: {"tasks": len(v), "mean": _r(np.mean(v)), "counts": bins(v)}
                          for m, v in sorted(values.items())}}


def _flags(summary: dict) -> list[dict]:
    """Figures off what they should be, each with its section: null p-values
    not uniform or a null reject rate whose interval excludes alpha (families
    expected uniform, 20 null datasets or more), borderline reject rates far
    from a half, and too many gold z at the reward's cap."""
    out = []
    alpha = summary["calibration"].get("alpha")
    for m, f in summary["calibration"]["families"].items():
        null = f["null"]
        if f["null_p_expected"] == "uniform" and null["datasets"] >= FLAG_MIN_DATASETS:
            if f["null_ks_p"] is not None and f["null_ks_p"] < FLAG_KS_P:
                out.append({"section": SECTIONS[1], "what": f"{m}: null p-values are not uniform (KS p = "
                                                            f"{f['null_ks_p']:.2g} over {null['datasets']} datasets)"})
            if alpha is not None and not null["ci_low"] <= alpha <= null["ci_high"]:
                out.append({"section": SECTIONS[1], "what": f"{m}: null reject rate {null['reject_rate']:.3g}, 95 % "
                                                            f"interval {null['ci_low']:.3g} to {null['ci_high']:.3g} "
                                                            f"excludes alpha = {alpha:g}"})
        for n, rate in f["borderline_by_n"].items():
            if rate["datasets"] >= FLAG_MIN_DATASETS and not rate["ci_low"] <= 0.5 <= rate["ci_high"] \
                    and not FLAG_BORDERLINE[0] <= rate["reject_rate"] <= FLAG_BORDERLINE[1]:
                out.append({"section": SECTIONS[1], "what": f"{m}: borderline reject rate {rate['reject_rate']:.3g} "
                                                            f"at N = {n}, far from a half"})
    capped = summary["calibration"]["at_reward_cap"]["share"]
    if capped is not None and capped > FLAG_CAP_SHARE:
        out.append({"section": SECTIONS[1], "what": f"{capped:.1%} of datasets have their gold z at the reward's "
                                                    f"cap (more than {FLAG_CAP_SHARE:.0%}): tests score alike there"})
    return out


def summarize(corpus, predictions=(), fmt: str | None = None) -> dict:
    """Every number of the report of ``corpus`` (and of the answers in the
    ``predictions`` files), nested by section."""
    from ..store.corpus import load_manifest

    manifest = load_manifest(corpus)
    agent_scores = agents(corpus, predictions, fmt)
    return _summarize(corpus, load_frame(corpus), manifest, agent_scores)


def _summarize(corpus, df, manifest, agent_scores: dict) -> dict:
    summary = {"corpus": _about(corpus, manifest, df), "composition": _composition(df, manifest),
               "calibration": _calibration(df), "traps": _traps(df), "perturbations": _perturbations(df),
               "floors": _floors(df), "agents": agent_scores, "difficulty": _difficulty(corpus), **_texts(corpus)}
    summary["flags"] = _flags(summary)
    return summary


# --- the figures -------------------------------------------------------------------

def _grid(Figure, count: int, title: str):
    """A figure of ``count`` small panels, :data:`PANEL_COLUMNS` a row, laid
    out by fixed margins (in inches) for their title, tick labels and axis
    labels: measuring every text, as tight_layout does, costs seconds."""
    cols = min(PANEL_COLUMNS, max(count, 1))
    rows = max(1, math.ceil(count / cols))
    width, height = max(7.0, 2.2 * cols), 1.2 + 2.0 * rows
    fig = Figure(figsize=(width, height), dpi=DPI)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    left, right, bottom, top, across, down = 0.6, 0.15, 0.45, 0.85, 0.65, 0.65
    panel_w = (width - left - right - across * (cols - 1)) / cols
    panel_h = (height - bottom - top - down * (rows - 1)) / rows
    fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height, top=1 - top / height,
                        wspace=across / panel_w, hspace=down / panel_h)
    for ax in axes[count:]:
        ax.set_visible(False)
    fig.suptitle(title, y=1 - 0.15 / height, va="top")
    return fig, axes


def _panel(ax, title: str, xlabel: str, ylabel: str) -> None:
    """Title and axis labels of one small panel of a grid."""
    ax.set_title(title, fontsize=8)
    ax.set_xlabel(xlabel, fontsize=7)
    ax.set_ylabel(ylabel, fontsize=7)
    ax.tick_params(labelsize=7)


def _histograms(Figure, summary):
    fams = [(m, f) for m, f in summary["calibration"]["families"].items() if f["null"]["datasets"]]
    if not fams:
        return None
    from matplotlib.ticker import MaxNLocator

    fig, axes = _grid(Figure, len(fams), "Null-effect gold p-values per family (10 bins on [0, 1])")
    for ax, (m, f) in zip(axes, fams):
        h = f["null_histogram"]
        ax.bar(h["bin_edges"][:-1], h["counts"], width=0.1, align="edge", color="#4a78b0", edgecolor="white")
        ax.set_xlim(0, 1)
        ax.set_xticks([0, 0.5, 1])
        ax.yaxis.set_major_locator(MaxNLocator(4, integer=True))
        _panel(ax, m, "gold p-value (probability)", "datasets (count)")
    return fig


def _power(Figure, summary):
    """Power by N: one panel per question kind, a line per family (a legend a panel can hold)."""
    level = summary["calibration"]["power_effect"]
    fams = [(m, f["power_by_n"]) for m, f in summary["calibration"]["families"].items() if f["power_by_n"]]
    if not fams:
        return None
    kinds: dict[str, list] = {}
    for m, by_n in fams:
        kinds.setdefault(_kind_of(m), []).append((m, by_n))
    fig, axes = _grid(Figure, len(kinds), f"Power: reject rate at the {level} effect by N, per question kind")
    for ax, (kind, members) in zip(axes, sorted(kinds.items())):
        every_n = sorted({int(n) for _, by_n in members for n in by_n})
        for m, by_n in members:
            ns = sorted(by_n, key=int)
            ax.plot([int(n) for n in ns], [by_n[n]["reject_rate"] for n in ns], label=m, linewidth=1, marker="o",
                    markersize=3)
        ax.set_xscale("log")
        ax.set_xticks(every_n, [str(n) for n in every_n])
        ax.minorticks_off()
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=6, loc="lower right")
        _panel(ax, kind, "N (rows drawn, log scale)", "reject rate (share)")
    return fig


def _kind_of(method: str) -> str:
    """The question kind of a registered family (the family itself otherwise)."""
    from ..registry import family_names, get_family

    return get_family(method).question_kind if method in family_names() else method


def _trap_scatter(Figure, df):
    from ..result import z_of_p

    ds = datasets(df)
    ds = ds[ds["naive_p"].notna() & ds["gold_z"].notna()]
    groups = sorted(ds.groupby("method"), key=lambda kv: kv[0])
    if not groups:
        return None
    fig, axes = _grid(Figure, len(groups), "Gold z against the naive test's z, per family (red: trap)")
    for ax, (m, g) in zip(axes, groups):
        nz = [z_of_p(p) for p in g["naive_p"]]
        colors = ["#c0392b" if t else "#4a78b0" for t in g["trap"].astype(bool)]
        ax.scatter(g["gold_z"], nz, s=6, c=colors)
        ax.plot([0, 8], [0, 8], color="grey", linewidth=0.6)
        ax.set_xlim(0, 8.3)
        ax.set_ylim(0, 8.3)
        ax.set_xticks([0, 4, 8])
        ax.set_yticks([0, 4, 8])
        _panel(ax, m, "gold z (two-sided, SD units)", "naive z (SD units)")
    return fig


def _analysed(Figure, df):
    import numpy as np

    rows = df[df["n_analysed"].notna()]
    if not len(rows):
        return None
    fig = Figure(figsize=(7, 4), dpi=DPI)
    ax = fig.subplots()
    rng = np.random.default_rng(0)
    for p, g in sorted(rows.groupby("perturbation"), key=lambda kv: kv[0]):
        x = g["n"].to_numpy(dtype=float) * np.exp(rng.uniform(-0.04, 0.04, len(g)))
        ax.scatter(x, g["n_analysed"], s=5, alpha=0.5, label=str(p))
    top = float(rows["n"].max())
    low = float(rows["n"].min()) * 0.8
    ax.plot([low, top * 1.1], [low, top * 1.1], color="grey", linewidth=0.6, label="n_analysed = n")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n (rows, pairs or groups drawn: the family's unit; log scale, jittered)")
    ax.set_ylabel("n_analysed (rows the test used, log scale)")
    ax.set_title("Rows analysed against rows drawn, by perturbation")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def _reliability_plot(Figure, summary):
    sources = summary["agents"]["sources"]
    if not any(src["reliability"]["answers"] for src in sources.values()):
        return None
    fig, axes = _grid(Figure, len(sources), "Reported z against gold z per source (line: bin mean; band: quartiles)")
    for ax, (label, src) in zip(axes, sources.items()):
        rel = src["reliability"]
        cap = rel["z_cap"]
        ax.plot([0, cap], [0, cap], color="grey", linewidth=0.6)
        bins = rel["bins"]
        x = [b["mean_gold_z"] for b in bins]
        ax.fill_between(x, [b["reported_z_q25"] for b in bins], [b["reported_z_q75"] for b in bins],
                        color="#4a78b0", alpha=0.25, linewidth=0)
        ax.plot(x, [b["mean_reported_z"] for b in bins], color="#4a78b0", marker="o", markersize=3, linewidth=1)
        ax.set_xlim(0, cap * 1.04)
        ax.set_ylim(0, cap * 1.04)
        ax.set_xticks(range(int(cap) + 1))
        ax.set_yticks(range(int(cap) + 1))
        _panel(ax, f"{label} ({rel['answers']} answers)", f"gold z (two-sided, SD units, cap {cap:g})",
               f"reported z (SD units, cap {cap:g})")
    return fig


# --- the page ----------------------------------------------------------------------

def _table(headers, rows, caption=None) -> str:
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_shown(v))}</td>" for v in r) + "</tr>" for r in rows)
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>\n"


def _counts_table(title, counts) -> str:
    return _table([title, "tasks"], list(counts.items()))


def _anchor(i: int) -> str:
    return f"s{i + 1}"


def _heading(i: int) -> str:
    return f'<h2 id="{_anchor(i)}">{html.escape(SECTIONS[i])}</h2>'


def _lengths_section(le) -> str:
    parts = [f"{_heading(7)}\n<p>Prompt and CSV lengths in {html.escape(le['unit'])}. A trainer's "
             "<code>max_prompt_length</code> must hold the prompt with its CSV where the CSV is inline: "
             f"{le['inline_tokens']['max']} tokens at most, {le['inline_tokens']['p95']} for 95 % of tasks "
             f"(median {le['inline_tokens']['median']}). Inline delivery (<code>export --data auto</code>) takes "
             f"CSVs of at most {le['inline_max_chars']} characters: {_shown(le['inline_share'])} of tasks; the "
             "others go as files beside the export, for a sandbox.</p>\n"]
    parts.append(_table(["family", "N", "tasks", "prompt chars median", "prompt chars max", "CSV chars median",
                         "CSV chars max", "inline tokens max", "inline share"],
                        [[m, n, d["tasks"], d["prompt_chars"]["median"], d["prompt_chars"]["max"],
                          d["csv_chars"]["median"], d["csv_chars"]["max"], d["inline_tokens_max"], d["inline_share"]]
                         for m, by_n in le["by_method_and_n"].items() for n, d in by_n.items()]))
    return "".join(parts)


def _difficulty_section(di) -> str:
    edges = di["bin_edges"]
    labels = [f"{a:g}-{b:g}" for a, b in zip(edges, edges[1:])]
    return (f"{_heading(6)}\n<p>Each p-value task's difficulty, from 0 (easy) to 1 (hard), from its record alone "
            "(taskfactory.use.difficulty): 1 - careless x (1/2 + margin/2), where careless is the reward the tempting "
            "analyses earn (the naive test, keeping the impossible values; the worse of them) and margin how far "
            "the gold z lies from the critical z, as a share of it. The exports carry it per task, for a "
            f"curriculum. Mean over {di['overall']['tasks']} tasks: {_shown(di['overall']['mean'])}.</p>\n"
            + _table(["family", "tasks", "mean", *labels],
                     [["all", di["overall"]["tasks"], di["overall"]["mean"], *di["overall"]["counts"]]]
                     + [[m, d["tasks"], d["mean"], *d["counts"]] for m, d in di["by_method"].items()],
                     "tasks per difficulty bin"))


def _example_section(ex) -> str:
    if ex is None:
        return f"{_heading(8)}\n<p>The corpus has no task with a dataset.</p>\n"
    return (f"{_heading(8)}\n<p>Task <code>{html.escape(ex['task_id'])}</code>: the prompt, then the head of "
            f"<code>{html.escape(ex['data_filename'])}</code>, as an agent sees them; the gold, the family and the "
            f"naive test are the grader's.</p>\n<pre>{html.escape(ex['prompt'])}</pre>\n"
            f"<pre>{html.escape(ex['csv_head'])}</pre>\n")


def _header(s) -> str:
    from ..store.corpus import ORIGIN_REAL

    about = s["corpus"]
    made = "the real-data spec" if about["origin"] == ORIGIN_REAL else "the grid"
    lines = [f"<p>{about['tasks']} tasks, made by taskfactory {html.escape(str(about['factory_version']))} from "
             f"{made} <code>{html.escape(str(about['grid_name']))}</code> (sha256 "
             f"<code>{html.escape(str(about['grid_sha256'])[:16])}</code>), its manifest written "
             f"{html.escape(about['built_utc'])} UTC; this report by taskfactory "
             f"{html.escape(about['report_version'])}. Every number on this page is in summary.json.</p>\n"]
    flags = s["flags"]
    lines.append(f"<p><b>Flags</b>: {len(flags)} figure(s) off what they should be.</p>\n" if flags
                 else "<p><b>Flags</b>: none; every figure checked is where it should be.</p>\n")
    if flags:
        lines.append("<ul>" + "".join(f'<li><a href="#{_anchor(SECTIONS.index(f["section"]))}">'
                                      f"{html.escape(f['section'])}</a>: {html.escape(f['what'])}</li>"
                                      for f in flags) + "</ul>\n")
    lines.append("<nav><ol>" + "".join(f'<li><a href="#{_anchor(i)}">{html.escape(t.split(". ", 1)[1])}</a></li>'
                                        for i, t in enumerate(SECTIONS)) + "</ol></nav>\n")
    return "".join(lines)


def _floors_section(fl) -> str:
    """Section 4: what trivial answers score."""
    cp = fl["constant_p"]
    parts = [f"{_heading(4)}\n<p>What trivial answers score on the {fl['tasks']} p-value tasks. "
             f"Share of tasks whose gold z is at the reward's cap of {_shown(fl['reward_z_cap'])} "
             f"(any smaller p-value scores the same): {_shown(fl['share_at_reward_cap'])}; at the record's "
             f"cap of {_shown(fl['record_z_cap'])}: {_shown(fl['share_at_record_cap'])}. Raw score of always "
             f"answering \"fail to reject\": {_shown(fl['always_fail_to_reject_raw'])}.</p>\n"
             "<p>Constant-p baseline: the tasks are split in two halves by the last hex digit of their "
             "data_id (even: fit, odd: scored). Per family and N, the median gold p-value of the fit half is "
             "answered for every task of the scored half; its Raw score is the share whose decision at alpha "
             f"matches the gold: {_shown(cp['raw'])} over {cp['scored_tasks']} scored tasks; its Strict score, "
             "the share whose z is also within the reward's strict tolerance of the gold z: "
             f"{_shown(cp['strict'])}.</p>\n"]
    parts.append(_table(["family", "p-value tasks", "share at reward z cap", "always fail to reject Raw"],
                        [[m, d["tasks"], d["share_at_reward_cap"], d["always_fail_to_reject_raw"]]
                         for m, d in fl["by_method"].items()]))
    parts.append(_table(["family", "N", "fit tasks", "constant p", "scored tasks", "Raw", "Strict"],
                        [[m, n, d["fit_tasks"], d["constant_p"], d["scored_tasks"], d["raw"], d["strict"]]
                         for m, by_n in cp["by_method_and_n"].items() for n, d in by_n.items()],
                        "constant-p baseline per family and N"))
    return "".join(parts)


def _page(summary, images) -> str:
    s = summary
    c, cal, tr, pe, fl = (s["composition"], s["calibration"], s["traps"], s["perturbations"], s["floors"])
    parts = []

    def img(name, alt):
        if name in images:
            data = base64.b64encode(images[name]).decode("ascii")
            parts.append(f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(alt)}">'
                         f"<figcaption>{html.escape(alt)} ({html.escape(name)})</figcaption></figure>\n")

    parts.append(f"{_heading(0)}\n<p>{c['tasks']} tasks; {c['rejected']} rejected at build time.</p>\n")
    rejected = c["rejected_by_method"]
    parts.append(_table(["family", "tasks", "rejected"],
                        [(m, k, rejected.get(m, 0)) for m, k in c["by_method"].items()]
                        + [(m, 0, k) for m, k in rejected.items() if m not in c["by_method"]]))
    parts.append('<div class="row">')
    for key, title in (("by_n", "N"), ("by_effect", "effect"), ("by_prompt_style", "prompt style"),
                       ("by_perturbation", "perturbation"), ("by_split", "split")):
        parts.append(_counts_table(title, c[key]))
    parts.append("</div>\n")

    parts.append(f"{_heading(1)}\n<p>Families whose answer is a p-value; one gold p-value per dataset "
                 "(data_id), so a dataset's prompt styles count once. Under the null the p-values should be "
                 "uniform (KS p-value against uniform) and the reject rate near alpha (95 % Clopper-Pearson "
                 "interval), for the families whose null p-values are expected uniform. Exact tests of sparse "
                 "counts give discrete p-values, multiplicity-adjusted and continuity-corrected ones are "
                 "conservative by construction: their KS p says nothing, their reject rate should stay at or "
                 "below alpha. Borderline effects should reject about half the time; power, the reject rate at "
                 f"the {html.escape(str(cal['power_effect']))} effect, should grow with N (or hold near the "
                 "level a target z sets). "
                 f"{_cap_sentence(cal['at_reward_cap'])}</p>\n")
    ns = sorted({n for f in cal["families"].values() for k in ("borderline_by_n", "power_by_n") for n in f[k]}, key=int)
    rows = []
    for m, f in cal["families"].items():
        nl = f["null"]
        rows.append([m, f["null_p_expected"], nl["datasets"], f["null_ks_p"], nl["reject_rate"], nl["ci_low"],
                     nl["ci_high"]]
                    + [f["borderline_by_n"].get(n, {}).get("reject_rate") for n in ns]
                    + [f["power_by_n"].get(n, {}).get("reject_rate") for n in ns])
    parts.append(_table(["family", "null p expected", "null datasets", "KS p (uniform)", "null reject rate",
                         "95% CI low", "95% CI high"]
                        + [f"borderline reject N={n}" for n in ns] + [f"power N={n}" for n in ns], rows))
    img("calibration_null_histograms.png", "Null-effect gold p-values per family")
    img("calibration_power.png", "Power by N per family")

    parts.append(f"{_heading(2)}\n<p>A trap: the naive test, or keeping the impossible values, decides "
                 f"otherwise than the gold. Share of tasks with a trap: {_shown(tr['share'])}.</p>\n")
    perts = sorted({p for d in tr["share_by_method_and_perturbation"].values() for p in d})
    parts.append(_table(["family", "all"] + perts,
                        [[m, tr["share_by_method"][m]] + [d.get(p) for p in perts]
                         for m, d in tr["share_by_method_and_perturbation"].items()], "trap share (tasks)"))
    parts.append(_table(["family", "datasets", "mean naive z - gold z", "share naive z higher"],
                        [[m, d["datasets"], d["mean_naive_minus_gold_z"], d["share_naive_z_higher"]]
                         for m, d in tr["naive_vs_gold_z"].items()], "naive z (z of naive_p, capped at 8) vs gold z"))
    img("traps_z_scatter.png", "Gold z against naive z per family")

    parts.append(f"{_heading(3)}\n<p>Per perturbation kind, over tasks with a dataset: blank cells and "
                 "impossible values per row of the CSV, and rows the canonical test analysed over n (n counts the "
                 "family's unit, per group or per cluster for some families, so the ratio can exceed 1).</p>\n")
    parts.append(_table(["perturbation", "tasks", "blank cells / row", "impossible values / row", "n_analysed / n"],
                        [[p, d["tasks"], d["mean_blank_cells_per_row"], d["mean_impossible_values_per_row"],
                          d["mean_n_analysed_over_n"]] for p, d in pe["by_perturbation"].items()]))
    img("perturbations_n_analysed.png", "Rows analysed against rows drawn")

    parts.append(_floors_section(fl))

    parts.append(_agents_section(s["agents"]))
    img("agents_reliability.png", "Reported z against gold z per answer source")
    parts.append(_difficulty_section(s["difficulty"]))
    parts.append(_lengths_section(s["lengths"]))
    parts.append(_example_section(s["example"]))

    name = s["corpus"]["grid_name"]
    title = f"taskfactory report: {name}" if name else "taskfactory report"
    style = ("body{font-family:sans-serif;max-width:1200px;margin:1em auto;padding:0 1em}"
             "table{border-collapse:collapse;margin:0.5em 1em 1em 0;font-size:13px;vertical-align:top}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:first-child,th:first-child"
             "{text-align:left}caption{font-weight:bold;text-align:left}.row{display:flex;flex-wrap:wrap;"
             "align-items:flex-start}img{max-width:100%}pre{background:#f6f6f6;padding:0.5em;overflow-x:auto;"
             "white-space:pre-wrap;font-size:12px}")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{style}</style></head><body>\n<h1>{html.escape(title)}</h1>\n"
            + _header(s) + "".join(parts) + "</body></html>\n")


def _cap_sentence(capped: dict) -> str:
    """The share of gold z values at the reward's cap, in words, with the levels that have any."""
    if capped["share"] is None:
        return ""
    levels = ", ".join(f"{e} {s:.1%}" for e, s in capped["share_by_effect"].items() if s)
    return (f"Gold z at the reward's cap of {capped['cap']:g}, where every test scores alike: "
            f"{capped['share']:.1%} of datasets" + (f" ({levels})." if levels else "."))


def _agents_section(ag) -> str:
    """The Agents section's text and tables (its plot follows them)."""
    sources = ag["sources"]
    files = [label for label, src in sources.items() if src["source"] == "predictions"]
    parts = [f"{_heading(5)}\n<p>The answers of {len(files)} predictions file(s) and the corpus's own "
             "gold and naive answers (gold: the canonical test's; naive: the tempting test's, for the tasks that "
             "have one), scored as <code>taskfactory score</code> scores them: Raw, the decision matches the gold; "
             "Strict, it matches and the reported z is within 0.5 of the gold z (closed-form answers: within the "
             "loose and the strict tolerance). Each source is scored over the "
             "tasks it answers; pass@1 averages a task's answers, pass@k is the unbiased estimator with k the "
             "fewest answers any of its tasks has.</p>\n"]
    for label, src in sources.items():
        for kind, problem in src["problems"].items():
            more = ", ..." if problem["count"] > len(problem["lines"]) else ""
            shown = ", ".join(map(str, problem["lines"])) + more
            parts.append(f"<p>{html.escape(label)}: not scored: {problem['count']} line(s) {html.escape(kind)} "
                         f"(line {shown}).</p>\n")

    def at_k(src, metric, k):
        return src.get(f"{metric}_pass@{k}") if k and k > 1 else None

    rows = []
    for label, src in sources.items():
        o, k = src["overall"], src["k"]
        rows.append([label, src["path"] or "built in", o["tasks"], src["corpus_tasks"], o["answers"], k,
                     o.get("raw_pass@1"), o.get("strict_pass@1"), at_k(o, "raw", k), at_k(o, "strict", k),
                     o.get("mean_reward"), o.get("invalid_share")])
    parts.append(_table(["source", "file", "tasks answered", "corpus tasks", "answers", "k", "Raw@1", "Strict@1",
                         "Raw@k", "Strict@k", "mean reward", "invalid share"], rows, "overall"))
    # pass@1 of every source, then pass@k of those with k > 1
    columns = [(label, metric, 1) for label in sources for metric in ("raw", "strict")]
    columns += [(label, metric, src["k"]) for label, src in sources.items() if src["k"] and src["k"] > 1
                for metric in ("raw", "strict")]
    for breakdown, title in ag["breakdowns"].items():
        # the gold answers every task: its groups, in score's order, are all of them
        groups = dict.fromkeys(g for label in ("gold", *sources) for g in sources[label]["by"][breakdown])
        rows = [[_GROUP_NAMES.get((breakdown, g), g)]
                + [sources[label]["by"][breakdown].get(g, {}).get(f"{metric}_pass@{k}") for label, metric, k in columns]
                for g in groups]
        headers = [title] + [f"{label} {metric.capitalize()}@{k}" for label, metric, k in columns]
        parts.append(_table(headers, rows, f"by {title}"))
    return "".join(parts)


#: How the page names a group whose key alone says little.
_GROUP_NAMES = {("trap", "true"): "trap", ("trap", "false"): "no trap"}


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def report(corpus, out, predictions=(), fmt: str | None = None) -> dict:
    """Write the report of ``corpus`` (and of the answers in the
    ``predictions`` files, JSONL as ``taskfactory score`` reads them, or the
    result files of the framework ``fmt``) into
    the new or empty folder ``out``: ``index.html``, its PNG figures and
    ``summary.json``. Returns the summary. Nothing is written when a file
    cannot be read."""
    from ..store.corpus import atomic_write_text, load_manifest

    Figure = _pyplot()
    manifest = load_manifest(corpus)
    out = check_new_folder(out, "-o", [corpus, *predictions])
    agent_scores = agents(corpus, predictions, fmt)
    df = load_frame(corpus)
    summary = _summarize(corpus, df, manifest, agent_scores)
    figures = {"calibration_null_histograms.png": _histograms(Figure, summary),
               "calibration_power.png": _power(Figure, summary),
               "traps_z_scatter.png": _trap_scatter(Figure, df),
               "perturbations_n_analysed.png": _analysed(Figure, df),
               "agents_reliability.png": _reliability_plot(Figure, summary)}
    images = {name: _png(fig) for name, fig in figures.items() if fig is not None}
    out.mkdir(parents=True, exist_ok=True)
    for name, data in images.items():
        (out / name).write_bytes(data)
    atomic_write_text(out / "summary.json", json.dumps(summary, indent=1) + "\n")
    atomic_write_text(out / "index.html", _page(summary, images))
    return summary
