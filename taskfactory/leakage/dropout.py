"""Writing a corpus without the tasks a leakage check flagged."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

from ..build import count_shards, write_manifest
from ..corpus import load_manifest, shard_paths
from ..errors import TaskFactoryError
from ..shards import atomic_write_text, open_shard, sha256_file, write_shard
from . import LeakageReport, _corpus_text

KEY_COLUMNS = ["data_id", "method", "scenario", "question", "context", "split"]


def _is_flagged(rec: dict, report: LeakageReport) -> bool:
    return (rec["data_id"] in report.flagged_data or hash(_corpus_text(rec)) in report.flagged_texts
            or (rec["method"], rec["scenario"]) in report.flagged_scenarios)


def drop_out(corpus, out, report: LeakageReport) -> dict:
    """Write ``out``: ``corpus`` without the flagged tasks and every task that
    shares a data_id with one; same layout, new manifest and card."""
    corpus, out = Path(corpus), Path(out)
    manifest = load_manifest(corpus)
    if out.exists() and any(out.iterdir()):
        raise TaskFactoryError(f"output folder {out} is not empty")
    paths = shard_paths(corpus)
    dropped_data = set()
    for path in paths:
        for rec in open_shard(path).read(columns=KEY_COLUMNS).to_pylist():
            if _is_flagged(rec, report):
                dropped_data.add(rec["data_id"])
    kept = Counter()
    for path in paths:
        for data_id, split in zip(*open_shard(path).read(columns=["data_id", "split"]).to_pydict().values()):
            kept[split] += data_id not in dropped_data
    rows = manifest["grid"]["shard_rows"]
    names = {split: [f"{split}-{i:05d}-of-{-(-kept[split] // rows):05d}.parquet"
                     for i in range(-(-kept[split] // rows))] for split in ("train", "test") if kept[split]}
    (out / "data").mkdir(parents=True, exist_ok=True)
    provenance = {"grid_name": manifest["name"], "grid_sha256": manifest["grid_sha256"]}
    buffers = {split: [] for split in names}
    written = Counter()

    def flush(split):
        name = names[split][written[split]]
        write_shard(out / "data" / name, buffers[split], provenance)
        buffers[split], written[split] = [], written[split] + 1

    dropped_tasks = 0
    for path in paths:
        for rec in open_shard(path).read().to_pylist():
            if rec["data_id"] in dropped_data:
                dropped_tasks += 1
                continue
            buffers[rec["split"]].append(rec)
            if len(buffers[rec["split"]]) == rows:
                flush(rec["split"])
    for split in names:
        if buffers[split]:
            flush(split)
    counts, shards = count_shards(out, names)
    counts["rejected"] = manifest["counts"]["rejected"]
    counts["rejected_by_method"] = manifest["counts"].get("rejected_by_method", {})
    shutil.copyfile(corpus / "rejected.jsonl", out / "rejected.jsonl")
    new = {**manifest, "counts": counts, "shards": shards,
           "rejected": {**manifest["rejected"], "sha256": sha256_file(out / "rejected.jsonl")},
           "leakage_filter": {"source_corpus": str(corpus), "benchmarks": report.benchmarks,
                              "flagged_items": len(report.flagged), "dropped_tasks": dropped_tasks,
                              "dropped_datasets": len(dropped_data)}}
    atomic_write_text(out / "leakage_report.json", json.dumps(report.to_json(), indent=1) + "\n")
    write_manifest(out, new)
    return new
