"""What a leakage check reports: its thresholds, each item's scores, the
readable table ``taskfactory leakage`` prints and the JSON file it writes."""

from __future__ import annotations

import json
import numbers
from collections import Counter
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from ...errors import InputError
from ...folders import check_new_folder, check_output_file, write_output_file

KINDS = ("text-ngram", "text-containment", "text-minhash", "data-rows", "semantic")
LEAST_COUNT = {"ngram13": 0, "data_min_rows": 1}  # thresholds that count, and their least value; the rest are shares


def check_threshold(name: str, value, label: str | None = None) -> None:
    """InputError naming ``label`` (default: ``threshold <name>``) and
    ``value`` when ``value`` is outside the domain of the threshold ``name``:
    a count is a whole number of at least its :data:`LEAST_COUNT`, any other
    threshold a finite number from 0 to 1."""
    if name in LEAST_COUNT:
        least = LEAST_COUNT[name]
        ok = isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= least
        problem = f"must be a whole number, {least} or more"
    else:
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and 0 <= value <= 1
        problem = "must be a number from 0 to 1"
    if not ok:
        shown = value if isinstance(value, numbers.Number) else repr(value)
        raise InputError(f"{label or 'threshold ' + name} ({shown}) {problem}")


@dataclass(frozen=True)
class Thresholds:
    """When a benchmark item counts as leaked. Out-of-domain values (NaN, a
    negative count, a share above 1) raise InputError rather than switch a
    check off."""

    ngram8: float = 0.5         # share of the item's non-template 8-grams found in one task
    ngram13: int = 1            # non-template 13-grams shared with one task
    containment: float = 0.5    # rarity-weighted share of the item's word 2-grams one corpus scenario holds
    jaccard: float = 0.5        # content-word Jaccard with one task's text
    data: float = 0.5           # share of the item's distinct rows found in one corpus dataset
    data_min_rows: int = 5      # ... and at least this many rows (all of them when the item has fewer)
    semantic: float = 0.9       # cosine with the nearest corpus text
    boilerplate: float = 0.05   # n-grams in more than this share of tasks, from 2+ scenarios, are template

    def __post_init__(self):
        for f in fields(self):
            check_threshold(f.name, getattr(self, f.name))

    def data_flags(self, share: float, hits: int, rows: int) -> bool:
        """Whether ``hits`` of a benchmark dataset's ``rows`` distinct rows,
        a ``share`` of them, found in one corpus dataset flag it."""
        return rows > 0 and share >= self.data and hits >= min(self.data_min_rows, rows)


@dataclass
class ItemReport:
    """Every score of one benchmark item, with the corpus task behind each."""

    bench: str
    id: str
    where: str
    snippet: str
    ngram8: float = 0.0
    ngram13: int = 0
    ngram_task: str | None = None
    containment: float = 0.0
    containment_task: str | None = None
    jaccard: float = 0.0
    jaccard_task: str | None = None
    data: float = 0.0
    data_rows: int = 0
    data_task: str | None = None
    data_fingerprint: str | None = None   # "rows", or "rows rounded to <k> decimals"
    semantic: float | None = None
    semantic_task: str | None = None
    flags: list = field(default_factory=list)

    def evidence(self) -> list[tuple[str, float, str | None]]:
        """(kind, score, task_id) of each flag."""
        scores = {"text-ngram": (self.ngram8, self.ngram_task),
                  "text-containment": (self.containment, self.containment_task),
                  "text-minhash": (self.jaccard, self.jaccard_task),
                  "data-rows": (self.data, self.data_task), "semantic": (self.semantic, self.semantic_task)}
        return [(kind, *scores[kind]) for kind in self.flags]


@dataclass
class LeakageReport:
    corpus: str
    benchmarks: list
    tasks: int
    datasets: int
    distinct_texts: int
    thresholds: Thresholds
    items: list
    semantic: dict | None = None
    seconds: float = 0.0
    flagged_texts: set = field(default_factory=set)
    flagged_data: set = field(default_factory=set)
    flagged_scenarios: set = field(default_factory=set)

    @property
    def flagged(self) -> list[ItemReport]:
        return [it for it in self.items if it.flags]

    def to_json(self) -> dict:
        return {
            "corpus": self.corpus, "benchmarks": self.benchmarks, "corpus_tasks": self.tasks,
            "corpus_datasets": self.datasets, "corpus_distinct_texts": self.distinct_texts,
            "thresholds": asdict(self.thresholds), "semantic": self.semantic,
            "flagged_items": len(self.flagged), "items": [asdict(it) for it in self.items],
        }


def format_report(report: LeakageReport) -> str:
    """The readable table of the flagged items, and a summary line."""
    from ...tables import render_table

    flagged = report.flagged
    lines = []
    if flagged:
        rows = [(it.id if len(it.id) <= 28 else it.id[:25] + "...", kind, f"{score:.2f}", task or "-", it.snippet[:60])
                for it in flagged for kind, score, task in it.evidence()]
        lines.append(render_table(("item", "evidence", "score", "corpus task", "snippet"), rows,
                                  align=("left", "left", "right", "left", "left")))
    kinds = Counter(kind for it in flagged for kind in it.flags)
    detail = ", ".join(f"{k} {kinds[k]}" for k in KINDS if kinds[k])
    lines.append(f"summary: {len(flagged)} of {len(report.items)} benchmark items flagged"
                 + (f" ({detail})" if detail else "")
                 + f" against {report.tasks} corpus tasks ({report.datasets} datasets, {report.distinct_texts} "
                   f"distinct texts) in {report.seconds:.1f} s")
    if report.semantic:
        s = report.semantic
        lines.append(f"semantic: mean top-5 cosine benchmark-to-corpus {s['bench_to_corpus_top5']:.3f}, "
                     f"corpus-to-corpus {s['corpus_to_corpus_top5']:.3f} ({s['corpus_texts']} scenario texts)")
    return "\n".join(lines)


def check_output_paths(corpus, benches=(), report_path=None, drop_dir=None, overwrite: bool = False) -> None:
    """Raise :class:`InputError` before any work when the ``--report`` file
    (see :func:`write_report`) or the ``--drop-out`` folder of a leakage check
    cannot be written, or would land inside the corpus or on a benchmark it reads."""
    if report_path:
        check_output_file(report_path, "--report", is_report_file, overwrite, [corpus, *benches])
    if drop_dir:
        check_new_folder(drop_dir, "--drop-out", [corpus, *benches])
        if report_path and Path(drop_dir).resolve() in Path(report_path).resolve().parents:
            raise InputError(f"--report {report_path}: inside the --drop-out folder {drop_dir}, which must stay "
                             "empty until the corpus is written there; give a file outside it")


#: The largest file :func:`is_report_file` reads as a candidate report; a larger one is not its own.
REPORT_MAX_BYTES = 256 << 20


def is_report_file(path: Path) -> bool:
    """Whether ``path`` holds a leakage report as :func:`write_report` writes
    it: a JSON object with the keys of :meth:`LeakageReport.to_json`, whose
    items have those of :class:`ItemReport`."""
    try:
        if path.stat().st_size > REPORT_MAX_BYTES:
            return False
        with open(path, "rb") as file:
            if file.read(1) != b"{":   # not a JSON object: not read further
                return False
            file.seek(0)
            found = json.load(file)
    except (OSError, ValueError, RecursionError):   # unreadable, not JSON, nested too deep
        return False
    blank = LeakageReport(corpus="", benchmarks=[], tasks=0, datasets=0, distinct_texts=0,
                          thresholds=Thresholds(), items=[])
    item_keys = {f.name for f in fields(ItemReport)}
    return (found.keys() == blank.to_json().keys() and isinstance(found["items"], list)
            and all(isinstance(it, dict) and it.keys() == item_keys for it in found["items"]))


def write_report(report: LeakageReport, path, overwrite: bool = False) -> Path:
    """Write ``report`` (every item's scores, as JSON) to ``path``, refused as
    :func:`check_output_paths` refuses it: a new file, or a report written
    before (any file with ``overwrite``), never a symbolic link nor inside
    the corpus or a benchmark (see :func:`~taskfactory.folders.check_output_file`);
    the file is replaced whole or left as it was."""
    path = check_output_file(path, "--report", is_report_file, overwrite, [report.corpus, *report.benchmarks])
    write_output_file(path, json.dumps(report.to_json(), indent=1) + "\n", "--report")
    return path
