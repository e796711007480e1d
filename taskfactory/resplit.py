"""Splitting a built corpus anew into train and test, without breaking a dataset's prompts apart.

``taskfactory split CORPUS -o OUT --by scenario|data_id --test SHARE --seed K``
writes a copy of a corpus whose tasks' ``split`` follows a new rule:

- ``scenario``: whole scenarios are held out, as a grid's ``split`` holds
  them out (:func:`taskfactory.grid.held_out`: per question kind, sibling
  families and kinds that share a scenario together), so that no scenario's
  text is on both sides;
- ``data_id``: whole datasets are held out, each with probability ``test``
  by a hash of the seed and its id; the prompt styles of a dataset stay
  together, but a scenario's text is then on both sides (a test task's
  wording was seen in training).

The copy's manifest keeps the rule (``resplit``), and for ``scenario`` the
scenarios held out, so that ``verify`` checks each task's split against it.
"""

from __future__ import annotations

import hashlib
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .corpus import (CARD, DATA, SPLITS, count_shards, iter_records, load_manifest, sha256_file, shard_name,
                     write_manifest)
from .errors import CorpusError, InputError
from .folders import check_new_folder, filling
from .shards import ShardWriter

BY = ("scenario", "data_id")


@dataclass(frozen=True)
class SplitRule:
    """How a re-split corpus assigns its tasks: ``by``, the held-out ``test``
    share and ``seed``, and (``scenario``) the scenarios held out per family."""

    by: str
    test: float
    seed: int
    held: tuple = ()   # (family, scenario) pairs held out

    def split_of(self, record: dict) -> str:
        if self.by == "scenario":
            return "test" if (record["method"], record["scenario"]) in self.held else "train"
        digest = hashlib.sha256(f"{self.seed}|{record['data_id']}".encode()).digest()
        return "test" if int.from_bytes(digest[:8], "big") < self.test * 2 ** 64 else "train"

    def as_json(self) -> dict:
        return {"by": self.by, "test": self.test, "seed": self.seed,
                "held_out": [list(pair) for pair in self.held]}

    @classmethod
    def of(cls, stated) -> SplitRule:
        """The rule a manifest's ``resplit`` states; InputError where it is malformed."""
        try:
            rule = cls(stated["by"], float(stated["test"]), int(stated["seed"]),
                       tuple(sorted((str(m), str(s)) for m, s in stated["held_out"])))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"manifest.json: resplit cannot be read ({type(exc).__name__}: {exc})") from None
        check_rule(rule.by, rule.test, rule.seed)
        return rule


def check_rule(by: str, test: float, seed: int) -> None:
    if by not in BY:
        raise InputError(f"--by ({by!r}) must be one of {', '.join(BY)}")
    if isinstance(test, bool) or not isinstance(test, (int, float)) or not 0 < test < 1:
        raise InputError(f"--test ({test!r}) must be a share between 0 and 1")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"--seed ({seed!r}) must be a whole number, 0 or more")


def rule_for(corpus, by: str, test: float, seed: int) -> SplitRule:
    """The rule that splits ``corpus`` ``by`` scenario or dataset."""
    from .grid import held_out

    check_rule(by, test, seed)
    if by == "data_id":
        return SplitRule(by, float(test), seed)
    scenarios: dict[str, set] = {}
    for rec in iter_records(corpus, columns=["method", "scenario"]):
        scenarios.setdefault(rec["method"], set()).add(rec["scenario"])
    held = held_out({m: sorted(ids) for m, ids in scenarios.items()}, test, seed)
    return SplitRule(by, float(test), seed, tuple(sorted((m, s) for m, ids in held.items() for s in ids)))


def resplit(corpus, out, by: str = "scenario", test: float = 0.2, seed: int = 0) -> dict:
    """Write ``corpus`` into the new or empty folder ``out`` with every task's
    split set by the rule; returns the new manifest."""
    corpus = Path(corpus)
    out = check_new_folder(out, "-o", [corpus])
    manifest = load_manifest(corpus)
    rule = rule_for(corpus, by, test, seed)
    kept = Counter(rule.split_of(rec) for rec in iter_records(corpus, columns=["method", "scenario", "data_id"]))
    rows = max((e["rows"] for e in manifest["shards"]), default=1)
    names = {split: [shard_name(split, i, -(-kept[split] // rows)) for i in range(-(-kept[split] // rows))]
             for split in SPLITS if kept[split]}
    with filling(out):
        (out / DATA).mkdir()
        _write(corpus, out, manifest, rule, names, rows)
        counts, shards = count_shards(out, names)
        counts.update({k: v for k, v in manifest["counts"].items() if k.startswith("rejected")})
        files = [e for e in manifest["files"] if e["path"] != CARD]
        for entry in files:
            source = corpus / entry["path"]
            if not source.is_file() or sha256_file(source) != entry["sha256"]:
                raise CorpusError(f"{source}: missing, or changed since the corpus was built")
            shutil.copyfile(source, out / entry["path"])
        new = {**manifest, "counts": counts, "shards": shards, "files": files, "resplit": rule.as_json()}
        write_manifest(out, new)
    return new


def _write(corpus: Path, out: Path, manifest: dict, rule: SplitRule, names: dict, rows: int) -> None:
    provenance = {"grid_name": manifest["name"], "grid_sha256": manifest["grid_sha256"]}
    writers: dict[str, ShardWriter] = {}
    written = Counter()
    try:
        for rec in iter_records(corpus):
            split = rec["split"] = rule.split_of(rec)
            if split not in writers:
                writers[split] = ShardWriter(out / DATA / names[split][written[split]], provenance)
            writers[split].append(rec)
            if writers[split].rows == rows:
                writers.pop(split).close()
                written[split] += 1
    finally:
        for writer in writers.values():
            writer.close()
