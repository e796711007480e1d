"""The leakage check: a corpus searched for a benchmark's items, and every
item scored on each kind of evidence (see :mod:`taskfactory.audit.leakage`)."""

from __future__ import annotations

import math
import os
import time
from collections import Counter, defaultdict

from ...errors import InputError, check_count, check_path
from ...store.corpus import check_shards, load_manifest
from .bench import Fields, Item, load_bench
from .probe import NGRAM_SIZES, Probe
from .report import ItemReport, LeakageReport, Thresholds
from .scan import Seen, scan_corpus

#: A part of an item is scored for containment when it weighs as much as this many 2-grams of one scenario.
LEAST_PAIRS = 6


def check_leakage(corpus, benches, fields: Fields = Fields(), thresholds: Thresholds = Thresholds(),
                  semantic: bool = False, embed=None, jobs: int = 1, progress: bool = False) -> LeakageReport:
    """Check ``corpus`` against the benchmark files or folders ``benches``,
    reading the corpus in ``jobs`` processes (``progress``: with a bar on
    standard error)."""
    start = time.perf_counter()
    check_path(corpus, "corpus")
    check_count(jobs, "jobs")
    if isinstance(benches, (str, os.PathLike)):
        benches = [benches]  # one benchmark, not a list of its characters
    benches = list(benches)
    if not benches:
        raise InputError("give at least one benchmark file or folder")
    for bench in benches:
        check_path(bench, "a benchmark")
    if not isinstance(thresholds, Thresholds):
        raise InputError(f"thresholds must be a taskfactory.audit.leakage.Thresholds, got {type(thresholds).__name__}")
    check_shards(corpus, load_manifest(corpus))
    items: list[Item] = [it for b in benches for it in load_bench(b, fields)]
    thr = thresholds
    probe = Probe(items, thr)
    seen = scan_corpus(corpus, probe, thr, jobs, progress)
    reports = [ItemReport(bench=it.bench, id=it.id, where=it.where,
                          snippet=" ".join((it.question or it.context or "(dataset only)").split())[:80]) for it in items]
    for i, ((score,), (task,)) in seen.jaccard.items():
        reports[i].jaccard, reports[i].jaccard_task = score, task
    for i, ((share, hits), (task, fingerprint)) in seen.data.items():
        r = reports[i]
        r.data, r.data_rows, r.data_task, r.data_fingerprint = share, hits, task, fingerprint
    flagged_texts = set(seen.flagged_texts)
    flagged_scenarios = _score_containment(probe, seen, reports, thr)
    _score_ngrams(probe, seen, reports, thr, flagged_texts)
    sem_summary = None
    if semantic:
        sem_summary, flagged_near = _score_semantic(seen, items, reports, thr, embed)
        flagged_scenarios |= flagged_near
    for i, r in enumerate(reports):
        if r.ngram8 >= thr.ngram8 or (thr.ngram13 > 0 and r.ngram13 >= thr.ngram13):
            r.flags.append("text-ngram")
        if r.containment >= thr.containment:
            r.flags.append("text-containment")
        if r.jaccard >= thr.jaccard:
            r.flags.append("text-minhash")
        if thr.data_flags(r.data, r.data_rows, probe.data.rows_of(i)):
            r.flags.append("data-rows")
        if r.semantic is not None and r.semantic >= thr.semantic:
            r.flags.append("semantic")
    return LeakageReport(corpus=str(corpus), benchmarks=[str(b) for b in benches], tasks=seen.tasks,
                         datasets=seen.datasets, distinct_texts=len(seen.texts), thresholds=thr, items=reports,
                         semantic=sem_summary, seconds=time.perf_counter() - start, flagged_texts=flagged_texts,
                         flagged_data=set(seen.flagged_data), flagged_scenarios=flagged_scenarios)


def _score_containment(probe: Probe, seen: Seen, reports: list[ItemReport], thr: Thresholds) -> set:
    """How much of each item's text the prompts of one corpus scenario hold, weighted by rarity.

    An item's parts (:func:`~.probe._parts`) have their word 2-grams looked
    for in the prompts of every corpus scenario (sibling families share a
    scenario's text, so a scenario is its name). Each counts with the weight
    log((S + 1) / (s + 1)), S the corpus's scenarios and s the number whose
    prompts hold it (at least 1): the corpus's templates, in every scenario,
    weigh nothing; a 2-gram of one scenario, or of none, weighs most. An item
    scores the weighted share of a part's 2-grams that one scenario holds, for
    its best part and scenario; a part weighing less than :data:`LEAST_PAIRS`
    2-grams of one scenario (a short question, a window of data or templates)
    is not scored. Replacing a word breaks two 2-grams, so a copy with a fifth
    of its words replaced keeps about two thirds. Sets each item's best
    containment and its scenario's first task; returns the (family, scenario)
    pairs of the scenarios that flag an item."""
    scenarios, flagged = len(seen.first), set()
    order = {scenario: k for k, scenario in enumerate(seen.first)}   # of a tie, the scenario first in the corpus
    least = LEAST_PAIRS * math.log((scenarios + 1) / 2)   # as much as LEAST_PAIRS 2-grams of one scenario
    for parts, report in zip(probe.parts, reports):
        best = None
        for grams in parts:
            weights = {g: math.log((scenarios + 1) / (max(len(seen.where.get(g, ())), 1) + 1)) for g in grams}
            total = sum(weights.values())
            held = defaultdict(float)
            for g, weight in weights.items():
                for scenario in seen.where.get(g, ()) if weight > 0 else ():
                    held[scenario] += weight
            if held and total >= least > 0:
                scenario, weight = max(held.items(), key=lambda kv: (kv[1], -order[kv[0]]))
                if weight / total > report.containment:
                    report.containment, report.containment_task, best = weight / total, seen.first[scenario], scenario
        if best is not None and report.containment >= thr.containment:
            flagged |= {(family, best) for family in seen.families[best]}
    return flagged


def _score_ngrams(probe: Probe, seen: Seen, reports: list[ItemReport], thr: Thresholds, flagged_texts: set) -> None:
    """Each item's best non-template n-gram overlap with one task (the first
    task of the best set of n-grams a prompt holds); the text keys of the
    tasks whose n-grams flag an item join ``flagged_texts``.

    Corpus prompts carry the templates (instructions, answer format, data
    dictionary phrasing): an n-gram found in more than ``boilerplate`` of the
    tasks, from two or more scenarios, is template and no evidence."""
    kept, index = {}, {}
    for n in NGRAM_SIZES:
        boiler = {g for g, c in seen.df[n].items()
                  if c > thr.boilerplate * seen.tasks and len(seen.gram_scenarios[n][g]) >= 2}
        kept[n], index[n] = [], defaultdict(list)
        for i, grams in enumerate(probe.grams[n]):
            grams = grams - boiler
            kept[n].append(len(grams))
            for g in grams & seen.df[n].keys():
                index[n][g].append(i)
    if not any(index.values()):
        return
    for (grams8, grams13), (task_id, keys) in seen.held.items():
        hit = False
        for i, k in Counter(i for g in grams8 for i in index[8].get(g, ())).items():
            share = k / kept[8][i]
            r = reports[i]
            if share > r.ngram8:
                r.ngram8, r.ngram_task = share, task_id
            hit |= share >= thr.ngram8
        for i, k in Counter(i for g in grams13 for i in index[13].get(g, ())).items():
            r = reports[i]
            if k > r.ngram13:
                r.ngram13 = k
                r.ngram_task = r.ngram_task or task_id
            hit |= thr.ngram13 > 0 and k >= thr.ngram13
        if hit:
            flagged_texts |= keys


def _score_semantic(seen: Seen, items: list[Item], reports: list[ItemReport], thr: Thresholds, embed):
    """Nearest corpus scenario text of each item, and the top-5 summary."""
    from .semantic import compare, default_embedder

    by_scenario = {}
    for info in seen.texts.values():
        by_scenario.setdefault(info.scenario, info)
    corpus_infos = list(by_scenario.values())
    embed = embed or default_embedder()
    result = compare([it.text or it.id for it in items], [info.text for info in corpus_infos], embed)
    flagged = set()
    for i, r in enumerate(reports):
        best = float(result["best"][i])
        info = corpus_infos[int(result["best_index"][i])]
        r.semantic, r.semantic_task = best, info.task_id
        if best >= thr.semantic:
            flagged.add(info.scenario)
    summary = {"bench_to_corpus_top5": result["bench_to_corpus_top5"],
               "corpus_to_corpus_top5": result["corpus_to_corpus_top5"], "corpus_texts": len(corpus_infos)}
    return summary, flagged
