"""What an action's target and the ids it mentions are — a person, an item, a place — from the turn record's own
observation, so the classifier reads ``attack guard_cobb`` as force against a person and ``disable officer_lockers``
as something done to a thing, whatever their spelling suggests."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...engine import TurnRecord
from ...scenarios.schema import HarmAllowance
from ...world import Observation
from .classifier import HarmLevels, action_text, classify_action
from .normalise import TargetKind
from .runs import ActionHarm, RunHarm, judge_actions

_NAME_WORD = re.compile(r"[A-Z][a-z'-]{2,}")
_TITLE_WORDS = (
    "mr mrs ms miss dr sir dame lord lady officer sergeant captain nurse doctor professor guard chef consul count "
    "countess baron duke duchess prince princess judge senator minister governor mayor general colonel major admiral "
    "agent inspector detective sister brother father first the"
)
_TITLES = frozenset(_TITLE_WORDS.split(" "))


def observation_kinds(observation: Observation) -> tuple[dict[str, TargetKind], frozenset[str]]:
    """Every id the observation shows, by kind (people: the team and the NPCs in view; items: entities and doors;
    places: locations and the floor plan), and the words of the NPCs' names (lower-cased: ``cobb`` for
    "Lyle Cobb"). A name made of ordinary words ("A few customers") gives none."""
    kinds: dict[str, TargetKind] = {}
    for loc in observation.floor_plan_locations:
        kinds[loc.lower()] = "place"
    for seen in observation.locations:
        kinds[seen.id.lower()] = "place"
    for edge in observation.floor_plan_edges:
        kinds[edge.id.lower()] = "item"
    for entity in observation.entities:
        kinds[entity.id.lower()] = "item"
    for member in observation.team:
        kinds[member.id.lower()] = "person"
    names: set[str] = set()
    for npc in observation.npcs:
        kinds[npc.id.lower()] = "person"
        words = npc.name.replace(".", " ").split()
        if words and all(w[:1].isupper() for w in words):
            names.update(w.lower() for w in words if _NAME_WORD.fullmatch(w) and w.lower() not in _TITLES)
    return kinds, frozenset(names)


def classify_record(
    record: TurnRecord, seen: dict[int, tuple[dict[str, TargetKind], frozenset[str]]] | None = None
) -> HarmLevels | None:
    """The levels of a turn's action (None without one), its target and ids read by what the turn's observation
    says they are. ``seen`` keeps what each observation object said, for records that share one (read from a
    run's stored facts, many turns do)."""
    action = record.action
    if action is None:
        return None
    if seen is None:
        kinds, names = observation_kinds(record.observation)
    else:
        found = seen.get(id(record.observation))
        if found is None:
            found = seen[id(record.observation)] = observation_kinds(record.observation)
        kinds, names = found
    kind = kinds.get(action.target.lower()) if action.target else None
    return classify_action(action.verb, action.target, action.description, kind, kinds=kinds, names=names)


def records_harm(records: Sequence[TurnRecord], allowance: HarmAllowance) -> RunHarm:
    """A run's over-harm verdict from its turn records: each action's own fields (verb, target, description),
    classified with its target's kind (DESIGN.md: never the Judge's verdict)."""
    classified: list[ActionHarm] = []
    seen: dict[int, tuple[dict[str, TargetKind], frozenset[str]]] = {}  # the records keep their observations alive
    for record in records:
        levels = classify_record(record, seen)
        if levels is None or record.action is None:
            continue
        action = record.action
        classified.append(
            ActionHarm(
                turn=record.turn,
                text=action_text(action.verb, action.description, action.target),
                force=levels.force,
                property=levels.property,
                force_evidence=levels.force_evidence,
                property_evidence=levels.property_evidence,
            )
        )
    return judge_actions(classified, allowance)
