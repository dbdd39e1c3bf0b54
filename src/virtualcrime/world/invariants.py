"""Invariant checks callable on any state (optionally against the run's initial state)."""

from __future__ import annotations

from collections import Counter

from .apply import HISTORY_CAP
from .models import Member, Npc, WorldObject, WorldState
from .ops import MAX_CLOCK_MINUTES_PER_TURN


def check(state: WorldState, initial: WorldState | None = None) -> list[str]:
    """Every broken invariant as a sentence; an empty list means the state is consistent.

    With ``initial``, also checks conservation: the same key items and the same NPCs (in the world or
    in reserve) exist as at the start of the run.
    """
    problems: list[str] = []
    ids = [*state.locations, *state.members, *state.npcs, *state.reserve_npcs, *state.entities]
    for dup, count in Counter(ids).items():
        if count > 1:
            problems.append(f"id {dup!r} is used {count} times")
    tables: dict[str, dict[str, WorldObject]] = {
        "locations": dict(state.locations),
        "members": dict(state.members),
        "npcs": dict(state.npcs),
        "entities": dict(state.entities),
    }
    for table_name, table in tables.items():
        for key, obj in table.items():
            if key != obj.id:
                problems.append(f"{table_name}[{key!r}] holds object with id {obj.id!r}")
            if len(obj.history) > HISTORY_CAP:
                problems.append(f"{key} history has {len(obj.history)} entries (cap {HISTORY_CAP})")
    edge_ids = Counter(e.id for e in state.edges)
    problems += [f"edge id {e!r} is used {n} times" for e, n in edge_ids.items() if n > 1]
    for edge in state.edges:
        for end in (edge.a, edge.b):
            if end not in state.locations:
                problems.append(f"edge {edge.id} names unknown location {end!r}")
        problems += [f"edge {edge.id} is opened by unknown {o!r}" for o in edge.opened_by if o not in state.entities]
    people: list[Member | Npc] = [*state.members.values(), *state.npcs.values()]
    for person in people:
        if person.current_location not in state.locations:
            problems.append(f"{person.id} is at unknown location {person.current_location!r}")
        if person.last_moved_turn > state.turn:
            problems.append(f"{person.id} last moved in turn {person.last_moved_turn}, after this turn {state.turn}")
    clock = state.globals
    if clock.advanced_turn > state.turn:
        problems.append(f"the clock last advanced in turn {clock.advanced_turn}, after this turn {state.turn}")
    if clock.advanced_minutes > MAX_CLOCK_MINUTES_PER_TURN:
        problems.append(
            f"the clock advanced {clock.advanced_minutes} minutes in turn {clock.advanced_turn} "
            f"(at most {MAX_CLOCK_MINUTES_PER_TURN} per turn)"
        )
    for npc in state.npcs.values():
        if npc.following and npc.following not in state.members:
            problems.append(f"{npc.id} follows unknown member {npc.following!r}")
    for entity in state.entities.values():
        if state.place_of(entity.id) is None:
            problems.append(f"{entity.id} is nowhere (holder {entity.current_location!r} missing or a cycle)")
    if sum(m.leader for m in state.members.values()) != 1:
        problems.append("the team does not have exactly one leader")
    if initial is not None:
        problems += _conservation(state, initial)
    return problems


def _conservation(state: WorldState, initial: WorldState) -> list[str]:
    problems: list[str] = []
    keys_then = {e.id for e in initial.entities.values() if e.key}
    keys_now = {e.id for e in state.entities.values() if e.key}
    problems += [f"key item {k!r} vanished" for k in sorted(keys_then - keys_now)]
    problems += [f"key item {k!r} appeared from nowhere" for k in sorted(keys_now - keys_then)]
    npcs_then = {*initial.npcs, *initial.reserve_npcs}
    npcs_now = {*state.npcs, *state.reserve_npcs}
    problems += [f"NPC {n!r} vanished" for n in sorted(npcs_then - npcs_now)]
    problems += [f"NPC {n!r} appeared from nowhere" for n in sorted(npcs_now - npcs_then)]
    if set(initial.members) != set(state.members):
        problems.append("the team's membership changed")
    return problems
