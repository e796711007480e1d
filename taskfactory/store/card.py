"""The dataset card (README.md with YAML front matter) of a corpus."""

from __future__ import annotations

import pyarrow as pa
import yaml

from ..make.columns import fields
from .corpus.layout import ORIGIN_REAL
from .shards import schema

#: The license the card declares for a corpus: the one taskfactory is under.
LICENSE = "apache-2.0"
#: Hugging Face ``datasets`` dtype names of the schema's scalar Arrow types.
HF_DTYPES = {pa.string(): "string", pa.int32(): "int32", pa.int64(): "int64", pa.float64(): "float64",
             pa.bool_(): "bool"}


def _feature(typ: pa.DataType) -> dict:
    """One column type in the card's ``features``, as ``datasets`` writes it
    (``Features.from_arrow_schema`` then ``DatasetInfo._to_yaml_dict``)."""
    if pa.types.is_struct(typ):
        return {"struct": [{"name": f.name, **_feature(f.type)} for f in typ]}
    if pa.types.is_list(typ):
        inner = _feature(typ.value_type)
        return {"list": inner["dtype"] if "dtype" in inner else inner["struct"]}
    return {"dtype": HF_DTYPES[typ]}


def features() -> list[dict]:
    """The card's ``dataset_info.features``: every column of the task schema."""
    return [{"name": f.name, **_feature(f.type)} for f in schema()]


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "1M<n<10M"


def _leakage_lines(manifest: dict) -> list[str]:
    f = manifest.get("leakage_filter")
    if not f:
        return []
    return [f"Filtered for leakage against {', '.join(f'`{b}`' for b in f['benchmarks'])}: "
            f"{f['flagged_items']} benchmark item(s) flagged; {f['dropped_tasks']} task(s) from "
            f"{f['dropped_datasets']} dataset(s) dropped (see `leakage_report.json`).", ""]


def _synthetic_intro(manifest: dict) -> list[str]:
    grid = manifest["grid"]
    return [
        "Synthetic hypothesis-testing tasks for training and evaluating data-analysis agents. Each row is one",
        "task: a research question with its background, a data dictionary and a CSV dataset, and a hidden gold",
        "answer (the canonical test, its p-value and the decision at alpha) computed on the CSV exactly as",
        "released and checked against R's reference implementation. Each row also carries the tempting wrong",
        "test (`naive_*`, `trap`), R and Python reference solutions, and a standalone script that regenerates",
        "the dataset byte for byte.",
        "",
        f"Built by taskfactory {manifest['factory_version']} from grid `{manifest['name']}` "
        f"(sha256 `{manifest['grid_sha256'][:16]}`), seed {grid['seed']}, alpha {grid['alpha']:g}.",
    ]


def _real_intro(manifest: dict) -> list[str]:
    items = manifest["grid"]["items"]
    return [
        "Hypothesis-testing tasks on real datasets, for evaluating data-analysis agents. Each row is one task:",
        "a research question with its background, a data dictionary and the dataset as CSV, and a hidden gold",
        "answer (the canonical test, its p-value and the decision at alpha) computed on the CSV exactly as",
        "released and checked against R's reference implementation, with R and Python reference solutions.",
        "The truth is unknown (`effect` is `real`), and there is no generating script.",
        "",
        f"Made by taskfactory {manifest['factory_version']} from the spec `{manifest['name']}` "
        f"(sha256 `{manifest['grid_sha256'][:16]}`) of {len(items)} datasets:",
        "",
        *(f"- `{it['id']}` ({it['method']}): " + (f"{it['source']['citation']} Licence: {it['source']['licence']}."
                                                  if it.get("source") else "no source given.") for it in items),
    ]


def render_card(manifest: dict) -> str:
    """The card of a corpus, from its manifest alone (so it is deterministic)."""
    counts = manifest["counts"]
    splits = sorted({s["split"] for s in manifest["shards"]}, key=["train", "test"].index)
    split_bytes = {s: sum(shard["bytes"] for shard in manifest["shards"] if shard["split"] == s) for s in splits}
    front = {
        "pretty_name": f"taskfactory corpus: {manifest['name']}",
        "license": LICENSE,
        "language": ["en"],
        "tags": ["statistics", "hypothesis-testing", "synthetic", "data-analysis", "taskfactory"],
        "task_categories": ["question-answering"],
        "size_categories": [_size_category(counts["tasks"])],
        "configs": [{"config_name": "default",
                     "data_files": [{"split": s, "path": f"data/{s}-*.parquet"} for s in splits]}],
        "dataset_info": {
            "features": features(),
            "splits": [{"name": s, "num_bytes": split_bytes[s], "num_examples": counts["by_split"].get(s, 0)}
                       for s in splits],
            "download_size": sum(split_bytes.values()),
            "dataset_size": sum(split_bytes.values()),
        },
    }
    real = manifest.get("origin") == ORIGIN_REAL
    lines = [
        "---",
        yaml.safe_dump(front, sort_keys=False).rstrip(),
        "---",
        "",
        f"# taskfactory corpus: {manifest['name']}",
        "",
        *(_real_intro(manifest) if real else _synthetic_intro(manifest)),
        "",
        "## Counts",
        "",
        *_leakage_lines(manifest),
        f"- tasks: {counts['tasks']} ({counts['datasets']} datasets; "
        + ", ".join(f"{s}: {counts['by_split'].get(s, 0)}" for s in splits) + ")",
        f"- rejected (no attempt gave a reliable gold): {counts['rejected']}",
        f"- traps (a tempting analysis decides otherwise than the gold): {counts['traps']}"
        + (" (" + ", ".join(f"{k} {v}" for k, v in counts.get("traps_by_perturbation", {}).items()) + ")"
           if counts.get("traps_by_perturbation") else ""),
        "- prompt styles: " + ", ".join(f"{k} {v}" for k, v in counts["by_prompt_style"].items()),
        "- effects: " + ", ".join(f"{k} {v}" for k, v in counts["by_effect"].items()),
        "- perturbations: " + ", ".join(f"{k} {v}" for k, v in counts["by_perturbation"].items()),
        "",
        "| method | tasks | traps | trap share among tasks with a naive test |",
        "|---|---:|---:|---:|",
    ]
    for method, n in counts["by_method"].items():
        traps = counts["traps_by_method"].get(method, 0)
        naive = counts["naive_by_method"].get(method, 0)
        share = f"{traps / naive:.1%}" if naive else "-"
        lines.append(f"| {method} | {n} | {traps} | {share} |")
    lines += [
        "",
        "## Loading",
        "",
        "```python",
        "from datasets import load_dataset",
        'ds = load_dataset("path/to/this/folder")   # or load_dataset("parquet", data_dir="data")',
        "```",
        "",
        "DuckDB (`SELECT * FROM 'data/*.parquet'`) and polars (`pl.read_parquet('data/*.parquet')`) read the",
        "shards as they are. `manifest.json` lists every shard with its sha256.",
        "",
        "License: the data's, as each source above states; the rest of each row is under "
        f"{LICENSE}, as taskfactory." if real else f"License: {LICENSE}, as taskfactory's; the data are synthetic.",
        "",
        "## Columns",
        "",
        "| column | type | meaning |",
        "|---|---|---|",
    ]
    for name, typ, _, desc in fields():
        lines.append(f"| `{name}` | {typ} | {desc} |")
    lines.append("")
    return "\n".join(lines)
