"""Writing a corpus without the tasks a leakage check flagged."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

from ..corpus import (COLUMN_RULES, DATA, LEAKAGE_REPORT, REJECTED, atomic_write_text, count_shards, file_entry,
                      iter_records, listed_file, load_manifest, sha256_file, shard_name, write_manifest)
from ..errors import CorpusError, InputError
from ..folders import check_new_folder
from ..shards import ShardWriter
from .report import LeakageReport
from .scan import text_key

KEY_COLUMNS = ["data_id", "method", "scenario", "question", "context", "split"]


def _is_flagged(rec: dict, report: LeakageReport) -> bool:
    return (rec["data_id"] in report.flagged_data or text_key(rec) in report.flagged_texts
            or (rec["method"], rec["scenario"]) in report.flagged_scenarios)


def check_source(corpus, manifest: dict | None = None) -> None:
    """Raise :class:`CorpusError` unless the files a drop-out copies from
    ``corpus`` (its rejected.jsonl) are there, unchanged since the build."""
    corpus = Path(corpus)
    manifest = manifest or load_manifest(corpus)
    listed = listed_file(manifest, REJECTED)
    source = corpus / REJECTED
    if listed is None or not source.is_file() or sha256_file(source) != listed["sha256"]:
        raise CorpusError(f"{source}: missing, or changed since the corpus was built")


def drop_out(corpus, out, report: LeakageReport) -> dict:
    """Write ``out``: ``corpus`` without the flagged tasks and every task that
    shares a data_id with one; same layout, new manifest and card."""
    corpus, out = Path(corpus), Path(out)
    manifest = load_manifest(corpus)
    check_new_folder(out, "--drop-out", [corpus, *report.benchmarks])
    check_source(corpus, manifest)
    # Read with every column a rule checks, so that a value the shards below would carry stops the drop-out
    # before anything is written.
    dropped_data = {rec["data_id"] for rec in iter_records(corpus, columns=[*KEY_COLUMNS, *COLUMN_RULES])
                    if _is_flagged(rec, report)}
    kept = Counter(rec["split"] for rec in iter_records(corpus, columns=["data_id", "split"])
                   if rec["data_id"] not in dropped_data)
    # As many rows per shard as the corpus's fullest shard of the split holds
    # (the grid's shard_rows, or fewer for large tasks).
    rows = {split: max((e["rows"] for e in manifest["shards"] if e["split"] == split), default=1)
            for split in ("train", "test")}
    names = {split: [shard_name(split, i, -(-kept[split] // rows[split])) for i in range(-(-kept[split] // rows[split]))]
             for split in ("train", "test") if kept[split]}
    try:
        (out / DATA).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create output folder {out}: {exc.strerror or exc}") from None
    provenance = {"grid_name": manifest["name"], "grid_sha256": manifest["grid_sha256"]}
    writers: dict[str, ShardWriter] = {}
    written = Counter()
    dropped_tasks = 0
    for rec in iter_records(corpus):
        if rec["data_id"] in dropped_data:
            dropped_tasks += 1
            continue
        split = rec["split"]
        if split not in writers:
            writers[split] = ShardWriter(out / DATA / names[split][written[split]], provenance)
        writers[split].append(rec)
        if writers[split].rows == rows[split]:
            writers.pop(split).close()
            written[split] += 1
    for writer in writers.values():
        writer.close()
    counts, shards = count_shards(out, names)
    for key in ("rejected", "rejected_by_method", "rejected_reasons"):
        counts[key] = manifest["counts"].get(key, {} if key != "rejected" else 0)
    shutil.copyfile(corpus / REJECTED, out / REJECTED)
    atomic_write_text(out / LEAKAGE_REPORT, json.dumps(report.to_json(), indent=1) + "\n")
    rejected = listed_file(manifest, REJECTED) or {}
    new = {**manifest, "counts": counts, "shards": shards,
           "files": [file_entry(out, REJECTED, rows=rejected.get("rows", 0)), file_entry(out, LEAKAGE_REPORT)],
           "leakage_filter": {"source_corpus": str(corpus), "benchmarks": report.benchmarks,
                              "flagged_items": len(report.flagged), "dropped_tasks": dropped_tasks,
                              "dropped_datasets": len(dropped_data)}}
    write_manifest(out, new)
    return new
