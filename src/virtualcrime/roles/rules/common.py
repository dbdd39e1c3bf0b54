"""Game rules shared by the offline ``rules`` Judge and World Manager: target resolution and detection."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...world import WorldState, carried
from ...world.enums import NpcRole, NpcStatus
from ...world.models import Edge, Npc
from ..types import Action
from ..verbs import rule_for

TargetKind = Literal["location", "edge", "entity", "npc", "member", "none", "unknown"]

# Locations where an outsider stands out (restricted areas) are tagged `restricted` in map files.
RESTRICTED = "restricted"
DISGUISED = "disguised"
WATCHING_ROLES = (NpcStatus.NORMAL,)


@dataclass(frozen=True)
class Target:
    kind: TargetKind
    id: str
    edge: Edge | None = None


def resolve_target(state: WorldState, action: Action) -> Target:
    """What the action's ``target`` names. A door may be named by its edge id or by the room beyond it."""
    target = action.target
    if not target:
        return Target("none", "")
    if target in state.members:
        return Target("member", target)
    if target in state.npcs:
        return Target("npc", target)
    if target in state.entities:
        return Target("entity", target)
    edge = state.edge(target)
    if edge is not None:
        return Target("edge", target, edge)
    if target in state.locations:
        return Target("location", target)
    return Target("unknown", target)


def door_for(state: WorldState, action: Action, target: Target) -> Edge | None:
    """The door an unlock/damage action aims at: the named edge, or the edge to a named adjacent room."""
    if target.edge is not None:
        return target.edge
    if target.kind == "location":
        here = state.members[action.actor].current_location
        return state.edge_between(here, target.id)
    return None


def actor_location(state: WorldState, action: Action) -> str:
    return state.members[action.actor].current_location


def witnesses(state: WorldState, location: str) -> list[Npc]:
    """NPCs at ``location`` able to notice and report what happens there."""
    return [n for n in state.npcs.values() if n.current_location == location and n.status == NpcStatus.NORMAL]


def witness_weight(npc: Npc, disguised: bool, restricted: bool) -> float:
    """How likely one witness is to notice an ordinary action (before the verb's noise factor)."""
    if npc.role in (NpcRole.GUARD, NpcRole.POLICE):
        weight = 0.12 + 0.08 * npc.alertness
        if disguised and npc.alertness < 2:
            weight *= 0.6
    elif npc.role == NpcRole.STAFF:
        weight = 0.05 + 0.05 * npc.alertness
        if disguised:
            weight *= 0.4
    else:
        weight = 0.02 + 0.03 * npc.alertness
        if disguised:
            weight *= 0.5
    if restricted and not disguised:
        weight *= 1.5
    return weight


def detection_risk(state: WorldState, action: Action, noise: float) -> float:
    """Chance the action is noticed by someone present: 1 - Π(1 - weight·noise), capped at 0.9."""
    member = state.members[action.actor]
    here = member.current_location
    disguised = DISGUISED in member.tags
    restricted = RESTRICTED in state.locations[here].tags
    unseen = 1.0
    for npc in witnesses(state, here):
        unseen *= 1.0 - min(0.95, witness_weight(npc, disguised, restricted) * noise)
    risk = 1.0 - unseen
    if member.hidden:
        risk *= 0.3
    return min(0.9, risk)


def enforcer_alert(state: WorldState, location: str) -> bool:
    """An alerted guard or police officer is present (an arrest is possible if things go wrong)."""
    return any(n.enforcer and n.alertness >= 2 for n in witnesses(state, location))


def enforcer_present(state: WorldState, location: str, besides: str = "") -> bool:
    """A guard or officer (other than ``besides``) is watching at ``location``."""
    return any(n.enforcer and n.id != besides for n in witnesses(state, location))


def has_opener(state: WorldState, member: str, opened_by: list[str]) -> bool:
    return any(item in opened_by for item in carried(state, member))


def display(state: WorldState, object_id: str) -> str:
    """A readable name for an id (falls back to the id itself)."""
    obj = state.obj(object_id)
    if obj is not None:
        return obj.name
    edge = state.edge(object_id)
    if edge is not None:
        return edge.door or f"passage {edge.a}-{edge.b}"
    return object_id or "nothing"


def phrase(verb: str, target_name: str) -> str:
    """``verb`` + object as English: "move to the Kitchen", "take cash box"."""
    if verb == "move":
        return f"move to {target_name}"
    if rule_for(verb).passive and target_name in ("nothing", "it"):
        return verb
    return f"{verb} {target_name}"
