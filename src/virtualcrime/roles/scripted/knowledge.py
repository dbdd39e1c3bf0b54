"""The scripted Attacker's memory: what it has seen, kept as compact JSON in the Attacker's ``memory``.

Everything here comes from the Observation a player gets: the briefing's intel (its structured restatement:
where a thing is, who carries it, what it opens), what the team sees, and what the team itself did.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from pydantic import BaseModel, Field, ValidationError

from ...world import Observation
from ...world.graph import hop_distances, shortest_path
from ...world.observe import FloorEdge, SeenNpc
from ..verbs import RULES

MAX_FAILS = 30
# Verbs that, when they work on a person, make that person go along with the actor (see ``Knowledge.led``).
LEADING_VERBS = frozenset(name for name, rule in RULES.items() if rule.escorts)
LED_STATUSES = ("compliant", "restrained")


class Demeanour(NamedTuple):
    """How an NPC looks to someone beside it: ``wariness`` 0 (calm) to 3 (raising the alarm), and the name of
    the person it is seen going along with ("" if none)."""

    wariness: int
    going_along_with: str


_WARINESS_WORDS = (
    (3, re.compile(r"\b(raising the alarm|alarmed|sounding the alarm|panick\w*)\b")),
    (2, re.compile(r"\b(alert|searching|suspicious|investigating|on guard)\b")),
    (1, re.compile(r"\b(wary|uneasy|watchful|curious)\b")),
)
_GOING_ALONG = re.compile(r"\b(?:going along with|following|walking with|escorted by|led by)\s+([^,.;]+)")


def demeanour(observable: str) -> Demeanour:
    """Read an NPC's demeanour from its observable text, the way a player reads it.

    The rules World Manager writes ``"<name> (<role>) is <status>, <mood>[, going along with <member>]."`` with a
    mood among calm / wary / alert and searching / raising the alarm; a model World Manager writes free text, so
    this looks for those words (and a few near synonyms) wherever they are. Nothing else in the scripted Attacker
    reads an NPC's mood, and nothing reads a hidden field.
    """
    text = observable.lower()
    wariness = next((level for level, words in _WARINESS_WORDS if words.search(text)), 0)
    along = _GOING_ALONG.search(text)
    return Demeanour(wariness, along.group(1).strip() if along else "")


class Knowledge(BaseModel):
    """Facts gathered from observations only: never from hidden state."""

    where: dict[str, str] = Field(default_factory=dict, description="entity/NPC id -> last seen holder or place")
    place: dict[str, str] = Field(default_factory=dict, description="entity/NPC id -> last seen location")
    openers: dict[str, list[str]] = Field(default_factory=dict, description="door/container id -> what opens it")
    locked: dict[str, bool] = Field(default_factory=dict, description="door/container id -> last seen locked")
    alert: dict[str, int] = Field(default_factory=dict, description="location -> turn an alert guard was seen")
    led: dict[str, str] = Field(default_factory=dict, description="NPC id -> member who last tried to lead it away")
    visited: list[str] = Field(default_factory=list)
    tries: dict[str, int] = Field(default_factory=dict, description="'verb:target' -> attempts")

    @classmethod
    def from_memory(cls, memory: str) -> Knowledge:
        """The knowledge kept in ``memory`` (empty knowledge if the memory is empty or not ours)."""
        try:
            return cls.model_validate_json(memory) if memory.strip() else cls()
        except ValidationError:
            return cls()

    def to_memory(self) -> str:
        """Compact JSON for the Attacker's memory (the oldest attempts are forgotten first)."""
        if len(self.tries) > MAX_FAILS:
            self.tries = dict(list(self.tries.items())[-MAX_FAILS:])
        return self.model_dump_json(exclude_defaults=True)

    def did(self, verb: str, target: str, actor: str, keys_on: str = "") -> None:
        """Remember the team's own last action (called before ``learn`` with the next observation); ``keys_on``
        names the door whose unknown opener the action tried the member's keys on."""
        for tried in (f"{verb}:{target}", f"keys:{keys_on}" if keys_on else ""):
            if tried:
                self.tries[tried] = self.tries.get(tried, 0) + 1
        if verb in LEADING_VERBS and target:
            self.led[target] = actor

    def learn(self, obs: Observation) -> None:
        """Fold one observation into memory."""
        self._learn_intel(obs)
        here = {m.location for m in obs.team}
        seen_ids = {e.id for e in obs.entities} | {n.id for n in obs.npcs}
        carriers = {i.carried_by for i in obs.briefing.intel if i.carried_by}
        for location in here:
            if location not in self.visited:
                self.visited.append(location)
            for key in [k for k, v in self.place.items() if v == location and k in self.where]:
                # Anything seen here before but no longer seen here has moved on (intel-only hints stay);
                # what an NPC carries is never in view and goes where the NPC goes.
                if key not in seen_ids and self.where[key] not in carriers:
                    self.where.pop(key, None)
                    self.place[key] = "?"
            self.alert.pop(location, None)
        for entity in obs.entities:
            self.where[entity.id] = entity.location
            self.place[entity.id] = _location_of(obs, entity.location)
            if entity.container:
                self.locked[entity.id] = entity.locked
        for npc in obs.npcs:
            self.where[npc.id] = npc.location
            self.place[npc.id] = npc.location
            if npc.role in ("guard", "police") and npc.status == "normal" and demeanour(npc.observable).wariness >= 2:
                self.alert[npc.location] = obs.turn
        for item, holder in self.where.items():
            if holder in carriers and holder in self.place:
                self.place[item] = self.place[holder]  # what an NPC is said to carry is wherever it was last seen
        for member in obs.team:
            for carried_id in member.carrying:
                self.where[carried_id] = member.id
                self.place[carried_id] = member.location
        for edge in obs.floor_plan_edges:
            if {edge.a, edge.b} & here:
                self.locked[edge.id] = edge.locked

    def _learn_intel(self, obs: Observation) -> None:
        for item in obs.briefing.intel:
            if not item.about:
                continue
            if item.location and item.about not in self.place:
                self.place[item.about] = item.location
            if item.carried_by and item.about not in self.where:
                self.where[item.about] = item.carried_by
                self.place.setdefault(item.carried_by, item.location or "?")
            for lockable in item.opens:
                known = self.openers.setdefault(lockable, [])
                if item.about not in known:
                    known.append(item.about)

    def escort(self, npc: SeenNpc, team: dict[str, str]) -> str:
        """The member (id) ``npc`` is going along with, as far as the team can tell, or "".

        Either the NPC is seen going along with a member (its observable text says so), or a member of the team
        tried to lead it away and it now shows the status of someone who went along (compliant or restrained).
        ``team`` maps member names to ids.
        """
        along = demeanour(npc.observable).going_along_with
        by_name = next((mid for name, mid in team.items() if name.lower() == along), "")
        if by_name:
            return by_name
        member = self.led.get(npc.id, "")
        return member if member in team.values() and npc.status in LED_STATUSES else ""


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
