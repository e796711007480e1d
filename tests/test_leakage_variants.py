"""Evidence that survives presentation. Copies of corpus datasets written with
other separators, line endings and decimal marks, with cluster columns, renamed
and shuffled, with rows dropped, or rounded, are caught, and datasets drawn
afresh from the same scenarios are not; prompts, questions and contexts with a
tenth or a fifth of their words replaced are caught, and the questions of other
families' scenarios, and look-alike questions, are not."""

from __future__ import annotations

import csv
import io
import json
import random
from collections import defaultdict

import numpy as np
import pytest

import taskfactory as tf
from taskfactory.store.corpus import iter_records
from taskfactory.audit.leakage import check_leakage
from taskfactory.audit.leakage.probe import LEAST_PART_WORDS
from taskfactory.audit.leakage.text import content_set, tokens
from taskfactory.audit.leakage.data import Rows, read_table, sniff_separator

from test_leakage import LOOKALIKES

#: Families whose data cover what copies must survive: numbers with one to
#: three decimals, cluster columns (the mixed model, cluster-robust errors),
#: counts with an exposure time, and a table of two categorical variables.
GRID = {"name": "variants", "seed": 3, "n": [100], "effects": ["medium"], "perturbations": ["none"], "seeds": 1,
        "methods": ["welch_t", "pearson", "linear_mixed", "ols_cluster", "poisson_regression",
                    "chi_square_independence"]}
VARIANTS = ("verbatim", "tabs", "semicolons and decimal commas", "CR line endings", "CRLF line endings",
            "renamed and shuffled", "a tenth of the rows dropped", "rounded to a decimal fewer, a tenth dropped")
NUMBER = "-0123456789."


def _is_decimal(cell: str) -> bool:
    return bool(cell) and all(ch in NUMBER for ch in cell) and cell.count(".") == 1


def _write(header, rows, sep=",", end="\n") -> str:
    out = io.StringIO()
    csv.writer(out, delimiter=sep, lineterminator=end).writerows([header, *rows])
    return out.getvalue()


def _shuffled(rows, rng, drop=0.0):
    rows = list(rows)
    rng.shuffle(rows)
    return rows[:len(rows) - round(drop * len(rows))]


def _rounded(rows):
    places = max((len(c.split(".")[1]) for r in rows for c in r if _is_decimal(c)), default=1)
    fewer = max(1, places - 1)
    return [[f"{float(c):.{fewer}f}" if _is_decimal(c) else c for c in r] for r in rows]


def variant(name: str, text: str, rng: random.Random) -> str:
    header, *rows = list(csv.reader(io.StringIO(text)))
    if name == "verbatim":
        return text
    if name == "tabs":
        return _write(header, rows, "\t")
    if name == "semicolons and decimal commas":
        return _write(header, [[c.replace(".", ",") if _is_decimal(c) else c for c in r] for r in rows], ";")
    if name == "CR line endings":
        return _write(header, rows, end="\r")
    if name == "CRLF line endings":
        return _write(header, rows, end="\r\n")
    if name == "renamed and shuffled":
        order = list(reversed(range(len(header))))
        return _write([f"v{j}" for j in order], [[r[j] for j in order] for r in _shuffled(rows, rng)])
    if name == "a tenth of the rows dropped":
        return _write(header, _shuffled(rows, rng, 0.1))
    return _write(header, _rounded(_shuffled(rows, rng, 0.1)))


def datasets(corpus) -> dict:
    out = {}
    for rec in iter_records(corpus, columns=["data_id", "method", "data_csv"]):
        if rec["data_csv"] is not None:
            out.setdefault(rec["data_id"], (rec["method"], rec["data_csv"]))
    return out


def checked(root, items: list[dict]):
    """The leakage report of ``root``'s corpus against ``items``, written as a JSONL benchmark there."""
    bench = root / "bench.jsonl"
    bench.write_text("".join(json.dumps(item) + "\n" for item in items))
    return check_leakage(root / "corpus", [bench])


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("variants")
    tf.build(GRID, root / "corpus", progress=False)
    tf.build({**GRID, "name": "held-out", "seed": 4}, root / "held", progress=False)
    rng = random.Random(1)
    items = [{"id": f"{name}|{method}|{data_id}", "question": "Which test fits these data?",
              "data_csv": variant(name, text, rng)}
             for data_id, (method, text) in datasets(root / "corpus").items() for name in VARIANTS]
    items += [{"id": f"drawn afresh|{method}|{data_id}", "question": "Which test fits these data?", "data_csv": text}
              for data_id, (method, text) in datasets(root / "held").items()]
    return checked(root, items)


def test_every_variant_of_a_copied_dataset_is_caught_and_none_drawn_afresh(report):
    caught = defaultdict(list)
    for item in report.items:
        caught[item.id.split("|")[0]].append("data-rows" in item.flags)
    assert set(caught) == {*VARIANTS, "drawn afresh"}
    assert {name: sum(hits) / len(hits) for name, hits in caught.items()} == {**dict.fromkeys(VARIANTS, 1.0),
                                                                               "drawn afresh": 0.0}
    families = {item.id.split("|")[1] for item in report.items}
    assert families == set(GRID["methods"])


def test_the_report_says_which_fingerprint_matched(report):
    by_variant = defaultdict(set)
    for item in report.items:
        by_variant[item.id.split("|")[0]].add(item.data_fingerprint)
    assert by_variant["verbatim"] == by_variant["renamed and shuffled"] == {"rows"}
    rounded = by_variant["rounded to a decimal fewer, a tenth dropped"]
    assert {"rows rounded to 1 decimal", "rows rounded to 2 decimals"} <= rounded <= {
        "rows", "rows rounded to 1 decimal", "rows rounded to 2 decimals"}


@pytest.mark.parametrize("text, separator, body", [
    ("a,b\n1.5,x\n2,y\n", ",", [["1.5", "x"], ["2", "y"]]),
    ("a\tb\n1.5\tx\r\n2\ty\r\n", "\t", [["1.5", "x"], ["2", "y"]]),
    ("a;b\r1,5;x\r2;y\r", ";", [["1.5", "x"], ["2", "y"]]),
    ("a|b\n\"1,5\"|\"x;y\"\n", "|", [["1.5", "x;y"]]),
    ("name,note\nann,\"a; b; c\"\nbob,\"d; e; f\"\n", ",", [["ann", "a; b; c"], ["bob", "d; e; f"]]),
    ("single\n1\n2\n", ",", [["1"], ["2"]]),
])
def test_separators_line_endings_and_decimal_commas_are_read(text, separator, body):
    assert sniff_separator(text) == separator
    table = read_table(text)
    assert [list(row) for row in zip(*table.columns)] == body and table.rows == len(body)


def test_a_half_way_cell_is_taken_both_ways_when_rounded():
    rows = Rows(read_table("x,y\n1.25,a\n"))
    assert rows.per_row(1)[0] == Rows(read_table("x,y\n1.2,a\n")).per_row()[0] | Rows(read_table("x,y\n1.3,a\n")).per_row()[0]
    assert Rows(read_table("x,y\n1.26,a\n")).per_row(1) == Rows(read_table("x,y\n1.3,a\n")).per_row()


# --- paraphrase ----------------------------------------------------------------------

#: Families of other question kinds, whose scenarios the corpus above does not hold.
OTHERS = {"name": "others", "seed": 9, "n": [200], "effects": ["medium"], "perturbations": ["none"], "seeds": 1,
          "methods": ["one_sample_t", "mcnemar", "logistic_regression", "friedman", "diff_in_diff"]}
REPLACEMENTS = ("apple river stone cloud market engine garden window silver planet quiet yellow ladder pocket "
                "mirror candle level sample value group".split())


def paraphrase(text: str, share: float, rng: random.Random) -> str:
    """``text`` with ``share`` of its words, drawn at random, replaced by others."""
    words = text.split()
    for k in rng.sample(range(len(words)), round(share * len(words))):
        words[k] = rng.choice(REPLACEMENTS)
    return " ".join(words)


@pytest.fixture(scope="module")
def text_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("paraphrase")
    tf.build({**GRID, "prompt_styles": ["basic", "guided"]}, root / "corpus", progress=False)
    tf.build(OTHERS, root / "others", progress=False)
    rng = random.Random(2)
    columns = ["task_id", "prompt", "question", "context"]
    tasks = list(iter_records(root / "corpus", columns=columns))
    sample = rng.sample(tasks, 40)
    items = [{"id": f"{part} {share}|{rec['task_id']}", "question": paraphrase(rec[part], share, rng)}
             for rec in sample for part in ("prompt", "question", "context") for share in (0.1, 0.2)]
    items += [{"id": f"unrelated|{rec['task_id']}", "context": rec["context"], "question": rec["question"]}
              for rec in iter_records(root / "others", columns=columns)]
    items += [{"id": f"look-alike|{k}", "question": q} for k, q in enumerate(LOOKALIKES)]
    # a part MinHash compares alone: as many content words as the probe asks of a question or context
    alone = {f"{part}|{rec['task_id']}" for rec in sample for part in ("question", "context")
             if len(content_set(tokens(rec[part]))) >= LEAST_PART_WORDS}
    return checked(root, items), alone


def test_paraphrased_copies_are_caught_and_other_scenarios_are_not(text_report):
    text_report, alone = text_report

    def part_of(item):
        kind, task = item.id.split("|")
        return f"{kind.split()[0]}|{task}"

    # a question or a context is compared alone (a copy's granularity) where it holds LEAST_PART_WORDS
    # content words; a shorter one, paraphrased, is caught only inside its prompt
    caught = defaultdict(list)
    for item in text_report.items:
        if not item.id.startswith(("question", "context")) or part_of(item) in alone:
            caught[item.id.split("|")[0]].append(bool(item.flags))
    recall = {kind: sum(hits) / len(hits) for kind, hits in caught.items()}
    assert set(recall) == {f"{part} {share}" for part in ("prompt", "question", "context") for share in (0.1, 0.2)} | {
        "unrelated", "look-alike"}
    assert recall["unrelated"] == recall["look-alike"] == 0.0, recall
    assert min(r for kind, r in recall.items() if kind[-1].isdigit()) >= 0.9, recall
    # MinHash on its own catches those copies

    minhash = {kind: float(np.mean(["text-minhash" in it.flags for it in text_report.items
                                    if it.id.startswith(kind + "|") and part_of(it) in alone]))
               for part in ("question", "context") for kind in (f"{part} 0.1", f"{part} 0.2")}
    assert min(minhash.values()) >= 0.85 and minhash["context 0.2"] == 1.0 and len(alone) >= 50, (minhash, len(alone))
