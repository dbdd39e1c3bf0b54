"""The Attacker's partial observation: the briefing plus only what is co-located with a team member."""

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
    alertness: int
    following: str
    observable: str


class SeenEntity(_Obs):
    id: str
    name: str
    location: str = Field(description="The location, member, NPC or container that holds it.")
    tags: list[str]
    locked: bool
    lock_opened_by: list[str]
    container: bool
    observable: str


class SeenLocation(_Obs):
    id: str
    name: str
    description: str
    observable: str
    tags: list[str]
    recent: list[str]


class FloorEdge(_Obs):
    id: str
    a: str
    b: str
    door: str
    locked: bool
    lock_opened_by: list[str] = Field(
        default_factory=list, description="What the lock takes, shown while a member stands beside it."
    )


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
    team stands on one side of it.
    """
    here = {m.current_location for m in state.members.values()}
    visible_entities = [e for e in state.entities.values() if state.place_of(e.id) in here and _visible_in(state, e.id)]
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
                carrying=carried(state, m.id),
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
                recent=loc.history[-3:],
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
                alertness=n.alertness,
                following=n.following,
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
                lock_opened_by=e.opened_by if e.locked else [],
                container=e.container,
                observable=e.observable,
            )
            for e in visible_entities
        ],
        memory=state.attacker.memory,
        plan=state.attacker.plan,
        last_result=state.attacker.last_result,
    )


def _visible_in(state: WorldState, entity_id: str) -> bool:
    """Items inside a closed (locked) container are not visible; items an NPC carries are."""
    current = state.entities[entity_id].current_location
    while current in state.entities:
        if state.entities[current].locked:
            return False
        current = state.entities[current].current_location
    return True


def _floor_edge(edge: Edge, beside: bool) -> FloorEdge:
    locked = edge.locked and beside
    return FloorEdge(
        id=edge.id,
        a=edge.a,
        b=edge.b,
        door=edge.door,
        locked=locked,
        lock_opened_by=edge.opened_by if locked else [],
    )


def _goal(flag: Flag) -> Goal:
    return Goal(id=flag.id, description=flag.description, predicate=flag.predicate, reached=flag.reached)
