"""Reference solutions: R and Python code that reads a task's CSV and prints its gold.

Both apply the canonical handling first (a value outside its plausible range is
missing; complete cases on the test's columns), then run the family's code, and
end by printing ``P_VALUE: <p>``.
"""

from __future__ import annotations

import re

from ..family import number_literal

ROLE_FIELD = re.compile(r"\{([a-z][a-z0-9_]*)\}")


def fill(template: str, roles: dict, lang: str) -> str:
    """Replace ``{role}`` fields (and only those) by the role's column or value."""
    def sub(m):
        key = m.group(1)
        if key not in roles:
            return m.group(0)
        value = roles[key]
        if isinstance(value, dict):  # stated shares: a named vector in R, a dict in Python
            if lang == "py":
                return repr({str(k): float(v) for k, v in value.items()})
            return "c(" + ", ".join(f'"{k}" = {float(v)!r}' for k, v in value.items()) + ")"
        if isinstance(value, list):  # covariates: terms of an R formula (1 when there are none), a list in Python
            return (" + ".join(value) or "1") if lang == "r" else repr(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return repr(float(value)) if lang == "py" else f"{value!r}"
        return str(value)
    return ROLE_FIELD.sub(sub, template)


def handling_r(family, roles: dict, ranges: dict) -> list[str]:
    """R lines applying the canonical handling to ``d``: a value of a test
    column outside its plausible range is missing, then complete cases on the
    test's columns. The same rule as :func:`taskfactory.make.analysis.prepare`."""
    cols = family.role_columns(roles)
    lines = []
    for col in cols:
        if col in ranges:
            lo, hi = ranges[col]
            lines.append(f"d${col}[!is.na(d${col}) & (d${col} < {number_literal(lo)} | d${col} > {number_literal(hi)})] <- NA"
                         "  # outside the plausible range")
    lines.append("d <- d[complete.cases(d[, c(" + ", ".join(f'"{c}"' for c in cols) + ")]), ]")
    return lines


def handling_py(family, roles: dict, ranges: dict) -> list[str]:
    """The Python lines of :func:`handling_r`, for pandas."""
    cols = family.role_columns(roles)
    lines = []
    for col in cols:
        if col in ranges:
            lo, hi = ranges[col]
            lines.append(f'd.loc[(d["{col}"] < {number_literal(lo)}) | (d["{col}"] > {number_literal(hi)}), "{col}"] = float("nan")'
                         "  # outside the plausible range")
    lines.append(f"d = d.dropna(subset={cols!r})")
    return lines


def closed_reference(family, values: dict, lang: str) -> str:
    """The reference solution of a closed-form task: the family's code with
    the task's numbers filled in; it prints the answer."""
    code = family.r_code if lang == "r" else family.py_code
    return "\n".join([f"# Reference answer: {family.title}", f"# R: {family.canonical}", fill(code, values, lang)]) + "\n"


def reference_r(family, roles: dict, ranges: dict, data_filename: str) -> str:
    lines = [f"# Canonical analysis: {family.title_for(roles)}", f"# R call: {family.canonical_for(roles)}",
             f'd <- read.csv("{data_filename}", na.strings = "")']
    lines += handling_r(family, roles, ranges)
    lines.append(fill(family.code_for(roles, "r"), roles, "r"))
    lines.append("print(res)")
    lines.append(f'cat(sprintf("P_VALUE: %.10g\\n", {family.r_pvalue_for(roles)}))')
    return "\n".join(lines) + "\n"


def reference_py(family, roles: dict, ranges: dict, data_filename: str) -> str:
    lines = [f"# Canonical analysis: {family.title_for(roles)}", f"# R call: {family.canonical_for(roles)}",
             "import pandas as pd", "",
             f'd = pd.read_csv("{data_filename}", keep_default_na=False, na_values=[""])']
    lines += handling_py(family, roles, ranges)
    lines.append(fill(family.code_for(roles, "py"), roles, "py"))
    lines.append('print(f"P_VALUE: {p_value:.10g}")')
    return "\n".join(lines) + "\n"
