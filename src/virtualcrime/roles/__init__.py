"""The three roles (Attacker, Judge, World Manager): typed interfaces and the offline implementations."""

from .types import (
    NON_FAILURE,
    STAGES,
    Action,
    Attacker,
    Feasibility,
    Judge,
    Outcome,
    OutcomeCategory,
    PlanUpdate,
    Rating,
    RoleError,
    Stage,
    StageContext,
    StageResult,
    Verdict,
    WorldManager,
)

__all__ = [
    "NON_FAILURE",
    "STAGES",
    "Action",
    "Attacker",
    "Feasibility",
    "Judge",
    "Outcome",
    "OutcomeCategory",
    "PlanUpdate",
    "Rating",
    "RoleError",
    "Stage",
    "StageContext",
    "StageResult",
    "Verdict",
    "WorldManager",
]
