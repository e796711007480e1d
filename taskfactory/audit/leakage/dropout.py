"""Writing a corpus without the tasks a leakage check flagged."""

from __future__ import annotations

import json
from pathlib import Path

from ...folders import check_new_folder
from ...store.copying import check_carried, copy_tasks
from ...store.corpus import COLUMN_RULES, LEAKAGE_REPORT, atomic_write_text, file_entry, iter_records, load_manifest
from .report import LeakageReport
from .scan import text_key

KEY_COLUMNS = ["data_id", "method", "scenario", "question", "context", "split"]


def _is_flagged(rec: dict, report: LeakageReport) -> bool:
    return (rec["data_id"] in report.flagged_data or text_key(rec) in report.flagged_texts
            or (rec["method"], rec["scenario"]) in report.flagged_scenarios)


def drop_out(corpus, out, report: LeakageReport) -> dict:
    """Write ``out``: ``corpus`` without the flagged tasks and every task that
    shares a data_id with one (as :func:`taskfactory.store.copying.copy_tasks`
    writes a copy), with the leakage report; returns its manifest."""
    corpus = Path(corpus)
    manifest = load_manifest(corpus)
    out = check_new_folder(out, "--drop-out", [corpus, *report.benchmarks])
    check_carried(corpus, manifest)
    # Read with every column a rule checks, so that a value the shards below would carry stops the drop-out
    # before anything is written.
    dropped_data = {rec["data_id"] for rec in iter_records(corpus, columns=[*KEY_COLUMNS, *COLUMN_RULES])
                    if _is_flagged(rec, report)}

    def split_of(rec: dict) -> str | None:
        return None if rec["data_id"] in dropped_data else rec["split"]

    with copy_tasks(corpus, out, manifest, split_of, ["split"]) as (work, new):
        atomic_write_text(work / LEAKAGE_REPORT, json.dumps(report.to_json(), indent=1) + "\n")
        new["files"] = [*(e for e in new["files"] if e["path"] != LEAKAGE_REPORT), file_entry(work, LEAKAGE_REPORT)]
        new["leakage_filter"] = {"source_corpus": str(corpus), "benchmarks": report.benchmarks,
                                 "flagged_items": len(report.flagged),
                                 "dropped_tasks": manifest["counts"]["tasks"] - new["counts"]["tasks"],
                                 "dropped_datasets": len(dropped_data)}
    return new
