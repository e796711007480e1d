"""What a reader may use of a record: the values it acts on, checked in each row group it reads
(:data:`COLUMN_RULES`: golds, accepted tests, p-values and decisions, splits, methods)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from ...answers import DECISIONS, KINDS
from ...errors import CorpusError
from ...methods import FAMILY_ORDER
from ...registry import family_names
from .layout import shown
from .shardfile import Shard

class _Rule(NamedTuple):
    """A rule over values of a row group: ``ok`` is true where a value keeps
    it (false or null where it breaks it). ``rows`` gives each value's row
    when the values are the items of a list column (then ``{j}`` in
    ``field`` stands for the item's index in its list)."""

    field: str
    what: str
    values: pa.Array
    ok: pa.Array
    rows: pa.Array | None = None


_DECISIONS = pa.array(DECISIONS)
_KINDS = pa.array(list(KINDS))
_KNOWN_METHODS = pa.array(FAMILY_ORDER)


def _is_p_value(values):
    return pc.and_(pc.greater_equal(values, 0.0), pc.less_equal(values, 1.0))


#: What a field of a gold or of an accepted test must hold, and the test of
#: its values (a null passes none).
VALUE_RULES = {
    "p_value": ("a p-value in [0, 1]", _is_p_value),
    "decision": (" or ".join(DECISIONS), lambda values: pc.is_in(values, value_set=_DECISIONS)),
    "estimate": ("a finite number", pc.is_finite),
    "low": ("a finite number", pc.is_finite),
    "high": ("a finite number", pc.is_finite),
    "integer": ("a whole number", pc.is_valid),
    "yes_no": ("true or false", pc.is_valid),
}
#: Each optional p-value column and the decision column that goes with it.
P_DECISIONS = {"gold_p": "gold_decision", "naive_p": "naive_decision", "kept_impossible_p": "kept_impossible_decision"}


def _unless(exempt, ok):
    """``ok``, and true where ``exempt`` (no nulls) is true."""
    return pc.or_kleene(exempt, ok)


#: The answer kinds whose gold has each field.
_KINDS_OF = {field: pa.array([k for k, spec in KINDS.items() if field in spec.fields]) for field in VALUE_RULES}


def _other_kind(kind, field: str):
    """True where a gold's ``kind`` has no ``field``."""
    return pc.invert(pc.is_in(kind, value_set=_KINDS_OF[field]))


def _kind_rule(field: str, values) -> _Rule:
    return _Rule(field, f"one of {', '.join(KINDS)}", values, pc.is_in(values, value_set=_KINDS))


def _gold_rules(table, name: str, shard: Shard):
    gold = table[name]
    kind = pc.struct_field(gold, "kind")
    yield _kind_rule("gold.kind", kind)
    if "answer_kind" in table.column_names:
        yield _Rule("gold.kind", "the task's answer_kind", kind, pc.equal(kind, table["answer_kind"]))
    for field, (what, ok) in VALUE_RULES.items():
        values = pc.struct_field(gold, field)
        yield _Rule(f"gold.{field}", what, values, _unless(_other_kind(kind, field), ok(values)))
    low, high = pc.struct_field(gold, "low"), pc.struct_field(gold, "high")
    yield _Rule("gold.low", "at most gold.high", low,
                _unless(_other_kind(kind, "low"), pc.less_equal(low, high)))


def _accepted_rules(table, name: str, shard: Shard):
    tests, rows = pc.list_flatten(table[name]), pc.list_parent_indices(table[name])
    method = pc.struct_field(tests, "method")
    yield _Rule(f"{name}[{{j}}].method", "a test's name", method, pc.is_valid(method), rows)
    for field in ("p_value", "decision"):
        what, ok = VALUE_RULES[field]
        values = pc.struct_field(tests, field)
        yield _Rule(f"{name}[{{j}}].{field}", what, values, ok(values), rows)


def _p_rules(table, name: str, shard: Shard):
    values = table[name]
    yield _Rule(name, f"{VALUE_RULES['p_value'][0]} or null", values, _unless(pc.is_null(values), _is_p_value(values)))


def _decision_rules(table, name: str, shard: Shard):
    """A decision wherever one is given or its p-value is."""
    values = table[name]
    p_value = next(p for p, d in P_DECISIONS.items() if d == name)
    given = pc.is_valid(values)
    if p_value in table.column_names:
        given = pc.or_(given, pc.is_valid(table[p_value]))
    what, ok = VALUE_RULES["decision"]
    yield _Rule(name, what, values, _unless(pc.invert(given), ok(values)))


def _method_rules(table, name: str, shard: Shard):
    """A registered family. The catalogue's names are registered (it lists the
    families taskfactory ships) and known without loading every family; any
    other name is looked up in the registry."""
    values = table[name]
    ok = pc.is_in(values, value_set=_KNOWN_METHODS)
    if ok.true_count < len(ok):
        ok = pc.is_in(values, value_set=pa.array(family_names()))
    yield _Rule(name, "a method family of this taskfactory", values, ok)


def _split_rules(table, name: str, shard: Shard):
    yield _Rule(name, f"the split of its shard ({shard.split!r})", table[name], pc.equal(table[name], shard.split))


def _answer_kind_rules(table, name: str, shard: Shard):
    yield _kind_rule(name, table[name])


#: The rules of each column a reader may ask for, by column (a column not
#: listed holds what its type allows): functions of (the row group, the
#: column's name, its shard) giving :class:`_Rule` s.
COLUMN_RULES = {
    "method": _method_rules,
    "split": _split_rules,
    "answer_kind": _answer_kind_rules,
    "gold": _gold_rules,
    "accepted": _accepted_rules,
    **{name: _p_rules for name in P_DECISIONS},
    **{name: _decision_rules for name in P_DECISIONS.values()},
}


def _raise_first(path: Path, first_row: int, rules) -> None:
    """CorpusError naming the first row (then the first rule) that ``rules`` find broken."""
    found = None
    for rule in rules:
        if rule.ok.true_count == len(rule.ok):
            continue
        i = pc.index(pc.fill_null(rule.ok, False), False).as_py()
        row = i if rule.rows is None else rule.rows[i].as_py()
        if found is None or row < found[0]:
            found = (row, i, rule)
    if found is not None:
        row, i, rule = found
        item = None if rule.rows is None else i - pc.index(rule.rows, row).as_py()
        raise CorpusError(f"{path}: row {first_row + row}: {rule.field.format(j=item)} is "
                          f"{shown(rule.values[i].as_py())}, not {rule.what}")


def check_rows(table, shard: Shard, first_row: int) -> None:
    """CorpusError unless every value of ``table`` (rows of ``shard`` from
    ``first_row`` on) keeps the rules of its column (:data:`COLUMN_RULES`)."""
    names = [name for name in table.column_names if name in COLUMN_RULES]
    batch = pa.RecordBatch.from_arrays([_array(table[name]) for name in names], names)
    _raise_first(shard.path, first_row, (rule for name in names for rule in COLUMN_RULES[name](batch, name, shard)))


def _array(column: pa.ChunkedArray) -> pa.Array:
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
