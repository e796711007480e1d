"""Tail probabilities of the reference distributions.

Each is the scipy.special function scipy.stats' distribution calls for it
(``t.sf`` is ``stdtr(df, -x)``, ``chi2.sf`` is ``chdtrc``, ``f.sf`` is
``fdtrc``, ``norm.sf`` is ``ndtr(-x)``), so the values are the same bits,
without scipy.stats' argument handling, which costs about 80 µs a call.
"""

from scipy import special


def t_sf(x, df):
    """P(T > x) for Student's t with ``df`` degrees of freedom."""
    return special.stdtr(df, -x)


def chi2_sf(x, df):
    """P(X > x) for the chi-squared distribution with ``df`` degrees of freedom."""
    return special.chdtrc(df, x)


def chi2_cdf(x, df):
    """P(X <= x) for the chi-squared distribution with ``df`` degrees of freedom."""
    return special.chdtr(df, x)


def f_sf(x, dfn, dfd):
    """P(F > x) for the F distribution with ``dfn`` and ``dfd`` degrees of freedom."""
    return special.fdtrc(dfn, dfd, x)


def norm_sf(x):
    """P(Z > x) for the standard normal."""
    return special.ndtr(-x)


def norm_cdf(x):
    """P(Z <= x) for the standard normal."""
    return special.ndtr(x)
