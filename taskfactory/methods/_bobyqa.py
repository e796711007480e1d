"""NLopt 2.7.1's BOBYQA for one variable, ported statement by statement.

lme4 fits a random intercept's theta with ``nloptwrap``: NLopt's BOBYQA
(Powell's derivative-free bound-constrained trust-region method). To give
R's numbers rather than the REML optimum's, :mod:`._mixed` runs this port,
checked evaluation by evaluation against the C library. The two-variable
parts (rotations in UPDATE, the alternative iterations of TRSBOX) drop out
for one variable; RESCUE is not ported (:class:`Rescue` is raised where it
would run).
"""

from __future__ import annotations

import math

#: NLopt's status codes.
SUCCESS, FTOL, XTOL, MAXEVAL, ROUNDOFF = 1, 3, 4, 5, -4


class Rescue(Exception):
    """BOBYQA would call its RESCUE routine (rounding errors have damaged the interpolation)."""


def _trsbox(xpt, xopt, gopt, hq, pq, sl, su, delta):
    """NLopt's trsbox_ for one variable: the truncated conjugate gradient step
    within the trust region and the bounds. Returns xnew, d, gnew, dsq, crvmin."""
    xbdi = 0.0
    if xopt <= sl:
        if gopt >= 0.0:
            xbdi = -1.0
    elif xopt >= su:
        if gopt <= 0.0:
            xbdi = 1.0
    nact = 1 if xbdi != 0.0 else 0
    d = 0.0
    gnew = gopt
    delsq = delta * delta
    qred = 0.0
    crvmin = -1.0
    iterc = 0
    s = 0.0
    gredsq = ggsav = 0.0
    itermax = 0
    beta = 0.0
    while True:  # L30 (beta = 0 at L20)
        if xbdi != 0.0:
            s = 0.0
        elif beta == 0.0:
            s = -gnew
        else:
            s = beta * s - gnew
        stepsq = s * s
        if stepsq == 0.0:
            break
        if beta == 0.0:
            gredsq = stepsq
            itermax = iterc + 1 - nact
        if gredsq * delsq <= qred * 1e-4 * qred:
            break
        hs = hq * s  # L210: HS = H S
        for k in (1, 2, 3):
            if pq[k] != 0.0:
                temp = xpt[k] * s
                temp *= pq[k]
                hs += temp * xpt[k]
        # L50
        resid = delsq
        ds = shs = 0.0
        if xbdi == 0.0:
            resid -= d * d
            ds += s * d
            shs += s * hs
        if resid <= 0.0:
            crvmin = 0.0
            break
        temp = math.sqrt(stepsq * resid + ds * ds)
        if ds < 0.0:
            blen = (temp - ds) / stepsq
        else:
            blen = resid / (temp + ds)
        stplen = blen
        if shs > 0.0:
            stplen = min(blen, gredsq / shs)
        iact = 0
        if s != 0.0:
            xsum = xopt + d
            if s > 0.0:
                temp = (su - xsum) / s
            else:
                temp = (sl - xsum) / s
            if temp < stplen:
                stplen = temp
                iact = 1
        sdec = 0.0
        if stplen > 0.0:
            iterc += 1
            temp = shs / stepsq
            if iact == 0 and temp > 0.0:
                crvmin = min(crvmin, temp)
                if crvmin == -1.0:
                    crvmin = temp
            ggsav = gredsq
            gredsq = 0.0
            gnew += stplen * hs
            if xbdi == 0.0:
                gredsq += gnew * gnew
            d += stplen * s
            sdec = max(stplen * (ggsav - 0.5 * stplen * shs), 0.0)
            qred += sdec
        if iact > 0:
            nact += 1
            xbdi = 1.0
            if s < 0.0:
                xbdi = -1.0
            delsq -= d * d
            if delsq <= 0.0:
                crvmin = 0.0
                break
            beta = 0.0
            continue
        if stplen < blen:
            if iterc == itermax:
                break
            if sdec <= qred * 0.01:
                break
            beta = gredsq / ggsav
            continue
        crvmin = 0.0  # L90; L100: with one variable NACT >= N - 1, so to L190
        break
    # L190
    xnew = max(min(xopt + d, su), sl)
    if xbdi == -1.0:
        xnew = sl
    if xbdi == 1.0:
        xnew = su
    d = xnew - xopt
    return xnew, d, gnew, d * d, crvmin


def _altmov(xpt, xopt, bmat, zmat, sl, su, kopt, knew, adelt):
    """NLopt's altmov_ for one variable. Returns xnew, xalt, alpha, cauchy."""
    const = 1.0 + math.sqrt(2.0)
    hcol = [0.0, 0.0, 0.0, 0.0]
    temp = zmat[knew]
    for k in (1, 2, 3):
        hcol[k] += temp * zmat[k]
    alpha = hcol[knew]
    ha = 0.5 * alpha
    glag = bmat[knew]
    for k in (1, 2, 3):
        temp = xpt[k] * xopt
        temp = hcol[k] * temp
        glag += temp * xpt[k]
    presav = 0.0
    ksav, stpsav, ibdsav = 0, 0.0, 0
    step = 0.0
    for k in (1, 2, 3):
        if k == kopt:
            continue
        temp = xpt[k] - xopt
        dderiv = glag * temp
        distsq = temp * temp
        subd = adelt / math.sqrt(distsq)
        slbd = -subd
        ilbd = iubd = 0
        sumin = min(1.0, subd)
        temp = xpt[k] - xopt
        if temp > 0.0:
            if slbd * temp < sl - xopt:
                slbd = (sl - xopt) / temp
                ilbd = -1
            if subd * temp > su - xopt:
                subd = max(sumin, (su - xopt) / temp)
                iubd = 1
        elif temp < 0.0:
            if slbd * temp > su - xopt:
                slbd = (su - xopt) / temp
                ilbd = 1
            if subd * temp < sl - xopt:
                subd = max(sumin, (sl - xopt) / temp)
                iubd = -1
        if k == knew:
            diff = dderiv - 1.0
            step = slbd
            vlag = slbd * (dderiv - slbd * diff)
            isbd = ilbd
            temp = subd * (dderiv - subd * diff)
            if abs(temp) > abs(vlag):
                step = subd
                vlag = temp
                isbd = iubd
            tempd = 0.5 * dderiv
            tempa = tempd - diff * slbd
            tempb = tempd - diff * subd
            if tempa * tempb < 0.0:
                temp = tempd * tempd / diff
                if abs(temp) > abs(vlag):
                    step = tempd / diff
                    vlag = temp
                    isbd = 0
        else:
            step = slbd
            vlag = slbd * (1.0 - slbd)
            isbd = ilbd
            temp = subd * (1.0 - subd)
            if abs(temp) > abs(vlag):
                step = subd
                vlag = temp
                isbd = iubd
            if subd > 0.5:
                if abs(vlag) < 0.25:
                    step = 0.5
                    vlag = 0.25
                    isbd = 0
            vlag *= dderiv
        temp = step * (1.0 - step) * distsq
        predsq = vlag * vlag * (vlag * vlag + ha * temp * temp)
        if predsq > presav:
            presav = predsq
            ksav = k
            stpsav = step
            ibdsav = isbd
    temp = xopt + stpsav * (xpt[ksav] - xopt)
    xnew = max(sl, min(su, temp))
    if ibdsav < 0:
        xnew = sl
    if ibdsav > 0:
        xnew = su
    bigstp = adelt + adelt
    iflag = 0
    csave = 0.0
    xalt_save = 0.0
    while True:  # L100
        wfixsq = 0.0
        ggfree = 0.0
        w = 0.0
        tempa = min(xopt - sl, glag)
        tempb = max(xopt - su, glag)
        if tempa > 0.0 or tempb < 0.0:
            w = bigstp
            ggfree += glag * glag
        if ggfree == 0.0:
            return xnew, 0.0, alpha, 0.0  # cauchy = 0; XALT not set (unused then)
        while True:  # L120
            temp = adelt * adelt - wfixsq
            if temp > 0.0:
                wsqsav = wfixsq
                step = math.sqrt(temp / ggfree)
                ggfree = 0.0
                if w == bigstp:
                    temp = xopt - step * glag
                    if temp <= sl:
                        w = sl - xopt
                        wfixsq += w * w
                    elif temp >= su:
                        w = su - xopt
                        wfixsq += w * w
                    else:
                        ggfree += glag * glag
                if wfixsq > wsqsav and ggfree > 0.0:
                    continue
            break
        gw = 0.0
        if w == bigstp:
            w = -step * glag
            xalt = max(sl, min(su, xopt + w))
        elif w == 0.0:
            xalt = xopt
        elif glag > 0.0:
            xalt = sl
        else:
            xalt = su
        gw += glag * w
        curv = 0.0
        for k in (1, 2, 3):
            temp = xpt[k] * w
            curv += hcol[k] * temp * temp
        if iflag == 1:
            curv = -curv
        if curv > -gw and curv < -const * gw:
            scale = -gw / curv
            temp = xopt + scale * w
            xalt = max(sl, min(su, temp))
            cauchy = (0.5 * gw * scale) * (0.5 * gw * scale)
        else:
            cauchy = (gw + 0.5 * curv) * (gw + 0.5 * curv)
        if iflag == 0:
            glag = -glag
            xalt_save = xalt
            csave = cauchy
            iflag = 1
            continue
        if csave > cauchy:
            xalt = xalt_save
            cauchy = csave
        return xnew, xalt, alpha, cauchy


def _update(bmat, zmat, vlag, beta, denom, knew):
    """NLopt's update_ for one variable (NPT = 3, one column of ZMAT: no rotations)."""
    w = [0.0] * 5
    for i in (1, 2, 3):
        w[i] = zmat[knew] * zmat[i]
    alpha = w[knew]
    tau = vlag[knew]
    vlag[knew] -= 1.0
    temp = math.sqrt(denom)
    tempb = zmat[knew] / temp
    tempa = tau / temp
    for i in (1, 2, 3):
        zmat[i] = tempa * zmat[i] - tempb * vlag[i]
    w[4] = bmat[knew]
    tempa = (alpha * vlag[4] - tau * w[4]) / denom
    tempb = (-beta * w[4] - tau * vlag[4]) / denom
    for i in (1, 2, 3, 4):
        bmat[i] = bmat[i] + tempa * vlag[i] + tempb * w[i]


def _replacement(zmat, vlag, beta, xpt, centre, delsq, skip=None):
    """BOBYQA's choice of the interpolation point to replace (the same loop at
    its two places in NLopt's bobyqb): the point k (other than ``skip``) with
    the largest ``max(1, (|x_k - centre|^2 / delsq)^2) * (beta H_kk + vlag_k^2)``.
    Returns ``(knew, denom, scaden, biglsq)``: the point (0 if none), its
    denominator, that largest product and the largest ``weight * vlag_k^2``."""
    scaden = biglsq = denom = 0.0
    knew = 0
    for k in (1, 2, 3):
        if k == skip:
            continue
        den = beta * (zmat[k] * zmat[k]) + vlag[k] * vlag[k]
        distsq = (xpt[k] - centre) * (xpt[k] - centre)
        temp = max(1.0, (distsq / delsq) * (distsq / delsq))
        if temp * den > scaden:
            scaden, knew, denom = temp * den, k, den
        biglsq = max(biglsq, temp * (vlag[k] * vlag[k]))
    return knew, denom, scaden, biglsq


def bobyqa(fun, x0: float, rhobeg: float, rhoend: float, ftol_abs: float, lower: float = 0.0,
            upper: float = math.inf, maxeval: int = 100000) -> tuple[float, float, int, int]:
    """NLopt 2.7.1's BOBYQA (``bobyqa()`` and ``bobyqb_``) for one variable (NPT = 3),
    statement by statement; the two-variable parts (rotations in UPDATE, the
    alternative iterations of TRSBOX) drop out. Returns x, f(x), the number of
    evaluations and NLopt's status. Raises :class:`Rescue` where BOBYQA would call
    RESCUE (not ported). The arrays are 1-based as in the C code (index 0 unused),
    XPT, BMAT and ZMAT reduced to their single column; the labels are the C code's."""
    xl, xu = lower, upper
    x = x0
    # bobyqa(): the bounds relative to x, moving x off a bound closer than rhobeg
    temp = xu - xl
    if temp < rhobeg + rhobeg:
        raise ValueError("insufficient space between the bounds")
    sl = xl - x
    su = xu - x
    if sl >= -rhobeg:
        if sl >= 0.0:
            x = xl
            sl = 0.0
            su = temp
        else:
            x = xl + rhobeg
            sl = -rhobeg
            su = max(xu - x, rhobeg)
    elif su <= rhobeg:
        if su <= 0.0:
            x = xu
            sl = -temp
            su = 0.0
        else:
            x = xu - rhobeg
            sl = min(xl - x, -rhobeg)
            su = rhobeg
    nevals = 0

    def clamp(xb, xv):
        v = min(max(xl, xb + xv), xu)
        if xv == sl:
            v = xl
        if xv == su:
            v = xu
        return v

    # prelim_
    npt = 3
    rhosq = rhobeg * rhobeg
    xbase = x
    xpt = [0.0, 0.0, 0.0, 0.0]
    fval = [0.0, 0.0, 0.0, 0.0]
    bmat = [0.0, 0.0, 0.0, 0.0, 0.0]
    zmat = [0.0, 0.0, 0.0, 0.0]
    pq = [0.0, 0.0, 0.0, 0.0]
    hq = 0.0
    gopt = 0.0
    stepa = stepb = 0.0
    fbeg = 0.0
    kopt = 1
    for nf in (1, 2, 3):
        nfm = nf - 1
        if nfm == 1:
            stepa = rhobeg
            if su == 0.0:
                stepa = -stepa
            xpt[nf] = stepa
        elif nfm == 2:
            stepa = xpt[2]
            stepb = -rhobeg
            if sl == 0.0:
                stepb = min(2.0 * rhobeg, su)
            if su == 0.0:
                stepb = max(-2.0 * rhobeg, sl)
            xpt[nf] = stepb
        xv = clamp(xbase, xpt[nf])
        nevals += 1
        f = fun(xv)
        fval[nf] = f
        if nf == 1:
            fbeg = f
            kopt = 1
        elif f < fval[kopt]:
            kopt = nf
        if nf == 2:
            gopt = (f - fbeg) / stepa
        elif nf == 3:
            temp = (f - fbeg) / stepb
            diff = stepb - stepa
            hq = 2.0 * (temp - gopt) / diff
            gopt = (gopt * stepb - temp * stepa) / diff
            if stepa * stepb < 0.0:
                if f < fval[2]:
                    fval[3] = fval[2]
                    fval[2] = f
                    if kopt == 3:
                        kopt = 2
                    xpt[2] = stepb
                    xpt[3] = stepa
            bmat[1] = -(stepa + stepb) / (stepa * stepb)
            bmat[3] = -0.5 / xpt[2]
            bmat[2] = -bmat[1] - bmat[3]
            zmat[1] = math.sqrt(2.0) / (stepa * stepb)
            zmat[3] = math.sqrt(0.5) / rhosq
            zmat[2] = -zmat[1] - zmat[3]

    # bobyqb_
    xopt = xpt[kopt]
    xoptsq = xopt * xopt
    kbase = 1
    rho = rhobeg
    delta = rho
    nresc = nevals
    ntrits = 0
    diffa = diffb = diffc = 0.0
    itest = 0
    nfsav = nevals
    rc = SUCCESS
    w = [0.0] * 7
    vlag = [0.0] * 5
    xnew = xalt = d = 0.0
    dsq = crvmin = gnew = 0.0
    dnorm = ratio = alpha = cauchy = beta = denom = 0.0
    adelt = distsq = 0.0
    knew = 0
    label = 20
    while True:
        if label == 20:
            if kopt != kbase:
                gopt += hq * xopt
                if nevals > npt:
                    for k in (1, 2, 3):
                        temp = xpt[k] * xopt
                        temp = pq[k] * temp
                        gopt += temp * xpt[k]
            label = 60
        if label == 60:
            xnew, d, gnew, dsq, crvmin = _trsbox(xpt, xopt, gopt, hq, pq, sl, su, delta)
            dnorm = min(delta, math.sqrt(dsq))
            if dnorm < 0.5 * rho:
                ntrits = -1
                distsq = (10.0 * rho) * (10.0 * rho)
                if nevals <= nfsav + 2:
                    label = 650
                    continue
                errbig = max(max(diffa, diffb), diffc)
                frhosq = rho * 0.125 * rho
                if crvmin > 0.0 and errbig > frhosq * crvmin:
                    label = 650
                    continue
                bdtol = errbig / rho
                bdtest = bdtol
                if xnew == sl:
                    bdtest = gnew
                if xnew == su:
                    bdtest = -gnew
                if bdtest < bdtol:
                    curv = hq
                    for k in (1, 2, 3):
                        curv += pq[k] * (xpt[k] * xpt[k])
                    bdtest += 0.5 * curv * rho
                    if bdtest < bdtol:
                        label = 650
                        continue
                label = 680
                continue
            ntrits += 1
            label = 90
        if label == 90:
            if dsq <= xoptsq * 0.001:
                fracsq = xoptsq * 0.25
                sumpq = 0.0
                for k in (1, 2, 3):
                    sumpq += pq[k]
                    s = -0.5 * xoptsq
                    s += xpt[k] * xopt
                    w[npt + k] = s
                    temp = fracsq - 0.5 * s
                    w[1] = bmat[k]
                    vlag[1] = s * xpt[k] + temp * xopt
                    bmat[4] = bmat[4] + w[1] * vlag[1] + vlag[1] * w[1]
                sumz = sumw = 0.0
                for k in (1, 2, 3):
                    sumz += zmat[k]
                    vlag[k] = w[npt + k] * zmat[k]
                    sumw += vlag[k]
                s = (fracsq * sumz - 0.5 * sumw) * xopt
                for k in (1, 2, 3):
                    s += vlag[k] * xpt[k]
                w[1] = s
                for k in (1, 2, 3):
                    bmat[k] += s * zmat[k]
                temp = w[1]
                bmat[4] += temp * w[1]
                w[1] = -0.5 * sumpq * xopt
                for k in (1, 2, 3):
                    w[1] += pq[k] * xpt[k]
                    xpt[k] -= xopt
                hq = hq + w[1] * xopt + xopt * w[1]
                xbase += xopt
                xnew -= xopt
                sl -= xopt
                su -= xopt
                xopt = 0.0
                xoptsq = 0.0
            label = 210 if ntrits == 0 else 230
        if label == 190:
            raise Rescue()
        if label == 210:
            xnew, xalt, alpha, cauchy = _altmov(xpt, xopt, bmat, zmat, sl, su, kopt, knew, adelt)
            d = xnew - xopt
            label = 230
        if label == 230:
            for k in (1, 2, 3):
                suma = xpt[k] * d
                sumb = xpt[k] * xopt
                s = bmat[k] * d
                w[k] = suma * (0.5 * suma + sumb)
                vlag[k] = s
                w[npt + k] = suma
            beta = 0.0
            s = 0.0
            for k in (1, 2, 3):
                s += zmat[k] * w[k]
            beta -= s * s
            for k in (1, 2, 3):
                vlag[k] += s * zmat[k]
            dsq = d * d
            s = 0.0
            for k in (1, 2, 3):
                s += w[k] * bmat[k]
            bsum = s * d
            s += bmat[4] * d
            vlag[4] = s
            bsum += s * d
            dx = d * xopt
            beta = dx * dx + dsq * (xoptsq + dx + dx + 0.5 * dsq) + beta - bsum
            vlag[kopt] += 1.0
            if ntrits == 0:
                denom = vlag[knew] * vlag[knew] + alpha * beta
                if denom < cauchy and cauchy > 0.0:
                    xnew = xalt
                    d = xnew - xopt
                    cauchy = 0.0
                    continue  # label stays 230
                if denom <= 0.5 * (vlag[knew] * vlag[knew]):
                    if nevals > nresc:
                        raise Rescue()
                    rc = ROUNDOFF
                    label = 720
                    continue
            else:
                knew, denom, scaden, biglsq = _replacement(zmat, vlag, beta, xpt, xopt, delta * delta, kopt)
                if scaden <= 0.5 * biglsq:
                    if nevals > nresc:
                        raise Rescue()
                    rc = ROUNDOFF
                    label = 720
                    continue
            label = 360
        if label == 360:
            xv = clamp(xbase, xnew)
            if nevals >= maxeval:
                rc = MAXEVAL
                label = 720
                continue
            nevals += 1
            f = fun(xv)
            if ntrits == -1:
                rc = XTOL
                if f < fval[kopt]:
                    return xv, f, nevals, rc
                label = 720
                continue
            fopt = fval[kopt]
            vquad = d * gopt + hq * (0.5 * (d * d))
            for k in (1, 2, 3):
                vquad += 0.5 * pq[k] * (w[npt + k] * w[npt + k])
            diff = f - fopt - vquad
            diffc = diffb
            diffb = diffa
            diffa = abs(diff)
            if dnorm > rho:
                nfsav = nevals
            if ntrits > 0:
                if vquad >= 0.0:
                    rc = ROUNDOFF
                    label = 720
                    continue
                ratio = (f - fopt) / vquad
                if ratio <= 0.1:
                    delta = min(0.5 * delta, dnorm)
                elif ratio <= 0.7:
                    delta = max(0.5 * delta, dnorm)
                else:
                    delta = max(0.5 * delta, dnorm + dnorm)
                if delta <= rho * 1.5:
                    delta = rho
                if f < fopt:
                    found = _replacement(zmat, vlag, beta, xpt, xnew, delta * delta)
                    if found[2] > 0.5 * found[3]:   # else keep the point chosen before the step
                        knew, denom = found[0], found[1]
            _update(bmat, zmat, vlag, beta, denom, knew)
            pqold = pq[knew]
            pq[knew] = 0.0
            temp = pqold * xpt[knew]
            hq += temp * xpt[knew]
            temp = diff * zmat[knew]
            for k in (1, 2, 3):
                pq[k] += temp * zmat[k]
            fval[knew] = f
            xpt[knew] = xnew
            w[1] = bmat[knew]
            for k in (1, 2, 3):
                suma = zmat[knew] * zmat[k]
                if math.isinf(suma):
                    rc = ROUNDOFF
                    label = 720
                    break
                sumb = xpt[k] * xopt
                temp = suma * sumb
                w[1] += temp * xpt[k]
            if label == 720:
                continue
            gopt += diff * w[1]
            if f < fopt:
                kopt = knew
                xopt = xnew
                xoptsq = xopt * xopt
                gopt += hq * d
                for k in (1, 2, 3):
                    temp = xpt[k] * d
                    temp = pq[k] * temp
                    gopt += temp * xpt[k]
                if abs(f - fopt) < ftol_abs:
                    rc = FTOL
                    label = 720
                    continue
            if ntrits > 0:
                for k in (1, 2, 3):
                    vlag[k] = fval[k] - fval[kopt]
                    w[k] = 0.0
                s = 0.0
                for k in (1, 2, 3):
                    s += zmat[k] * vlag[k]
                for k in (1, 2, 3):
                    w[k] += s * zmat[k]
                for k in (1, 2, 3):
                    s = xpt[k] * xopt
                    w[k + npt] = w[k]
                    w[k] = s * w[k]
                s = 0.0
                for k in (1, 2, 3):
                    s = s + bmat[k] * vlag[k] + xpt[k] * w[k]
                if xopt == sl:
                    gqsq = min(0.0, gopt) * min(0.0, gopt)
                    gisq = min(0.0, s) * min(0.0, s)
                elif xopt == su:
                    gqsq = max(0.0, gopt) * max(0.0, gopt)
                    gisq = max(0.0, s) * max(0.0, s)
                else:
                    gqsq = gopt * gopt
                    gisq = s * s
                vlag[npt + 1] = s
                itest += 1
                if gqsq < 10.0 * gisq:
                    itest = 0
                if itest >= 3:
                    gopt = vlag[npt + 1]
                    for i in (1, 2, 3):
                        pq[i] = w[npt + i]
                    hq = 0.0
                    itest = 0
            if ntrits == 0:
                label = 60
                continue
            if f <= fopt + 0.1 * vquad:
                label = 60
                continue
            distsq = max((2.0 * delta) * (2.0 * delta), (10.0 * rho) * (10.0 * rho))
            label = 650
        if label == 650:
            knew = 0
            for k in (1, 2, 3):
                s = (xpt[k] - xopt) * (xpt[k] - xopt)
                if s > distsq:
                    knew = k
                    distsq = s
            if knew > 0:
                dist = math.sqrt(distsq)
                if ntrits == -1:
                    delta = min(0.1 * delta, 0.5 * dist)
                    if delta <= rho * 1.5:
                        delta = rho
                ntrits = 0
                adelt = max(min(0.1 * dist, delta), rho)
                dsq = adelt * adelt
                label = 90
                continue
            if ntrits == -1:
                label = 680
            elif ratio > 0.0:
                label = 60
                continue
            elif max(delta, dnorm) > rho:
                label = 60
                continue
            else:
                label = 680
        if label == 680:
            if rho > rhoend:
                delta = 0.5 * rho
                ratio = rho / rhoend
                if ratio <= 16.0:
                    rho = rhoend
                elif ratio <= 250.0:
                    rho = math.sqrt(ratio) * rhoend
                else:
                    rho = 0.1 * rho
                delta = max(delta, rho)
                ntrits = 0
                nfsav = nevals
                label = 60
                continue
            if ntrits == -1:
                label = 360
                continue
            label = 720
        if label == 720:
            v = min(max(xl, xbase + xopt), xu)
            if xopt == sl:
                v = xl
            if xopt == su:
                v = xu
            return v, fval[kopt], nevals, rc
