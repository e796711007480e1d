"""Leakage: does a corpus contain, or nearly contain, a held-out benchmark?

Three kinds of evidence, each reported per benchmark item with the corpus task
it matched:

- text: word 8- and 13-grams of the tasks' prompts after normalising case,
  punctuation and number formatting, ignoring the corpus's own templates (an
  n-gram in more than a share of corpus tasks, drawn from two or more
  scenarios, is boilerplate); the share of an item's word 2-grams that one
  corpus scenario's prompts hold, each weighted by its rarity among scenarios,
  which survives paraphrase; and MinHash-LSH near-duplicates of the content
  words of context and question, each confirmed by exact Jaccard;
- data: the rows of a benchmark dataset found in one corpus dataset, by hashes
  of normalised rows that ignore the separator and line endings, row order,
  column order and names, and identifier columns; exact, or rounded to the
  benchmark dataset's decimals (see :mod:`.data`);
- semantic (optional): cosine similarity of sentence embeddings.

The corpus is streamed shard by shard; what is kept grows with the benchmark
and with the corpus's distinct texts, not with its rows. Every fingerprint
(n-gram, row, text) is a stable 64-bit hash, the same in every process.
"""

from __future__ import annotations

import csv
import json
import math
import numbers
import os
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from datasketch import MinHashLSH

from ..corpus import check_shards, iter_records, load_manifest
from ..errors import CorpusError, InputError, check_path
from ..folders import check_new_folder, check_output_file, write_output_file
from .bench import BenchError, Fields, Item, load_bench
from .data import MAX_ROUNDED_DECIMALS, Rows, read_table
from .text import NUM_PERM, content_set, jaccard, minhash, ngrams, stable_hash, tokens

COLUMNS = ["task_id", "data_id", "method", "scenario", "question", "context", "prompt", "data_csv"]
KINDS = ("text-ngram", "text-containment", "text-minhash", "data-rows", "semantic")
LEAST_COUNT = {"ngram13": 0, "data_min_rows": 1}  # thresholds that count, and their least value; the rest are shares


def check_threshold(name: str, value, label: str | None = None) -> None:
    """InputError naming ``label`` (default: ``threshold <name>``) and
    ``value`` when ``value`` is outside the domain of the threshold ``name``:
    a count is a whole number of at least its :data:`LEAST_COUNT`, any other
    threshold a finite number from 0 to 1."""
    if name in LEAST_COUNT:
        least = LEAST_COUNT[name]
        ok = isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= least
        problem = f"must be a whole number, {least} or more"
    else:
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and 0 <= value <= 1
        problem = "must be a number from 0 to 1"
    if not ok:
        shown = value if isinstance(value, numbers.Number) else repr(value)
        raise InputError(f"{label or 'threshold ' + name} ({shown}) {problem}")


@dataclass(frozen=True)
class Thresholds:
    """When a benchmark item counts as leaked. Out-of-domain values (NaN, a
    negative count, a share above 1) raise InputError rather than switch a
    check off."""

    ngram8: float = 0.5         # share of the item's non-template 8-grams found in one task
    ngram13: int = 1            # non-template 13-grams shared with one task
    containment: float = 0.5    # rarity-weighted share of the item's word 2-grams one corpus scenario holds
    jaccard: float = 0.5        # content-word Jaccard with one task's text
    data: float = 0.5           # share of the item's distinct rows found in one corpus dataset
    data_min_rows: int = 5      # ... and at least this many rows (all of them when the item has fewer)
    semantic: float = 0.9       # cosine with the nearest corpus text
    boilerplate: float = 0.05   # n-grams in more than this share of tasks, from 2+ scenarios, are template

    def __post_init__(self):
        for f in fields(self):
            check_threshold(f.name, getattr(self, f.name))


@dataclass
class ItemReport:
    """Every score of one benchmark item, with the corpus task behind each."""

    bench: str
    id: str
    where: str
    snippet: str
    ngram8: float = 0.0
    ngram13: int = 0
    ngram_task: str | None = None
    containment: float = 0.0
    containment_task: str | None = None
    jaccard: float = 0.0
    jaccard_task: str | None = None
    data: float = 0.0
    data_rows: int = 0
    data_task: str | None = None
    data_fingerprint: str | None = None   # "rows", or "rows rounded to <k> decimals"
    semantic: float | None = None
    semantic_task: str | None = None
    flags: list = field(default_factory=list)

    def evidence(self) -> list[tuple[str, float, str | None]]:
        """(kind, score, task_id) of each flag."""
        scores = {"text-ngram": (self.ngram8, self.ngram_task),
                  "text-containment": (self.containment, self.containment_task),
                  "text-minhash": (self.jaccard, self.jaccard_task),
                  "data-rows": (self.data, self.data_task), "semantic": (self.semantic, self.semantic_task)}
        return [(kind, *scores[kind]) for kind in self.flags]


@dataclass
class LeakageReport:
    corpus: str
    benchmarks: list
    tasks: int
    datasets: int
    distinct_texts: int
    thresholds: Thresholds
    items: list
    semantic: dict | None = None
    seconds: float = 0.0
    flagged_texts: set = field(default_factory=set)
    flagged_data: set = field(default_factory=set)
    flagged_scenarios: set = field(default_factory=set)

    @property
    def flagged(self) -> list[ItemReport]:
        return [it for it in self.items if it.flags]

    def to_json(self) -> dict:
        return {
            "corpus": self.corpus, "benchmarks": self.benchmarks, "corpus_tasks": self.tasks,
            "corpus_datasets": self.datasets, "corpus_distinct_texts": self.distinct_texts,
            "thresholds": asdict(self.thresholds), "semantic": self.semantic,
            "flagged_items": len(self.flagged), "items": [asdict(it) for it in self.items],
        }


@dataclass
class _Text:
    """One distinct corpus text (context and question): the first task that
    has it, for the MinHash and semantic evidence."""

    text: str
    task_id: str
    scenario: tuple


def _corpus_text(rec: dict) -> str:
    return f"{rec['context']}\n{rec['question']}"


def text_key(rec: dict) -> int:
    """The key of a corpus task's text (context and question) in
    :attr:`LeakageReport.flagged_texts`."""
    return stable_hash(_corpus_text(rec))


@dataclass
class _BenchData:
    """A benchmark dataset's distinct rows, each as its exact and its rounded
    hashes (rounded to ``places`` decimals, the most its numbers carry; none
    when that is 0 or above :data:`~.data.MAX_ROUNDED_DECIMALS`)."""

    rows: list[tuple[frozenset, frozenset]]
    places: int | None

    @classmethod
    def of(cls, item: Item) -> _BenchData:
        if not item.data_csv:
            return cls([], None)
        try:
            table = read_table(item.data_csv)
        except csv.Error as exc:
            raise BenchError(f"{item.where}: item '{item.id}' has a dataset that is not readable CSV ({exc})") from None
        rows = Rows(table)
        places = rows.precision()
        places = places if places is not None and 1 <= places <= MAX_ROUNDED_DECIMALS else None
        rounded = rows.per_row(places) if places else [frozenset()] * rows.rows
        distinct = dict(zip(rows.per_row(), rounded))
        return cls(list(distinct.items()), places)

    def fingerprint(self, exact: bool) -> str:
        return "rows" if exact else f"rows rounded to {self.places} decimal{'s' if self.places > 1 else ''}"


class _Ngrams:
    """The benchmark's 8- and 13-grams, and the corpus prompts' share of them.

    Corpus prompts carry the templates (instructions, answer format, data
    dictionary phrasing); an n-gram found in more than ``boilerplate`` of the
    tasks, from two or more scenarios, is template and no evidence. The one
    pass over the corpus counts document frequencies of the benchmark's
    n-grams only, and keeps each distinct set of them a prompt holds, with its
    first task and the texts of the tasks that hold it (memory grows with the
    distinct sets, which tasks of one template share, not with the tasks);
    once the templates are known, each set is scored against each item.
    """

    SIZES = (8, 13)

    def __init__(self, bench_tokens: list[list[str]]):
        self.bench = {n: [ngrams(t, n) for t in bench_tokens] for n in self.SIZES}
        self.all = {n: set().union(*self.bench[n]) for n in self.SIZES}
        self.df = {n: Counter() for n in self.SIZES}
        self.scenarios = {n: defaultdict(set) for n in self.SIZES}
        self.index: dict = {}
        self.kept: dict = {}
        self.held: dict = {}   # (8-grams, 13-grams) a prompt holds: [its first task, the text keys of the tasks]

    def grams(self, toks: list[str]) -> dict:
        return {n: ngrams(toks, n) & self.all[n] for n in self.SIZES}

    def count(self, grams: dict, rec: dict) -> None:
        scenario = (rec["method"], rec["scenario"])
        for n in self.SIZES:
            for g in grams[n]:
                self.df[n][g] += 1
                self.scenarios[n][g].add(scenario)
        if any(grams.values()):
            held = self.held.setdefault(tuple(frozenset(grams[n]) for n in self.SIZES), [rec["task_id"], set()])
            held[1].add(text_key(rec))

    def finish(self, tasks: int, share: float) -> bool:
        """Drop template n-grams; True when any evidence is left to score."""
        for n in self.SIZES:
            boiler = {g for g, c in self.df[n].items() if c > share * tasks and len(self.scenarios[n][g]) >= 2}
            index = defaultdict(list)
            self.kept[n] = []
            for i, grams in enumerate(self.bench[n]):
                grams = grams - boiler
                self.kept[n].append(len(grams))
                for g in grams & self.df[n].keys():
                    index[g].append(i)
            self.index[n] = index
        return any(self.index[n] for n in self.SIZES)

    def shared(self, grams: frozenset, n: int) -> Counter:
        return Counter(i for g in grams for i in self.index[n].get(g, ()))


class _Containment:
    """How much of each benchmark item's text the prompts of one corpus scenario hold, weighted by rarity.

    An item's parts are its question, its context, the two together and
    windows of :attr:`WINDOW` words of the whole (half overlapping: a copied
    prompt's paragraphs). Their word 2-grams are looked for in the prompts of
    every corpus scenario (sibling families share a scenario's text, so a
    scenario is its name). Each counts with the weight log((S + 1) / (s + 1)),
    S the corpus's scenarios and s the number whose prompts hold it (at least
    1): the corpus's templates, in every scenario, weigh nothing; a 2-gram of
    one scenario, or of none, weighs most. An item scores the weighted share of
    a part's 2-grams that one scenario holds, for its best part and scenario;
    a part weighing less than :attr:`LEAST` 2-grams of one scenario (a short
    question, a window of data or templates) is not scored. Replacing a word
    breaks two 2-grams, so a copy with a fifth of its words replaced keeps
    about two thirds. Only the benchmark's 2-grams are kept, with the
    scenarios that hold each.
    """

    N = 2
    LEAST = 6
    WINDOW = 60

    def __init__(self, items: list[Item]):
        self.parts = []
        for it in items:
            texts = [tokens(t) for t in dict.fromkeys(t for t in (it.question, it.context, it.text) if t.strip())]
            whole = texts[-1] if texts else []
            texts += [whole[k:k + self.WINDOW] for k in range(0, len(whole) - self.WINDOW, self.WINDOW // 2)]
            self.parts.append([ngrams(t, self.N) for t in texts])
        self.all = set().union(*(g for parts in self.parts for g in parts))
        self.where: dict = defaultdict(set)   # 2-gram: the scenarios whose prompts hold it
        self.first: dict = {}                 # scenario: its first task
        self.methods: dict = defaultdict(set)  # scenario: the families that use it

    def count(self, toks: list[str], rec: dict) -> None:
        scenario = rec["scenario"]
        self.first.setdefault(scenario, rec["task_id"])
        self.methods[scenario].add(rec["method"])
        for g in ngrams(toks, self.N) & self.all:
            self.where[g].add(scenario)

    def score(self, reports: list[ItemReport], thr: Thresholds) -> set:
        """Each item's best containment and its scenario's first task; the
        (family, scenario) pairs of the scenarios that flag an item."""
        scenarios, flagged = len(self.first), set()
        least = self.LEAST * math.log((scenarios + 1) / 2)   # as much as LEAST 2-grams of one scenario
        for parts, report in zip(self.parts, reports):
            best = None
            for grams in parts:
                weights = {g: math.log((scenarios + 1) / (max(len(self.where.get(g, ())), 1) + 1)) for g in grams}
                total = sum(weights.values())
                held = defaultdict(float)
                for g, weight in weights.items():
                    for scenario in self.where.get(g, ()) if weight > 0 else ():
                        held[scenario] += weight
                if held and total >= least > 0:
                    scenario, weight = max(held.items(), key=lambda kv: kv[1])
                    if weight / total > report.containment:
                        report.containment, report.containment_task, best = weight / total, self.first[scenario], scenario
            if best is not None and report.containment >= thr.containment:
                flagged |= {(method, best) for method in self.methods[best]}
        return flagged


def check_leakage(corpus, benches, fields: Fields = Fields(), thresholds: Thresholds = Thresholds(),
                  semantic: bool = False, embed=None) -> LeakageReport:
    """Check ``corpus`` against the benchmark files or folders ``benches``."""
    start = time.perf_counter()
    check_path(corpus, "corpus")
    if isinstance(benches, (str, os.PathLike)):
        benches = [benches]  # one benchmark, not a list of its characters
    benches = list(benches)
    if not benches:
        raise InputError("give at least one benchmark file or folder")
    for bench in benches:
        check_path(bench, "a benchmark")
    if not isinstance(thresholds, Thresholds):
        raise InputError(f"thresholds must be a taskfactory.leakage.Thresholds, got {type(thresholds).__name__}")
    check_shards(corpus, load_manifest(corpus))
    items: list[Item] = [it for b in benches for it in load_bench(b, fields)]
    thr = thresholds
    btoks = [tokens(it.text) for it in items]
    grams = _Ngrams(btoks)
    contained = _Containment(items)
    bwords = [content_set(t) for t in btoks]
    lsh = MinHashLSH(threshold=max(0.05, 0.8 * thr.jaccard), num_perm=NUM_PERM)
    for i, words in enumerate(bwords):
        if len(words) >= 3:
            lsh.insert(str(i), minhash(words))
    data = _BenchDatasets(items)

    reports = [ItemReport(bench=it.bench, id=it.id, where=it.where,
                          snippet=" ".join((it.question or it.context or "(dataset only)").split())[:80]) for it in items]
    texts: dict[int, _Text] = {}
    flagged_texts, flagged_data = set(), set()
    tasks = datasets = 0
    last_data = None
    for rec in iter_records(corpus, columns=COLUMNS):
        tasks += 1
        prompt = tokens(rec["prompt"])
        grams.count(grams.grams(prompt), rec)
        contained.count(prompt, rec)
        key = text_key(rec)
        if key not in texts:
            text = _corpus_text(rec)
            texts[key] = _Text(text, rec["task_id"], (rec["method"], rec["scenario"]))
            words = content_set(tokens(text))
            for cand in lsh.query(minhash(words)) if words else ():
                i = int(cand)
                j = jaccard(words, bwords[i])
                if j > reports[i].jaccard:
                    reports[i].jaccard, reports[i].jaccard_task = j, rec["task_id"]
                if j >= thr.jaccard:
                    flagged_texts.add(key)
        if rec["data_id"] != last_data:
            last_data = rec["data_id"]
            datasets += 1
            if data.index and rec["data_csv"] is not None and data.score(rec, reports, thr):
                flagged_data.add(rec["data_id"])

    flagged_scenarios = contained.score(reports, thr)
    if grams.finish(tasks, thr.boilerplate):
        _score_ngrams(grams, reports, thr, flagged_texts)
    sem_summary, flagged_scen = None, set()
    if semantic:
        sem_summary, flagged_scen = _score_semantic(texts, items, reports, thr, embed)
    for i, r in enumerate(reports):
        if r.ngram8 >= thr.ngram8 or (thr.ngram13 > 0 and r.ngram13 >= thr.ngram13):
            r.flags.append("text-ngram")
        if r.containment >= thr.containment:
            r.flags.append("text-containment")
        if r.jaccard >= thr.jaccard:
            r.flags.append("text-minhash")
        if _data_flags(r.data, r.data_rows, data.rows_of(i), thr):
            r.flags.append("data-rows")
        if r.semantic is not None and r.semantic >= thr.semantic:
            r.flags.append("semantic")
    return LeakageReport(corpus=str(corpus), benchmarks=[str(b) for b in benches], tasks=tasks, datasets=datasets,
                         distinct_texts=len(texts), thresholds=thr, items=reports, semantic=sem_summary,
                         seconds=time.perf_counter() - start, flagged_texts=flagged_texts, flagged_data=flagged_data,
                         flagged_scenarios=flagged_scenarios | flagged_scen)


def _data_flags(share: float, hits: int, rows: int, thr: Thresholds) -> bool:
    return rows > 0 and share >= thr.data and hits >= min(thr.data_min_rows, rows)


class _BenchDatasets:
    """The benchmark's distinct datasets (each fingerprinted once, however
    many items name it), the items that name each, and an index from row
    hash to (dataset, row, whether the hash is exact)."""

    def __init__(self, items: list[Item]):
        self.datasets: list[_BenchData] = []
        self.of_item: list[int | None] = []
        self.items: list[list[int]] = []
        seen: dict = {}
        for i, item in enumerate(items):
            if item.data_csv is None:
                self.of_item.append(None)
                continue
            if item.data_csv not in seen:
                seen[item.data_csv] = len(self.datasets)
                self.datasets.append(_BenchData.of(item))
                self.items.append([])
            self.of_item.append(seen[item.data_csv])
            self.items[seen[item.data_csv]].append(i)
        self.index = defaultdict(list)
        for d, dataset in enumerate(self.datasets):
            for r, (exact, rounded) in enumerate(dataset.rows):
                for h in exact:
                    self.index[h].append((d, r, True))
                for h in rounded - exact:
                    self.index[h].append((d, r, False))
        self.places = sorted({d.places for d in self.datasets if d.places})

    def rows_of(self, item: int) -> int:
        d = self.of_item[item]
        return 0 if d is None else len(self.datasets[d].rows)

    def score(self, rec: dict, reports: list, thr: Thresholds) -> bool:
        """Record, for each benchmark dataset with rows in this corpus dataset,
        its share found there where it is the best yet (found exactly, else
        also by the rounded fingerprint); True when one is enough to flag."""
        found = defaultdict(lambda: (set(), set()))   # dataset: (rows found exactly, rows found either way)
        try:
            rows = Rows(read_table(rec["data_csv"], ","))
        except csv.Error as exc:
            raise CorpusError(f"task {rec['task_id']}: its data_csv is not readable CSV ({exc})") from None
        for places in (None, *self.places):
            for h in rows.hashes(places) & self.index.keys():
                for d, r, exact in self.index[h]:
                    if exact and places is None:
                        found[d][0].add(r)
                    found[d][1].add(r)
        flag = False
        for d, (exact, either) in found.items():
            n = len(self.datasets[d].rows)
            by_exact = _data_flags(len(exact) / n, len(exact), n, thr) or len(exact) == len(either)
            hits = len(exact) if by_exact else len(either)
            for i in self.items[d]:
                report = reports[i]
                if (hits / n, hits) > (report.data, report.data_rows):
                    report.data, report.data_rows, report.data_task = hits / n, hits, rec["task_id"]
                    report.data_fingerprint = self.datasets[d].fingerprint(by_exact)
            flag |= _data_flags(hits / n, hits, n, thr)
        return flag


def _score_ngrams(grams: _Ngrams, reports, thr, flagged_texts) -> None:
    """Each item's best non-template n-gram overlap with one task (the first
    task of the best set of n-grams a prompt holds)."""
    for (grams8, grams13), (task_id, keys) in grams.held.items():
        hit = False
        for i, k in grams.shared(grams8, 8).items():
            share = k / grams.kept[8][i]
            r = reports[i]
            if share > r.ngram8:
                r.ngram8, r.ngram_task = share, task_id
            hit |= share >= thr.ngram8
        for i, k in grams.shared(grams13, 13).items():
            r = reports[i]
            if k > r.ngram13:
                r.ngram13 = k
                r.ngram_task = r.ngram_task or task_id
            hit |= thr.ngram13 > 0 and k >= thr.ngram13
        if hit:
            flagged_texts |= keys


def _score_semantic(texts, items, reports, thr, embed):
    """Nearest corpus scenario text of each item, and the top-5 summary."""
    from .semantic import compare, default_embedder

    by_scenario = {}
    for info in texts.values():
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


def check_output_paths(corpus, benches=(), report_path=None, drop_dir=None, overwrite: bool = False) -> None:
    """Raise :class:`InputError` before any work when the ``--report`` file
    (see :func:`write_report`) or the ``--drop-out`` folder of a leakage check
    cannot be written, or would land inside the corpus or on a benchmark it reads."""
    if report_path:
        check_output_file(report_path, "--report", is_report_file, overwrite, [corpus, *benches])
    if drop_dir:
        check_new_folder(drop_dir, "--drop-out", [corpus, *benches])
        if report_path and Path(drop_dir).resolve() in Path(report_path).resolve().parents:
            raise InputError(f"--report {report_path}: inside the --drop-out folder {drop_dir}, which must stay "
                             "empty until the corpus is written there; give a file outside it")


#: The largest file :func:`is_report_file` reads as a candidate report; a larger one is not its own.
REPORT_MAX_BYTES = 256 << 20


def is_report_file(path: Path) -> bool:
    """Whether ``path`` holds a leakage report as :func:`write_report` writes
    it: a JSON object with the keys of :meth:`LeakageReport.to_json`, whose
    items have those of :class:`ItemReport`."""
    try:
        if path.stat().st_size > REPORT_MAX_BYTES:
            return False
        with open(path, "rb") as file:
            if file.read(1) != b"{":   # not a JSON object: not read further
                return False
            file.seek(0)
            found = json.load(file)
    except (OSError, ValueError, RecursionError):   # unreadable, not JSON, nested too deep
        return False
    blank = LeakageReport(corpus="", benchmarks=[], tasks=0, datasets=0, distinct_texts=0,
                          thresholds=Thresholds(), items=[])
    item_keys = {f.name for f in fields(ItemReport)}
    return (found.keys() == blank.to_json().keys() and isinstance(found["items"], list)
            and all(isinstance(it, dict) and it.keys() == item_keys for it in found["items"]))


def write_report(report: LeakageReport, path, overwrite: bool = False) -> Path:
    """Write ``report`` (every item's scores, as JSON) to ``path``, refused as
    :func:`check_output_paths` refuses it: a new file, or a report written
    before (any file with ``overwrite``), never a symbolic link nor inside
    the corpus or a benchmark (see :func:`~taskfactory.folders.check_output_file`);
    the file is replaced whole or left as it was."""
    path = check_output_file(path, "--report", is_report_file, overwrite, [report.corpus, *report.benchmarks])
    write_output_file(path, json.dumps(report.to_json(), indent=1) + "\n", "--report")
    return path
