"""Deterministic validation and application of operations.

Each operation is checked against the state it would change; a rejected one changes nothing and lands
in the ledger with its reason. Nothing here can delete an object, so key items and NPCs are conserved
by construction; ``invariants.check`` proves it on any state.

Limits per turn (``state.turn``) hold over every call in that turn, i.e. all World Manager stages and event
effects together, because they are kept in the state itself: each member and NPC records the turn it last
moved (``last_moved_turn``; a spawned reinforcement counts as having moved on arrival), and the globals record
how many minutes the clock has advanced this turn (at most ``MAX_CLOCK_MINUTES_PER_TURN``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from .enums import MemberStatus, NpcRole, NpcStatus
from .models import Npc, WorldObject, WorldState
from .ops import (
    MAX_CLOCK_MINUTES_PER_TURN,
    AdvanceClock,
    AppendHistory,
    CompleteEvent,
    FoldHistory,
    LedgerEntry,
    Move,
    Operation,
    SetAlarm,
    SetAlertness,
    SetFlag,
    SetFollowing,
    SetHidden,
    SetInvestigating,
    SetLock,
    SetMemberStatus,
    SetNpcStatus,
    SetObservable,
    SetTag,
    SpawnNpc,
    Transfer,
    TriggerEvent,
)

HISTORY_CAP = 12
T = TypeVar("T")


class Rejected(Exception):
    """An operation that would break the world's rules; its message is the ledger reason."""


def apply(state: WorldState, ops: Iterable[Operation], stage: str = "") -> tuple[WorldState, list[LedgerEntry]]:
    """Apply ``ops`` to a copy of ``state``; return the new state and one ledger entry per op."""
    new_state = state.model_copy(deep=True)
    ledger = apply_in_place(new_state, ops, stage)
    return new_state, ledger


def apply_in_place(state: WorldState, ops: Iterable[Operation], stage: str = "") -> list[LedgerEntry]:
    """Apply ``ops`` to ``state`` itself (the engine's per-turn working copy)."""
    ledger: list[LedgerEntry] = []
    for op in ops:
        try:
            _apply_one(state, op)
        except Rejected as reason:
            ledger.append(LedgerEntry(stage=stage, op=op, applied=False, reason=str(reason)))
        else:
            ledger.append(LedgerEntry(stage=stage, op=op, applied=True))
    return ledger


def _apply_one(state: WorldState, op: Operation) -> None:
    match op:
        case Move():
            _move(state, op)
        case Transfer():
            _transfer(state, op)
        case SetObservable(subject=subject, text=text):
            _need_object(state, subject).observable = text
        case AppendHistory(subject=subject, text=text):
            history = _need_object(state, subject).history
            history.append(text)
            del history[:-HISTORY_CAP]
        case SetMemberStatus(member=member_id, status=status):
            member = _need(state.members, member_id, "member")
            if member.status in (MemberStatus.DEAD, MemberStatus.ARRESTED) and status != member.status:
                raise Rejected(f"{member_id} is {member.status.value}; that is final")
            member.status = status
        case SetNpcStatus(npc=npc_id, status=status):
            npc = _need(state.npcs, npc_id, "NPC")
            if npc.status == NpcStatus.DEAD and status != NpcStatus.DEAD:
                raise Rejected(f"{npc_id} is dead; that is final")
            npc.status = status
            if status not in (NpcStatus.NORMAL, NpcStatus.COMPLIANT, NpcStatus.RESTRAINED):
                npc.following = ""
        case SetAlertness(npc=npc_id, level=level):
            _need(state.npcs, npc_id, "NPC").alertness = level
        case SetFollowing(npc=npc_id, member=member_id):
            _set_following(state, npc_id, member_id)
        case SetInvestigating(npc=npc_id, location=location):
            if location:
                _need(state.locations, location, "location")
            _need(state.npcs, npc_id, "NPC").investigating = location
        case SetHidden(member=member_id, hidden=hidden):
            _need(state.members, member_id, "member").hidden = hidden
        case SetTag(subject=subject, tag=tag, value=value):
            target = state.entities.get(subject) or state.locations.get(subject) or state.members.get(subject)
            if target is None:
                raise Rejected(f"unknown entity, location or member {subject!r}")
            if value and tag not in target.tags:
                target.tags.append(tag)
            elif not value and tag in target.tags:
                target.tags.remove(tag)
        case FoldHistory(subject=subject, keep=keep, summary=summary):
            history = _need_object(state, subject).history
            if len(history) > keep:
                tail = history[len(history) - keep :]
                history[:] = [summary, *tail] if summary else tail
        case SetLock(subject=subject, locked=locked):
            _set_lock(state, subject, locked)
        case SetFlag(flag=flag_id, value=value):
            flag = state.flag(flag_id)
            if flag is not None and flag.predicate is not None:
                raise Rejected(f"flag {flag_id!r} has a predicate; the engine evaluates it")
            state.world_flags[flag_id] = value
        case AdvanceClock(minutes=minutes):
            _advance_clock(state, minutes)
        case SetAlarm(ringing=ringing):
            if ringing and not state.globals.alarm:
                state.globals.alarm_turn = state.turn
            state.globals.alarm = ringing
        case SpawnNpc(npc=npc_id, at=at):
            _spawn(state, npc_id, at)
        case TriggerEvent(event=event_id):
            event = next((e for e in state.events if e.id == event_id), None)
            if event is None:
                raise Rejected(f"unknown event {event_id!r}")
            if event.triggered_turn is not None:
                raise Rejected(f"event {event_id!r} already triggered")
            event.triggered_turn = state.turn
        case CompleteEvent(event=event_id):
            event = next((e for e in state.events if e.id == event_id), None)
            if event is None or event.triggered_turn is None:
                raise Rejected(f"event {event_id!r} is unknown or not triggered")
            event.done = True
        case _:
            raise Rejected(f"unsupported operation {op!r}")


def _need(table: dict[str, T], key: str, kind: str) -> T:
    if key not in table:
        raise Rejected(f"unknown {kind} {key!r}")
    return table[key]


def _need_object(state: WorldState, subject: str) -> WorldObject:
    found = state.obj(subject)
    if found is None:
        raise Rejected(f"unknown object {subject!r}")
    return found


def _move(state: WorldState, op: Move) -> None:
    if op.to not in state.locations:
        raise Rejected(f"unknown location {op.to!r}")
    mover = state.members.get(op.subject) or state.npcs.get(op.subject)
    if mover is None:
        raise Rejected(f"unknown member or NPC {op.subject!r}")
    origin = mover.current_location
    if origin == op.to:
        raise Rejected(f"{op.subject} is already in {op.to}")
    edge = state.edge_between(origin, op.to)
    if edge is None:
        raise Rejected(f"{origin} and {op.to} are not adjacent")
    if op.subject in state.members:
        member = state.members[op.subject]
        if not member.can_act:
            raise Rejected(f"{op.subject} is {member.status.value} and cannot move")
        if member.last_moved_turn == state.turn:
            raise Rejected(f"{op.subject} already moved this turn")
        if edge.locked and not any(item in edge.opened_by for item in carried(state, op.subject)):
            raise Rejected(f"the {edge.door or 'door'} between {origin} and {op.to} is locked")
        member.last_moved_turn = state.turn
        member.hidden = False
    else:
        npc = state.npcs[op.subject]
        if npc.status in (NpcStatus.DEAD, NpcStatus.UNCONSCIOUS, NpcStatus.INJURED) or (
            npc.status == NpcStatus.RESTRAINED and not npc.following
        ):
            raise Rejected(f"{op.subject} is {npc.status.value} and cannot move")
        if npc.last_moved_turn == state.turn:
            raise Rejected(f"{op.subject} already moved this turn")
        leader = state.members.get(npc.following)
        if leader is not None and leader.current_location != op.to:
            # a follower walks with its member (moved first), never off on its own
            raise Rejected(f"{op.subject} follows {npc.following}, who is not in {op.to}")
        if edge.locked and not _npc_has_access(npc):
            raise Rejected(f"{op.subject} has no access through the locked {edge.door or 'door'}")
        npc.last_moved_turn = state.turn
    mover.current_location = op.to


def _npc_has_access(npc: Npc) -> bool:
    return npc.role != NpcRole.CIVILIAN or bool(npc.following)


def carried(state: WorldState, holder: str) -> list[str]:
    """Ids of the entities ``holder`` has, directly or inside something it has."""
    return [e for e in state.entities if _inside(state, e, holder)]


def _inside(state: WorldState, item: str, holder: str) -> bool:
    current = state.entities[item].current_location
    for _ in range(len(state.entities) + 1):
        if current == holder:
            return True
        if current not in state.entities:
            return False
        current = state.entities[current].current_location
    return False


def _transfer(state: WorldState, op: Transfer) -> None:
    item = _need(state.entities, op.item, "entity")
    if not item.portable:
        raise Rejected(f"{op.item} cannot be carried")
    if op.to == op.item or (op.to in state.entities and _inside(state, op.to, op.item)):
        raise Rejected(f"{op.item} cannot be put inside itself")
    sealed = _locked_container_around(state, item.current_location)
    if sealed:
        raise Rejected(f"{op.item} is inside the locked {sealed}")
    if op.to in state.entities:
        target = state.entities[op.to]
        if not target.container:
            raise Rejected(f"{op.to} is not a container")
        sealed = _locked_container_around(state, op.to)
        if sealed:
            raise Rejected(f"{op.to} is locked" if sealed == op.to else f"{op.to} is inside the locked {sealed}")
    elif op.to in state.members:
        if not state.members[op.to].can_act:
            raise Rejected(f"{op.to} is {state.members[op.to].status.value}")
    elif op.to not in state.npcs and op.to not in state.locations:
        raise Rejected(f"unknown holder {op.to!r}")
    if state.place_of(op.item) != state.place_of(op.to):
        raise Rejected(f"{op.item} and {op.to} are not in the same place")
    item.current_location = op.to


def _locked_container_around(state: WorldState, holder: str) -> str:
    """The first locked container among ``holder`` and the containers around it ("" if none)."""
    seen: set[str] = set()
    while holder in state.entities and holder not in seen:
        seen.add(holder)
        if state.entities[holder].locked:
            return holder
        holder = state.entities[holder].current_location
    return ""


def _set_following(state: WorldState, npc_id: str, member_id: str) -> None:
    npc = _need(state.npcs, npc_id, "NPC")
    if member_id:
        member = _need(state.members, member_id, "member")
        if member.current_location != npc.current_location:
            raise Rejected(f"{npc_id} and {member_id} are not in the same place")
        if npc.status in (NpcStatus.DEAD, NpcStatus.UNCONSCIOUS, NpcStatus.FLED):
            raise Rejected(f"{npc_id} is {npc.status.value} and cannot follow")
    npc.following = member_id


def _set_lock(state: WorldState, subject: str, locked: bool) -> None:
    edge = state.edge(subject)
    if edge is not None:
        edge.locked = locked
        return
    entity = state.entities.get(subject)
    if entity is None or not entity.container:
        raise Rejected(f"{subject!r} is neither a door nor a container")
    entity.locked = locked


def _spawn(state: WorldState, npc_id: str, at: str) -> None:
    if npc_id in state.npcs:
        raise Rejected(f"{npc_id} is already in the world")
    npc = _need(state.reserve_npcs, npc_id, "reinforcement")
    location = _need(state.locations, at, "location")
    if not location.entry:
        raise Rejected(f"{at} is not an entry point for reinforcements")
    del state.reserve_npcs[npc_id]
    npc.current_location = at
    npc.last_moved_turn = state.turn  # arriving is its move: it cannot walk on in the same turn
    state.npcs[npc_id] = npc


def _advance_clock(state: WorldState, minutes: int) -> None:
    """Advance the clock, all or nothing, within the turn's allowance of ``MAX_CLOCK_MINUTES_PER_TURN``."""
    clock = state.globals
    spent = clock.advanced_minutes if clock.advanced_turn == state.turn else 0
    if spent + minutes > MAX_CLOCK_MINUTES_PER_TURN:
        raise Rejected(
            f"the clock advances at most {MAX_CLOCK_MINUTES_PER_TURN} minutes per turn; "
            f"{spent} already this turn, {minutes} more would exceed it"
        )
    clock.clock += minutes
    clock.advanced_turn = state.turn
    clock.advanced_minutes = spent + minutes
