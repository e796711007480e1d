"""What a leakage check looks for in a corpus: the benchmark's items as
fingerprints, built once and handed to every process that reads the corpus.

- word 8- and 13-grams of each item's text;
- the word 2-grams of each item's parts (question, context, both, and windows
  of the whole), for the rarity-weighted containment;
- each item's content words, and a MinHash-LSH index of them;
- the distinct datasets (each fingerprinted once, however many items name it)
  and an index from row hash to the dataset rows that have it.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass

from datasketch import MinHashLSH

from ..errors import BenchError, CorpusError
from .bench import Item
from .data import MAX_ROUNDED_DECIMALS, Rows, read_table
from .report import Thresholds
from .text import NUM_PERM, content_set, minhash, ngrams, tokens

#: The n-gram sizes of the text-ngram evidence.
NGRAM_SIZES = (8, 13)
#: The n-gram size of the containment evidence.
PAIR = 2
#: Containment scores windows of this many words of an item's whole text, half overlapping.
WINDOW = 60


@dataclass
class BenchData:
    """A benchmark dataset's distinct rows, each as its exact and its rounded
    hashes (rounded to ``places`` decimals, the most its numbers carry; none
    when that is 0 or above :data:`~.data.MAX_ROUNDED_DECIMALS`)."""

    rows: list[tuple[frozenset, frozenset]]
    places: int | None

    @classmethod
    def of(cls, item: Item) -> BenchData:
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


@dataclass(frozen=True)
class DataMatch:
    """A benchmark dataset's rows found in one corpus dataset."""

    dataset: int
    hits: int
    rows: int
    fingerprint: str


class BenchDatasets:
    """The benchmark's distinct datasets, the items that name each, and an
    index from row hash to (dataset, row, whether the hash is exact)."""

    def __init__(self, items: list[Item]):
        self.datasets: list[BenchData] = []
        self.of_item: list[int | None] = []
        self.items: list[list[int]] = []
        seen: dict = {}
        for i, item in enumerate(items):
            if item.data_csv is None:
                self.of_item.append(None)
                continue
            if item.data_csv not in seen:
                seen[item.data_csv] = len(self.datasets)
                self.datasets.append(BenchData.of(item))
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

    def matches(self, rec: dict, thr: Thresholds) -> list[DataMatch]:
        """The benchmark datasets with rows in the corpus task ``rec``'s
        dataset, each with the rows found exactly, or also by the rounded
        fingerprint where the exact rows alone do not flag it and the rounded
        ones add some."""
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
        out = []
        for d, (exact, either) in found.items():
            n = len(self.datasets[d].rows)
            by_exact = thr.data_flags(len(exact) / n, len(exact), n) or len(exact) == len(either)
            out.append(DataMatch(d, len(exact) if by_exact else len(either), n, self.datasets[d].fingerprint(by_exact)))
        return out


class Probe:
    """The benchmark's items as the fingerprints the corpus is searched for."""

    def __init__(self, items: list[Item], thr: Thresholds):
        toks = [tokens(it.text) for it in items]
        self.grams = {n: [ngrams(t, n) for t in toks] for n in NGRAM_SIZES}
        self.all_grams = {n: set().union(*self.grams[n]) for n in NGRAM_SIZES}
        self.parts = [[ngrams(t, PAIR) for t in _parts(it)] for it in items]
        self.all_pairs = set().union(*(g for parts in self.parts for g in parts))
        self.words = [content_set(t) for t in toks]
        self.lsh = MinHashLSH(threshold=max(0.05, 0.8 * thr.jaccard), num_perm=NUM_PERM)
        for i, words in enumerate(self.words):
            if len(words) >= 3:
                self.lsh.insert(str(i), minhash(words))
        self.data = BenchDatasets(items)


def _parts(item: Item) -> list[list[str]]:
    """The token lists containment scores: the item's question, its context,
    the two together and windows of :data:`WINDOW` words of the whole."""
    texts = [tokens(t) for t in dict.fromkeys(t for t in (item.question, item.context, item.text) if t.strip())]
    whole = texts[-1] if texts else []
    return texts + [whole[k:k + WINDOW] for k in range(0, len(whole) - WINDOW, WINDOW // 2)]
