"""Stage (c) of the rules World Manager: NPC reactions (notice, investigate, alarm, arrest) and schedules."""

from __future__ import annotations

from ...world import WorldState
from ...world.enums import MAX_ALERTNESS, MemberStatus, NpcRole, NpcStatus
from ...world.graph import shortest_path
from ...world.models import Member, Npc
from ...world.ops import (
    AppendHistory,
    Move,
    Operation,
    SetAlarm,
    SetAlertness,
    SetInvestigating,
    SetMemberStatus,
)
from .common import DISGUISED, RESTRICTED

DECAY_EVERY = 6
ALARM_PANEL_TAG = "alarm_panel"


def npc_reactions(state: WorldState) -> list[Operation]:
    """One decision per NPC, in id order, from the state after the action's direct effects and the events.

    Each NPC moves at most one edge per turn over all stages, so one that already moved this turn (a follower
    that walked with its member, a reinforcement that has just arrived) still reacts but takes no step.
    """
    ops: list[Operation] = []
    arrested: set[str] = set()
    alarm = state.globals.alarm
    for npc in sorted(state.npcs.values(), key=lambda n: n.id):
        if npc.status == NpcStatus.DEAD or npc.status == NpcStatus.UNCONSCIOUS:
            continue
        if npc.following:
            ops += _follow(state, npc)
            continue
        if npc.status != NpcStatus.NORMAL:
            continue
        seen = [m for m in _visible_members(state, npc.current_location) if m.id not in arrested]
        if ON_FIRE in state.locations[npc.current_location].tags:
            ops += _flee_fire(state, npc)
            continue
        if npc.enforcer:
            reaction = _enforcer(state, npc, seen, alarm)
            arrested |= {op.member for op in reaction if isinstance(op, SetMemberStatus)}
            if any(isinstance(op, SetAlarm) for op in reaction):
                alarm = True
        else:
            reaction = _bystander(state, npc, seen, alarm)
            if any(isinstance(op, SetAlarm) for op in reaction):
                alarm = True
        ops += reaction
    ops += _fire_injuries(state)
    return ops


ON_FIRE = "on_fire"


def _visible_members(state: WorldState, location: str) -> list[Member]:
    return sorted(
        (m for m in state.members.values() if m.current_location == location and m.can_act and not m.hidden),
        key=lambda m: m.id,
    )


def _suspicious(state: WorldState, member: Member) -> bool:
    return RESTRICTED in state.locations[member.current_location].tags and DISGUISED not in member.tags


def _enforcer(state: WorldState, npc: Npc, seen: list[Member], alarm: bool) -> list[Operation]:
    if seen and (npc.alertness >= MAX_ALERTNESS or (npc.alertness >= 2 and alarm)):
        target = seen[0]
        return [
            SetMemberStatus(member=target.id, status=MemberStatus.ARRESTED),
            AppendHistory(subject=npc.id, text=f"[turn {state.turn}] Arrested {target.name}."),
        ]
    if seen and npc.alertness == 2:
        return [
            SetAlertness(npc=npc.id, level=MAX_ALERTNESS),
            SetAlarm(ringing=True),
            AppendHistory(subject=npc.id, text=f"[turn {state.turn}] Confronted {seen[0].name} and radioed an alarm."),
        ]
    if seen and any(_suspicious(state, m) for m in seen):
        return [
            SetAlertness(npc=npc.id, level=npc.alertness + 1),
            AppendHistory(
                subject=npc.id,
                text=f"[turn {state.turn}] Noticed {seen[0].name} where outsiders should not be.",
            ),
        ]
    ward = state.npcs.get(npc.guarding)
    if ward is not None and ward.following and ward.current_location == npc.current_location and seen:
        return [
            SetAlertness(npc=npc.id, level=min(MAX_ALERTNESS, npc.alertness + 1)),
            AppendHistory(subject=npc.id, text=f"[turn {state.turn}] Asked where {ward.name} is being taken."),
        ]
    if npc.role == NpcRole.POLICE or npc.alertness >= MAX_ALERTNESS:
        goal = _nearest_member(state, npc)
    elif ward is not None and ward.current_location != npc.current_location:
        goal = ward.current_location
    elif npc.investigating:
        if npc.current_location == npc.investigating:
            return [SetInvestigating(npc=npc.id)]
        goal = npc.investigating
    else:
        return _decay(state, npc) + _schedule_step(state, npc)
    return _step_towards(state, npc, goal)


def _bystander(state: WorldState, npc: Npc, seen: list[Member], alarm: bool) -> list[Operation]:
    if seen and npc.alertness >= MAX_ALERTNESS and not alarm:
        return [
            SetAlarm(ringing=True),
            AppendHistory(subject=npc.id, text=f"[turn {state.turn}] Raised the alarm."),
        ]
    if seen and npc.alertness == 2:
        ops: list[Operation] = [SetAlertness(npc=npc.id, level=MAX_ALERTNESS)]
        for guard in state.npcs.values():
            if guard.role == NpcRole.GUARD and guard.status == NpcStatus.NORMAL and guard.alertness < 2:
                ops += [
                    SetAlertness(npc=guard.id, level=2),
                    SetInvestigating(npc=guard.id, location=npc.current_location),
                ]
        return ops
    if seen and npc.role == NpcRole.STAFF and any(_suspicious(state, m) for m in seen):
        return [SetAlertness(npc=npc.id, level=min(MAX_ALERTNESS, npc.alertness + 1))]
    return _decay(state, npc) + _schedule_step(state, npc)


def _decay(state: WorldState, npc: Npc) -> list[Operation]:
    if 0 < npc.alertness < MAX_ALERTNESS and not state.globals.alarm and state.turn % DECAY_EVERY == 0:
        return [SetAlertness(npc=npc.id, level=npc.alertness - 1)]
    return []


def _schedule_step(state: WorldState, npc: Npc) -> list[Operation]:
    if not npc.schedule:
        return []
    minute = state.globals.clock % (24 * 60)
    due = [s for s in npc.schedule if s.minute <= minute]
    stop = max(due, key=lambda s: s.minute) if due else max(npc.schedule, key=lambda s: s.minute)
    return _step_towards(state, npc, stop.location)


def _follow(state: WorldState, npc: Npc) -> list[Operation]:
    leader = state.members.get(npc.following)
    if leader is None or leader.current_location == npc.current_location:
        return []
    return _step_towards(state, npc, leader.current_location)


def _flee_fire(state: WorldState, npc: Npc) -> list[Operation]:
    exits = [loc.id for loc in state.locations.values() if loc.exit]
    return _step_towards(state, npc, min(exits, key=lambda e: len(path(state, npc, e) or [0] * 99)))


def _fire_injuries(state: WorldState) -> list[Operation]:
    return [
        SetMemberStatus(member=m.id, status=MemberStatus.INJURED)
        for m in state.members.values()
        if m.status == MemberStatus.ACTIVE
        and ON_FIRE in state.locations[m.current_location].tags
        and m.last_moved_turn != state.turn
    ]


def _nearest_member(state: WorldState, npc: Npc) -> str:
    free = [m for m in state.members.values() if m.can_act]
    if not free:
        return npc.current_location
    routes = [(len(path(state, npc, m.current_location) or [0] * 99), m.id, m.current_location) for m in free]
    return min(routes)[2]


def _step_towards(state: WorldState, npc: Npc, goal: str) -> list[Operation]:
    if npc.last_moved_turn == state.turn:
        return []
    route = path(state, npc, goal)
    if not route or len(route) < 2:
        return []
    return [Move(subject=npc.id, to=route[1])]


def path(state: WorldState, npc: Npc, goal: str) -> list[str] | None:
    """Shortest route for ``npc`` (respecting locked doors it cannot pass), start and goal included."""
    can_unlock = npc.role != NpcRole.CIVILIAN or bool(npc.following)
    return shortest_path(state.edges, npc.current_location, goal, lambda edge, nxt: can_unlock or not edge.locked)
