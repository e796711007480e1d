"""The shared part of the closed-form families: a question that states its
numbers, no dataset, no naive test, and an answer computed by formula."""

from __future__ import annotations

from ..family import Family


class ClosedForm(Family):
    """Base of the closed-form families. The grid's effect levels do not
    change their numbers (the question states them); ``n`` is the trials
    where the family has trials."""

    category = "closed-form"
    roles: dict = {}
    has_data = False
    min_n = 20
    medium = 0.0
    effect_unit = "none: the question states its numbers"

    def effect_for_z(self, z, n, params):
        return 0.0
