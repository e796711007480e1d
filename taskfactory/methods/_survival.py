"""Survival-analysis numerics, reproducing R 4.2.2 with survival 3.5-3.

* :func:`log_rank` gives ``survival::survdiff(Surv(time, event) ~ group)``
  (the log-rank test, ``rho = 0``).
* :func:`cox_terms` fits ``survival::coxph(Surv(time, event) ~ x1 + x2 ...)``
  with R's defaults (Efron ties) by the Newton-Raphson of R's C routine
  ``coxfit6`` (same centring and scaling, same start, same step halving, same
  stopping rule, same Cholesky tolerance), so its estimates and Wald z are R's
  to rounding.

Both first merge times that differ by less than sqrt(machine epsilon),
absolutely or relatively, as R's ``aeqSurv`` does (``timefix = TRUE``). Both
are vectorised: the data are sorted once, the sums over the risk sets are
cumulative sums from the latest time back, taken at the end of each distinct
time, and the Efron terms of tied deaths are grouped sums; no Python loop
runs over subjects or times.

Each raises :class:`~taskfactory.errors.DataError` where R would warn or give
no usable p-value: no events, a single group, a constant or collinear
covariate (R gives NA), a Cox fit that does not converge or whose likelihood
is monotone (an infinite coefficient).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import sparse, special
from scipy.optimize import linprog

from ..errors import DataError
from ..result import Term

COX_EPS = 1e-9  # coxph.control(): eps
COX_ITER_MAX = 20  # coxph.control(): iter.max
TOLER_CHOL = float(np.finfo(float).eps) ** 0.75  # coxph.control(): toler.chol
TOLER_INF = math.sqrt(COX_EPS)  # coxph.control(): toler.inf
SUSPECT_ITER, SUSPECT_BETA = 7, 4.0  # a fit this long, or a scaled |coef| this large, is checked for monotonicity
NOCENTER = (-1.0, 0.0, 1.0)  # coxph(nocenter = c(-1, 0, 1)): such columns are neither centred nor scaled
TIMEFIX_TOL = math.sqrt(float(np.finfo(float).eps))  # aeqSurv()'s tolerance


# --------------------------------------------------------------------------- input


def _surv(time, event) -> tuple[np.ndarray, np.ndarray]:
    """``Surv(time, event)`` for right-censored data: the times and the events
    (0/1) as floats."""
    t = np.asarray(time, dtype=float).ravel()
    e = np.asarray(event)
    e = (e.astype(float) if e.dtype == bool else np.asarray(e, dtype=float)).ravel()
    if len(e) != len(t):
        raise ValueError(f"time has {len(t)} values, event {len(e)}")
    if len(t) == 0:
        raise DataError("there are no observations")
    if not np.isfinite(t).all():
        raise DataError("the survival times have missing or non-finite values")
    if not ((e == 0.0) | (e == 1.0)).all():
        raise DataError("the event indicator must be 0/1 (or boolean)")
    return t, e


def _sort_surv(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort by time (R's ``order(time)``; the order within tied times changes
    only the rounding) and apply R's ``aeqSurv`` (``timefix = TRUE``) to the
    sorted times: distinct times closer than sqrt(eps), absolutely or relative
    to the mean |time| of the distinct times, become the smallest of their run.
    Returns the order, the sorted (fixed) times and a flag for the first row
    of each distinct time."""
    order = np.argsort(t)
    ts = t[order]
    new = np.empty(len(ts), dtype=bool)
    new[0] = True
    np.not_equal(ts[1:], ts[:-1], out=new[1:])
    y = ts[new]
    if len(y) > 1:
        dy = np.diff(y)
        tied = (dy <= TIMEFIX_TOL) | (dy / np.abs(y).mean() <= TIMEFIX_TOL)
        if tied.any():
            keep = np.concatenate(([True], ~tied))  # the distinct times that remain (R's cuts)
            ts = y[keep][np.cumsum(keep) - 1][np.cumsum(new) - 1]
            new[new] = keep
    return order, ts, new


# --------------------------------------------------------------------------- log-rank


def log_rank(time, event, group) -> tuple[float, int, float]:
    """``survival::survdiff(Surv(time, event) ~ group)`` with R's defaults
    (``rho = 0``, the log-rank test): the chi-square statistic, its df (the
    number of groups with a positive expected count, less 1) and the p-value.

    At each distinct event time with d deaths among N at risk, n_g of them in
    group g, R adds d n_g / N to the expected count of group g and
    d (N - d) / (N (N - 1)) (n_g [g = h] - n_g n_h / N) to the variance; the
    statistic is (O - E)' V^-1 (O - E) over the groups but the first (whose
    expected count is positive). Vectorised: one sort, reverse cumulative
    counts of each group over the distinct times. ``group``: array of labels
    (2 or more groups), taken in sorted order as R's factor levels are.
    """
    t, e = _surv(time, event)
    codes, k = _group_codes(group, len(t))
    if k < 2:
        raise DataError("there is only 1 group")
    if e.sum() == 0:
        raise DataError("there are no events, so the log-rank test is undefined")

    order, ts, new = _sort_surv(t)
    es, cs = e[order], codes[order]
    gid = np.cumsum(new) - 1  # the distinct time of each sorted row
    ng = int(gid[-1]) + 1
    counts = np.bincount(gid * k + cs, minlength=ng * k).reshape(ng, k)
    deaths = np.bincount(gid, weights=es, minlength=ng)
    at = deaths > 0.0
    d = deaths[at]
    risk = np.cumsum(counts[::-1], axis=0)[::-1][at].astype(float)  # n_g at each event time
    nrisk = risk.sum(axis=1)  # N at each event time

    observed = np.bincount(codes, weights=e, minlength=k)
    expected = (risk * (d / nrisk)[:, None]).sum(axis=0)
    several = nrisk > 1.0  # R adds no variance where a single subject is at risk
    c = np.zeros_like(d)
    c[several] = d[several] * (nrisk[several] - d[several]) / (nrisk[several] * (nrisk[several] - 1.0))
    var = np.diag((c[:, None] * risk).sum(axis=0)) - (risk * (c / nrisk)[:, None]).T @ risk

    keep = np.flatnonzero(expected > 0.0)
    df = len(keep) - 1
    if df < 1:
        raise DataError("fewer than 2 groups have subjects at risk at an event time")
    rows = keep[1:]
    diff = (observed - expected)[rows]
    vv = var[np.ix_(rows, rows)]
    try:
        chisq = float(diff @ np.linalg.solve(vv, diff))
    except np.linalg.LinAlgError:
        raise DataError("the log-rank variance matrix is singular") from None
    if not math.isfinite(chisq):
        raise DataError("the log-rank statistic is not finite")
    return chisq, df, _pchisq_upper(chisq, df)


def _pchisq_upper(x: float, df: int) -> float:
    """``pchisq(x, df, lower.tail = FALSE)``."""
    return float(special.chdtrc(df, x))


def _group_codes(group, n: int) -> tuple[np.ndarray, int]:
    """Integer codes 0 .. k-1 of the labels in ``group`` (in sorted order, as
    R's factor levels are) and the number k of groups."""
    g = np.asarray(group)
    if g.ndim != 1:
        g = g.ravel()
    if len(g) != n:
        raise ValueError(f"group has {len(g)} values, time {n}")
    if g.dtype.kind in "biuf":
        if g.dtype.kind == "f" and not np.isfinite(g).all():
            raise DataError("the group variable has missing values")
        levels, codes = np.unique(g, return_inverse=True)
        return codes.ravel(), len(levels)
    try:
        codes, levels = pd.factorize(g, sort=True)
    except TypeError:  # labels of mixed types: sort them as text
        codes, levels = pd.factorize(np.array([str(v) for v in g], dtype=object), sort=True)
    if (codes < 0).any():
        raise DataError("the group variable has missing values")
    return codes, len(levels)


# --------------------------------------------------------------------------- Cholesky (survival's C helpers)
#
# Ported line by line to plain Python on lists: the matrices are p x p with p
# a handful, where numpy's per-call overhead would dominate.


def _cholesky2(m: np.ndarray, toler: float) -> tuple[list[list[float]], int]:
    """survival's ``cholesky2``: the factorisation F D F' of symmetric ``m``
    (F unit lower triangular below the diagonal, D on it; the upper triangle of
    ``m`` is read) and its rank. A pivot below toler * (largest diagonal) is
    deemed singular and set to 0; the rank is negated if ``m`` is not
    non-negative definite."""
    a = m.tolist()
    n = len(a)
    eps = 0.0
    for i in range(n):
        if a[i][i] > eps:
            eps = a[i][i]
        for j in range(i + 1, n):
            a[j][i] = a[i][j]
    eps = toler if eps == 0.0 else eps * toler
    rank, nonneg = 0, 1
    for i in range(n):
        pivot = a[i][i]
        if not math.isfinite(pivot) or pivot < eps:
            a[i][i] = 0.0
            if pivot < -8.0 * eps:
                nonneg = -1
        else:
            rank += 1
            for j in range(i + 1, n):
                temp = a[j][i] / pivot
                a[j][i] = temp
                a[j][j] -= temp * temp * pivot
                for k in range(j + 1, n):
                    a[k][j] -= temp * a[k][i]
    return a, rank * nonneg


def _chsolve2(f: list[list[float]], y) -> np.ndarray:
    """survival's ``chsolve2``: solve F D F' b = y from :func:`_cholesky2`'s
    factor, with 0 for the singular components."""
    n = len(f)
    b = [float(v) for v in y]
    for i in range(n):
        temp = b[i]
        for j in range(i):
            temp -= b[j] * f[i][j]
        b[i] = temp
    for i in range(n - 1, -1, -1):
        if f[i][i] == 0.0:
            b[i] = 0.0
        else:
            temp = b[i] / f[i][i]
            for j in range(i + 1, n):
                temp -= b[j] * f[j][i]
            b[i] = temp
    return np.array(b)


def _chinv2(f: list[list[float]]) -> np.ndarray:
    """survival's ``chinv2``: the inverse of F D F' from :func:`_cholesky2`'s
    factor, with zero rows and columns where a pivot was singular."""
    a = [row[:] for row in f]
    n = len(a)
    for i in range(n):
        if a[i][i] > 0.0:
            a[i][i] = 1.0 / a[i][i]
            for j in range(i + 1, n):
                a[j][i] = -a[j][i]
                for k in range(i):
                    a[j][k] += a[j][i] * a[i][k]
    for i in range(n):
        if a[i][i] == 0.0:
            for j in range(i):
                a[j][i] = 0.0
            for j in range(i, n):
                a[i][j] = 0.0
        else:
            for j in range(i + 1, n):
                temp = a[j][i] * a[j][j]
                a[i][j] = temp
                for k in range(i, j):
                    a[i][k] += temp * a[j][k]
    out = np.array(a)
    upper = np.triu(out)
    return upper + np.triu(out, 1).T


# --------------------------------------------------------------------------- Cox model


class _CoxData:
    """The data of a Cox fit in R's order of accumulation (decreasing time;
    within a tied time the censored rows, then the deaths), centred and
    scaled, with the index arrays one Newton step needs (all computed once)."""

    def __init__(self, t: np.ndarray, e: np.ndarray, xt: np.ndarray):
        """``xt``: the covariates, p x n, already centred and scaled."""
        n = len(t)
        order, _, new = _sort_surv(t)
        gid = np.cumsum(new) - 1
        ng = int(gid[-1]) + 1
        # decreasing time, and within a tied time the censored rows before the deaths
        key = (ng - 1 - gid) * 2 + (e[order] > 0.5)
        key = key.astype(np.int16 if 2 * ng < np.iinfo(np.int16).max else np.int64)  # int16: a radix sort
        o2 = np.argsort(key, kind="stable")
        order, key = order[o2], key[o2]
        gdesc = key >> 1  # the distinct time of each row, 0 = the latest
        dead = (key & 1).astype(bool)
        self.xt = np.ascontiguousarray(np.take(xt, order, axis=1))
        self.dead_idx = np.flatnonzero(dead)
        end = np.cumsum(np.bincount(gdesc, minlength=ng))  # one past the last row of each time
        dd = np.bincount(gdesc[self.dead_idx], minlength=ng)
        has = dd > 0
        self.end = end[has]  # the cumulative sums up to here cover the event time's risk set
        ddd = dd[has]
        self.dstart = self.end - ddd  # its deaths are rows dstart .. end - 1
        nd = len(ddd)
        self.nd = nd
        self.gpos = np.repeat(np.arange(nd), ddd)  # each death's event-time index, deaths in row order
        self.first_death = np.cumsum(ddd) - ddd
        self.frac = (np.arange(len(self.gpos)) - np.repeat(self.first_death, ddd)) / np.repeat(ddd, ddd).astype(float)
        # a row is at risk at the event times whose index is >= its own time's
        self.kidx = np.searchsorted(np.flatnonzero(has), gdesc, side="left")
        self.sum_xdead = self.xt[:, self.dead_idx].sum(axis=1)
        self.c0 = np.zeros(n + 1)
        self.c1 = np.zeros((xt.shape[0], n + 1))
        self.stack = np.empty((5, len(self.gpos)))
        self.suffix = np.zeros(nd + 1)

    def step(self, beta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """``coxfit6_iter``: the Efron log partial likelihood, its score and its
        information matrix at ``beta``.

        For an event time with d deaths, S the sums over its risk set (of r =
        exp(x'b), r x, r x x') and D those over its deaths, R's Efron terms use
        S - (k/d) D for k = 0 .. d - 1: the loglik gets -log(S0 - k/d D0), the
        score -m_k with m_k = (S1 - k/d D1) / (S0 - k/d D0), the information
        (S2 - k/d D2) / (S0 - k/d D0) - m_k m_k'. S0 and S1 are cumulative sums
        in R's order; the sums of m_k m_k' are expanded per event time, and
        those of S2 and D2 become one weighted cross-product X' diag(r c) X.
        """
        xt = self.xt
        eta = beta @ xt
        r = np.exp(eta)
        rx = xt * r
        c0, c1 = self.c0, self.c1
        np.cumsum(r, out=c0[1:])
        np.cumsum(rx, axis=1, out=c1[:, 1:])
        s0 = c0[self.end]
        d0 = s0 - c0[self.dstart]
        s1 = c1[:, self.end]
        d1 = s1 - c1[:, self.dstart]
        g, f = self.gpos, self.frac
        den = s0[g] - f * d0[g]
        st = self.stack
        inv = np.divide(1.0, den, out=st[0])
        finv = np.multiply(f, inv, out=st[1])
        np.multiply(inv, inv, out=st[2])
        np.multiply(finv, inv, out=st[3])
        np.multiply(finv, finv, out=st[4])
        w1, w2, a, b, cc = np.add.reduceat(st, self.first_death, axis=1)
        loglik = float(beta @ self.sum_xdead - np.log(den).sum())
        u = self.sum_xdead - s1 @ w1 + d1 @ w2
        cross = (s1 * b) @ d1.T
        mm = (s1 * a) @ s1.T - cross - cross.T + (d1 * cc) @ d1.T
        suffix = self.suffix
        suffix[:-1] = np.cumsum(w1[::-1])[::-1]
        c = suffix[self.kidx]
        c[self.dead_idx] -= w2[g]
        imat = (xt * (r * c)) @ xt.T - mm
        return loglik, u, imat


def cox_terms(time, event, X, names) -> tuple[list[Term], dict]:
    """``summary(survival::coxph(Surv(time, event) ~ x1 + x2 ...))$coefficients``
    with R's defaults: Efron ties, Newton-Raphson as R's ``coxph.fit`` (C
    ``coxfit6``) does it: columns not all in {-1, 0, 1} centred and scaled by
    their mean absolute deviation, a start at 0, a step halving
    (b_new = (b_new + h b) / (h + 1), h the number of halvings in a row) when
    the log partial likelihood decreases or is not finite, convergence when
    |1 - loglik_best / loglik| <= 1e-9 (``coxph.control(eps = 1e-9)``),
    ``iter.max = 20``; the variance is the inverse information at the
    solution; the Wald z = coef / se(coef) has a two-sided normal p-value
    (``pchisq(z^2, 1, lower.tail = FALSE)``). ``X`` (n x p) excludes an
    intercept: for text covariates use
    :func:`~taskfactory.methods._models.model_matrix` without its first column.

    Returns the terms (``df`` None) and a dict: ``loglik`` (null, final),
    ``iterations``, and, as ``summary.coxph`` prints them,
    ``likelihood_ratio``, ``wald`` and ``score`` (the score test at b = 0,
    the log-rank test for one binary covariate), each (statistic, df, p-value);
    also ``n`` and ``nevent``.

    Raises DataError where R warns "Loglik converged before variable ...;
    coefficient may be infinite" (the Newton step |u' V| at the solution
    exceeds both eps and toler.inf |coef|) or "Ran out of iterations and did
    not converge"; where R gives NA (a constant column, or one collinear with
    the others: a Cholesky pivot below toler.chol); when there are no events;
    and when a fit that looks like a run to infinity (7 or more iterations, or
    a scaled |coef| above 4) has a monotone partial likelihood (see
    :func:`_monotone`), which R meets with one of its warnings but which, at
    the limit of double precision, may stop our iteration a step before R's.
    """
    t, e = _surv(time, event)
    x = np.asarray(X, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    n, p = x.shape
    names = [str(nm) for nm in names]
    if n != len(t) or len(names) != p or p == 0:
        raise ValueError(f"time has {len(t)} values, X is {n} x {p}, names has {len(names)}")
    xt = np.array(x.T, order="C")  # a copy, p x n: the column operations below run along rows
    if not np.isfinite(xt).all():
        raise DataError("the covariates have missing or non-finite values")
    nevent = int(e.sum())
    if nevent == 0:
        raise DataError("there are no events, so the Cox model cannot be fitted")
    constant = np.flatnonzero(xt.max(axis=1) == xt.min(axis=1))
    if len(constant):
        raise DataError(f"term '{names[constant[0]]}' is constant (R gives NA)")

    # coxfit6: centre and scale each column unless all its values are -1, 0 or 1
    doscale = ~np.logical_or.reduce([xt == v for v in NOCENTER]).all(axis=1)
    means = np.where(doscale, xt.mean(axis=1), 0.0)
    xt -= means[:, None]
    mad = np.abs(xt).sum(axis=1)
    scale = np.where(doscale & (mad > 0.0), n / np.where(mad > 0.0, mad, 1.0), 1.0)
    xt *= scale[:, None]
    data = _CoxData(t, e, xt)

    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        sctest, coef_s, loglik, iters, fact, u = _newton(data, p)
    var = _chinv2(fact)
    sing = np.flatnonzero(~(np.diag(var) > 0.0))
    if len(sing):
        raise DataError(f"X matrix deemed to be singular: term '{names[sing[0]]}' (R gives NA)")
    coef = coef_s * scale
    u = u / scale
    var *= np.outer(scale, scale)
    infs = np.abs(u @ var)
    bad = np.flatnonzero(~np.isfinite(u) | ((infs > COX_EPS) & (infs > TOLER_INF * np.abs(coef))))
    if len(bad):
        raise DataError(f"Loglik converged before term '{names[bad[0]]}'; coefficient may be infinite")
    if (iters >= SUSPECT_ITER or np.abs(coef_s).max() > SUSPECT_BETA) and _monotone(data):
        raise DataError("the partial likelihood is monotone, so a coefficient is infinite "
                        "(R warns, or its fit is unreliable)")

    se = np.sqrt(np.diag(var))
    z = coef / se
    terms = [Term(nm, float(b), float(s), float(zz), _pchisq_upper(zz * zz, 1), None)
             for nm, b, s, zz in zip(names, coef, se, z)]
    vfact, _ = _cholesky2(var, TOLER_CHOL)  # coxph.wtest
    wald = float(coef @ _chsolve2(vfact, coef))
    lr = 2.0 * (loglik[1] - loglik[0])
    details = {
        "loglik": loglik,
        "iterations": iters,
        "likelihood_ratio": (lr, p, _pchisq_upper(lr, p)),
        "wald": (wald, p, _pchisq_upper(wald, p)),
        "score": (sctest, p, _pchisq_upper(sctest, p)),
        "n": n,
        "nevent": nevent,
    }
    return terms, details


def _newton(data: _CoxData, p: int):
    """coxfit6's main loop on the scaled data. Returns the score statistic at
    0, the final (scaled) coefficients, (loglik at 0, final loglik), the
    number of iterations, the Cholesky factor of the final information and
    the final (scaled) score. Raises DataError if it runs out of iterations."""
    beta = np.zeros(p)
    loglik0, u, imat = data.step(beta)
    fact, _ = _cholesky2(imat, TOLER_CHOL)
    a = _chsolve2(fact, u)
    sctest = float(u @ a)
    best = loglik0
    newbeta = beta + a
    halving = 0
    for it in range(1, COX_ITER_MAX + 1):
        newlk, u, imat = data.step(newbeta)
        fact, _ = _cholesky2(imat, TOLER_CHOL)
        finite = bool(np.isfinite(u).all() and np.isfinite(imat).all() and math.isfinite(newlk))
        if finite and abs(1.0 - best / newlk) <= COX_EPS:
            return sctest, newbeta, (float(loglik0), float(newlk)), it, fact, u
        if not finite or newlk < best:
            halving += 1  # not converging: back toward the last good beta, more so each time
            newbeta = (newbeta + halving * beta) / (halving + 1.0)
        else:
            halving = 0
            best = newlk
            beta = newbeta
            newbeta = newbeta + _chsolve2(fact, u)
    raise DataError("Ran out of iterations and did not converge")


def _monotone(data: _CoxData) -> bool:
    """Whether the partial likelihood is monotone, so that the estimate is
    infinite (Bryson and Johnson 1981): some direction b with x_i'b >= x_j'b
    for every death i and every j at risk at its time, strictly for some pair.
    Decided by a linear programme whose unknowns are b in [-1, 1]^p (on the
    scaled columns) and M_g, the largest x'b in risk set g; as the risk sets
    are nested, M_g >= M_(g-1) and x_j'b <= M_g for the rows entering at g
    suffice. It maximises the sum over the deaths of (x_i - mean of the risk
    set)'b, positive only for such a direction. Called only when a fit looks
    like one to infinity: at the precision limit R's Newton steps and ours
    may then part."""
    xt, nd = data.xt, data.nd
    p = xt.shape[0]
    risk = np.flatnonzero(data.kidx < nd)  # rows at risk at some event time
    deaths = data.dead_idx
    nr, nc, ndead = len(risk), nd - 1, len(deaths)
    # rows: x_j'b - M_k(j) <= 0 for the rows at risk (k(j) their latest event time),
    # M_(g-1) - M_g <= 0 along the chain, M_g(i) - x_i'b <= 0 for the deaths
    chain = np.arange(nc)
    m_rows = np.concatenate([np.arange(nr), nr + chain, nr + chain, nr + nc + np.arange(ndead)])
    m_cols = np.concatenate([data.kidx[risk], chain, chain + 1, data.gpos])
    m_vals = np.concatenate([-np.ones(nr), np.ones(nc), -np.ones(nc), np.ones(ndead)])
    nrow = nr + nc + ndead
    mpart = sparse.csr_matrix((m_vals, (m_rows, m_cols)), shape=(nrow, nd))
    bpart = sparse.vstack([sparse.csr_matrix(xt[:, risk].T), sparse.csr_matrix((nc, p)),
                           sparse.csr_matrix(-xt[:, deaths].T)])
    a_ub = sparse.hstack([bpart, mpart]).tocsr()
    # objective: the sum over the deaths of x_i - (mean x over its risk set)
    cum = np.cumsum(xt, axis=1)
    means = cum[:, data.end - 1] / data.end
    gain = xt[:, deaths].sum(axis=1) - means[:, data.gpos].sum(axis=1)
    c = np.concatenate([-gain, np.zeros(nd)])
    bounds = [(-1.0, 1.0)] * p + [(None, None)] * nd
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(a_ub.shape[0]), bounds=bounds, method="highs")
    return res.status == 0 and -res.fun > 1e-6
