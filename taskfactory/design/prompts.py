"""The user message an agent receives, in the ``basic`` and ``guided`` styles."""

from __future__ import annotations

STYLES = ("basic", "guided")

WORKFLOW = (
    "Variable EDA: check each variable's type, values and plausible range, and count missing cells.",
    "Distribution EDA: look at the shape of the analysis variables (skew, outliers, ties), by group where there are groups.",
    "Assumption checks: check the assumptions of the candidate tests against what you saw.",
    "Method choice and execution: choose the test whose assumptions hold and run it.",
    "Inference: report the p-value and the decision at the stated alpha.",
)


#: The analysis conventions every gold follows, stated identically in every
#: task with a dataset (perturbed or not, whatever the family or effect).
CONVENTIONS = (
    "Conventions: a value outside its variable's plausible range is a recording error and counts as missing; "
    "analyse complete cases on the variables the test uses. Test two-sided at significance level alpha = {alpha}. "
    "Where a test has exact and large-sample versions, or a continuity correction, follow R's defaults."
)


def _number(x: float) -> str:
    return f"{x:g}"


def dictionary_line(entry: dict) -> str:
    """One data-dictionary bullet: name, type, unit, range or levels, label."""
    kind = {"id": "identifier", "cluster": "cluster identifier", "unit": "unit identifier", "period": "period",
            "numeric": "numeric", "integer": "integer", "category": "categorical"}[entry["type"]]
    facts = [kind]
    if entry.get("unit"):
        facts.append(entry["unit"])
    if entry.get("range") is not None:
        lo, hi = entry["range"]
        facts.append(f"plausible range {_number(lo)} to {_number(hi)}")
    if entry.get("levels"):
        facts.append("levels: " + ", ".join(entry["levels"]))
    return f"- `{entry['name']}` ({'; '.join(facts)}): {entry['label']}"


def render_prompt(*, style: str, context: str, question: str, dictionary: list[dict], data_filename: str | None,
                  n_rows: int | None, alpha: float, hints: list[str], answer_block: str) -> str:
    """The full prompt of one task, ending with the answer kind's block. A
    task without a dataset (``data_filename`` None) carries its numbers in the
    context and question."""
    if data_filename is None:
        return "\n\n".join([context, f"Question: {question}", answer_block]) + "\n"
    parts = [
        context,
        f"Research question: {question}",
        f"The data are in `{data_filename}` ({n_rows} rows). Data dictionary:\n"
        + "\n".join(dictionary_line(e) for e in dictionary),
        CONVENTIONS.format(alpha=_number(alpha)),
        "Choose an appropriate test, run it on the data, and report its result.",
    ]
    if style == "guided":
        if hints:
            parts.append("Hints about these data:\n" + "\n".join(f"- {h}" for h in hints))
        parts.append("Work through the five steps of a careful analysis:\n"
                     + "\n".join(f"{i}. {step}" for i, step in enumerate(WORKFLOW, 1)))
    parts.append(answer_block)
    return "\n\n".join(parts) + "\n"
