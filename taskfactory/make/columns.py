"""The columns of a task's record: their Arrow types and meanings, and how
a condition's roles and drawn parameters are stored in them."""

from __future__ import annotations

import numbers

import pyarrow as pa

S, I, F, B = pa.string(), pa.int32(), pa.float64(), pa.bool_()
ACCEPTED = pa.list_(pa.struct([("method", S), ("r_call", S), ("p_value", F), ("decision", S)]))
DICTIONARY = pa.list_(pa.struct([("name", S), ("label", S), ("type", S), ("unit", S), ("range", pa.list_(F)),
                                 ("decimals", I), ("levels", pa.list_(S))]))
PERTURBATION = pa.struct([
    ("kind", S),
    ("missing", pa.struct([("mechanism", S), ("rate", F), ("cells", I), ("columns", pa.list_(S)), ("driver", S),
                           ("strength", F)])),
    ("extreme", pa.struct([("rate", F), ("rows", I), ("columns", pa.list_(S))])),
])
TERMS = pa.list_(pa.struct([("term", S), ("estimate", F), ("std_error", F), ("statistic", F), ("df", F),
                            ("p_value", F), ("target", B)]))
PARAMS = pa.list_(pa.struct([("name", S), ("value", F), ("values", pa.list_(F))]))
#: How ``roles`` stores a role's value, by what it holds (``family.ROLE_HOLDS``):
#: a column's or level's name, a list of column names, a number, or stated
#: shares as (level, share) pairs in the scenario's order.
ROLE_TYPES = {"name": S, "names": pa.list_(S), "number": F,
              "shares": pa.list_(pa.struct([("level", S), ("share", F)]))}
GOLD = pa.struct([("kind", S), ("p_value", F), ("decision", S), ("estimate", F), ("low", F), ("high", F),
                  ("integer", pa.int64()), ("yes_no", B)])

#: Every column: name, Arrow type, nullable, meaning. The type of ``roles``
#: depends on the registered families, so it is None here and
#: :func:`fields` fills it in (:func:`roles_type`).
FIELDS = [
    ("task_id", S, False, "stable id: <method>-<12 hex> of the task's coordinates"),
    ("data_id", S, False, "id of the dataset, shared by its prompt styles"),
    ("method", S, False, "method family (taskfactory methods)"),
    ("category", S, False, "broader category of the method"),
    ("scenario", S, False, "scenario id (taskfactory scenarios METHOD)"),
    ("domain", S, False, "field the scenario comes from"),
    ("n", I, False, "rows drawn"),
    ("effect", S, False, "effect level: null, borderline, medium or a grid-defined level"),
    ("effect_value", F, False, "true effect in the data-generating process, in the family's unit"),
    ("prompt_style", S, False, "basic or guided"),
    ("perturbation", S, False, "none, missing, missing_mnar, extreme, missing+extreme or missing_mnar+extreme"),
    ("perturbation_detail", PERTURBATION, False, "what was spoiled: kind; missing (mechanism MCAR/MAR/MNAR, rate, "
                                                 "cells, columns, driver column, strength); extreme (rate, rows, columns)"),
    ("n_blank_cells", I, False, "blank cells in the test's columns of data_csv"),
    ("n_impossible_values", I, False, "values outside their plausible range in data_csv"),
    ("seed", I, False, "replicate index within the cell"),
    ("attempt", I, False, "attempt of the task's random stream that succeeded"),
    ("prompt", S, False, "the full user message an agent receives"),
    ("question", S, False, "the research question"),
    ("context", S, False, "the background paragraph"),
    ("data_dictionary", DICTIONARY, False, "one entry per column: name, label, type, unit, plausible range, "
                                               "decimals, levels"),
    ("data_csv", S, True, "the dataset exactly as released (null for a question without a dataset)"),
    ("data_filename", S, True, "file name the prompt gives the dataset"),
    ("n_rows", I, True, "rows in data_csv"),
    ("data_sha256", S, True, "sha256 of data_csv (UTF-8)"),
    ("roles", None, False, "which column plays which part of the test: one field per role name of the "
                           "registered families (null where the method has no such role) holding a column name, "
                           "a list of column names (covariates), a reference number (mu0, p0), a level "
                           "(positive) or the stated shares as (level, share) pairs"),
    ("dgp_params", PARAMS, False, "nuisance parameters drawn for this dataset, by name: a number in value or a "
                                  "list of numbers in values (a mapping's entries named name.key, a matrix's "
                                  "rows name[i])"),
    ("answer_kind", S, False, "what the task asks for: p_value, estimate, interval, integer, count or yes_no"),
    ("gold", GOLD, False, "the gold answer: kind and the fields of that kind (p_value and decision; estimate; "
                          "low and high; integer; yes_no), the others null"),
    ("gold_method", S, False, "the canonical test, as R names it"),
    ("gold_statistic", F, True, "the statistic R reports"),
    ("gold_statistic_name", S, True, "its name in R's output (t, W, V, F, X-squared, S ...)"),
    ("gold_df", pa.list_(F), True, "degrees of freedom (empty for exact and z tests)"),
    ("gold_estimate", F, True, "effect estimate R reports, when it reports one"),
    ("gold_terms", TERMS, True, "the model's table of terms (term, estimate, std_error, statistic, df, "
                                "p_value, target: the term the question is about), when the test is about one "
                                "term of a model"),
    ("gold_p", F, True, "gold p-value (agrees with R: |dz| < 0.01), when the answer has one"),
    ("gold_z", F, True, "min(Phi^-1(1 - p/2), 8), when the answer has a p-value"),
    ("gold_decision", S, True, "reject or fail to reject, at alpha, when the answer has a p-value"),
    ("accepted", ACCEPTED, False, "tests experts accept as equally right on these data (never the naive test): "
                                  "method as R names it, R call, p-value and decision; an answer naming one is "
                                  "graded against it"),
    ("alpha", F, False, "significance level"),
    ("n_analysed", I, True, "rows the canonical test used"),
    ("naive_method", S, True, "the tempting wrong test"),
    ("naive_p", F, True, "its p-value"),
    ("naive_decision", S, True, "its decision"),
    ("kept_impossible_p", F, True, "the canonical test's p with the impossible values kept (when there are any)"),
    ("kept_impossible_decision", S, True, "its decision"),
    ("trap", B, False, "a tempting analysis (naive test, or keeping impossible values) decides otherwise"),
    ("trap_kinds", pa.list_(S), False, "which: naive_method, impossible_values"),
    ("reference_r", S, False, "R code that reads the CSV and prints the gold p-value"),
    ("reference_py", S, False, "Python code that reads the CSV and prints the gold p-value"),
    ("script", S, True, "standalone numpy script that writes data_csv byte for byte (null without a dataset)"),
    ("factory_version", S, False, "taskfactory version"),
    ("grid_name", S, False, "name of the grid"),
    ("grid_sha256", S, False, "sha256 of the normalised grid"),
    ("split", S, False, "train or test (held-out scenarios)"),
]

def roles_type() -> pa.StructType:
    """The type of ``roles``: a struct with one field per role name of the
    registered families, in name order, typed by what the role holds. Every
    corpus of one taskfactory version has the same one."""
    from ..family import ROLE_HOLDS
    from ..registry import families

    holds = {role: ROLE_HOLDS[kind] for family in families() for role, kind in family.roles.items()}
    return pa.struct([(role, ROLE_TYPES[holds[role]]) for role in sorted(holds)])


def is_roles_type(typ: pa.DataType) -> bool:
    """Whether ``typ`` is a ``roles`` struct (of any set of role names), which a
    reader can check without loading the registry."""
    return pa.types.is_struct(typ) and all(typ.field(i).type in ROLE_TYPES.values() for i in range(typ.num_fields))


def fields() -> list[tuple]:
    """:data:`FIELDS` with the type of ``roles`` filled in (see :func:`roles_type`)."""
    roles = roles_type()
    return [(name, roles if typ is None else typ, nullable, desc) for name, typ, nullable, desc in FIELDS]


def stored_roles(roles: dict) -> dict:
    """A condition's ``roles`` as the record stores them: stated shares as
    (level, share) pairs; role names the method lacks are left out (null)."""
    return {role: [{"level": str(level), "share": float(share)} for level, share in value.items()]
            if isinstance(value, dict) else float(value) if _is_number(value) else value
            for role, value in roles.items()}


def roles_of(stored: dict) -> dict:
    """The roles a record's ``roles`` struct holds, as a condition gives them:
    the roles the task has (no null fields), stated shares as a mapping of
    level to share (the inverse of :func:`stored_roles`)."""
    return {role: {pair["level"]: pair["share"] for pair in value}
            if isinstance(value, list) and value and isinstance(value[0], dict) else value
            for role, value in stored.items() if value is not None}


def drawn_params(stored: list[dict]) -> dict:
    """A record's ``dgp_params`` by name: the number, or the list of numbers
    (nested parameters keep their ``name.key`` and ``name[i]`` names)."""
    return {p["name"]: p["values"] if p["value"] is None else p["value"] for p in stored}


def stored_params(params: dict) -> list[dict]:
    """Drawn parameters as the record stores them, in name order: a number in
    ``value``, a list of numbers in ``values``; a mapping's entries are named
    ``name.key`` and the rows of a matrix ``name[i]``, in their order.
    Anything else is a family's mistake (a ValueError)."""
    return [entry for name in sorted(params) for entry in _flat_param(name, params[name])]


def _flat_param(name: str, value) -> list[dict]:
    if _is_number(value):
        return [{"name": name, "value": float(value), "values": None}]
    if isinstance(value, (list, tuple)) and all(_is_number(v) for v in value):
        return [{"name": name, "value": None, "values": [float(v) for v in value]}]
    if isinstance(value, dict):
        return [entry for key, v in value.items() for entry in _flat_param(f"{name}.{key}", v)]
    if isinstance(value, (list, tuple)):
        return [entry for i, v in enumerate(value) for entry in _flat_param(f"{name}[{i}]", v)]
    raise ValueError(f"drawn parameter '{name}' is {value!r}; parameters are numbers, lists of numbers, "
                     "or mappings and lists of these")


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)
