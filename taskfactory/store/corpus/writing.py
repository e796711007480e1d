"""Writing a corpus's manifest: its counts over the shards, its files, and the dataset card."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from .layout import CARD, DATA, FORMAT, MANIFEST, atomic_write_text, sha256_file
from .shardfile import read_columns


# --- writing the manifest ----------------------------------------------------------

COUNTED = ["data_id", "method", "effect", "prompt_style", "perturbation", "trap", "naive_method"]


def count_shards(out: Path, names_by_split: dict) -> tuple[dict, list]:
    """Counts over the shards ``data/NAME`` (read column by column) and their
    manifest entries."""
    shards = []
    counts = {"tasks": 0, "datasets": 0, "traps": 0, "by_split": Counter(), "by_method": Counter(),
              "by_effect": Counter(), "by_prompt_style": Counter(), "by_perturbation": Counter(),
              "traps_by_method": Counter(), "naive_by_method": Counter(), "traps_by_perturbation": Counter()}
    last_data = None
    for split, names in names_by_split.items():
        for name in names:
            path = out / DATA / name
            t = read_columns(path, COUNTED).to_pydict()
            rows = len(t["data_id"])
            for i in range(rows):
                if t["data_id"][i] != last_data:
                    counts["datasets"] += 1
                    last_data = t["data_id"][i]
                m = t["method"][i]
                counts["by_method"][m] += 1
                counts["by_effect"][t["effect"][i]] += 1
                counts["by_prompt_style"][t["prompt_style"][i]] += 1
                counts["by_perturbation"][t["perturbation"][i]] += 1
                if t["naive_method"][i] is not None:
                    counts["naive_by_method"][m] += 1
                if t["trap"][i]:
                    counts["traps"] += 1
                    counts["traps_by_method"][m] += 1
                    counts["traps_by_perturbation"][t["perturbation"][i]] += 1
            counts["tasks"] += rows
            counts["by_split"][split] += rows
            shards.append({"split": split, "path": f"{DATA}/{name}", "rows": rows, "bytes": path.stat().st_size,
                           "sha256": sha256_file(path)})
    return counts, shards


def file_entry(out: Path, name: str, **extra) -> dict:
    path = out / name
    return {"path": name, **extra, "bytes": path.stat().st_size, "sha256": sha256_file(path)}


def write_manifest(out: Path, manifest: dict) -> None:
    """Write the dataset card, then ``manifest.json`` (last: its presence means
    the corpus is complete). The manifest lists the card with its sha256."""
    from ..card import render_card

    manifest["format"] = FORMAT
    manifest["counts"] = {k: (dict(sorted(v.items())) if isinstance(v, Counter) else v)
                          for k, v in manifest["counts"].items()}
    files = [e for e in manifest.get("files", []) if e["path"] != CARD]
    manifest["files"] = files
    atomic_write_text(out / CARD, render_card(manifest))
    manifest["files"] = [file_entry(out, CARD), *files]
    atomic_write_text(out / MANIFEST, json.dumps(manifest, indent=1, sort_keys=False) + "\n")
