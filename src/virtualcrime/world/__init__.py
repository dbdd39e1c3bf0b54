"""Pure world state: typed models, operations, validation, predicates and observation. No I/O, no model."""

from .apply import apply, apply_in_place, carried
from .enums import MemberStatus, NpcRole, NpcStatus
from .evaluate import explain, holds, update_flags
from .invariants import check
from .models import (
    AttackerState,
    Briefing,
    Edge,
    Entity,
    Event,
    Flag,
    Globals,
    IntelItem,
    Location,
    Member,
    Npc,
    ScheduleStop,
    WorldState,
)
from .observe import Observation, observe
from .ops import LedgerEntry, Operation, parse_operation

__all__ = [
    "AttackerState",
    "Briefing",
    "Edge",
    "Entity",
    "Event",
    "Flag",
    "Globals",
    "IntelItem",
    "LedgerEntry",
    "Location",
    "Member",
    "MemberStatus",
    "Npc",
    "NpcRole",
    "NpcStatus",
    "Observation",
    "Operation",
    "ScheduleStop",
    "WorldState",
    "apply",
    "apply_in_place",
    "carried",
    "check",
    "explain",
    "holds",
    "observe",
    "parse_operation",
    "update_flags",
]
