"""The Attacker's partial observation: the briefing plus only what is co-located with a team member.

It holds what a member standing beside an object could perceive (DESIGN.md, "One turn", step 1): the object's
``observable`` text (and a location's own description) and plainly perceivable facts — names, ids, an NPC's role
and status, an item's tags, whether a door or container is locked, what a member carries. Never hidden fields:
no alertness, no whom-an-NPC-follows or where-it-investigates, no what-opens-which-lock (the briefing's intel may
say so in words), no history, no item an NPC carries and none inside a locked container. A container without a
lock is not modelled: an unlocked container counts as open and its contents are in view.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .apply import carried
from .models import Briefing, Edge, Flag, WorldState
from .predicates import Predicate


class _Obs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SeenMember(_Obs):
    id: str
    name: str
    leader: bool
    skills: list[str]
    status: str
    location: str
    hidden: bool
    tags: list[str]
    carrying: list[str]


class SeenNpc(_Obs):
    id: str
    name: str
    role: str
    location: str
    status: str
    observable: str


class SeenEntity(_Obs):
    id: str
    name: str
    location: str = Field(description="The location, member, NPC or container that holds it.")
    tags: list[str]
    locked: bool
    container: bool
    observable: str


class SeenLocation(_Obs):
    id: str
    name: str
    description: str
    observable: str
    tags: list[str]


class FloorEdge(_Obs):
    id: str
    a: str
    b: str
    door: str
    locked: bool = Field(description="Shown only while a member stands at one of its ends.")


class Goal(_Obs):
    id: str
    description: str
    predicate: Predicate | None
    reached: bool


class Observation(_Obs):
    turn: int
    clock: str
    weather: str
    alarm_heard: bool
    briefing: Briefing
    goals: list[Goal]
    failure_states: list[str]
    floor_plan_locations: dict[str, str] = Field(description="Location id -> name, the whole map.")
    floor_plan_edges: list[FloorEdge]
    team: list[SeenMember]
    locations: list[SeenLocation]
    npcs: list[SeenNpc]
    entities: list[SeenEntity]
    memory: str
    plan: str
    last_result: str


def observe(state: WorldState) -> Observation:
    """Build the Attacker's view of ``state``. Never includes anything outside the team's locations.

    The floor plan (names and connections) is part of the briefing; a door shows as locked only if the
    team stands on one side of it. Items are in view when they stand in a member's location, in a member's
    hands or in an unlocked container there — not when an NPC carries them or a locked container holds them.
    """
    here = {m.current_location for m in state.members.values()}
    visible_entities = [e for e in state.entities.values() if state.place_of(e.id) in here and _in_sight(state, e.id)]
    alarm_heard = state.globals.alarm
    return Observation(
        turn=state.turn,
        clock=state.globals.clock_text,
        weather=state.globals.weather,
        alarm_heard=alarm_heard,
        briefing=state.briefing,
        goals=[_goal(f) for f in state.checkpoints],
        failure_states=[f.description for f in state.critical_failures],
        floor_plan_locations={loc.id: loc.name for loc in state.locations.values()},
        floor_plan_edges=[_floor_edge(e, beside={e.a, e.b} & here != set()) for e in state.edges],
        team=[
            SeenMember(
                id=m.id,
                name=m.name,
                leader=m.leader,
                skills=m.skills,
                status=m.status.value,
                location=m.current_location,
                hidden=m.hidden,
                tags=m.tags,
                carrying=[i for i in carried(state, m.id) if _in_sight(state, i)],
            )
            for m in state.members.values()
        ],
        locations=[
            SeenLocation(
                id=loc.id,
                name=loc.name,
                description=loc.description,
                observable=loc.observable,
                tags=loc.tags,
            )
            for loc in state.locations.values()
            if loc.id in here
        ],
        npcs=[
            SeenNpc(
                id=n.id,
                name=n.name,
                role=n.role.value,
                location=n.current_location,
                status=n.status.value,
                observable=n.observable,
            )
            for n in state.npcs.values()
            if n.current_location in here
        ],
        entities=[
            SeenEntity(
                id=e.id,
                name=e.name,
                location=e.current_location,
                tags=e.tags,
                locked=e.locked,
                container=e.container,
                observable=e.observable,
            )
            for e in visible_entities
        ],
        memory=state.attacker.memory,
        plan=state.attacker.plan,
        last_result=state.attacker.last_result,
    )


def _in_sight(state: WorldState, entity_id: str) -> bool:
    """Whether a member beside the item could see it: not inside a locked container, not on an NPC."""
    current = state.entities[entity_id].current_location
    for _ in range(len(state.entities) + 1):
        if current in state.npcs:
            return False
        if current not in state.entities:
            return True
        if state.entities[current].locked:
            return False
        current = state.entities[current].current_location
    return False


def _floor_edge(edge: Edge, beside: bool) -> FloorEdge:
    return FloorEdge(id=edge.id, a=edge.a, b=edge.b, door=edge.door, locked=edge.locked and beside)


def _goal(flag: Flag) -> Goal:
    return Goal(id=flag.id, description=flag.description, predicate=flag.predicate, reached=flag.reached)
