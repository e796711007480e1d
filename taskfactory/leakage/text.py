"""Text evidence: normalised word n-grams and MinHash near-duplicates."""

from __future__ import annotations

import re

from datasketch import MinHash

NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")
WORD = re.compile(r"[a-z0-9_.+-]+")
STOPWORDS = frozenset("""
a an and are as at be been but by do does for from had has have how if in into is it its of on or that the
their there these this those to was were what when where whether which who will with within would than
per each any all between among more less about over under
""".split())
NUM_PERM = 128


def _number(match: re.Match) -> str:
    text = match.group(0).replace(",", "")
    try:
        value = float(text)
    except ValueError:
        return text
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def tokens(text: str) -> list[str]:
    """Lower-case words with numbers in one canonical form ("1,200.50" and
    "1200.5" are the same token) and punctuation dropped."""
    text = NUMBER.sub(lambda m: f" {_number(m)} ", text.lower())
    out = []
    for tok in WORD.findall(text):
        tok = tok.strip(".+-")
        if tok:
            out.append(tok)
    return out


def ngrams(toks: list[str], n: int) -> set[int]:
    """Hashes of the word n-grams of a token list."""
    return {hash(tuple(toks[i:i + n])) for i in range(len(toks) - n + 1)}


def content_set(toks: list[str]) -> frozenset[str]:
    """The set of content words (no stopwords): what MinHash and Jaccard compare."""
    return frozenset(t for t in toks if t not in STOPWORDS)


def minhash(words: frozenset[str]) -> MinHash:
    m = MinHash(num_perm=NUM_PERM, seed=1)
    m.update_batch([w.encode("utf-8") for w in sorted(words)])
    return m


def jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0
