"""What a leakage check looks for in a corpus: the benchmark's items as
fingerprints, built once and handed to every process that reads the corpus.

- word 8- and 13-grams of each item's text;
- the word 2-grams of each item's parts (question, context, both, and windows
  of the whole), for the rarity-weighted containment;
- each item's content words (of its whole text, and of its question and its
  context alone), and a MinHash-LSH index of them;
- the distinct datasets (each fingerprinted once, however many items name it)
  and an index, in arrays, from row hash to the dataset rows that have it.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass

import numpy as np
from datasketch import MinHashLSH

from ...errors import BenchError, CorpusError
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
#: The fewest content words of a whole text, and of a question or context alone, that MinHash compares.
LEAST_WORDS = 3
LEAST_PART_WORDS = 8


@dataclass(frozen=True)
class DataMatch:
    """A benchmark dataset's rows found in one corpus dataset."""

    dataset: int
    hits: int
    rows: int
    fingerprint: str


def _distinct_pairs(keys: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (key, row) pairs, sorted by key."""
    order = np.lexsort((rows, keys))
    keys, rows = keys[order], rows[order]
    new = np.ones(len(keys), dtype=bool)
    new[1:] = (keys[1:] != keys[:-1]) | (rows[1:] != rows[:-1])
    return keys[new], rows[new]


def _fingerprint(item: Item) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int | None]:
    """A benchmark dataset's distinct rows (rows whose exact hashes are all
    alike count once) as (hash, distinct row, whether the hash is exact)
    entries, the number of distinct rows and the decimals of the rounded
    fingerprint: the most its numbers carry, None when that is 0, above
    :data:`~.data.MAX_ROUNDED_DECIMALS` or not written plainly (its rounded
    hashes are those that differ from the row's exact ones)."""
    empty = np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64), np.empty(0, dtype=bool), 0, None
    if not item.data_csv:
        return empty
    try:
        table = read_table(item.data_csv)
    except csv.Error as exc:
        raise BenchError(f"{item.where}: item '{item.id}' has a dataset that is not readable CSV ({exc})") from None
    rows = Rows(table)
    if not rows.rows:
        return empty
    per_row = rows.pairs()[1].reshape(len(rows.selections), rows.rows).T   # a row's exact hash per selection
    _, first, distinct = np.unique(per_row, axis=0, return_index=True, return_inverse=True)
    distinct = distinct.reshape(-1)
    exact = per_row[first]
    keys, owners = _distinct_pairs(exact.reshape(-1), np.repeat(np.arange(len(first)), exact.shape[1]))
    flags = np.ones(len(keys), dtype=bool)
    places = rows.precision()
    places = places if places is not None and 1 <= places <= MAX_ROUNDED_DECIMALS else None
    if places:
        row, hashes = rows.pairs(places)
        owner = distinct[row]
        other = ~(hashes[:, None] == exact[owner]).any(axis=1)
        more, more_owners = _distinct_pairs(hashes[other], owner[other])
        keys, owners = np.concatenate([keys, more]), np.concatenate([owners, more_owners])
        flags = np.concatenate([flags, np.zeros(len(more), dtype=bool)])
    return keys, owners, flags, len(first), places


def _lookup(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """The positions in the sorted ``keys`` of every key in ``wanted``."""
    lo, hi = np.searchsorted(keys, wanted, "left"), np.searchsorted(keys, wanted, "right")
    counts = hi - lo
    starts = np.repeat(lo - (np.cumsum(counts) - counts), counts)
    return starts + np.arange(counts.sum())


class BenchDatasets:
    """The benchmark's distinct datasets (each fingerprinted once, however
    many items name it), the items that name each, and an index in arrays:
    every row hash, sorted, with its dataset, its distinct row and whether it
    is exact or rounded."""

    def __init__(self, items: list[Item]):
        self.of_item: list[int | None] = []
        self.items: list[list[int]] = []
        self.rows: list[int] = []               # distinct rows per dataset
        self.places: list[int | None] = []      # decimals of each dataset's rounded fingerprint
        entries = []
        seen: dict = {}
        for i, item in enumerate(items):
            if item.data_csv is None:
                self.of_item.append(None)
                continue
            d = seen.setdefault(item.data_csv, len(self.items))
            if d == len(self.items):
                keys, owners, flags, rows, places = _fingerprint(item)
                entries.append((keys, np.full(len(keys), d, dtype=np.int64), owners, flags))
                self.items.append([])
                self.rows.append(rows)
                self.places.append(places)
            self.of_item.append(d)
            self.items[d].append(i)
        keys, self.dataset, self.row, self.exact = (np.concatenate([e[k] for e in entries]) if entries
                                                    else np.empty(0, dtype=t)
                                                    for k, t in enumerate((np.uint64, np.int64, np.int64, bool)))
        order = np.argsort(keys, kind="stable")
        self.keys, self.dataset, self.row, self.exact = keys[order], self.dataset[order], self.row[order], \
            self.exact[order]
        self.rounded = sorted({p for p in self.places if p})   # the decimals a corpus dataset is rounded to

    def rows_of(self, item: int) -> int:
        d = self.of_item[item]
        return 0 if d is None else self.rows[d]

    def fingerprint(self, dataset: int, exact: bool) -> str:
        places = self.places[dataset]
        return "rows" if exact else f"rows rounded to {places} decimal{'s' if places > 1 else ''}"

    def matches(self, rec: dict, thr: Thresholds) -> list[DataMatch]:
        """The benchmark datasets with rows in the corpus task ``rec``'s
        dataset, each with the rows found exactly, or also by the rounded
        fingerprint where the exact rows alone do not flag it and the rounded
        ones add some."""
        try:
            rows = Rows(read_table(rec["data_csv"], ","))
        except csv.Error as exc:
            raise CorpusError(f"task {rec['task_id']}: its data_csv is not readable CSV ({exc})") from None
        found = [(_lookup(self.keys, rows.hashes(places)), places is None) for places in (None, *self.rounded)]
        at = np.concatenate([f for f, _ in found])
        exact_hit = np.concatenate([self.exact[f] & exact for f, exact in found])
        out = []
        for d in np.unique(self.dataset[at]).tolist():
            mine = self.dataset[at] == d
            exact = np.unique(self.row[at[mine & exact_hit]]).size
            either = np.unique(self.row[at[mine]]).size
            n = self.rows[d]
            by_exact_rows = thr.data_flags(exact / n, exact, n) or exact == either
            out.append(DataMatch(d, exact if by_exact_rows else either, n, self.fingerprint(d, by_exact_rows)))
        return out


class Probe:
    """The benchmark's items as the fingerprints the corpus is searched for."""

    def __init__(self, items: list[Item], thr: Thresholds):
        toks = [tokens(it.text) for it in items]
        self.grams = {n: [ngrams(t, n) for t in toks] for n in NGRAM_SIZES}
        self.all_grams = {n: set().union(*self.grams[n]) for n in NGRAM_SIZES}
        self.parts = [[ngrams(t, PAIR) for t in _parts(it)] for it in items]
        self.all_pairs = set().union(*(g for parts in self.parts for g in parts))
        self.word_sets = [(i, words) for i, (item, whole) in enumerate(zip(items, toks))
                          for words in word_sets(content_set(whole), item.question, item.context)]
        self.lsh = MinHashLSH(threshold=max(0.05, 0.8 * thr.jaccard), num_perm=NUM_PERM)
        for k, (_, words) in enumerate(self.word_sets):
            self.lsh.insert(str(k), minhash(words))
        self.data = BenchDatasets(items)


def word_sets(whole: frozenset, question: str, context: str) -> list[frozenset]:
    """The content-word sets MinHash compares a text by: the whole (at least
    :data:`LEAST_WORDS` words) and, where it has both, its question and its
    context alone (at least :data:`LEAST_PART_WORDS` each), the granularities
    a copy has: a benchmark may copy a question without its context."""
    sets = [whole] if len(whole) >= LEAST_WORDS else []
    if question.strip() and context.strip():
        sets += [part for part in (content_set(tokens(question)), content_set(tokens(context)))
                 if len(part) >= LEAST_PART_WORDS and part != whole]
    return sets


def _parts(item: Item) -> list[list[str]]:
    """The token lists containment scores: the item's question, its context,
    the two together and windows of :data:`WINDOW` words of the whole."""
    texts = [tokens(t) for t in dict.fromkeys(t for t in (item.question, item.context, item.text) if t.strip())]
    whole = texts[-1] if texts else []
    return texts + [whole[k:k + WINDOW] for k in range(0, len(whole) - WINDOW, WINDOW // 2)]
