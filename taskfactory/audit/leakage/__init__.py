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

The benchmark is read once into a probe (:mod:`.probe`); the corpus is read
in one pass, in stretches of row groups that several processes can share
(:mod:`.scan`), and the items are scored once the pass is done
(:mod:`.check`). What is kept grows with the benchmark and with the corpus's
distinct texts, not with its rows. Every fingerprint (n-gram, row, text) is a
stable 64-bit hash, the same in every process.
"""

from .check import check_leakage
from .report import (KINDS, ItemReport, LeakageReport, Thresholds, check_output_paths, check_threshold, format_report,
                     is_report_file, write_report)
from .scan import text_key

__all__ = ["KINDS", "ItemReport", "LeakageReport", "Thresholds", "check_leakage", "check_output_paths",
           "check_threshold", "format_report", "is_report_file", "text_key", "write_report"]
