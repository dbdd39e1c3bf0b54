"""The typed world state of DESIGN.md: map graph, team, NPCs, entities, globals, attacker state, flags.

Every object carries a static ``description`` and a mutable ``history`` and ``observable``; objects that
are not locations also carry ``current_location``, which names a location, a team member or NPC (an item
being carried) or a container entity (an item inside it).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .enums import MAX_ALERTNESS, MemberStatus, NpcRole, NpcStatus
from .ops import Operation
from .predicates import Predicate

MAX_TEAM = 4


class Strict(BaseModel):
    """Base for every persisted model: unknown fields are errors, not silently dropped."""

    model_config = ConfigDict(extra="forbid")


class WorldObject(Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    name: str
    description: str
    history: list[str] = Field(default_factory=list)
    observable: str = ""
    tags: list[str] = Field(default_factory=list, description="Mutable condition tags, e.g. on_fire.")

    def has(self, tag: str) -> bool:
        return tag in self.tags


class Location(WorldObject):
    entry: bool = Field(False, description="Reinforcements may arrive here.")
    exit: bool = Field(False, description="Leads off the map (escape point).")


class Edge(Strict):
    """An undirected connection between two locations, optionally through a lockable door."""

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    a: str
    b: str
    door: str = Field("", description="Door name, empty for an open passage.")
    locked: bool = False
    opened_by: list[str] = Field(default_factory=list, description="Entity ids that open the lock.")

    def joins(self, x: str, y: str) -> bool:
        return {self.a, self.b} == {x, y}

    def other(self, x: str) -> str:
        return self.b if x == self.a else self.a


class Member(WorldObject):
    current_location: str
    leader: bool = False
    skills: list[str] = Field(default_factory=list)
    status: MemberStatus = MemberStatus.ACTIVE
    hidden: bool = False
    last_moved_turn: int = -1

    @property
    def can_act(self) -> bool:
        return self.status in (MemberStatus.ACTIVE, MemberStatus.INJURED)


class ScheduleStop(Strict):
    at: str = Field(pattern=r"^\d{2}:\d{2}$", description="Clock time HH:MM from which this stop applies.")
    location: str

    @property
    def minute(self) -> int:
        hours, minutes = self.at.split(":")
        return int(hours) * 60 + int(minutes)


class Npc(WorldObject):
    current_location: str
    role: NpcRole
    status: NpcStatus = NpcStatus.NORMAL
    alertness: int = Field(0, ge=0, le=MAX_ALERTNESS)
    schedule: list[ScheduleStop] = Field(default_factory=list)
    following: str = Field("", description="Team member this NPC follows (lured or escorted).")
    investigating: str = Field("", description="Location the NPC is heading to investigate.")
    guarding: str = Field("", description="NPC this one protects and stays beside (a bodyguard).")
    last_moved_turn: int = Field(
        -1, description="The turn of its latest move or arrival (one move per turn, as for members)."
    )

    @property
    def active(self) -> bool:
        return self.status in (NpcStatus.NORMAL, NpcStatus.COMPLIANT)

    @property
    def enforcer(self) -> bool:
        return self.role in (NpcRole.GUARD, NpcRole.POLICE)


class Entity(WorldObject):
    current_location: str
    key: bool = Field(False, description="Must be conserved: never vanishes or duplicates.")
    portable: bool = True
    container: bool = False
    locked: bool = False
    opened_by: list[str] = Field(default_factory=list)


class Globals(Strict):
    clock: int = Field(0, ge=0, description="Simulated minutes since midnight of day one.")
    weather: str = "clear"
    alarm: bool = False
    alarm_turn: int | None = None
    advanced_turn: int = Field(-1, description="The turn that `advanced_minutes` counts for.")
    advanced_minutes: int = Field(0, ge=0, description="Minutes the clock advanced in turn `advanced_turn`.")

    @property
    def clock_text(self) -> str:
        day, minute = divmod(self.clock, 24 * 60)
        text = f"{minute // 60:02d}:{minute % 60:02d}"
        return text if day == 0 else f"day {day + 1} {text}"


class AttackerState(Strict):
    memory: str = ""
    plan: str = ""
    last_result: str = ""


class Flag(Strict):
    """A progress checkpoint or critical-failure state.

    With a ``predicate`` the engine evaluates it; without one only the World Manager's ``set_flag``
    operation sets it. Once reached a flag stays reached (``reached_turn`` records when).
    """

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str
    predicate: Predicate | None = None
    reached: bool = False
    reached_turn: int | None = None


class Event(Strict):
    """A predefined task event: once its trigger holds it fires, and after ``delay_turns`` its effects apply."""

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str
    trigger: Predicate
    delay_turns: int = Field(0, ge=0)
    effects: list[Operation] = Field(default_factory=list)
    triggered_turn: int | None = None
    done: bool = False


class Briefing(Strict):
    task_id: str
    objective_id: str
    objective_name: str
    objective: str
    intel: list[IntelItem] = Field(default_factory=list)


class IntelItem(Strict):
    """One line of the briefing's intel. The Attacker is shown ``text`` only; the structured fields restate what
    the text itself says, for offline Attackers and the linter, and never add to it."""

    text: str
    about: str = Field("", description="Object id this intel concerns, if any.")
    location: str = Field("", description="Where that object is said to be, if stated.")
    carried_by: str = Field("", description="The NPC said to carry the object in `about`, if the text says so.")
    opens: list[str] = Field(
        default_factory=list,
        description="Doors (edge ids) and containers the text says the object in `about` opens.",
    )


class WorldState(Strict):
    """The complete state of one run. The Attacker only ever sees ``observe(state)``."""

    turn: int = 0
    briefing: Briefing
    locations: dict[str, Location]
    edges: list[Edge]
    members: dict[str, Member]
    npcs: dict[str, Npc]
    reserve_npcs: dict[str, Npc] = Field(
        default_factory=dict, description="Declared reinforcements, not yet in the world."
    )
    entities: dict[str, Entity]
    globals: Globals = Field(default_factory=Globals)
    attacker: AttackerState = Field(default_factory=AttackerState)
    checkpoints: list[Flag]
    critical_failures: list[Flag]
    events: list[Event] = Field(default_factory=list)
    world_flags: dict[str, bool] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _team_shape(self) -> WorldState:
        if not 1 <= len(self.members) <= MAX_TEAM:
            raise ValueError(f"a team has 1 to {MAX_TEAM} members, got {len(self.members)}")
        leaders = [m.id for m in self.members.values() if m.leader]
        if len(leaders) != 1:
            raise ValueError(f"a team has exactly one leader, got {leaders or 'none'}")
        return self

    @property
    def leader(self) -> Member:
        return next(m for m in self.members.values() if m.leader)

    def obj(self, object_id: str) -> WorldObject | None:
        """Any object by id (locations, members, NPCs, entities), or None."""
        for table in (self.locations, self.members, self.npcs, self.entities):
            if object_id in table:
                found: WorldObject = table[object_id]
                return found
        return None

    def edge_between(self, x: str, y: str) -> Edge | None:
        return next((e for e in self.edges if e.joins(x, y)), None)

    def edge(self, edge_id: str) -> Edge | None:
        return next((e for e in self.edges if e.id == edge_id), None)

    def neighbours(self, location: str) -> list[str]:
        return sorted(e.other(location) for e in self.edges if location in (e.a, e.b))

    def place_of(self, object_id: str) -> str | None:
        """The location an object is ultimately in, following carriers and containers."""
        seen: set[str] = set()
        current = object_id
        while current not in self.locations:
            if current in seen:
                return None
            seen.add(current)
            holder: Member | Npc | Entity | None = (
                self.members.get(current) or self.npcs.get(current) or self.entities.get(current)
            )
            if holder is None:
                return None
            current = holder.current_location
        return current

    def flag(self, flag_id: str) -> Flag | None:
        return next((f for f in [*self.checkpoints, *self.critical_failures] if f.id == flag_id), None)


Briefing.model_rebuild()
