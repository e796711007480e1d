"""Real-data tasks: a dataset, a question and a method in, a task with an R-exact gold out.

``taskfactory import SPEC -o DIR`` reads a spec (YAML, or JSONL of items) in
which each item names a CSV file beside it, its context and question, the
family whose canonical test answers the question and the columns that play
its roles; optionally the columns' plausible ranges, a data dictionary, the
significance level, the split and the data's source. Every problem of a spec
is reported in one line (:class:`SpecError`, exit 2) before anything is
written.

Each item becomes one task per prompt style, in the corpus schema, so that
``score``, ``agent-eval``, ``export``, ``report``, ``leakage`` and ``verify``
take the corpus as they take a built one. What differs is marked:

- ``effect`` is ``real`` and ``effect_value`` NaN (the truth is unknown);
  there is no generating process, so no ``script`` and no ``dgp_params``;
- ``scenario`` is the item's id, ``grid_name`` and ``grid_sha256`` the
  spec's name and sha256, and ``manifest.json`` says ``"origin": "real"``
  and holds the spec, each item with the sha256 of its source file and of
  the CSV as released, and its source (citation, licence, address);
- the released CSV is the file's text with its line endings made LF and a
  byte-order mark left out, the cells as written;
- a column the data dictionary does not describe is described from its
  values, and its label says so (:data:`INFERRED`).

The gold, the naive and accepted tests, the hints of the guided prompt and
the reference solutions come from the family's canonical handling of the
released CSV, by the rules a built task's come from (:func:`taskfactory.make.task.judge`,
:func:`~taskfactory.make.task.outcome_fields`); ``verify`` re-derives every
record from the spec in the manifest and the CSV in the record.
"""

from __future__ import annotations

import csv as csv_module
import dataclasses
import hashlib
import io
import json
import keyword
import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd

from .._version import __version__
from ..condition import Condition
from ..design.prompts import STYLES, render_prompt
from ..errors import DataError, InputError, TaskFactoryError, did_you_mean
from ..folders import check_new_folder, staged
from ..make.analysis import NUMBER_KINDS, complete_roles, prepare, read_csv_columns
from ..make.columns import stored_roles
from ..make.reference import reference_py, reference_r
from ..make.task import Dataset, data_problems, judge, one_thread, outcome_fields, warnings_as_errors
from ..methods._factor import LEVELS
from ..readers import decode, parse_json, parse_yaml, read_text
from ..registry import families, family_names, get_family
from ..scenarios import LEVEL, TYPES, _is_number_text
from ..validation import Problems, path_text, translate, worded
from . import corpus
from .shards import write_shard

#: What ``effect`` says of a real task, and ``manifest.json``'s ``origin`` of a corpus of them.
REAL = corpus.ORIGIN_REAL
#: The largest spec file, and the largest data file an item names.
MAX_SPEC_BYTES = 16 << 20
MAX_DATA_BYTES = 64 << 20
MAX_ITEMS = 10_000
ID = re.compile(r"[a-z0-9][a-z0-9_]{0,63}")
#: The name of a data file: the reference code reads the file by it.
FILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}\.csv")
#: A column a role or a range names: it enters the R and Python reference code as it is written.
COLUMN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
R_RESERVED = frozenset("if else repeat while function for next break TRUE FALSE NULL Inf NaN NA NA_integer_ "
                       "NA_real_ NA_character_ in".split())
#: The words Python reserves: a column so named breaks a formula of the Python reference (patsy reads it as Python).
PY_RESERVED = frozenset(keyword.kwlist)
#: A Python reference that writes a model formula.
PY_FORMULA = re.compile(r"\bsmf\.|\bfrom_formula\b|\bformula\b")
#: The label of a column the data dictionary does not describe.
INFERRED = "not described by the source; its type is read from the values"
#: The most distinct values a text column may have to be described as a category.
MAX_LEVELS = 30


class SpecError(InputError):
    """A real-data spec is malformed, or an item's data cannot give its task."""


@lru_cache(maxsize=1)
def spec_model():
    """The pydantic model of a spec file: its keys, the type of each, and
    what each means (``taskfactory schema import`` prints it as JSON Schema).
    What depends on the data and the families :func:`load_spec` checks."""
    from typing import Annotated, Any, Literal

    from pydantic import BaseModel, ConfigDict, Field, Strict, StrictStr

    Text = Annotated[StrictStr, Field(min_length=1, pattern=r"\S"), worded("must be non-empty text, got {got}")]

    class Column(BaseModel):
        """What one column holds."""

        model_config = ConfigDict(extra="forbid")
        label: Text = Field(description="What the column holds, in words.")
        type: Annotated[Literal[TYPES], worded(f"unknown type {{got}}; allowed: {', '.join(TYPES)}")] = Field(
            description="numeric, integer, category, or a design column: id, cluster, unit or period.")
        unit: StrictStr = Field(None, description="Unit of measurement.")
        levels: list[StrictStr] = Field(None, description="A category's levels, in a meaningful order.")

    class Source(BaseModel):
        """Where the data come from."""

        model_config = ConfigDict(extra="forbid")
        citation: Text = Field(description="The publication or package the data come from.")
        licence: Text = Field(description="The licence the data are distributed under.")
        url: StrictStr = Field(None, description="Where they can be found.")

    Number = Annotated[float, Strict(), worded("must be a number, got {got}")]

    class Item(BaseModel):
        """One analysis: a dataset, a question and the family whose canonical test answers it."""

        model_config = ConfigDict(extra="forbid")
        id: Annotated[StrictStr, Field(pattern=f"^{ID.pattern}$"),
                      worded("must be lower-case letters, digits and underscores (at most 64), got {got}")] = Field(
            description="Unique id of the item; the tasks' scenario.")
        data: Text = Field(description="The CSV file, relative to the spec's folder and inside it.")
        method: Text = Field(description="The family whose canonical test answers the question (taskfactory "
                                         "methods).")
        roles: dict[StrictStr, Any] = Field(description="The family's roles: column names, a list of column "
                                                        "names, a number, a level or stated shares.")
        context: Text = Field(description="The background an analyst reads: the study, how the data were "
                                          "collected, units.")
        question: Text = Field(description="The research question, neutral about the test.")
        domain: Text = Field("real data", description="The field the data come from.")
        ranges: dict[StrictStr, Annotated[list[Number], Field(min_length=2, max_length=2)]] = Field(
            None, description="Plausible [low, high] of numeric columns; a value outside is a recording error.")
        data_dictionary: dict[StrictStr, Column] = Field(
            None, description="What each column holds; a column left out is described from its values.")
        alpha: Annotated[float, Strict(), Field(gt=0, lt=0.5), worded("must be a number in (0, 0.5), got {got}")] = \
            Field(None, description="Significance level; the spec's by default.")
        split: Annotated[Literal[corpus.SPLITS], worded("must be train or test, got {got}")] = Field(
            "test", description="The split the item's tasks go to.")
        source: Source | None = Field(None, description="Where the data come from.")

    class SpecFile(BaseModel):
        """A taskfactory real-data spec: items, each a dataset, a question and a method."""

        model_config = ConfigDict(extra="forbid", title="taskfactory real-data spec")
        name: Annotated[StrictStr, Field(pattern=r"^[\w.-]{1,100}$"),
                        worded("must be a name of letters, digits, '.', '-' and '_', got {got}")] = Field(
            None, description="Name of the set and its corpus; by default the file name without its suffix.")
        alpha: Annotated[float, Strict(), Field(gt=0, lt=0.5), worded("must be a number in (0, 0.5), got {got}")] = \
            Field(0.05, description="Significance level of every item that gives none.")
        prompt_styles: list[Literal[STYLES]] = Field(list(STYLES), min_length=1,
                                                     description="The prompt styles of each item's tasks.")
        items: Annotated[list[Item], Field(min_length=1, max_length=MAX_ITEMS),
                         worded(f"must be a list of 1 to {MAX_ITEMS} items")] = Field(description="The analyses.")

    return SpecFile


@dataclass(frozen=True)
class RealItem:
    """One item of a spec, as the manifest keeps it: everything its tasks are
    made of but the CSV, and the sha256 of the CSV as released (``csv_sha256``)
    and of the file it came from (``file_sha256``)."""

    id: str
    data: str
    method: str
    roles: dict
    context: str
    question: str
    domain: str
    ranges: dict
    data_dictionary: dict
    alpha: float
    split: str
    source: dict | None
    csv_sha256: str
    file_sha256: str

    @property
    def data_filename(self) -> str:
        return PurePosixPath(self.data).name


@dataclass(frozen=True)
class RealSpec:
    """A validated spec: its name, prompt styles and items, with the text of
    each item's CSV and the analysis of it that loading made."""

    name: str
    prompt_styles: tuple
    items: tuple
    csv: dict   # item id: the released CSV text
    analysed: dict = dataclasses.field(default_factory=dict, compare=False)   # item id: its Dataset (analyse_item)

    def normalized(self) -> dict:
        """The spec as ``manifest.json`` holds it."""
        return {"origin": REAL, "name": self.name, "prompt_styles": list(self.prompt_styles),
                "items": [item.__dict__ for item in self.items]}

    @property
    def sha256(self) -> str:
        return spec_sha256(self.normalized())


def spec_sha256(normalized: dict) -> str:
    return hashlib.sha256(json.dumps(normalized, sort_keys=True).encode("utf-8")).hexdigest()


# --- reading a spec ----------------------------------------------------------------

def _raw_items(path: Path, text: str):
    """The spec's mapping: a YAML file as it is, a JSONL file as its items."""
    if path.suffix == ".jsonl":
        lines = [(i, line) for i, line in enumerate(text.splitlines(), 1) if line.strip()]
        return {"items": [parse_json(line, f"{path} line {i}", SpecError) for i, line in lines]}
    return parse_yaml(text, str(path), SpecError)


def _where(loc: tuple) -> str | None:
    """Where ``loc`` is in a spec: ``items[2].roles``, or ``key 'name'`` at the top."""
    if not loc:
        return None
    return f"key '{loc[0]}'" if len(loc) == 1 else path_text(loc)


def released_csv(data: bytes, where: str) -> str:
    """A data file's text as released: UTF-8 without a byte-order mark, LF line endings."""
    text = decode(data, where, SpecError, "data file").removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _quoted(text: str) -> str:
    """``text`` in quotes for a one-line message: as it is when it is printable
    and holds no quote, else its repr (shortened)."""
    return f"'{text}'" if text.isprintable() and "'" not in text else corpus.shown(text)


def _listed(names) -> str:
    """Column names, comma-separated, each as it is when plain, else quoted (:func:`_quoted`)."""
    return ", ".join(name if COLUMN.fullmatch(name) else _quoted(name) for name in names)


def _data_file(folder: Path, name: str, where: str) -> bytes:
    """The bytes of the data file ``name``: relative to ``folder`` and inside it
    (after following links), a regular file of at most :data:`MAX_DATA_BYTES`."""
    relative = PurePosixPath(name)
    data = f"data {_quoted(name)}"
    if "\0" in name:
        raise SpecError(f"{where}: {data} holds a NUL character; it cannot name a file")
    if relative.is_absolute() or "\\" in name or not name.strip():
        raise SpecError(f"{where}: {data} must be a path relative to the spec's folder")
    path = folder / relative
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError, ValueError):
        raise SpecError(f"{where}: {data} does not exist") from None
    if folder.resolve() not in resolved.parents:
        raise SpecError(f"{where}: {data} lies outside the spec's folder")
    if not FILE.fullmatch(relative.name):
        raise SpecError(f"{where}: {data} must name a .csv file of letters, digits, '_', '.' and '-'")
    if not resolved.is_file():
        raise SpecError(f"{where}: {data} is not a file")
    if resolved.stat().st_size > MAX_DATA_BYTES:
        raise SpecError(f"{where}: {data} is larger than {MAX_DATA_BYTES >> 20} MB")
    return resolved.read_bytes()


def load_spec(path) -> RealSpec:
    """Read and validate the spec at ``path`` and each item's data file; every
    problem found is reported in one :class:`SpecError` line."""
    from pydantic import ValidationError

    path = Path(path)
    raw = _raw_items(path, read_text(path, SpecError, "spec", limit=MAX_SPEC_BYTES))
    problems = Problems(str(path), SpecError)
    model = spec_model()
    try:
        spec = model.model_validate(raw)
    except ValidationError as exc:
        for error in exc.errors(include_url=False):
            problems.add(*translate(error, model, _where, "the spec must be a YAML mapping with a list of items"))
        problems.raise_any()
    items, csv, analysed, seen = [], {}, {}, set()
    for i, given in enumerate(spec.items):
        where = f"items[{i}] ({given.id})"
        if given.id in seen:
            problems.add(f"the id '{given.id}' is used twice", where)
            continue
        seen.add(given.id)
        try:
            item, text, ds = _item(given, path.parent, spec.alpha, where)
        except TaskFactoryError as exc:
            problems.add(str(exc).removeprefix(f"{where}: "), where)
            continue
        items.append(item)
        csv[item.id], analysed[item.id] = text, ds
    problems.raise_any()
    return RealSpec(name=spec.name or path.stem, prompt_styles=tuple(dict.fromkeys(spec.prompt_styles)),
                    items=tuple(items), csv=csv, analysed=analysed)


def _item(given, folder: Path, alpha: float, where: str) -> tuple[RealItem, str, Dataset]:
    """An item checked against its family and data, its released CSV text and
    the analysis of it (:func:`analyse_item`)."""
    with_data = [f.name for f in families() if f.has_data]
    if given.method not in with_data:
        what = "asks a question without a dataset" if given.method in family_names() else \
            f"is not a method{did_you_mean(given.method, with_data)}"
        raise SpecError(f"{where}: '{given.method}' {what}; a real dataset takes one of {', '.join(with_data)}")
    family = get_family(given.method)
    raw = _data_file(folder, given.data, where)
    data = f"data {_quoted(given.data)}"
    text = released_csv(raw, f"{where}: {data}")
    roles = complete_roles(family, given.roles)
    _check_given(family, roles, where)
    _check_names(family, roles, given.ranges or {})
    try:
        header = list(read_csv_columns(text))
        names = next(csv_module.reader(io.StringIO(text)), [])   # the header as written: a repeated name too
    except Exception as exc:   # Arrow's reader (or csv's, of the header) says what it could not read
        raise SpecError(f"{where}: {data} is not a readable CSV file "
                        f"({' '.join(str(exc).split())[:200]})") from None
    repeated = next((name for name, count in Counter(names).items() if count > 1), None)
    if repeated is not None:
        raise SpecError(f"{where}: {data} has the column {_quoted(repeated)} more than once")
    for name in [*family.role_columns(roles), *(given.ranges or {}), *(given.data_dictionary or {})]:
        if name not in header:
            raise SpecError(f"{where}: the column {_quoted(name)} is not in {data}; it has {_listed(header)}")
    for name, (low, high) in (given.ranges or {}).items():
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise SpecError(f"{where}: the range of '{name}' must be [low, high] with finite low < high")
    item = RealItem(id=given.id, data=given.data, method=given.method, roles=roles, context=given.context.strip(),
                    question=given.question.strip(), domain=given.domain,
                    ranges={k: [float(v) for v in r] for k, r in (given.ranges or {}).items()},
                    data_dictionary={k: v.model_dump(exclude_none=True) for k, v in
                                     (given.data_dictionary or {}).items()},
                    alpha=float(given.alpha if given.alpha is not None else alpha), split=given.split,
                    source=given.source.model_dump(exclude_none=True) if given.source else None,
                    csv_sha256=_sha256(text), file_sha256=hashlib.sha256(raw).hexdigest())
    return item, text, analyse_item(item, text)   # the data must give the gold


def _check_names(family, roles: dict, ranges: dict) -> None:
    """The columns the roles and ranges name, and the levels they name, are
    names the reference code can hold as written (:data:`COLUMN`, not a word
    R or Python reserves; a level as a scenario's: :data:`~taskfactory.scenarios.LEVEL`)."""
    for name in [*family.role_columns(roles), *ranges]:
        if not isinstance(name, str) or not COLUMN.fullmatch(name) or name in R_RESERVED:
            raise SpecError(f"the column name {name!r} must be a letter then letters, digits or '_' (at most 64) "
                            "and not a word R reserves; rename it in the CSV")
        if name in PY_RESERVED and name in _formula_columns(family, roles):
            raise SpecError(f"the column name {name!r} is a word Python reserves, and the Python reference code "
                            f"of {family.name} writes it into a formula; rename it in the CSV")
    for role, kind in family.roles.items():
        levels = [roles[role]] if kind == "level" else list(roles[role]) if kind == "shares" else []
        for level in levels:
            if not LEVEL.fullmatch(str(level)):
                raise SpecError(f"role '{role}' names the level {level!r}, which must match {LEVEL.pattern}")


def _check_given(family, roles: dict, where: str) -> None:
    """A spec gives no role the data give (the levels of a factor exposure, :meth:`Family.roles_for_data`)."""
    if roles.get(LEVELS) is not None:
        raise SpecError(f"{where}: role '{LEVELS}' is read from the data (the levels of a factor "
                        f"'{family.factor_role}'); leave it out")


def data_design(normalized: dict, item_id: str, text: str) -> tuple[dict, dict]:
    """:func:`checked_design`'s roles and ranges of an item, the roles with
    what its released CSV ``text``, analysed, adds to them (as the import
    adds it, :meth:`Family.roles_for_data`)."""
    roles, ranges = checked_design(normalized, item_id)
    family = get_family(item_of(normalized, item_id).method)
    try:
        columns = read_csv_columns(text, [*family.role_columns(roles), *ranges])
    except Exception as exc:   # Arrow's reader says what it could not read
        raise SpecError(f"item {corpus.shown(item_id)}: its released CSV is not a CSV of the columns its spec "
                        f"names ({' '.join(str(exc).split())[:200]})") from None
    return family.roles_for_data(roles, prepare(family, columns, roles, ranges)), ranges


def _formula_columns(family, roles: dict) -> set:
    """The columns that the family's Python reference for ``roles`` may write
    into a model formula: where it writes one, those of every role it names
    other than as ``d["column"]``."""
    code = "\n".join(line for line in family.code_for(roles, "py").splitlines() if not line.lstrip().startswith("#"))
    if not PY_FORMULA.search(code):
        return set()
    return {column for role in family.roles if "{" + role + "}" in code.replace(f'd["{{{role}}}"]', "")
            for column in family.role_columns({role: roles.get(role)})}


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- the tasks of an item ------------------------------------------------------------

def data_dictionary(item: RealItem, text: str) -> list[dict]:
    """The data dictionary of the released CSV: the spec's entry of each
    column where it gives one, else one read from the values (a column of
    numbers is integer or numeric, other text a category of its levels when it
    has at most :data:`MAX_LEVELS`, else an identifier), with the item's
    plausible ranges."""
    out = []
    for name, values in read_csv_columns(text).items():
        given = item.data_dictionary.get(name)
        entry = {"name": name, "label": INFERRED, "type": None, "unit": None, "range": None, "decimals": None,
                 "levels": None}
        if given:
            entry.update({k: given.get(k) for k in ("label", "type", "unit", "levels")})
        else:
            entry.update(_described(values))
        if name in item.ranges:
            entry["range"] = list(item.ranges[name])
        out.append(entry)
    return out


def _described(values: np.ndarray) -> dict:
    """The type and levels of a column the dictionary leaves out, from its values."""
    present = values[~pd.isna(values)]
    if values.dtype.kind in "iuf" or values.dtype == bool:
        whole = values.dtype.kind in "iu" or bool(np.all(np.mod(present.astype(float), 1) == 0))
        return {"type": "integer" if whole else "numeric"}
    levels = sorted({str(v) for v in present})
    if len(levels) <= MAX_LEVELS and len(levels) < len(present):
        return {"type": "category", "levels": levels}
    return {"type": "id"}


def _holding_numbers(values: np.ndarray, name: str, what: str) -> None:
    """Refuse a column ``name`` (``what`` it is to the item) that does not hold numbers, naming its first other cell."""
    if values.dtype.kind not in "iuf":
        row, cell = next(((i, v) for i, v in enumerate(values) if isinstance(v, str) and not _is_number_text(v)),
                         (0, values[0] if len(values) else None))
        raise SpecError(f"the column {_quoted(name)} ({what}) must hold numbers; row {row + 1} holds {cell!r}")


def _condition(item: RealItem, rows: int) -> Condition:
    return Condition(method=item.method, roles=dict(item.roles), n=rows, scenario=item.id, effect=REAL,
                     effect_value=math.nan, alpha=item.alpha, data_filename=item.data_filename)


def analyse_item(item: RealItem, text: str) -> Dataset:
    """The analysis of an item's released CSV that its prompt styles share:
    the gold and the other tests (a :class:`SpecError` where the data cannot
    give a reliable gold), the hints and the reference solutions."""
    family = get_family(item.method)
    columns = read_csv_columns(text)
    for role, kind in family.roles.items():
        if kind in NUMBER_KINDS and item.roles[role] is not None and role != family.factor_role:
            _holding_numbers(columns[item.roles[role]], item.roles[role], f"role '{role}'")
    for name in item.ranges:   # a range bounds numbers
        _holding_numbers(columns[name], name, "given a range")
    rows = len(next(iter(columns.values())))
    cond = _condition(item, rows)
    ranges = {k: tuple(v) for k, v in item.ranges.items()}
    try:
        with one_thread(), warnings_as_errors():
            judged = judge(family, cond, text, ranges, every_test=False)
            cond = dataclasses.replace(cond, roles=family.roles_for_data(cond.roles, judged.data))
            hints = tuple(family.hints(cond, judged.data))
    except data_problems(family) as exc:
        message = str(exc) if isinstance(exc, DataError) else f"{type(exc).__name__}: {exc}"
        raise SpecError(f"its data cannot give a reliable p-value with {item.method}: {message}") from None
    return Dataset(data_id=data_id(item), attempt=0, condition=cond, csv_text=text, n_rows=rows,
                   gold=judged.gold, naive=judged.naive, kept=judged.kept, n_blank_cells=judged.n_blank_cells,
                   n_impossible_values=judged.n_impossible_values,
                   reference_r=reference_r(family, cond.roles, ranges, item.data_filename),
                   reference_py=reference_py(family, cond.roles, ranges, item.data_filename),
                   hints=hints, accepted=judged.accepted)


def _id(method: str, key: str) -> str:
    return f"{method}-{hashlib.sha256(f'{REAL}|{key}'.encode()).hexdigest()[:12]}"


def data_id(item: RealItem) -> str:
    return _id(item.method, f"{item.id}|{item.csv_sha256}")


def task_id(item: RealItem, style: str) -> str:
    return _id(item.method, f"{item.id}|{item.csv_sha256}|{style}|{item.alpha!r}")


def item_records(spec_name: str, spec_sha: str, item: RealItem, text: str, styles, ds: Dataset | None = None) \
        -> list[dict]:
    """The records of an item's tasks, one per prompt style in ``styles``;
    ``ds``, the item's :func:`analyse_item` of ``text`` where the caller has it."""
    family = get_family(item.method)
    ds = analyse_item(item, text) if ds is None else ds
    dictionary = data_dictionary(item, text)
    shared = {
        "data_id": ds.data_id, "method": item.method, "category": family.category, "scenario": item.id,
        "domain": item.domain, "n": ds.n_rows, "effect": REAL, "effect_value": math.nan, "perturbation": "none",
        "perturbation_detail": {"kind": "none"}, "n_blank_cells": ds.n_blank_cells,
        "n_impossible_values": ds.n_impossible_values, "seed": 0, "attempt": 0, "question": item.question,
        "context": item.context, "data_dictionary": dictionary, "data_csv": text,
        "data_filename": item.data_filename, "n_rows": ds.n_rows, "data_sha256": item.csv_sha256,
        "roles": stored_roles(ds.condition.roles), "dgp_params": [], **outcome_fields(family, ds, item.alpha),
        "reference_r": ds.reference_r, "reference_py": ds.reference_py, "script": None,
        "factory_version": __version__, "grid_name": spec_name, "grid_sha256": spec_sha, "split": item.split,
    }
    return [{"task_id": task_id(item, style), "prompt_style": style,
             "prompt": render_prompt(style=style, context=item.context, question=item.question,
                                     dictionary=dictionary, data_filename=item.data_filename, n_rows=ds.n_rows,
                                     alpha=item.alpha, hints=list(ds.hints), answer_block=family.answer.block),
             **shared} for style in styles]


def item_of(normalized: dict, item_id: str) -> RealItem | None:
    """The item ``item_id`` of a spec as ``manifest.json`` holds it (:meth:`RealSpec.normalized`)."""
    found = next((it for it in normalized["items"] if it.get("id") == item_id), None)
    return None if found is None else RealItem(**found)


def checked_design(normalized: dict, item_id: str) -> tuple[dict, dict]:
    """The roles and plausible ranges of the item ``item_id`` of a spec as
    ``manifest.json`` holds it, checked as the import checks them: the roles
    complete and of their kinds (a value role a number:
    :func:`~taskfactory.make.analysis.complete_roles`), the names of columns and
    levels as :func:`_check_names` wants them, each range two finite numbers,
    low < high. What R and Python code may be built from; a :class:`SpecError`
    for an item the spec lacks or cannot describe."""
    try:
        item = item_of(normalized, item_id)
    except (KeyError, TypeError, AttributeError) as exc:
        raise SpecError(f"the corpus's spec cannot be read ({type(exc).__name__}: {exc})") from None
    if item is None or item.method not in [f.name for f in families() if f.has_data]:
        raise SpecError(f"the corpus's spec has no item {corpus.shown(item_id)} of a family with data")
    family = get_family(item.method)
    where = f"the corpus's spec, item {corpus.shown(item.id)}"
    try:
        roles = complete_roles(family, item.roles)
    except InputError as exc:
        raise SpecError(f"{where}: {exc}") from None
    if roles != item.roles:
        raise SpecError(f"{where}: its roles lack {', '.join(sorted(set(roles) - set(item.roles)))}")
    _check_given(family, roles, where)
    if not isinstance(item.ranges, dict) or not all(
            isinstance(bounds, list) and len(bounds) == 2
            and all(isinstance(b, (int, float)) and not isinstance(b, bool) and math.isfinite(b) for b in bounds)
            and bounds[0] < bounds[1] for bounds in item.ranges.values()):
        raise SpecError(f"{where}: its ranges must map columns to [low, high], finite numbers with low < high")
    try:
        _check_names(family, roles, item.ranges)
    except SpecError as exc:
        raise SpecError(f"{where}: {exc}") from None
    return roles, {name: tuple(bounds) for name, bounds in item.ranges.items()}


# --- writing the corpus --------------------------------------------------------------

def import_spec(spec_path, out) -> dict:
    """Write the corpus of the spec at ``spec_path`` into ``out``, a new or
    empty folder; returns its manifest. It is written as
    :func:`taskfactory.folders.staged` writes a folder: on any failure ``out``
    is left as it was found."""
    out = check_new_folder(out, "-o", [spec_path])
    spec = load_spec(spec_path)
    with staged(out) as work:
        return _write(spec, work)


def _write(spec: RealSpec, out: Path) -> dict:
    sha = spec.sha256
    (out / corpus.DATA).mkdir()
    names = {}
    for split in corpus.SPLITS:
        items = [item for item in spec.items if item.split == split]
        if not items:
            continue
        names[split] = [corpus.shard_name(split, 0, 1)]
        records = (rec for item in items for rec in item_records(spec.name, sha, item, spec.csv[item.id],
                                                                  spec.prompt_styles, spec.analysed.get(item.id)))
        write_shard(out / corpus.DATA / names[split][0], records, {"grid_name": spec.name, "grid_sha256": sha})
    counts, shards = corpus.count_shards(out, names)
    counts.update(rejected=0, rejected_by_method={}, rejected_reasons={}, rejected_reasons_by_method={})
    (out / corpus.REJECTED).write_text("", encoding="utf-8")
    manifest = {"format": corpus.FORMAT, "factory_version": __version__, "name": spec.name, "origin": REAL,
                "grid_sha256": sha, "grid": spec.normalized(), "counts": counts, "shards": shards,
                "files": [corpus.file_entry(out, corpus.REJECTED, rows=0)]}
    corpus.write_manifest(out, manifest)
    return manifest
