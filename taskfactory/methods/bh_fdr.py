"""A panel of markers compared between two groups, the false discovery rate
controlled: Welch t-tests of every marker, Benjamini-Hochberg-adjusted, read
at the target.

R: ``p.adjust(sapply(markers, function(v) t.test(d[[v]] ~ d[[group]])$p.value),
method = "BH")[target]``. The tempting wrong test is the target's own Welch
t-test, unadjusted. The sibling of ``holm_adjusted`` (same scenarios, same
data; see that module): only the error rate the question names differs.
"""

from __future__ import annotations

import numpy as np

from ..registry import register
from ._names import BH_WELCH
from .holm_adjusted import MarkerPanel, benjamini_hochberg, generate


class BhFdr(MarkerPanel):
    name = "bh_fdr"
    title = "Welch t-tests over a marker panel, Benjamini-Hochberg-adjusted"
    canonical = ('p.adjust(sapply(markers, function(v) t.test(d[[v]] ~ d[[group]])$p.value), '
                 'method = "BH")[target]')
    test_name = BH_WELCH
    question_words = {"error_rate": "the false discovery rate"}
    generate = staticmethod(generate)
    adjust = staticmethod(benjamini_hochberg)

    @staticmethod
    def thresholds(m, alpha):
        """The step-up thresholds alpha (j + 1) / m of the j-th smallest other
        p-value: with the target's p-value set to 0 it is the (j + 1)-th smallest."""
        return alpha * np.arange(2, m + 1) / m

    @staticmethod
    def critical(passes, m, alpha):
        """Benjamini-Hochberg: the target is rejected when p <= alpha R / m, R
        the rejections of the step-up procedure with the target's p-value set
        to 0 (1 + the largest j whose j-th smallest other p-value passes)."""
        last = np.where(passes.any(axis=1), passes.shape[1] - np.argmax(passes[:, ::-1], axis=1), 0)
        return alpha * (last + 1) / m

    def gold_method(self, m):
        return f'Welch Two Sample t-tests of {m} markers, p-values adjusted by p.adjust(method = "BH")'


register(BhFdr())
