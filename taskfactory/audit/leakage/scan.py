"""The pass over the corpus: what its tasks hold of a :class:`~.probe.Probe`.

The corpus is read in stretches of row groups, in order; each stretch gives a
:class:`Seen`, and the stretches' are merged in the corpus's order, so that a
check run over several processes finds exactly what one process finds: the
same counts, and the same first task behind every score (a later task takes
an item's best only with a higher score). What a stretch keeps grows with the
benchmark and with the corpus's distinct texts, not with its rows.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from ...store.corpus import Shard, check_shards, row_group_rows, shard_records
from .probe import NGRAM_SIZES, PAIR, Probe, word_sets
from .report import Thresholds
from .text import content_set, jaccard, minhash, ngrams, stable_hash, tokens

COLUMNS = ["task_id", "data_id", "method", "scenario", "question", "context", "prompt", "data_csv"]
#: Stretches per process: enough to even out shards of unequal size.
STRETCHES_PER_JOB = 4


def corpus_text(rec: dict) -> str:
    """A corpus task's text for the MinHash and semantic evidence: its context and question."""
    return f"{rec['context']}\n{rec['question']}"


def text_key(rec: dict) -> int:
    """The key of a corpus task's text (:func:`corpus_text`) in
    :attr:`~.report.LeakageReport.flagged_texts`."""
    return stable_hash(corpus_text(rec))


@dataclass
class CorpusText:
    """One distinct corpus text: the first task that has it, and its family and scenario."""

    text: str
    task_id: str
    scenario: tuple


def _better(best: dict, item: int, score: tuple, rest: tuple) -> None:
    """Keep (``score``, ``rest``) as ``item``'s best when the score is higher
    than its best yet (or than zero)."""
    if score > (best[item][0] if item in best else tuple(0 for _ in score)):
        best[item] = (score, rest)


@dataclass
class Seen:
    """What a stretch of the corpus holds of a probe, in the corpus's order.

    - ``df``, ``gram_scenarios``: per n-gram size, how many tasks hold each of
      the benchmark's n-grams, and from which (family, scenario) pairs;
    - ``held``: each distinct set of (8-grams, 13-grams) a prompt holds, with
      its first task and the text keys of the tasks that hold it;
    - ``where``, ``first``, ``families``: the scenarios whose prompts hold each
      of the benchmark's 2-grams; each scenario's first task and its families;
    - ``texts``: the distinct context and question texts;
    - ``jaccard``: per item, its best ((content-word Jaccard,), (task,));
    - ``data``: per item, its best ((share, rows), (task, fingerprint));
    - ``flagged_texts``, ``flagged_data``: the text keys and data ids that
      flag an item by MinHash or by rows.
    """

    tasks: int = 0
    datasets: int = 0
    first_data: str | None = None
    last_data: str | None = None
    df: dict = field(default_factory=lambda: {n: Counter() for n in NGRAM_SIZES})
    gram_scenarios: dict = field(default_factory=lambda: {n: defaultdict(set) for n in NGRAM_SIZES})
    held: dict = field(default_factory=dict)
    where: dict = field(default_factory=lambda: defaultdict(set))
    first: dict = field(default_factory=dict)
    families: dict = field(default_factory=lambda: defaultdict(set))
    texts: dict = field(default_factory=dict)
    jaccard: dict = field(default_factory=dict)
    data: dict = field(default_factory=dict)
    flagged_texts: set = field(default_factory=set)
    flagged_data: set = field(default_factory=set)

    def add(self, rec: dict, probe: Probe, thr: Thresholds) -> None:
        """Take in one corpus task (a record of :data:`COLUMNS`)."""
        self.tasks += 1
        prompt, key = tokens(rec["prompt"]), text_key(rec)
        self._add_ngrams(prompt, key, rec, probe)
        self.first.setdefault(rec["scenario"], rec["task_id"])
        self.families[rec["scenario"]].add(rec["method"])
        for g in ngrams(prompt, PAIR) & probe.all_pairs:
            self.where[g].add(rec["scenario"])
        if key not in self.texts:
            self._add_text(key, rec, probe, thr)
        if self.tasks == 1:
            self.first_data = rec["data_id"]
        if rec["data_id"] != self.last_data:
            self.last_data = rec["data_id"]
            self.datasets += 1
            if len(probe.data.keys) and rec["data_csv"] is not None:
                self._add_data(rec, probe, thr)

    def _add_ngrams(self, prompt: list[str], key: int, rec: dict, probe: Probe) -> None:
        grams = {n: ngrams(prompt, n) & probe.all_grams[n] for n in NGRAM_SIZES}
        for n in NGRAM_SIZES:
            for g in grams[n]:
                self.df[n][g] += 1
                self.gram_scenarios[n][g].add((rec["method"], rec["scenario"]))
        if any(grams.values()):
            self.held.setdefault(tuple(frozenset(grams[n]) for n in NGRAM_SIZES), [rec["task_id"], set()])[1].add(key)

    def _add_text(self, key: int, rec: dict, probe: Probe, thr: Thresholds) -> None:
        text = corpus_text(rec)
        self.texts[key] = CorpusText(text, rec["task_id"], (rec["method"], rec["scenario"]))
        for words in word_sets(content_set(tokens(text)), rec["question"], rec["context"]):
            for cand in probe.lsh.query(minhash(words)):
                item, theirs = probe.word_sets[int(cand)]
                j = jaccard(words, theirs)
                _better(self.jaccard, item, (j,), (rec["task_id"],))
                if j >= thr.jaccard:
                    self.flagged_texts.add(key)

    def _add_data(self, rec: dict, probe: Probe, thr: Thresholds) -> None:
        for match in probe.data.matches(rec, thr):
            share = match.hits / match.rows
            for i in probe.data.items[match.dataset]:
                _better(self.data, i, (share, match.hits), (rec["task_id"], match.fingerprint))
            if thr.data_flags(share, match.hits, match.rows):
                self.flagged_data.add(rec["data_id"])

    def merge(self, later: Seen) -> None:
        """Take in what the stretch that follows this one holds."""
        if not later.tasks:
            return
        if not self.tasks:
            self.first_data = later.first_data
        elif later.first_data == self.last_data:
            self.datasets -= 1   # a dataset whose tasks the two stretches share
        self.tasks += later.tasks
        self.datasets += later.datasets
        self.last_data = later.last_data
        for n in NGRAM_SIZES:
            self.df[n].update(later.df[n])
            for g, pairs in later.gram_scenarios[n].items():
                self.gram_scenarios[n][g] |= pairs
        for grams, (task_id, keys) in later.held.items():
            self.held.setdefault(grams, [task_id, set()])[1].update(keys)
        for g, scenarios in later.where.items():
            self.where[g] |= scenarios
        for scenario, task_id in later.first.items():
            self.first.setdefault(scenario, task_id)
        for scenario, families in later.families.items():
            self.families[scenario] |= families
        for key, text in later.texts.items():
            self.texts.setdefault(key, text)
        for best, theirs in ((self.jaccard, later.jaccard), (self.data, later.data)):
            for i, (score, rest) in theirs.items():
                _better(best, i, score, rest)
        self.flagged_texts |= later.flagged_texts
        self.flagged_data |= later.flagged_data


def _scan(shard: Shard, groups: range | None, probe: Probe, thr: Thresholds) -> Seen:
    seen = Seen()
    for rec in shard_records(shard, COLUMNS, groups=groups):
        seen.add(rec, probe, thr)
    return seen


def _stretches(shards: list[Shard], parts: int) -> list[tuple[Shard, range, int]]:
    """The corpus cut into about ``parts`` stretches of row groups of equal
    rows, in order, none spanning two shards: (shard, row groups, tasks)."""
    sizes = [row_group_rows(shard) for shard in shards]
    target = max(1, sum(map(sum, sizes)) // parts)
    out = []
    for shard, rows in zip(shards, sizes):
        start, held = 0, 0
        for g, count in enumerate(rows):
            held += count
            if held >= target or g == len(rows) - 1:
                out.append((shard, range(start, g + 1), held))
                start, held = g + 1, 0
    return out


def scan_corpus(corpus, probe: Probe, thr: Thresholds, jobs: int = 1, progress: bool = False) -> Seen:
    """What ``corpus`` holds of ``probe``: one pass, over ``jobs`` processes;
    ``progress`` shows a bar of the tasks read on standard error."""
    from joblib import Parallel, delayed
    from tqdm import tqdm

    stretches = _stretches(check_shards(corpus), jobs * STRETCHES_PER_JOB)
    calls = (delayed(_scan)(shard, groups, probe, thr) for shard, groups, _ in stretches)
    # Processes (loky): the pass is Python work that holds the GIL. Stretches come back in order.
    runner = Parallel(n_jobs=jobs, backend="loky", return_as="generator", pre_dispatch="2*n_jobs") if jobs > 1 \
        else (lambda cs: (fn(*a, **k) for fn, a, k in cs))
    seen = Seen()
    with tqdm(total=sum(rows for _, _, rows in stretches), disable=not progress, unit="task",
              desc="reading the corpus", file=sys.stderr, dynamic_ncols=True) as bar:
        for part in runner(calls):
            seen.merge(part)
            bar.update(part.tasks)
    return seen
