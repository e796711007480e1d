"""Effect levels and the calibration helpers families use.

A level is ``null`` (the tested effect is exactly zero), ``medium`` (the family's
conventional medium effect, fixed across N), ``borderline`` (calibrated per N so
that the expected test statistic sits at the critical value: about half the
seeds reject and the median p is near 0.05), or a level the grid defines, either
by ``target_z`` (calibrated like borderline, to an expected two-sided z) or by
``size`` (a fixed effect in the family's unit, one number or one per method).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from scipy import optimize, stats

from .errors import GridError

Z_BORDERLINE = float(stats.norm.isf(0.025))
BUILTIN = ("null", "borderline", "medium")
#: The keys of a level the grid defines, the largest target_z, and the form of its name (it enters task ids).
LEVEL_KEYS = ("name", "target_z", "size")
MAX_TARGET_Z = 8
NAME = re.compile(r"[A-Za-z0-9_]*[A-Za-z0-9][A-Za-z0-9_]*")


@dataclass(frozen=True)
class EffectLevel:
    """One effect level of a grid."""

    name: str
    target_z: float | None = None
    size: float | dict | None = None

    @property
    def kind(self) -> str:
        if self.name in BUILTIN:
            return self.name
        return "target_z" if self.target_z is not None else "size"

    @property
    def key(self) -> str:
        """The level as it enters task ids: its name and its definition."""
        if self.kind in BUILTIN:
            return self.name
        if self.kind == "target_z":
            return f"{self.name}:z={self.target_z!r}"
        return f"{self.name}:size={self.size!r}"

    def value(self, family, n: int, params: dict) -> float:
        """The true effect, in ``family.effect_unit``, for a task of size ``n``."""
        if self.kind == "null":
            return float(family.null_value)
        if self.kind == "medium":
            return float(family.medium)
        if self.kind == "borderline":
            return float(family.effect_for_z(Z_BORDERLINE, n, params))
        if self.kind == "target_z":
            return float(family.effect_for_z(float(self.target_z), n, params))
        size = self.size[family.name] if isinstance(self.size, dict) else self.size
        return float(size)


def parse_effect(raw, where: str = "effects") -> EffectLevel:
    """An :class:`EffectLevel` from a grid entry (``None`` is YAML's ``null``)."""
    if raw is None or raw == "null":
        return EffectLevel("null")
    if isinstance(raw, str):
        if raw in BUILTIN:
            return EffectLevel(raw)
        raise GridError(f"key '{where}': unknown effect '{raw}'; allowed: null, borderline, medium, "
                        "or a mapping {name: ..., target_z: ...} or {name: ..., size: ...}")
    if not isinstance(raw, dict):
        raise GridError(f"key '{where}': each effect must be a name or a mapping, got {raw!r}")
    unknown = sorted(set(raw) - set(LEVEL_KEYS))
    if unknown:
        raise GridError(f"key '{where}': unknown effect key '{unknown[0]}'; allowed: {', '.join(LEVEL_KEYS)}")
    name = raw.get("name")
    if not isinstance(name, str) or name in BUILTIN or not NAME.fullmatch(name):
        raise GridError(f"key '{where}': effect name ({name!r}) must be a new word, not one of {', '.join(BUILTIN)}")
    if ("target_z" in raw) == ("size" in raw):
        raise GridError(f"key '{where}': effect '{name}' needs exactly one of target_z or size")
    if "target_z" in raw:
        z = raw["target_z"]
        if not isinstance(z, (int, float)) or isinstance(z, bool) or not 0 < z <= MAX_TARGET_Z:
            raise GridError(f"key '{where}': effect '{name}' target_z ({z!r}) must be a number in (0, {MAX_TARGET_Z}]")
        return EffectLevel(name, target_z=float(z))
    size = raw["size"]
    if isinstance(size, dict):
        for method, value in size.items():
            if not _finite(value):
                raise GridError(f"key '{where}': effect '{name}' size for '{method}' ({value!r}) must be a "
                                "finite number")
        return EffectLevel(name, size={str(k): float(v) for k, v in size.items()})
    if not _finite(size):
        raise GridError(f"key '{where}': effect '{name}' size ({size!r}) must be a finite number or a mapping "
                        "method: number")
    return EffectLevel(name, size=float(size))


def level_schema() -> dict:
    """The JSON Schema of one effect level, from the rules :func:`parse_effect` applies."""
    name = {"type": "string", "pattern": f"^{NAME.pattern}$", "not": {"enum": list(BUILTIN)}}
    defined = {"target_z": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_TARGET_Z},
               "size": {"anyOf": [{"type": "number"}, {"type": "object", "additionalProperties": {"type": "number"}}]}}
    return {"anyOf": [{"enum": [None, *BUILTIN]},
                      *({"type": "object", "required": ["name", key], "additionalProperties": False,
                         "properties": {"name": name, key: schema}} for key, schema in defined.items())]}


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def target_p(z: float) -> float:
    """The two-sided p-value of a z statistic."""
    return float(2.0 * stats.norm.sf(z))


@lru_cache(maxsize=4096)
def t_critical(z: float, df: float) -> float:
    """The |t| on ``df`` degrees of freedom with the two-sided p-value of ``z``.

    A t statistic with this non-centrality rejects about half the time.
    """
    return float(stats.t.isf(target_p(z) / 2.0, df))


@lru_cache(maxsize=4096)
def chi2_noncentrality(z: float, df: int) -> float:
    """The non-centrality that puts the median chi-square(df) at the critical
    value of the two-sided p-value of ``z``."""
    crit = stats.chi2.isf(target_p(z), df)
    if df == 1:
        return float(z * z)
    return float(optimize.brentq(lambda lam: stats.ncx2.median(df, lam) - crit, 1e-9, 10 * crit + 100, xtol=1e-10))


@lru_cache(maxsize=4096)
def f_noncentrality(z: float, df1: int, df2: float) -> float:
    """The non-centrality that puts the median F(df1, df2) at the critical value
    of the two-sided p-value of ``z``."""
    crit = stats.f.isf(target_p(z), df1, df2)
    lam0 = chi2_noncentrality(z, df1)
    return float(optimize.brentq(lambda lam: stats.ncf.median(df1, df2, lam) - crit, 1e-9, 10 * lam0 + 100, xtol=1e-8))



def effect_for_power(power_of, z: float, limit: float) -> float:
    """For a discrete exact test: the effect in [0, ``limit``] at which
    ``power_of(effect)``, the test's exact rejection probability, equals that
    of a two-sided z test whose statistic averages ``z`` (one half at the
    borderline z = 1.96); ``limit`` when even it falls short."""
    target = float(stats.norm.cdf(z - Z_BORDERLINE) + stats.norm.cdf(-z - Z_BORDERLINE))
    if power_of(limit) < target:
        return float(limit)
    return float(optimize.brentq(lambda effect: power_of(effect) - target, 0.0, limit, xtol=1e-6))
