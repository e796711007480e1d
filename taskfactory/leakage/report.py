"""The readable table ``taskfactory leakage`` prints."""

from __future__ import annotations

from collections import Counter

from . import KINDS


def format_report(report) -> str:
    flagged = report.flagged
    lines = []
    if flagged:
        lines.append(f"{'item':<28} {'evidence':<13} {'score':>6}  {'corpus task':<32} snippet")
        for it in flagged:
            name = it.id if len(it.id) <= 28 else it.id[:25] + "..."
            for kind, score, task in it.evidence():
                lines.append(f"{name:<28} {kind:<13} {score:>6.2f}  {task or '-':<32} {it.snippet[:60]}")
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
