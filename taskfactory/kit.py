"""Data-generating helpers shared by the method families.

Everything here uses only numpy, and only names defined in this module: the
script emitted with each task carries the source of the helpers it uses
verbatim, so a dataset can be regenerated, byte for byte, on a machine with
numpy alone.

A table is a dict of numpy arrays of equal length, by column name, in the
order of the condition's column specifications: ``generate`` returns the
drawn table (:func:`finish`), :func:`release_table` makes the released one and
:func:`to_csv_text` writes it, the two as :func:`released_csv` runs them. A
``condition`` seen by these helpers needs only the attributes ``n``,
``columns`` (a list of column specifications), ``roles``, ``params``, ``dgp``
and ``perturbation``.
"""

import numpy as np

#: Columns a family numbers 1, 2, ... (clusters, repeatedly measured units and
#: periods); ``finish`` writes clusters and units as labels, periods as numbers.
DESIGN_TYPES = ("cluster", "unit", "period")


#: The smaller group's share of the rows in every two-group design.
SMALLER_GROUP_SHARE = (0.25, 0.45)


def first_group_share(rng) -> float:
    """The first-listed group's share of the rows, drawn the same way for every
    two-group design: the smaller group holds :data:`SMALLER_GROUP_SHARE` of
    them and is listed first or second at random, so neither the sizes nor
    their order tell sibling designs apart."""
    small = float(rng.uniform(*SMALLER_GROUP_SHARE))
    return small if rng.random() < 0.5 else 1.0 - small


def split_sizes(n, weights):
    """Split ``n`` rows into integer group sizes proportional to ``weights``.

    Uses largest remainders, ties broken by position, so the sizes always sum
    to ``n`` and do not depend on floating-point accidents.
    """
    w = np.asarray(weights, dtype=float)
    raw = n * w / w.sum()
    sizes = np.floor(raw).astype(int)
    order = np.argsort(-(raw - sizes), kind="stable")
    sizes[order[: n - int(sizes.sum())]] += 1
    return [int(s) for s in sizes]


def cluster_sizes(n, k, rng):
    """The row counts of ``k`` clusters (schools, practices, plots) holding
    ``n`` rows, drawn alike for every design with a cluster column: near
    equal, each weighted by a factor between 0.6 and 1.4."""
    return split_sizes(n, rng.uniform(0.6, 1.4, k))


def crossed_clusters(condition, n, rng):
    """The cluster column of ``n`` rows whose groups were assigned one row at
    a time (every cluster holding rows of several groups), where the scenario
    gives a ``cluster`` role, as a mapping to add to the drawn columns: cluster
    numbers in :func:`cluster_sizes`, in random order; else an empty mapping."""
    cluster = condition.roles.get("cluster")
    if not cluster:
        return {}
    sizes = cluster_sizes(n, condition.params["clusters"], rng)
    return {cluster: rng.permutation(np.repeat(np.arange(1, len(sizes) + 1), sizes))}


def nested_groups(k, shares, rng):
    """The group of each of ``k`` clusters when whole clusters were assigned:
    cluster counts in proportion to the groups' ``shares`` (at least 2 in
    each group), the clusters in random order."""
    counts = np.asarray(split_sizes(k, shares))
    while counts.min() < 2:
        counts[np.argmax(counts)] -= 1
        counts[np.argmin(counts)] += 1
    groups = np.empty(k, dtype=int)
    groups[rng.permutation(k)] = np.repeat(np.arange(len(counts)), counts)
    return groups


def labels_for(levels, sizes):
    """An array holding ``levels[i]`` repeated ``sizes[i]`` times, in order."""
    return np.repeat(np.asarray(levels, dtype=object), sizes)


def draw_extra(spec, n, rng):
    """Draw an extra (non-analysis) column from its ``dist`` specification."""
    kind, arg = next(iter(spec["dist"].items()))
    if kind == "normal":
        return rng.normal(arg[0], arg[1], n)
    if kind == "lognormal":
        return rng.lognormal(arg[0], arg[1], n)
    if kind == "uniform":
        return rng.uniform(arg[0], arg[1], n)
    if kind == "poisson":
        return rng.poisson(arg, n).astype(float)
    if kind == "integers":
        return rng.integers(arg[0], arg[1], n, endpoint=True).astype(float)
    if kind == "choice":
        p = np.asarray(arg, dtype=float)
        idx = rng.choice(len(spec["levels"]), size=n, p=p / p.sum())
        return np.asarray(spec["levels"], dtype=object)[idx]
    raise ValueError(f"distribution ({kind!r}) must be one of normal, lognormal, uniform, poisson, integers or choice")


def relate(values, other, r, rng):
    """``values`` reordered so that their ranks follow ``r`` times the
    standardised ranks of ``other`` plus independent noise: the same values
    (so the same distribution), with a rank correlation of about ``r``."""
    n = len(values)
    ranks = np.empty(n)
    ranks[np.argsort(other, kind="stable")] = np.arange(n)
    score = (ranks - ranks.mean()) / ranks.std()
    latent = r * score + np.sqrt(1.0 - r * r) * rng.standard_normal(n)
    out = np.empty(n)
    out[np.argsort(latent, kind="stable")] = np.sort(np.asarray(values, dtype=float), kind="stable")
    return out


def correlated_normals(rng, n, r):
    """Two standard normal samples of ``n`` with correlation ``r``."""
    zx = rng.standard_normal(n)
    return zx, r * zx + np.sqrt(1.0 - r * r) * rng.standard_normal(n)


def ar1(e, phi):
    """The stationary AR(1) series of unit variance driven by unit-variance
    innovations ``e``: z[0] = e[0], z[t] = phi z[t - 1] + sqrt(1 - phi^2) e[t]."""
    z = np.empty(len(e))
    z[0] = e[0]
    scale = np.sqrt(1.0 - phi * phi)
    for t in range(1, len(e)):
        z[t] = phi * z[t - 1] + scale * e[t]
    return z


def time_order(condition, n):
    """The period column numbering ``n`` rows drawn in time order 1, 2, ...,
    where the scenario gives the rows a ``period`` role (a series of days),
    as a mapping to add to the drawn columns; else an empty one."""
    period = condition.roles.get("period")
    return {period: np.arange(1, n + 1)} if period else {}


def margin(z, spec, factor):
    """A monotone increasing map of standard normal scores onto a variable's scale:
    ``loc + scale * g(shift + k z)``, g the identity, exp, sinh or the logistic curve."""
    u = spec.get("shift", 0.0) + factor * spec.get("k", 1.0) * z
    shape = spec["shape"]
    if shape == "lognormal":
        g = np.exp(u)
    elif shape == "sinh":
        g = np.sinh(u)
    elif shape == "logistic":
        g = 1.0 / (1.0 + np.exp(-u))
    else:
        g = u
    return spec["loc"] + spec["scale"] * g


def covariates(condition, rng, n):
    """Draw the covariates a regression adjusts for, ``n`` values each, in the
    order of the ``covariates`` role: a numeric covariate normal with the
    dgp's ``[mean, sd]``, a two-level category covariate with the dgp's
    shares of its levels. Returns ``(columns, confounder)``: the values by
    column, and the dgp's ``confounder`` weights applied to the standardised
    covariates, scaled to unit variance."""
    dgp = condition.dgp
    weights = dgp["confounder"]
    norm = np.sqrt(sum(w * w for w in weights.values()))
    columns, confounder = {}, np.zeros(n)
    for name in condition.roles["covariates"]:
        spec, params = _spec(condition, name), dgp["covariates"][name]
        if spec["type"] == "category":
            share = params[1] / (params[0] + params[1])  # of the second level
            second = rng.random(n) < share
            columns[name] = np.where(second, spec["levels"][1], spec["levels"][0])
            score = (second - share) / np.sqrt(share * (1.0 - share))
        else:
            score = rng.standard_normal(n)
            columns[name] = params[0] + params[1] * score
        confounder = confounder + weights.get(name, 0.0) * score / norm
    return columns, confounder


#: The 40-point Gauss-Hermite rule (probabilists'), as np.polynomial.hermite_e.hermegauss(40) gives it.
HERMITE_NODES, HERMITE_WEIGHTS = (tuple(a.tolist()) for a in np.polynomial.hermite_e.hermegauss(40))


def normal_expectation(f):
    """E f(z) for z standard normal, by 40-point Gauss-Hermite quadrature."""
    nodes, weights = np.array(HERMITE_NODES), np.array(HERMITE_WEIGHTS)
    return float(np.sum(weights * f(nodes)) / np.sum(weights))


def confounded_exposure(condition, rng, n):
    """The covariates (see :func:`covariates`) and a standard normal exposure
    x = rho c + sqrt(1 - rho^2) u correlated with their confounder c, rho the
    drawn ``confounding`` with the sign of the dgp's ``exposure_link``. The
    exposure joins the columns on the dgp's ``exposure`` [mean, sd]. Returns
    ``(columns, confounder, x)``."""
    columns, confounder = covariates(condition, rng, n)
    rho = condition.dgp["exposure_link"] * condition.params["confounding"]
    x = rho * confounder + np.sqrt(1.0 - rho * rho) * rng.standard_normal(n)
    mean, sd = condition.dgp["exposure"]
    columns[condition.roles["exposure"]] = mean + sd * x
    return columns, confounder, x


def expected_counts(condition, rng, n):
    """A count regression's design: the covariates and confounded exposure of
    :func:`confounded_exposure`, exposure times uniform on the dgp's ``time``,
    and each row's expected count, rate x time x exp(effect x + the
    confounder's effect). Returns ``(columns, expected)``."""
    dgp, params = condition.dgp, condition.params
    columns, confounder, x = confounded_exposure(condition, rng, n)
    time = rng.uniform(dgp["time"][0], dgp["time"][1], n)
    columns[condition.roles["exposure_time"]] = time
    expected = dgp["rate"] * time * np.exp(dgp.get("direction", 1) * condition.effect_value * x
                                           + params["confounder_effect"] * confounder)
    return columns, expected


def unit_extra(spec, columns, rng):
    """An extra column that is a property of the unit measured repeatedly (the
    column ``spec["per"]`` numbers the units 1, 2, ...): one value drawn per
    unit (related, where the spec says, to the unit's mean of the test column)
    and repeated in each of the unit's rows, in the rows' order of ``columns``."""
    unit = np.asarray(columns[spec["per"]], dtype=int) - 1
    count = int(unit.max()) + 1
    level = draw_extra(spec, count, rng)
    if "relates" in spec:
        target = np.asarray(columns[spec["relates"]["to"]], dtype=float)
        means = np.bincount(unit, weights=target, minlength=count) / np.bincount(unit, minlength=count)
        level = relate(level, means, spec["relates"]["r"], rng)
    return np.asarray(level)[unit]


def finish(condition, rng, columns):
    """Assemble the drawn table from the analysis columns.

    Rows are shuffled (so no column arrives sorted), the extra columns are
    drawn from their specifications (and, when they relate to a test column,
    reordered to follow it, see :func:`relate`; a unit's property once per
    unit, see :func:`unit_extra`), numbers are made doubles, and
    the id column numbers the rows. Columns come out in the order of
    ``condition.columns``. Values are as drawn: :func:`release_table` clips
    them to their plausible ranges.
    """
    n = len(next(iter(columns.values())))
    order = rng.permutation(n)
    table = {}
    for spec in condition.columns:
        name = spec["name"]
        if spec["type"] == "id":
            width = max(3, len(str(n)))
            numbered = (spec.get("prefix", "").replace("%", "%%") + f"%0{width}d\n") * n % tuple(range(1, n + 1))
            table[name] = np.array(numbered.split("\n")[:-1], dtype=object)
            continue
        if spec["type"] in DESIGN_TYPES:  # the family numbers clusters, units and periods 1, 2, ...
            number = np.asarray(columns[name], dtype=int)[order]
            if spec["type"] == "period":
                table[name] = number
                continue
            width = max(2, len(str(int(number.max()))))
            table[name] = np.array([f"{spec.get('prefix', '')}{int(k):0{width}d}" for k in number], dtype=object)
            continue
        if name in columns:
            values = np.asarray(columns[name])[order]
        elif "per" in spec:
            values = unit_extra(spec, columns, rng)[order]
        else:
            values = draw_extra(spec, n, rng)
            if "relates" in spec:
                values = relate(values, np.asarray(columns[spec["relates"]["to"]], dtype=float)[order],
                                spec["relates"]["r"], rng)
        if spec["type"] in ("numeric", "integer"):
            values = np.asarray(values, dtype=float)
        table[name] = values
    return table


def release_table(table, condition, rng):
    """The released table of a drawn one: numbers clipped to their plausible
    range, then the task's perturbation, impossible values first, then blanks.

    ``condition.perturbation`` says what to do (drawn by the factory, see
    :mod:`taskfactory.perturb`); which rows, cells and errors is drawn here.
    """
    out = dict(table)
    for spec in condition.columns:
        if spec["type"] in ("numeric", "integer"):
            out[spec["name"]] = np.clip(out[spec["name"]], spec["range"][0], spec["range"][1])
    plan = condition.perturbation
    if "extreme" in plan:
        inject_impossible(out, plan["extreme"], condition, rng)
    if "missing" in plan:
        blank_cells(out, plan["missing"], condition, rng)
    return out


def row_count(table):
    """The number of rows of a table."""
    return len(next(iter(table.values())))


def clipped_counts(table, columns):
    """How many values of each number column of a drawn table lie outside its
    plausible range: what :func:`release_table` clips."""
    counts = {}
    for spec in columns:
        if spec["type"] in ("numeric", "integer"):
            values = table[spec["name"]]
            counts[spec["name"]] = int(np.count_nonzero((values < spec["range"][0]) | (values > spec["range"][1])))
    return counts


def _spec(condition, name):
    for spec in condition.columns:
        if spec["name"] == name:
            return spec
    raise KeyError(name)


def _as_shown(value, spec):
    digits = spec.get("decimals", 0) if spec["type"] == "numeric" else 0
    return float(f"{value:.{digits}f}")


def impossible_value(value, spec, rng):
    """A recording error for ``value`` that lands outside its plausible range:
    a slipped decimal point, a lost sign, or a missing-value code typed in."""
    lo, hi = spec["range"]
    candidates = [value * 10.0, value * 100.0, value / 10.0, value / 100.0, -value,
                  999.0, 9999.0, -99.0, -999.0, -1.0, 0.0]
    shown = [_as_shown(c, spec) for c in candidates]
    bad = [c for c in shown if c < lo or c > hi]
    if not bad:
        bad = [_as_shown(hi * 10.0 + 9.0, spec)]
    return bad[int(rng.integers(len(bad)))]


def inject_impossible(table, plan, condition, rng):
    """Give ``plan["rows"]`` random rows one impossible value each, in one of
    ``plan["columns"]`` (numeric), in place."""
    columns = plan["columns"]
    arrays = {name: np.array(table[name], dtype=float) for name in columns}
    for row in np.sort(rng.choice(row_count(table), size=plan["rows"], replace=False)):
        name = columns[int(rng.integers(len(columns)))]
        arrays[name][row] = impossible_value(arrays[name][row], _spec(condition, name), rng)
    table.update(arrays)


def _rank_score(values, spec):
    """Each row's position in (0, 1) by the value of a driver column."""
    if spec["type"] == "category":
        levels = list(spec["levels"])
        idx = np.array([levels.index(v) if v in levels else len(levels) // 2 for v in values], dtype=float)
        return (idx + 0.5) / len(levels)
    x = np.asarray(values, dtype=float)
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(len(x))
    return (ranks + 0.5) / len(x)


def blank_cells(table, plan, condition, rng):
    """Blank ``plan["cells"]`` cells of ``plan["columns"]``, in place.

    MCAR: every eligible cell equally likely. MAR: a cell's weight grows with
    the rank of its row on the observed ``driver`` column, by up to a factor
    exp(2 * strength). MNAR: it grows, as much, with the rank of the cell's own
    value in its column. Cells already holding an impossible value are left.
    """
    rows, cols = [], []
    for j, name in enumerate(plan["columns"]):
        spec = _spec(condition, name)
        if spec["type"] in ("numeric", "integer"):
            v = np.asarray(table[name], dtype=float)
            ok = (v >= spec["range"][0]) & (v <= spec["range"][1])
        else:
            ok = np.array([v is not None and v == v for v in table[name]], dtype=bool)
        idx = np.flatnonzero(ok)
        rows.append(idx)
        cols.append(np.full(len(idx), j))
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    weights = np.ones(len(rows))
    if plan["mechanism"] == "MAR":
        score = _rank_score(table[plan["driver"]], _spec(condition, plan["driver"]))
        weights = np.exp(plan["strength"] * (2.0 * score[rows] - 1.0))
    elif plan["mechanism"] == "MNAR":
        own = np.stack([_rank_score(table[name], _spec(condition, name)) for name in plan["columns"]])
        weights = np.exp(plan["strength"] * (2.0 * own[cols, rows] - 1.0))
    pick = rng.choice(len(rows), size=plan["cells"], replace=False, p=weights / weights.sum())
    for j, name in enumerate(plan["columns"]):
        chosen = rows[pick[cols[pick] == j]]
        if not len(chosen):
            continue
        if _spec(condition, name)["type"] in ("numeric", "integer"):
            values = np.array(table[name], dtype=float)
            values[chosen] = np.nan
        else:
            values = np.array(table[name], dtype=object)
            values[chosen] = None
        table[name] = values


def _csv_field(text):
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def column_cells(values, spec):
    """How one column is written: ``(format, values)`` for ``%``-formatting,
    fixed decimals for numbers, a blank for a missing value, a text quoted
    when it holds a comma, a quote or a line end."""
    if spec["type"] in ("numeric", "integer"):
        digits = spec.get("decimals", 0) if spec["type"] == "numeric" else 0
        fmt = f"%.{digits}f"
        x = np.array(values, dtype=float)
        near_zero = np.flatnonzero(np.signbit(x) & (x > -(10.0 ** -digits)))
        for i in near_zero.tolist():
            if fmt % x[i] == "-" + fmt % 0.0:
                x[i] = 0.0   # written 0, not -0
        missing = np.isnan(x)
        if not missing.any():
            return fmt, x
        out = ((fmt + "\n") * len(x) % tuple(x.tolist())).split("\n")[:-1]
        for i in np.flatnonzero(missing).tolist():
            out[i] = ""
        return "%s", out
    texts = np.asarray(values, dtype=object).tolist()
    out = list(map(str, texts))
    if "None" in out or "nan" in out:   # where a value may be missing (None or NaN)
        out = ["" if v is None or v != v else s for v, s in zip(texts, out)]
    if any(c in "".join(out) for c in ',"\n\r'):
        out = [_csv_field(s) for s in out]
    return "%s", out


def to_csv_text(table, columns):
    """The CSV text of ``table`` as released: header, ``\\n`` line ends, UTF-8.
    The rows are written by one ``%`` of a row format over every cell."""
    header = ",".join(_csv_field(spec["name"]) for spec in columns) + "\n"
    n = row_count(table)
    cells = np.empty((n, len(columns)), dtype=object)
    formats = []
    for j, spec in enumerate(columns):
        fmt, values = column_cells(table[spec["name"]], spec)
        formats.append(fmt)
        cells[:, j] = values
    return header + (",".join(formats) + "\n") * n % tuple(cells.ravel().tolist())


def released_csv(drawn, condition, rng):
    """The released CSV text of the ``drawn`` table: released as
    :func:`release_table` releases it (on ``rng``, after the draw), written by
    :func:`to_csv_text`. The one rule a build and an emitted script both follow."""
    return to_csv_text(release_table(drawn, condition, rng), condition.columns)


def column_spec(condition, role):
    """The column specification of the column playing ``role``."""
    return _spec(condition, condition.roles[role])


def survival_times(condition, rng, eta):
    """Right-censored times to an event for linear predictors ``eta`` (one per
    row): a Weibull proportional-hazards time with cumulative hazard
    ``scale * exp(eta) * t ** shape``, censored at the end of follow-up
    (``dgp["follow_up"]`` less a staggered entry, uniform over the first
    ``entry`` share of it) or at a loss to follow-up (exponential with rate
    ``dropout`` per unit of time), whichever comes first. Times are recorded
    at the resolution of the ``time`` column (rounded up to its decimals, so
    never 0) and ties occur. Returns ``(time, event)``, event 1 for the
    event, 0 for a censored time."""
    params, n = condition.params, len(eta)
    latent = (rng.exponential(1.0, n) / (params["scale"] * np.exp(eta))) ** (1.0 / params["shape"])
    admin = condition.dgp["follow_up"] * (1.0 - params["entry"] * rng.random(n))
    lost = rng.exponential(1.0, n) / params["dropout"]
    end = np.minimum(admin, lost)
    step = 10.0 ** -column_spec(condition, "time").get("decimals", 0)
    time = np.maximum(np.ceil(np.minimum(latent, end) / step), 1.0) * step
    return time, (latent <= end).astype(int)
