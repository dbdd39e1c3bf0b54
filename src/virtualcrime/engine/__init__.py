"""The turn engine: the loop of DESIGN.md over world + roles, producing typed TurnRecords."""

from .loop import EngineConfig, Game, Roles, sample_outcome
from .precheck import impossible_verdict, structural_problem
from .records import RoleFailure, RunResult, RunStatus, TurnRecord

__all__ = [
    "EngineConfig",
    "Game",
    "RoleFailure",
    "Roles",
    "RunResult",
    "RunStatus",
    "TurnRecord",
    "impossible_verdict",
    "sample_outcome",
    "structural_problem",
]
