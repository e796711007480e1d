"""Splitting a built corpus anew into train and test, without breaking a dataset's prompts apart.

``taskfactory split CORPUS -o OUT --by scenario|data_id --test SHARE --seed K``
writes a copy of a corpus whose tasks' ``split`` follows a new rule:

- ``scenario``: whole scenarios are held out, as a grid's ``split`` holds
  them out (:func:`taskfactory.design.grid.held_out`: per question kind, sibling
  families and kinds that share a scenario together), so that no scenario's
  text is on both sides;
- ``data_id``: whole datasets are held out, each with probability ``test``
  by a hash of the seed and its id; the prompt styles of a dataset stay
  together, but a scenario's text is then on both sides (a test task's
  wording was seen in training).

The copy's manifest keeps the rule (``resplit``), and for ``scenario`` the
scenarios held out, so that ``verify`` checks each task's split against it.
The copy is written as :func:`taskfactory.store.copying.copy_tasks` writes one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..folders import check_new_folder

# The command line reads BY when it starts: what reads or writes shards (pyarrow) is imported where it is used.
BY = ("scenario", "data_id")
#: The keys of a manifest's ``resplit``.
KEYS = ("by", "test", "seed", "held_out")


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
        """The rule a manifest's ``resplit`` states (as :meth:`as_json` writes
        it, value for value: no text for a number, no true for 1); InputError
        ``"manifest.json: resplit...: ..."`` where it is not."""
        where = "manifest.json: resplit"
        if not isinstance(stated, dict) or sorted(stated) != sorted(KEYS):
            got = sorted(stated) if isinstance(stated, dict) else type(stated).__name__
            raise InputError(f"{where} must be an object of the keys {', '.join(KEYS)}, got {got}")
        check_rule(stated["by"], stated["test"], stated["seed"], f"{where}.")
        pairs = stated["held_out"]
        if not isinstance(pairs, list) or not all(
                isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair) for pair in pairs):
            raise InputError(f"{where}.held_out must be a list of [method, scenario] pairs of names")
        return cls(stated["by"], float(stated["test"]), stated["seed"], tuple(sorted(map(tuple, pairs))))


def check_rule(by, test, seed, prefix: str = "--") -> None:
    """InputError unless ``by`` is one of :data:`BY`, ``test`` a number
    between 0 and 1 and ``seed`` a whole number, 0 or more; the message names
    each as ``<prefix>by`` and so on (the command line's options by default)."""
    if not isinstance(by, str) or by not in BY:
        raise InputError(f"{prefix}by ({by!r}) must be one of {', '.join(BY)}")
    if isinstance(test, bool) or not isinstance(test, (int, float)) or not 0 < test < 1:
        raise InputError(f"{prefix}test ({test!r}) must be a share between 0 and 1")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"{prefix}seed ({seed!r}) must be a whole number, 0 or more")


def derive_rule(pairs, by: str, test: float, seed: int) -> SplitRule:
    """The rule that splits a corpus whose tasks have the (method, scenario)
    ``pairs`` ``by`` scenario or dataset (the arguments checked by the caller);
    InputError when a method is not one this taskfactory knows."""
    from ..design.grid import held_out

    if by == "data_id":
        return SplitRule(by, float(test), seed)
    scenarios: dict[str, set] = {}
    for method, scenario in pairs:
        scenarios.setdefault(method, set()).add(scenario)
    held = held_out({m: sorted(ids) for m, ids in scenarios.items()}, test, seed)
    return SplitRule(by, float(test), seed, tuple(sorted((m, s) for m, ids in held.items() for s in ids)))


def rule_for(corpus, by: str, test: float, seed: int) -> SplitRule:
    """The rule that splits ``corpus`` ``by`` scenario or dataset (read as
    :func:`~taskfactory.store.corpus.iter_records` reads it: a corpus changed since
    it was built is refused)."""
    from .corpus import iter_records

    check_rule(by, test, seed)
    if by == "data_id":
        return derive_rule((), by, test, seed)
    return derive_rule(((rec["method"], rec["scenario"]) for rec in iter_records(corpus, columns=["method", "scenario"])),
                       by, test, seed)


def resplit(corpus, out, by: str = "scenario", test: float = 0.2, seed: int = 0) -> dict:
    """Write ``corpus`` into the new or empty folder ``out`` with every task's
    split set by the rule; returns the new manifest."""
    from .copying import check_carried, copy_tasks
    from .corpus import load_manifest

    corpus = Path(corpus)
    out = check_new_folder(out, "-o", [corpus])
    manifest = load_manifest(corpus)
    check_carried(corpus, manifest)
    rule = rule_for(corpus, by, test, seed)
    with copy_tasks(corpus, out, manifest, rule.split_of, []) as (_, new):
        new["resplit"] = rule.as_json()
    return new
