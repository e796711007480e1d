"""Showing one task as the agent and as the grader see it."""

from __future__ import annotations

import json

from ..make.columns import roles_of


def render_task(task: dict, rows: int = 8) -> str:
    """Agent view (prompt, head of the CSV) then grader view (gold and trap)."""
    rule = "=" * 72
    if task["data_csv"] is None:
        return _render_closed(task, rule)
    head = "".join(task["data_csv"].splitlines(keepends=True)[: rows + 1])
    df = ", ".join(_num(x, ".4g") for x in task["gold_df"] or []) or "-"
    est = _num(task["gold_estimate"], ".6g")
    naive = "-"
    if task["naive_method"]:
        naive = f"{task['naive_method']}: p = {_num(task['naive_p'], '.6g')} ({task['naive_decision']})"
    lines = [
        rule,
        f"TASK {task['task_id']}  (data {task['data_id']}, {task['split']})",
        f"{task['method']} / {task['scenario']} ({task['domain']}), n = {task['n']}, effect {task['effect']} "
        f"= {task['effect_value']:.4g}, {task['prompt_style']}, perturbation {task['perturbation']}, "
        f"seed {task['seed']}, attempt {task['attempt']}",
        rule,
        "AGENT SEES",
        rule,
        task["prompt"].rstrip(),
        "",
        f"--- {task['data_filename']} ({_first_rows(rows, task['n_rows'])}) ---",
        head.rstrip(),
        rule,
        "GRADER SEES",
        rule,
        f"gold method     {task['gold_method']}",
        f"statistic       {task['gold_statistic_name']} = {_num(task['gold_statistic'], '.6g')} (df {df})",
        f"estimate        {est}",
        f"p-value         {_num(task['gold_p'], '.6g')} (z = {_num(task['gold_z'], '.3f')})",
        f"decision        {task['gold_decision']} at alpha = {task['alpha']:g}, {task['n_analysed']} rows analysed",
        f"naive           {naive}",
        f"trap            {'yes' if task['trap'] else 'no'}",
        f"roles           {json.dumps(roles_of(task['roles']), ensure_ascii=False)}",
        "",
        "reference (R):",
        task["reference_r"].rstrip(),
    ]
    return "\n".join(lines) + "\n"


def _first_rows(rows: int, total: int | None) -> str:
    return f"first {rows} rows" if total is None else f"first {min(rows, total)} of {total} rows"


def _num(value, spec: str) -> str:
    """``value`` formatted with ``spec``, or "-" when it is missing."""
    return "-" if value is None else format(value, spec)


def _render_closed(task: dict, rule: str) -> str:
    """A task without a dataset: its prompt, then its gold answer."""
    gold = {k: v for k, v in task["gold"].items() if v is not None and k != "kind"}
    lines = [
        rule,
        f"TASK {task['task_id']}  ({task['split']})",
        f"{task['method']} / {task['scenario']} ({task['domain']}), n = {task['n']}, {task['prompt_style']}, "
        f"seed {task['seed']}",
        rule, "AGENT SEES", rule,
        task["prompt"].rstrip(),
        rule, "GRADER SEES", rule,
        f"answer          {task['answer_kind']}: " + ", ".join(f"{k} = {v}" for k, v in gold.items()),
        f"reference       {task['gold_method']}",
        "",
        "reference (R):",
        task["reference_r"].rstrip(),
    ]
    return "\n".join(lines) + "\n"


def task_json(task: dict) -> str:
    return json.dumps(task, indent=1, ensure_ascii=False)
