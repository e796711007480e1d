"""The readable table ``taskfactory leakage`` prints."""

from __future__ import annotations

from collections import Counter

from . import KINDS


def format_report(report) -> str:
    from ..tables import render_table

    flagged = report.flagged
    lines = []
    if flagged:
        rows = [(it.id if len(it.id) <= 28 else it.id[:25] + "...", kind, f"{score:.2f}", task or "-", it.snippet[:60])
                for it in flagged for kind, score, task in it.evidence()]
        lines.append(render_table(("item", "evidence", "score", "corpus task", "snippet"), rows,
                                  align=("left", "left", "right", "left", "left")))
    kinds = Counter(kind for it in flagged for kind in it.flags)
    detail = ", ".join(f"{k} {kinds[k]}" for k in KINDS if kinds[k])
    lines.append(f"summary: {len(flagged)} of {len(report.items)} benchmark items flagged"
                 + (f" ({detail})" if detail else "")
                 + f" against {report.tasks} corpus tasks ({report.datasets} datasets, {report.distinct_texts} "
                   f"distinct texts) in {report.seconds:.1f} s")
    if report.semantic:
        s = report.semantic
        lines.append(f"semantic: mean top-5 cosine benchmark-to-corpus {s['bench_to_corpus_top5']:.3f}, "
                     f"corpus-to-corpus {s['corpus_to_corpus_top5']:.3f} ({s['corpus_texts']} scenario texts)")
    return "\n".join(lines)
