"""The harm audit's second-opinion model on the Inspect side: the reviewer role's ``generate`` built from any
Inspect model (``virtualcrime/local`` offline), for ``analysis.harm.reviewer`` to call outside an eval."""

from __future__ import annotations

from dataclasses import replace

from ..roles.llm import Generate
from .roles import RoleOptions, model_for, role_generate

ROLE = "harm_reviewer"


def reviewer_generate(model: str, options: RoleOptions | None = None) -> Generate:
    """The reviewer's ``generate`` on ``model``; RoleConfigError, in one plain line, when it cannot be used."""
    inspect_model = model_for(model, "harm reviewer")
    return role_generate(inspect_model, ROLE, replace(options or RoleOptions(), run_scope="harm_review"))
