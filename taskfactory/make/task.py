"""Making one task: draw the data, release it as CSV, fix the gold on that CSV.

The pipeline for a dataset (shared by its prompt styles) is:

1. derive the task's random streams from the grid seed and its coordinates;
2. draw the family's nuisance parameters and resolve the effect level;
3. ``generate`` the data and format it as the released CSV text;
4. parse the CSV back and run the canonical and the naive tests on it.

A data problem on the way (a :class:`DataError`, a warning, or one of the
family's declared ``retry_on`` exceptions) sends the task to its next attempt
(a fresh stream); after ``MAX_ATTEMPTS`` it is rejected. Any other exception
is a programming error and propagates: it stops the build.
"""

from __future__ import annotations

import hashlib
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd

from .. import kit
from .._version import __version__
from ..condition import Condition
from ..design import perturb
from ..design.catalogue import get_scenario
from ..design.grid import Coord, Grid
from ..design.prompts import render_prompt
from ..errors import DataError
from ..family import Family
from ..registry import get_family
from ..result import TestResult, z_of_p
from ..scenarios import MAX_CLIPPED_SHARE, Scenario
from .analysis import prepare, read_csv_columns, run_test
from .columns import stored_params, stored_roles
from .reference import closed_reference, reference_py, reference_r
from .script import render as render_script, render_behaviour

MAX_ATTEMPTS = 5
#: Held while a dataset is drawn and tested: the warning filters that turn a
#: warning into a retry belong to the whole process, so two threads releasing
#: at once (a threaded backend, a cluster worker with several threads) would
#: reset each other's, and whether a warning rejects a dataset would depend on
#: timing. (The GIL runs one thread's Python at a time anyway.)
RELEASE_LOCK = threading.Lock()


@cache
def _threadpools():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_thread():
    """A context in which the numerical libraries (BLAS, OpenMP) use one
    thread: the datasets are small, and on a few cores the threads of one
    matrix product cost more than they save (iv_2sls at N = 4800 released in
    29 ms with the machine's default, 12 ms with one thread); parallel builds
    run one process per core instead. The limit belongs to the process, and
    leaving restores what was there: :func:`release` enters it for each
    attempt, under RELEASE_LOCK, so threads releasing at once never undo
    each other's (about 9 us each time)."""
    return _threadpools().limit(limits=1)


def data_problems(family) -> tuple[type[Exception], ...]:
    """What a draw of ``family`` raises when its data cannot give a trusted
    gold, rather than because of a bug: a :class:`DataError`, a warning
    (under :func:`warnings_as_errors`) or one of the family's ``retry_on``.
    :func:`release` redraws on them; the clipping probe refuses the scenario."""
    return (DataError, Warning, *family.retry_on)


@contextmanager
def warnings_as_errors():
    """A context in which a warning raises (deprecations excepted), for
    :func:`data_problems` to catch."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for cat in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
            warnings.simplefilter("ignore", cat)
        yield


def data_key(grid: Grid, c: Coord) -> str:
    return f"{grid.seed}|{c.method}|{c.scenario}|{c.n}|{c.effect.key}|{c.perturbation}|{c.seed}"


@dataclass(frozen=True)
class DatasetKey:
    """What the tasks of one drawn dataset share, computed once per dataset:
    its family and scenario, the text its ids hash (:func:`data_key`), its
    data_id and the key of its random stream. data_id hashes every
    coordinate but the prompt style, so the prompt styles of one dataset share
    it (and their stream); a task id adds the style and alpha."""

    family: Family
    scenario: Scenario
    text: str
    data_id: str
    stream: tuple[int, ...]

    def data_stream(self, attempt: int) -> tuple[int, ...]:
        """The spawn key of the data's random stream at ``attempt`` (the
        nuisance parameters' is ``stream + (attempt, 0)``)."""
        return self.stream + (attempt, 1)

    def task_id(self, style: str, alpha: float) -> str:
        return f"{self.family.name}-{hashlib.sha256(f'{self.text}|{style}|{alpha!r}'.encode()).hexdigest()[:12]}"


def dataset_key(grid: Grid, c: Coord) -> DatasetKey:
    """The :class:`DatasetKey` of the dataset of task ``c``."""
    text = data_key(grid, c)
    digest = hashlib.sha256(text.encode()).digest()
    return DatasetKey(get_family(c.method), get_scenario(c.method, c.scenario), text, f"{c.method}-{digest.hex()[:12]}",
                      tuple(int.from_bytes(digest[i:i + 4], "big") for i in range(0, 16, 4)))


def ids(grid: Grid, c: Coord) -> tuple[str, str, tuple[int, ...]]:
    """``(task_id, data_id, stream_key)`` of a task (see :class:`DatasetKey`)."""
    key = dataset_key(grid, c)
    return key.task_id(c.prompt_style, grid.alpha), key.data_id, key.stream


def plain(obj):
    """numpy scalars and tuples to plain Python data, for literals and JSON."""
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


@dataclass
class Dataset:
    """One released dataset with its gold: what the prompt styles share.

    A closed-form task has no dataset: ``csv_text``, ``n_rows`` and ``gold``
    are None and ``answer`` holds the gold fields ``solve`` gave."""

    data_id: str
    attempt: int
    condition: Condition
    csv_text: str | None
    n_rows: int | None
    gold: TestResult | None
    naive: TestResult | None
    kept: TestResult | None
    n_blank_cells: int
    n_impossible_values: int
    reference_r: str
    reference_py: str
    answer: dict | None = None
    hints: tuple[str, ...] = ()
    accepted: tuple[TestResult | None, ...] = ()   # one per family.accepted; None where it cannot run (real data)
    script_behaviour: str | None = None   # the part of the emitted script the prompt styles share
    key: DatasetKey | None = None   # a drawn dataset's (a real one has none)


@dataclass
class Rejected:
    data_id: str
    reasons: list


def _streams(grid: Grid, key: DatasetKey, attempt: int):
    params = np.random.default_rng(np.random.SeedSequence(grid.seed, spawn_key=key.stream + (attempt, 0)))
    return params, key.data_stream(attempt)


def draw_condition(family, scen, n: int, effect, perturbation: str, alpha: float, rng) -> Condition:
    """The condition of one dataset: the family's nuisance parameters and the
    perturbation's plan drawn from ``rng``, the effect level resolved."""
    params = plain(family.draw_params(scen, n, rng)) if family.draw_params else {}
    spoil = plain(perturb.draw(perturbation, family, scen, family.rows(n, params), rng))
    effect_value = effect.value(family, n, params)
    return Condition(method=family.name, roles=dict(scen.roles), n=n, scenario=scen.id, effect=effect.name,
                     effect_value=float(effect_value), params=params, dgp=plain(scen.dgp), columns=scen.columns(),
                     alpha=alpha, data_filename=f"{scen.id}.csv", perturbation=spoil)


def _check_clipping(clipped: dict, rows: int) -> None:
    """Raise DataError when a column's plausible range clips more than
    MAX_CLIPPED_SHARE of its ``rows`` drawn values, and more than one
    (``clipped``: the count by column, :func:`kit.clipped_counts`): such data
    misstate the effect. (One value in a small sample is a share above 1 %,
    but it does not.)"""
    for name, count in clipped.items():
        if count > max(1, MAX_CLIPPED_SHARE * rows):
            raise DataError(f"{count} of {rows} values of '{name}' fell outside its plausible range "
                            "and were clipped")


def _spoiled_counts(columns: dict, family, roles: dict, ranges: dict) -> tuple[int, int]:
    """Blank cells in the test's columns, and out-of-range values anywhere
    (``columns``: the released columns by name, :func:`read_csv_columns`)."""
    blank = sum(int(pd.isna(columns[name]).sum()) for name in family.role_columns(roles))
    impossible = 0
    for name, (lo, hi) in ranges.items():
        col = columns[name]
        impossible += int(np.count_nonzero((col < lo) | (col > hi)))
    return blank, impossible


@dataclass
class Judged:
    """A released CSV analysed as every gold is: its blank and impossible
    cells counted, the canonical handling applied (``data``), the canonical,
    naive and accepted tests run, and the canonical test again with the
    impossible values kept (``kept``; None where there are none, or where
    keeping them breaks the test)."""

    data: pd.DataFrame
    gold: TestResult
    naive: TestResult | None
    accepted: tuple[TestResult | None, ...]
    kept: TestResult | None
    n_blank_cells: int
    n_impossible_values: int


def judge(family, cond: Condition, csv_text: str, ranges: dict, every_test: bool = True) -> Judged:
    """Analyse the released ``csv_text`` of ``cond`` with the plausible ``ranges``
    (a :class:`DataError` where its data cannot give a reliable gold, or,
    with ``every_test``, a naive or accepted test; without it, as on real
    data, a naive or accepted test that cannot run on the data is None)."""
    columns = read_csv_columns(csv_text, list(dict.fromkeys([*family.role_columns(cond.roles), *ranges])))
    blank, impossible = _spoiled_counts(columns, family, cond.roles, ranges)
    data = prepare(family, columns, cond.roles, ranges)
    gold = run_test(family, cond, data, prepared=True)

    def other(which) -> TestResult | None:
        try:
            return run_test(family, cond, data, which=which, prepared=True)
        except DataError:
            if every_test:
                raise
            return None

    naive = other("naive") if family.naive_method else None
    accepted = tuple(other(alt) for alt in family.accepted)
    kept = None
    if impossible:
        try:
            kept = run_test(family, cond, prepare(family, columns, cond.roles), prepared=True)
        except DataError:
            kept = None  # keeping the impossible values breaks the test itself
    return Judged(data=data, gold=gold, naive=naive, accepted=accepted, kept=kept, n_blank_cells=blank,
                  n_impossible_values=impossible)


def release(grid: Grid, c: Coord) -> Dataset | Rejected:
    """Draw, release and analyse the dataset of ``c`` (retrying on failure)."""
    key = dataset_key(grid, c)
    family, scen = key.family, key.scenario
    reasons = []
    for attempt in range(MAX_ATTEMPTS):
        try:
            with RELEASE_LOCK, one_thread(), warnings_as_errors():
                rng_params, data_stream = _streams(grid, key, attempt)
                cond = draw_condition(family, scen, c.n, c.effect, c.perturbation, grid.alpha, rng_params)
                if not family.has_data:
                    return _closed_form(family, cond, key, attempt)
                rng = np.random.default_rng(np.random.SeedSequence(grid.seed, spawn_key=data_stream))
                drawn = family.generate(cond, rng)
                n_rows = kit.row_count(drawn)
                _check_clipping(kit.clipped_counts(drawn, cond.columns), n_rows)
                csv_text = kit.released_csv(drawn, cond, rng)
                ranges = scen.ranges()
                judged = judge(family, cond, csv_text, ranges)
            return Dataset(data_id=key.data_id, attempt=attempt, condition=cond, csv_text=csv_text,
                           n_rows=n_rows, gold=judged.gold, naive=judged.naive, kept=judged.kept,
                           n_blank_cells=judged.n_blank_cells, n_impossible_values=judged.n_impossible_values,
                           reference_r=reference_r(family, cond.roles, ranges, cond.data_filename),
                           reference_py=reference_py(family, cond.roles, ranges, cond.data_filename),
                           hints=tuple(family.hints(cond, judged.data)), accepted=judged.accepted,
                           script_behaviour=render_behaviour(family.generate, cond.literal(), grid.seed, data_stream),
                           key=key)
        except data_problems(family) as exc:
            reasons.append(f"attempt {attempt}: {type(exc).__name__}: {exc}")
    return Rejected(data_id=key.data_id, reasons=reasons)


def _closed_form(family, cond: Condition, key: DatasetKey, attempt: int) -> Dataset:
    """The task of a family without a dataset: its gold from ``solve``."""
    values = {**family.shown_params(cond.params), **cond.roles, "n": cond.n}
    return Dataset(data_id=key.data_id, attempt=attempt, condition=cond, csv_text=None, n_rows=None,
                   gold=None, naive=None, kept=None, n_blank_cells=0, n_impossible_values=0,
                   reference_r=closed_reference(family, values, "r"), reference_py=closed_reference(family, values, "py"),
                   answer=family.solve(cond), key=key)


def record(grid: Grid, c: Coord, ds: Dataset) -> dict:
    """The Parquet row of task ``c`` on its released dataset."""
    family, scen = ds.key.family, ds.key.scenario
    task_id, data_id = ds.key.task_id(c.prompt_style, grid.alpha), ds.key.data_id
    cond = ds.condition
    words = {**family.question_words, **({} if family.has_data else family.shown_params(cond.params))}  # see Family.question_words
    context, question = scen.fill(scen.context, c.n, words), scen.fill(scen.question, c.n, words)
    dictionary = scen.data_dictionary()
    hints = list(ds.hints) + perturb.hints(cond.perturbation)
    data_filename = cond.data_filename if family.has_data else None
    prompt = render_prompt(style=c.prompt_style, context=context, question=question, dictionary=dictionary,
                           data_filename=data_filename, n_rows=ds.n_rows, alpha=grid.alpha, hints=hints,
                           answer_block=family.answer.block)
    outcome = outcome_fields(family, ds, grid.alpha)
    meta = {"task_id": task_id, "data_id": data_id, "method": c.method, "scenario": scen.id, "title": scen.title,
            "factory_version": __version__}
    return {
        "task_id": task_id,
        "data_id": data_id,
        "method": c.method,
        "category": family.category,
        "scenario": scen.id,
        "domain": scen.domain,
        "n": c.n,
        "effect": c.effect.name,
        "effect_value": cond.effect_value,
        "prompt_style": c.prompt_style,
        "perturbation": c.perturbation,
        "perturbation_detail": cond.perturbation,
        "n_blank_cells": ds.n_blank_cells,
        "n_impossible_values": ds.n_impossible_values,
        "seed": c.seed,
        "attempt": ds.attempt,
        "prompt": prompt,
        "question": question,
        "context": context,
        "data_dictionary": dictionary,
        "data_csv": ds.csv_text,
        "data_filename": data_filename,
        "n_rows": ds.n_rows,
        "data_sha256": None if ds.csv_text is None else hashlib.sha256(ds.csv_text.encode("utf-8")).hexdigest(),
        "roles": stored_roles(cond.roles),
        "dgp_params": stored_params(cond.params),
        **outcome,
        "reference_r": ds.reference_r,
        "reference_py": ds.reference_py,
        "script": None if ds.script_behaviour is None else render_script(task_id, meta, ds.script_behaviour),
        "factory_version": __version__,
        "grid_name": grid.name,
        "grid_sha256": grid.sha256,
        "split": c.split,
    }


def outcome_fields(family, ds: Dataset, alpha: float) -> dict:
    """The fields of a task's record that its dataset's analysis fixes: the
    gold answer, the accepted, naive and kept-impossible tests, and the trap."""
    gold, naive, kept = ds.gold, ds.naive, ds.kept
    gold_struct = family.answer.gold(**ds.answer) if gold is None else family.gold(gold, alpha)
    decision = gold_struct["decision"]
    naive_decision = naive.decision(alpha) if naive else None
    kept_decision = kept.decision(alpha) if kept else None
    trap_kinds = [kind for kind, other in (("naive_method", naive_decision), ("impossible_values", kept_decision))
                  if other is not None and other != decision]
    return {
        "answer_kind": family.answer.kind,
        "gold": gold_struct,
        "gold_method": family.canonical if gold is None else gold.method,
        "gold_statistic": None if gold is None else gold.statistic,
        "gold_statistic_name": None if gold is None else gold.statistic_name,
        "gold_df": None if gold is None else list(gold.df),
        "gold_estimate": None if gold is None else gold.estimate,
        "gold_terms": None if gold is None else gold.terms_json(),
        "gold_p": gold_struct["p_value"],
        "gold_z": None if gold_struct["p_value"] is None else z_of_p(gold_struct["p_value"]),
        "gold_decision": decision,
        "accepted": [{"method": alt.method, "r_call": alt.call, "p_value": res.pvalue,
                      "decision": res.decision(alpha)} for alt, res in zip(family.accepted, ds.accepted)
                     if res is not None],
        "alpha": alpha,
        "n_analysed": None if gold is None else gold.n,
        "naive_method": naive.method if naive else None,
        "naive_p": naive.pvalue if naive else None,
        "naive_decision": naive_decision,
        "kept_impossible_p": kept.pvalue if kept else None,
        "kept_impossible_decision": kept_decision,
        "trap": bool(trap_kinds),
        "trap_kinds": trap_kinds,
    }


def reject_entry(grid: Grid, c: Coord, rej: Rejected) -> dict:
    task_id, data_id, _ = ids(grid, c)
    return {"task_id": task_id, "data_id": data_id, "method": c.method, "scenario": c.scenario, "n": c.n,
            "effect": c.effect.name, "perturbation": c.perturbation, "seed": c.seed, "prompt_style": c.prompt_style,
            "split": c.split, "reasons": rej.reasons}
