"""The dataset card of a corpus, read by the Hugging Face tooling: its metadata
match the manifest and the shards, and loading the folder warns about nothing."""

import json
import logging
import warnings

import pyarrow.parquet as pq
import pytest

from conftest import PINNED, built_once

GRID = {"name": "card", "seed": 4, "methods": ["welch_t", "chi_square_gof"],
        "scenarios": {"welch_t": PINNED["welch_t"]}, "n": [60], "effects": ["null"], "perturbations": ["none"],
        "split": {"by": "scenario", "test": 0.5, "seed": 1}, "shard_rows": 4}


corpus = built_once(GRID, "card")


def test_the_card_metadata_are_what_the_hugging_face_tooling_reads(corpus):
    hub = pytest.importorskip("huggingface_hub", reason="huggingface_hub (with datasets) is not installed")
    datasets = pytest.importorskip("datasets", reason="Hugging Face datasets is not installed")
    manifest = json.loads((corpus / "manifest.json").read_text())
    card = hub.DatasetCard.load(corpus / "README.md")
    data = card.data.to_dict()
    assert data["license"] == "apache-2.0"
    info = data["dataset_info"]
    splits = sorted({s["split"] for s in manifest["shards"]})
    assert {s["name"]: (s["num_examples"], s["num_bytes"]) for s in info["splits"]} == {
        split: (manifest["counts"]["by_split"][split],
                sum(s["bytes"] for s in manifest["shards"] if s["split"] == split)) for split in splits}
    shard = corpus / manifest["shards"][0]["path"]
    want = datasets.Features.from_arrow_schema(pq.read_schema(shard))
    assert datasets.Features._from_yaml_list(info["features"]) == want
    assert info["features"] == datasets.DatasetInfo(features=want)._to_yaml_dict()["features"]


def test_loading_the_folder_warns_about_nothing(corpus, caplog):
    datasets = pytest.importorskip("datasets", reason="Hugging Face datasets is not installed")
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.WARNING):
        warnings.simplefilter("always")
        loaded = datasets.load_dataset(str(corpus), cache_dir=str(corpus.parent / "hf-cache"))
    manifest = json.loads((corpus / "manifest.json").read_text())
    assert {name: split.num_rows for name, split in loaded.items()} == manifest["counts"]["by_split"]
    assert [str(w.message) for w in caught] == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
