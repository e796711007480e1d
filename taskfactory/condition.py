"""The condition a family's ``generate`` and ``analyse`` receive."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Condition:
    """One cell of the design, with everything needed to draw and test its data.

    ``analyse`` may read only ``roles`` (and ``alpha``), so that
    :func:`taskfactory.analyse` can run a family's test on any data frame.
    ``generate`` reads ``n``, ``effect_value``, ``params`` (nuisance parameters
    drawn for this task), ``dgp`` (the scenario's scale and location) and
    ``columns`` (the column specifications); :func:`taskfactory.kit.release_table`
    reads ``perturbation`` (what to blank and spoil, see
    :mod:`taskfactory.design.perturb`).
    """

    method: str
    roles: dict
    n: int = 0
    scenario: str = ""
    effect: str = "null"
    effect_value: float = 0.0
    params: dict = field(default_factory=dict)
    dgp: dict = field(default_factory=dict)
    columns: list = field(default_factory=list)
    alpha: float = 0.05
    data_filename: str = "data.csv"
    perturbation: dict = field(default_factory=lambda: {"kind": "none"})

    def literal(self) -> dict:
        """The fields by name, for the emitted script (they hold plain data:
        str, int, float, list, dict)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
