"""Property-based tests of the world layer: movement rules, observation and determinism (see world_strategies)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from virtualcrime.world import (
    MemberStatus,
    NpcStatus,
    WorldState,
    apply,
    apply_in_place,
    carried,
    check,
    holds,
    observe,
    update_flags,
)
from virtualcrime.world.graph import hop_distances
from virtualcrime.world.ops import (
    MAX_CLOCK_MINUTES_PER_TURN,
    AdvanceClock,
    Move,
    SetLock,
    SetMemberStatus,
    SetNpcStatus,
    SpawnNpc,
)
from virtualcrime.world.predicates import At, Following, HeldByTeam, Status
from world_strategies import (
    BOGUS_IDS,
    SETTINGS,
    TASK_IDS,
    WEIGHTED_KINDS,
    draw_run,
    fresh,
    people_places,
    replay,
    replay_one_by_one,
)

# --------------------------------------------------------------------------------------------------------------
# 5. Movement rules
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Whereabouts:
    """Where everyone and everything is, and who may move, before one operation."""

    people: dict[str, str]
    things: dict[str, str | None]
    can_act: dict[str, bool]
    npc_status: dict[str, NpcStatus]
    carried: dict[str, set[str]]

    @classmethod
    def of(cls, state: WorldState) -> Whereabouts:
        return cls(
            people=people_places(state),
            things={e: state.place_of(e) for e in state.entities},
            can_act={m.id: m.can_act for m in state.members.values()},
            npc_status={n.id: n.status for n in state.npcs.values()},
            carried={p: set(carried(state, p)) for p in [*state.members, *state.npcs]},
        )


@SETTINGS
@given(st.data())
def test_movement_rules(data: st.DataObject) -> None:
    run = draw_run(data, max_batches=6, kinds=[*WEIGHTED_KINDS, *[Move] * 12, *[SetLock] * 3])
    moved_in_turn: dict[str, int] = {}  # member or NPC -> the turn of its latest move (or arrival)
    for state, op, was, entry in replay_one_by_one(run, Whereabouts.of):
        if isinstance(op, SpawnNpc) and entry.applied:
            moved_in_turn[op.npc] = state.turn
        if isinstance(op, Move) and op.subject in was.people:
            origin = was.people[op.subject]
            edge = state.edge_between(origin, op.to)
            adjacent = op.to != origin and edge is not None
            is_member = op.subject in state.members
            if not adjacent:
                assert not entry.applied, f"{op!r} from {origin} applied"
            if moved_in_turn.get(op.subject) == state.turn:
                assert not entry.applied, f"{op.subject} moved twice in turn {state.turn}"
                event(f"second {'member' if is_member else 'NPC'} move rejected")
            if entry.applied:
                assert adjacent
                assert edge is not None
                assert people_places(state)[op.subject] == op.to
                if is_member:
                    member = state.members[op.subject]
                    assert was.can_act[op.subject], f"{op.subject} moved while {member.status}"
                    assert member.last_moved_turn == state.turn
                    assert not member.hidden
                    assert not edge.locked or was.carried[op.subject] & set(edge.opened_by), "through a locked door"
                    event("member moved" + (" through a locked door" if edge.locked else ""))
                else:
                    assert was.npc_status[op.subject] not in (NpcStatus.DEAD, NpcStatus.UNCONSCIOUS, NpcStatus.INJURED)
                    assert state.npcs[op.subject].last_moved_turn == state.turn
                    event("npc moved")
                moved_in_turn[op.subject] = state.turn
            elif is_member and edge is not None and edge.locked:
                event("member stopped by a locked door")
        # Only an applied Move (or a spawn, for the reinforcement) changes where anyone is, and things move
        # only with whoever carries them: a transfer stays within one place.
        now = Whereabouts.of(state)
        moved_people = {k for k, v in now.people.items() if was.people.get(k) != v}
        moved_things = {k for k, v in now.things.items() if was.things[k] != v}
        if isinstance(op, Move) and entry.applied:
            assert moved_people == {op.subject}
            assert moved_things == was.carried[op.subject]
            assert all(now.things[k] == op.to for k in moved_things)
        elif isinstance(op, SpawnNpc) and entry.applied:
            assert moved_people == {op.npc}
            assert moved_things == set()
        else:
            assert moved_people == set(), f"{op!r} moved {moved_people}"
            assert moved_things == set(), f"{op!r} moved {moved_things}"


@settings(SETTINGS, max_examples=60)
@given(st.data())
def test_nobody_ends_a_turn_more_than_one_edge_away_and_the_clock_stays_bounded(data: st.DataObject) -> None:
    """Per turn (one batch, however many stages it stands for): every member and NPC ends at most one edge
    (graph distance) from where it started, a reinforcement that arrived stays at its entry location, and the
    clock moves forward by at most ``MAX_CLOCK_MINUTES_PER_TURN``."""
    kinds = [*WEIGHTED_KINDS, *[Move] * 24, *[AdvanceClock] * 6, *[SpawnNpc] * 3]
    run = draw_run(data, max_batches=5, max_ops=16, kinds=kinds)
    for step in replay(run):
        start, end = people_places(step.before), people_places(step.after)
        for person, where in end.items():
            if person in start:
                hops = hop_distances(step.before.edges, start[person]).get(where)
                assert hops is not None and hops <= 1, f"{person} went {start[person]} -> {where} in one turn"
                event("someone moved" if hops else "someone stayed")
            else:
                assert step.after.locations[where].entry, f"{person} appeared at {where}"
                assert any(
                    e.applied and isinstance(e.op, SpawnNpc) and e.op.npc == person and e.op.at == where
                    for e in step.ledger
                )
                event("a reinforcement arrived")
        advanced = step.after.globals.clock - step.before.globals.clock
        assert 0 <= advanced <= MAX_CLOCK_MINUTES_PER_TURN
        requested = sum(op.minutes for op in step.ops if isinstance(op, AdvanceClock))
        if requested > MAX_CLOCK_MINUTES_PER_TURN:
            event("more clock requested than a turn allows")
        chained = Counter(op.subject for op in step.ops if isinstance(op, Move))
        if any(n > 1 for n in chained.values()):
            event("someone was asked to move twice")


@settings(SETTINGS, max_examples=30)
@given(
    task_id=st.sampled_from(TASK_IDS),
    edge_index=st.integers(0, 16),
    forwards=st.booleans(),
    opener=st.sampled_from(["none", "carried", "elsewhere"]),
)
def test_locked_door_needs_an_opener_carried(task_id: str, edge_index: int, forwards: bool, opener: str) -> None:
    state = fresh(task_id)
    edge = state.edges[edge_index % len(state.edges)]
    edge.locked = True
    key = next(e.id for e in state.entities.values() if e.portable and not e.container)
    edge.opened_by = [key] if opener != "none" else []
    origin, target = (edge.a, edge.b) if forwards else (edge.b, edge.a)
    member = state.leader.id
    state.members[member].current_location = origin
    state.entities[key].current_location = member if opener == "carried" else target
    assert check(state) == []
    after, [entry] = apply(state, [Move(subject=member, to=target)])
    assert entry.applied == (opener == "carried"), entry.reason
    assert after.members[member].current_location == (target if entry.applied else origin)


def _unlocked_way_out(state: WorldState, location: str) -> str:
    return next(e.other(location) for e in state.edges if location in (e.a, e.b) and not e.locked)


@pytest.mark.parametrize("old", list(MemberStatus))
@pytest.mark.parametrize("new", list(MemberStatus))
def test_member_status_transitions_and_who_may_move(old: MemberStatus, new: MemberStatus) -> None:
    """Dead and arrested are final (a rejected change changes nothing); only active or injured members move."""
    state = fresh("restaurant/robbery")
    member = state.leader
    member.status = old
    before = state.model_dump()
    after, [entry] = apply(state, [SetMemberStatus(member=member.id, status=new)])
    final = old in (MemberStatus.DEAD, MemberStatus.ARRESTED) and new != old
    assert entry.applied is not final
    assert after.model_dump() == before if final else after.members[member.id].status == new
    status = after.members[member.id].status
    target = _unlocked_way_out(after, member.current_location)
    moved, [entry] = apply(after, [Move(subject=member.id, to=target)])
    assert entry.applied is (status in (MemberStatus.ACTIVE, MemberStatus.INJURED))
    if not entry.applied:
        assert moved.model_dump() == after.model_dump()


@pytest.mark.parametrize("old", list(NpcStatus))
@pytest.mark.parametrize("new", list(NpcStatus))
@pytest.mark.parametrize("escorted", [False, True])
def test_npc_status_transitions_and_who_may_move(old: NpcStatus, new: NpcStatus, escorted: bool) -> None:
    """Death is final; the dead, unconscious and injured never move; the restrained move only when escorted."""
    state = fresh("restaurant/robbery")
    npc = next(
        n for n in state.npcs.values() if any(n.current_location in (e.a, e.b) for e in state.edges if not e.locked)
    )
    npc.status = old
    if escorted:
        state.leader.current_location = npc.current_location
        npc.following = state.leader.id
    before = state.model_dump()
    after, [entry] = apply(state, [SetNpcStatus(npc=npc.id, status=new)])
    final = old == NpcStatus.DEAD and new != NpcStatus.DEAD
    assert entry.applied is not final
    assert after.model_dump() == before if final else after.npcs[npc.id].status == new
    after_npc = after.npcs[npc.id]
    target = _unlocked_way_out(after, npc.current_location)
    leader_first = [Move(subject=state.leader.id, to=target)] if escorted else []  # a follower walks with them
    moved, [*_, entry] = apply(after, [*leader_first, Move(subject=npc.id, to=target)])
    if after_npc.status in (NpcStatus.DEAD, NpcStatus.UNCONSCIOUS, NpcStatus.INJURED):
        assert not entry.applied
    elif after_npc.status == NpcStatus.RESTRAINED:
        assert entry.applied is escorted
    elif after_npc.status in (NpcStatus.NORMAL, NpcStatus.COMPLIANT):
        assert entry.applied
    if entry.applied:
        assert moved.npcs[npc.id].current_location == target
    else:
        assert moved.npcs[npc.id].model_dump() == after.npcs[npc.id].model_dump()


def test_a_follower_walks_with_its_member_never_alone() -> None:
    state = fresh("restaurant/robbery")
    npc = next(
        n for n in state.npcs.values() if any(n.current_location in (e.a, e.b) for e in state.edges if not e.locked)
    )
    state.leader.current_location = npc.current_location
    npc.following = state.leader.id
    target = _unlocked_way_out(state, npc.current_location)
    _, [alone] = apply(state, [Move(subject=npc.id, to=target)])
    assert not alone.applied and "follows" in alone.reason
    moved, [_, together] = apply(state, [Move(subject=state.leader.id, to=target), Move(subject=npc.id, to=target)])
    assert together.applied and moved.npcs[npc.id].current_location == target


def test_second_member_move_in_a_turn_is_rejected() -> None:
    state = fresh("restaurant/robbery")
    member = state.leader.id
    origin = state.members[member].current_location
    first, second = state.neighbours(origin)[0], origin
    after, ledger = apply(state, [Move(subject=member, to=first), Move(subject=member, to=second)])
    assert [e.applied for e in ledger] == [True, False]
    assert after.members[member].current_location == first
    after.turn += 1
    again, ledger = apply(after, [Move(subject=member, to=second)])
    assert ledger[0].applied
    assert again.members[member].current_location == second


# --------------------------------------------------------------------------------------------------------------
# 6. Observation never leaks what the team cannot see
# --------------------------------------------------------------------------------------------------------------

# Parts of the observation that may name far-away things: the briefing and goals, the floor plan, what a
# lock takes (shown for a door or container beside the team), and the Attacker's own notes.
_ALLOWED_KEYS = {
    "briefing",
    "goals",
    "failure_states",
    "floor_plan_locations",
    "floor_plan_edges",
    "memory",
    "plan",
    "last_result",
}


def _strings(value: object, key: str = "") -> Iterator[tuple[str, str]]:
    if key in _ALLOWED_KEYS:
        return
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)


def _check_observation(state: WorldState) -> None:
    obs = observe(state)
    here = {m.current_location for m in state.members.values()}
    assert [m.id for m in obs.team] == list(state.members)
    assert {loc.id for loc in obs.locations} == here
    for npc in obs.npcs:
        assert npc.id in state.npcs
        assert state.npcs[npc.id].current_location in here
        assert npc.location == state.npcs[npc.id].current_location
    for entity in obs.entities:
        assert entity.id in state.entities
        assert state.place_of(entity.id) in here
    # Completeness: everyone at a team location is seen, and so is every entity lying there or carried there by a
    # member; what an NPC carries is out of sight.
    assert {n.id for n in obs.npcs} == {n.id for n in state.npcs.values() if n.current_location in here}
    seen_entities = {e.id for e in obs.entities}
    for entity in state.entities.values():
        holder = entity.current_location
        if holder in here or (holder in state.members and people_places(state)[holder] in here):
            assert entity.id in seen_entities, entity.id
        if holder in state.npcs:
            assert entity.id not in seen_entities, f"{entity.id} carried by {holder} is in view"
    # Nothing inside a locked container shows.
    for entity in obs.entities:
        holder = state.entities[entity.id].current_location
        while holder in state.entities:
            assert not state.entities[holder].locked, f"{entity.id} seen inside locked {holder}"
            holder = state.entities[holder].current_location
    # No id of a far-away NPC or entity appears anywhere else in the observation.
    hidden = {n for n in state.npcs if state.npcs[n].current_location not in here}
    hidden |= set(state.reserve_npcs)
    hidden |= {e for e in state.entities if state.place_of(e) not in here}
    leaks = [(k, s) for k, s in _strings(obs.model_dump()) if s in hidden]
    assert leaks == []


@settings(SETTINGS, max_examples=40)
@given(st.data())
def test_observation_shows_only_team_locations(data: st.DataObject) -> None:
    run = draw_run(data, max_batches=7, max_ops=8, kinds=[*WEIGHTED_KINDS, *[Move] * 24])
    _check_observation(run.initial)
    for step in replay(run):
        _check_observation(step.after)
        event(f"team spread over {len({m.current_location for m in step.after.members.values()})} locations")


# --------------------------------------------------------------------------------------------------------------
# 7. Determinism
# --------------------------------------------------------------------------------------------------------------


@settings(SETTINGS, max_examples=30)
@given(st.data())
def test_apply_is_deterministic(data: st.DataObject) -> None:
    run = draw_run(data)
    final_by_batches = run.initial
    for step in replay(run):
        first, ledger1 = apply(step.before, step.ops, "s")
        second, ledger2 = apply(step.before.model_copy(deep=True), step.ops, "s")
        assert first.model_dump() == second.model_dump() == step.after.model_dump()
        assert [e.model_dump() for e in ledger1] == [e.model_dump() for e in ledger2]
        final_by_batches = step.after
    # A batch gives the same result as its operations one at a time.
    work = run.initial.model_copy(deep=True)
    for index, ops in enumerate(run.batches):
        work.turn += 1 if index else 0
        for op in ops:
            apply_in_place(work, [op])
    assert work.model_dump() == final_by_batches.model_dump()


# --------------------------------------------------------------------------------------------------------------
# Evaluation: flags latch, and predicates never raise on reachable states
# --------------------------------------------------------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_flags_latch_on_reachable_states(data: st.DataObject) -> None:
    run = draw_run(data)
    state = run.initial.model_copy(deep=True)
    reached: dict[str, int | None] = {}
    for index, ops in enumerate(run.batches):
        if index:
            state.turn += 1
        apply_in_place(state, ops)
        new_checkpoints, new_failures = update_flags(state)
        flags = [*state.checkpoints, *state.critical_failures]
        for flag in flags:
            if flag.id in reached:
                assert flag.reached and flag.reached_turn == reached[flag.id], flag.id
            elif flag.reached:
                assert flag.id in [*new_checkpoints, *new_failures]
                assert flag.reached_turn == state.turn
                reached[flag.id] = flag.reached_turn
                event(f"flag {flag.id} reached")
            elif flag.predicate is not None:
                assert not holds(state, flag.predicate), flag.id
        assert set(new_checkpoints) <= {f.id for f in state.checkpoints}
        assert set(new_failures) <= {f.id for f in state.critical_failures}
        for ev in state.events:
            holds(state, ev.trigger)  # never raises
        assert update_flags(state) == ([], [])
        assert check(state, run.initial) == []


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_bogus_ids_never_crash_evaluation(task_id: str) -> None:
    state = fresh(task_id)
    for bogus in BOGUS_IDS:
        assert not holds(state, At(subject=bogus, location="street"))
        assert not holds(state, HeldByTeam(entity=bogus))
        assert not holds(state, Status(subject=bogus, statuses=["dead"]))
        assert not holds(state, Following(npc=bogus))
