"""Evaluation of structured predicates against a world state, and flag updates."""

from __future__ import annotations

from .enums import MemberStatus
from .models import Flag, ScheduleStop, WorldState
from .predicates import (
    Alarm,
    AllOf,
    AnyOf,
    At,
    ClockAfter,
    FlagSet,
    Following,
    HeldByTeam,
    Not,
    Predicate,
    Status,
    TeamAt,
    TeamStatus,
)

_GONE = (MemberStatus.ARRESTED, MemberStatus.DEAD)


def holds(state: WorldState, predicate: Predicate) -> bool:
    """Whether ``predicate`` is true in ``state``. Unknown ids make a predicate false, never an error."""
    match predicate:
        case At(subject=subject, location=location):
            return state.place_of(subject) == location
        case HeldByTeam(entity=entity):
            return _carrier_member(state, entity) is not None
        case TeamAt(locations=locations, who=who):
            # Arrested members count as absent; only the dead are left out of "all".
            living = [m for m in state.members.values() if m.status != MemberStatus.DEAD]
            inside = [m.current_location in locations and m.status not in _GONE for m in living]
            return bool(living) and (all(inside) if who == "all" else any(inside))
        case Status(subject=subject, statuses=statuses):
            return _status_of(state, subject) & set(statuses) != set()
        case TeamStatus(statuses=statuses, who=who):
            hits = [m.status.value in statuses for m in state.members.values()]
            return all(hits) if who == "all" else any(hits)
        case Following(npc=npc):
            found = state.npcs.get(npc)
            return found is not None and found.following in state.members
        case Alarm():
            return state.globals.alarm
        case ClockAfter(at=at):
            return state.globals.clock % (24 * 60) >= ScheduleStop(at=at, location="x").minute
        case FlagSet(name=name):
            flag = state.flag(name)
            return state.world_flags.get(name, False) or (flag is not None and flag.reached)
        case AllOf(items=items):
            return all(holds(state, item) for item in items)
        case AnyOf(items=items):
            return any(holds(state, item) for item in items)
        case Not(item=item):
            return not holds(state, item)
    raise TypeError(f"unknown predicate {predicate!r}")


def explain(predicate: Predicate, state: WorldState | None = None) -> str:
    """What must be true for ``predicate`` to hold, in words with the exact ids, tags and statuses ``holds``
    checks: what a World Manager needs to know to move the world to it (``holds`` stays the truth). With
    ``state``, a status condition names what its subject is and the operation that sets it."""
    match predicate:
        case At(subject=subject, location=location):
            return f"{subject} is in {location} (itself, or carried by someone there, or inside something there)"
        case HeldByTeam(entity=entity):
            return f"{entity} is carried by a team member who can act (directly or inside something they carry)"
        case TeamAt(locations=locations, who=who):
            where = " or ".join(locations)
            if who == "any":
                return f"at least one team member who is not arrested is in {where}"
            return f"every living team member is in {where} and none is arrested"
        case Status(subject=subject, statuses=statuses):
            options = " or ".join(repr(s) for s in statuses)
            if state is not None and subject in state.npcs:
                return f"NPC {subject} has status {options} (set_npc_status)"
            if state is not None and subject in state.members:
                return f"team member {subject} has status {options} (set_member_status)"
            if state is not None and state.obj(subject) is not None:
                return f"{subject} carries the tag {options} (set_tag)"
            return f"{subject} has status {options} (an NPC's or member's status, or an item's or place's tag)"
        case TeamStatus(statuses=statuses, who=who):
            options = " or ".join(repr(s) for s in statuses)
            return f"{'every' if who == 'all' else 'any'} team member has status {options} (set_member_status)"
        case Following(npc=npc):
            return f"NPC {npc} follows a team member (set_following)"
        case Alarm():
            return "the alarm is ringing (set_alarm)"
        case ClockAfter(at=at):
            return f"the clock is at or after {at}"
        case FlagSet(name=name):
            return f"flag {name} is set (set_flag), or checkpoint {name} is reached"
        case AllOf(items=items):
            return "all of: " + "; ".join(f"({explain(item, state)})" for item in items)
        case AnyOf(items=items):
            return "any of: " + "; ".join(f"({explain(item, state)})" for item in items)
        case Not(item=item):
            return f"not ({explain(item, state)})"
    raise TypeError(f"unknown predicate {predicate!r}")


def _carrier_member(state: WorldState, entity: str) -> str | None:
    """The team member who has ``entity`` and is free to act (not arrested, dead or restrained)."""
    current = entity
    for _ in range(len(state.entities) + 2):
        found = state.entities.get(current)
        if found is None:
            member = state.members.get(current)
            return current if member is not None and member.can_act else None
        current = found.current_location
    return None


def _status_of(state: WorldState, subject: str) -> set[str]:
    if subject in state.members:
        return {state.members[subject].status.value}
    if subject in state.npcs:
        return {state.npcs[subject].status.value}
    obj = state.obj(subject)
    return set(obj.tags) if obj is not None else set()


def update_flags(state: WorldState) -> tuple[list[str], list[str]]:
    """Latch every predicate-backed checkpoint and critical failure that now holds (mutates ``state``).

    Returns the ids of checkpoints and critical failures newly reached this call.
    """
    new_checkpoints = _latch(state, state.checkpoints)
    new_failures = _latch(state, state.critical_failures)
    return new_checkpoints, new_failures


def _latch(state: WorldState, flags: list[Flag]) -> list[str]:
    reached: list[str] = []
    for flag in flags:
        if flag.reached:
            continue
        now = holds(state, flag.predicate) if flag.predicate is not None else state.world_flags.get(flag.id, False)
        if now:
            flag.reached = True
            flag.reached_turn = state.turn
            reached.append(flag.id)
    return reached
