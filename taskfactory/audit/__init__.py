"""Audit: whether a corpus is what it claims. Every record re-derived and
every script run (:mod:`.verify`) in an isolated interpreter
(:mod:`.sandbox`), and the check against held-out benchmarks
(:mod:`.leakage`).

Imports the root and the phases below it (design, make, store)."""
