"""The scripted Attacker's memory: what it has seen, kept as compact JSON in the Attacker's ``memory``."""

from __future__ import annotations

from pydantic import BaseModel, Field, ValidationError

from ...world import Observation
from ...world.graph import hop_distances, shortest_path
from ...world.observe import FloorEdge

MAX_FAILS = 30


class Knowledge(BaseModel):
    """Facts gathered from observations only: never from hidden state."""

    where: dict[str, str] = Field(default_factory=dict, description="entity/NPC id -> last seen holder or place")
    place: dict[str, str] = Field(default_factory=dict, description="entity/NPC id -> last seen location")
    openers: dict[str, list[str]] = Field(default_factory=dict, description="door/container id -> what opens it")
    locked: dict[str, bool] = Field(default_factory=dict, description="door/container id -> last seen locked")
    alert: dict[str, int] = Field(default_factory=dict, description="location -> turn an alert guard was seen")
    visited: list[str] = Field(default_factory=list)
    tries: dict[str, int] = Field(default_factory=dict, description="'verb:target' -> attempts")

    @classmethod
    def from_memory(cls, memory: str) -> Knowledge:
        try:
            return cls.model_validate_json(memory) if memory.strip() else cls()
        except ValidationError:
            return cls()

    def to_memory(self) -> str:
        if len(self.tries) > MAX_FAILS:
            self.tries = dict(list(self.tries.items())[-MAX_FAILS:])
        return self.model_dump_json(exclude_defaults=True)

    def learn(self, obs: Observation) -> None:
        """Fold one observation into memory."""
        for item in obs.briefing.intel:
            if item.about and item.location and item.about not in self.place:
                self.place[item.about] = item.location
        here = {m.location for m in obs.team}
        for location in here:
            if location not in self.visited:
                self.visited.append(location)
            for key in [k for k, v in self.place.items() if v == location and k in self.where]:
                # Anything seen here before but no longer seen here has moved on (intel-only hints stay).
                if key not in {e.id for e in obs.entities} | {n.id for n in obs.npcs}:
                    self.where.pop(key, None)
                    self.place[key] = "?"
            self.alert.pop(location, None)
        for entity in obs.entities:
            self.where[entity.id] = entity.location
            self.place[entity.id] = _location_of(obs, entity.location)
            if entity.container:
                self.locked[entity.id] = entity.locked
                if entity.lock_opened_by:
                    self.openers[entity.id] = entity.lock_opened_by
        for npc in obs.npcs:
            self.where[npc.id] = npc.location
            self.place[npc.id] = npc.location
            if npc.role in ("guard", "police") and npc.alertness >= 2 and npc.status == "normal":
                self.alert[npc.location] = obs.turn
        for member in obs.team:
            for carried_id in member.carrying:
                self.where[carried_id] = member.id
                self.place[carried_id] = member.location
        for edge in obs.floor_plan_edges:
            if {edge.a, edge.b} & here:
                self.locked[edge.id] = edge.locked
                if edge.lock_opened_by:
                    self.openers[edge.id] = edge.lock_opened_by


def _location_of(obs: Observation, holder: str) -> str:
    if holder in obs.floor_plan_locations:
        return holder
    for member in obs.team:
        if holder == member.id:
            return member.location
    for npc in obs.npcs:
        if holder == npc.id:
            return npc.location
    for entity in obs.entities:
        if holder == entity.id:
            return _location_of(obs, entity.location)
    return "?"


def route(
    obs: Observation,
    knowledge: Knowledge,
    start: str,
    goal: str,
    keys: set[str],
    avoid: frozenset[str] | set[str] = frozenset(),
) -> list[str] | None:
    """Shortest route on the floor plan, not through doors known locked whose opener is not in ``keys``."""

    def passable(edge: FloorEdge, nxt: str) -> bool:
        blocked = knowledge.locked.get(edge.id, False) and not keys & set(knowledge.openers.get(edge.id, []))
        return not blocked and (nxt not in avoid or nxt == goal)

    return shortest_path(obs.floor_plan_edges, start, goal, passable)


def all_paths_len(obs: Observation, start: str) -> dict[str, int]:
    """Hop distance from ``start`` to every location, ignoring locks (for exploration order)."""
    return hop_distances(obs.floor_plan_edges, start)
