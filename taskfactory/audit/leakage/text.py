"""Text evidence: normalised word n-grams and MinHash near-duplicates."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

import numpy as np
from datasketch import MinHash

NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")
WORD = re.compile(r"[a-z0-9_.+-]+")
STOPWORDS = frozenset("""
a an and are as at be been but by do does for from had has have how if in into is it its of on or that the
their there these this those to was were what when where whether which who will with within would than
per each any all between among more less about over under
""".split())
NUM_PERM = 128
NGRAM_BASE = np.uint64(0x100000001B3)  # odd, so each of its powers is invertible modulo 2**64


def stable_hash(text: str) -> int:
    """A 64-bit fingerprint of ``text`` that is the same in every process
    (blake2b; Python's ``hash`` of a string is salted per process)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


_token_hash = lru_cache(maxsize=1 << 16)(stable_hash)


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
    """Stable 64-bit fingerprints of the word n-grams of a token list.

    An n-gram's fingerprint is the polynomial sum(h_k * B**(n-1-k)) modulo
    2**64 of its tokens' :func:`stable_hash` values h_k, with an odd base B:
    as each power of B is invertible, two n-grams that differ in any token
    collide only when a blake2b value hits one number in 2**64. Computed for
    all n-grams of a text at once, this costs less than hashing each n-gram.
    """
    count = len(toks) - n + 1
    if count <= 0:
        return set()
    token_hashes = np.fromiter(map(_token_hash, toks), dtype=np.uint64, count=len(toks))
    out = np.zeros(count, dtype=np.uint64)
    for k in range(n):
        out *= NGRAM_BASE
        out += token_hashes[k:k + count]
    return set(out.tolist())


def content_set(toks: list[str]) -> frozenset[str]:
    """The set of content words (no stopwords): what MinHash and Jaccard compare."""
    return frozenset(t for t in toks if t not in STOPWORDS)


def minhash(words: frozenset[str]) -> MinHash:
    m = MinHash(num_perm=NUM_PERM, seed=1)
    m.update_batch([w.encode("utf-8") for w in sorted(words)])
    return m


def jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0
