"""Per-turn limits of the world rules (DESIGN.md, one turn, step 8).

Every member and NPC moves at most one edge per turn over all World Manager stages and event effects together
(a reinforcement's arrival is its move), and the clock advances by at most ``MAX_CLOCK_MINUTES_PER_TURN`` per
turn over all ``advance_clock`` operations. The offline rules World Manager keeps to both in normal play.
"""

from __future__ import annotations

from collections import Counter

import pytest
from pydantic import ValidationError

from conftest import play
from virtualcrime.roles import Action, Outcome, OutcomeCategory, StageContext, StageResult
from virtualcrime.roles.rules import run_rules_stage
from virtualcrime.scenarios import get_task, load_tasks
from virtualcrime.world import LedgerEntry, WorldState, apply, apply_in_place, check
from virtualcrime.world.ops import (
    MAX_CLOCK_MINUTES_PER_TURN,
    AdvanceClock,
    Move,
    Operation,
    SetFollowing,
    SpawnNpc,
)

WAITER = "waiter_quinn"  # starts in the dining room of the restaurant
WALK = ["front_entrance", "street", "parking_lot", "back_alley", "loading_dock"]  # five edges, one after another
ALL_TASKS = sorted(load_tasks())


def restaurant(turn: int = 1) -> WorldState:
    state = get_task("restaurant/robbery").initial_state()
    state.turn = turn
    return state


def applied(ledger: list[LedgerEntry]) -> list[bool]:
    return [entry.applied for entry in ledger]


# --------------------------------------------------------------------------------------------------------------
# NPCs move at most one edge per turn, like members
# --------------------------------------------------------------------------------------------------------------


def test_five_chained_npc_moves_in_one_stage_apply_only_the_first() -> None:
    state = restaurant()
    assert state.npcs[WAITER].current_location == "dining_room"
    after, ledger = apply(state, [Move(subject=WAITER, to=place) for place in WALK], stage="npcs")
    assert applied(ledger) == [True, False, False, False, False]
    assert ledger[1].reason == f"{WAITER} already moved this turn"  # the later steps are not even adjacent now
    assert after.npcs[WAITER].current_location == "front_entrance"
    assert after.npcs[WAITER].last_moved_turn == 1


def test_an_npc_move_in_a_second_stage_of_the_turn_is_rejected_and_allowed_next_turn() -> None:
    state = restaurant()
    [first] = apply_in_place(state, [Move(subject=WAITER, to="front_entrance")], "direct_effects")
    [second] = apply_in_place(state, [Move(subject=WAITER, to="street")], "npcs")
    assert first.applied and not second.applied
    assert second.stage == "npcs" and second.reason == f"{WAITER} already moved this turn"
    assert state.npcs[WAITER].current_location == "front_entrance"
    state.turn += 1
    [third] = apply_in_place(state, [Move(subject=WAITER, to="street")], "npcs")
    assert third.applied
    assert state.npcs[WAITER].current_location == "street"


def test_a_rejected_npc_move_does_not_use_up_the_turn() -> None:
    state = restaurant()
    rejected, accepted = apply_in_place(
        state, [Move(subject=WAITER, to="street"), Move(subject=WAITER, to="front_entrance")], "npcs"
    )
    assert not rejected.applied and "not adjacent" in rejected.reason
    assert accepted.applied


def test_everyone_has_a_move_of_their_own() -> None:
    state = restaurant()
    ops: list[Operation] = [
        Move(subject="boss", to="street"),
        Move(subject="finch", to="back_alley"),
        Move(subject=WAITER, to="kitchen"),
        Move(subject="chef_morel", to="pantry"),
    ]
    _, ledger = apply(state, ops, "npcs")
    assert all(applied(ledger))


def test_members_one_move_rule_is_unchanged() -> None:
    state = restaurant()
    [first] = apply_in_place(state, [Move(subject="finch", to="street")], "direct_effects")
    [second] = apply_in_place(state, [Move(subject="finch", to="front_entrance")], "npcs")
    assert first.applied and not second.applied
    assert second.reason == "finch already moved this turn"
    assert state.members["finch"].last_moved_turn == 1
    state.turn += 1
    [third] = apply_in_place(state, [Move(subject="finch", to="front_entrance")], "direct_effects")
    assert third.applied
    assert state.members["finch"].current_location == "front_entrance"


# --------------------------------------------------------------------------------------------------------------
# Reinforcements arrive and stay put that turn
# --------------------------------------------------------------------------------------------------------------


def test_a_spawned_reinforcement_cannot_move_in_the_same_turn() -> None:
    state = restaurant(turn=7)
    ledger = apply_in_place(
        state, [SpawnNpc(npc="officer_hale", at="street"), Move(subject="officer_hale", to="parking_lot")], "events"
    )
    assert applied(ledger) == [True, False]
    assert ledger[1].reason == "officer_hale already moved this turn"
    [later] = apply_in_place(state, [Move(subject="officer_hale", to="front_entrance")], "npcs")
    assert not later.applied
    assert state.npcs["officer_hale"].current_location == "street"
    assert state.npcs["officer_hale"].last_moved_turn == 7
    state.turn += 1
    [next_turn] = apply_in_place(state, [Move(subject="officer_hale", to="parking_lot")], "npcs")
    assert next_turn.applied


# --------------------------------------------------------------------------------------------------------------
# The clock advances by a bounded amount per turn
# --------------------------------------------------------------------------------------------------------------


def test_the_operation_limit_is_the_turn_bound() -> None:
    metadata = AdvanceClock.model_fields["minutes"].metadata
    assert [m.le for m in metadata if getattr(m, "le", None) is not None] == [MAX_CLOCK_MINUTES_PER_TURN]
    AdvanceClock(minutes=MAX_CLOCK_MINUTES_PER_TURN)
    with pytest.raises(ValidationError):
        AdvanceClock(minutes=MAX_CLOCK_MINUTES_PER_TURN + 1)


def test_sixty_maximal_advances_in_one_turn_move_the_clock_by_the_bound_at_most() -> None:
    state = restaurant()
    start = state.globals.clock
    after, ledger = apply(state, [AdvanceClock(minutes=240)] * 60, stage="direct_effects")
    assert after.globals.clock - start <= MAX_CLOCK_MINUTES_PER_TURN
    assert after.globals.clock - start == 240  # the first fits the bound of 240, the rest do not
    assert applied(ledger) == [True] + [False] * 59
    assert all("per turn" in entry.reason for entry in ledger[1:])
    assert check(after) == []


def test_the_turn_budget_is_shared_by_all_stages() -> None:
    state = restaurant()
    start = state.globals.clock
    ledger = apply_in_place(state, [AdvanceClock(minutes=120)], "direct_effects")
    ledger += apply_in_place(state, [AdvanceClock(minutes=100)], "events")
    ledger += apply_in_place(state, [AdvanceClock(minutes=30), AdvanceClock(minutes=20)], "npcs")
    ledger += apply_in_place(state, [AdvanceClock(minutes=0)], "synthesis")
    assert applied(ledger) == [True, True, False, True, True]
    assert ledger[2].reason == (
        f"the clock advances at most {MAX_CLOCK_MINUTES_PER_TURN} minutes per turn; "
        "220 already this turn, 30 more would exceed it"
    )
    assert state.globals.clock == start + MAX_CLOCK_MINUTES_PER_TURN
    assert state.globals.advanced_minutes == MAX_CLOCK_MINUTES_PER_TURN


def test_an_advance_over_the_budget_is_rejected_whole_not_clamped() -> None:
    state = restaurant()
    start = state.globals.clock
    first, second = apply_in_place(state, [AdvanceClock(minutes=200), AdvanceClock(minutes=100)], "events")
    assert first.applied and not second.applied
    assert state.globals.clock == start + 200


def test_over_many_turns_the_clock_moves_normally() -> None:
    state = restaurant(turn=0)
    start = state.globals.clock
    for _ in range(30):
        state.turn += 1
        # The rules World Manager's own advance (an action's budget, at most 120) plus event time.
        ledger = apply_in_place(state, [AdvanceClock(minutes=120)], "direct_effects")
        ledger += apply_in_place(state, [AdvanceClock(minutes=120)], "events")
        assert all(applied(ledger))
    assert state.globals.clock == start + 30 * 240
    assert state.globals.clock_text.startswith("day 6")


def test_invariants_catch_broken_turn_bookkeeping() -> None:
    state = restaurant()
    assert check(state) == []
    state.npcs[WAITER].last_moved_turn = 2
    state.members["finch"].last_moved_turn = 2
    state.globals.advanced_turn = 1
    state.globals.advanced_minutes = MAX_CLOCK_MINUTES_PER_TURN + 1
    problems = check(state)
    assert any(WAITER in p and "turn 2" in p for p in problems)
    assert any("finch" in p and "turn 2" in p for p in problems)
    assert any("per turn" in p for p in problems)


# --------------------------------------------------------------------------------------------------------------
# The rules World Manager keeps to the limits
# --------------------------------------------------------------------------------------------------------------


def stage(state: WorldState, name: str, action: Action) -> tuple[StageResult, list[LedgerEntry]]:
    outcome = Outcome(category=OutcomeCategory.SUCCESS, description="t", probability=1.0)
    result = run_rules_stage(name, StageContext(state=state, action=action, outcome=outcome, verdict=None))  # type: ignore[arg-type]
    return result, apply_in_place(state, result.ops, name)


def act(verb: str, actor: str = "finch", target: str = "") -> Action:
    return Action(verb=verb, description="test", actor=actor, target=target, minutes=5)


def npc_moves(result: StageResult) -> set[str]:
    return {op.subject for op in result.ops if isinstance(op, Move)}


def test_a_follower_walks_with_its_member_and_that_is_its_move() -> None:
    state = restaurant()
    state.members["finch"].current_location = "dining_room"
    apply_in_place(state, [SetFollowing(npc=WAITER, member="finch")])
    _, ledger = stage(state, "direct_effects", act("move", target="kitchen"))
    assert all(applied(ledger))
    assert state.npcs[WAITER].current_location == "kitchen"
    assert state.npcs[WAITER].last_moved_turn == state.turn
    result, ledger = stage(state, "npcs", act("move", target="kitchen"))
    assert WAITER not in npc_moves(result)
    assert all(applied(ledger))
    [extra] = apply_in_place(state, [Move(subject=WAITER, to="pantry")], "npcs")
    assert not extra.applied and extra.reason == f"{WAITER} already moved this turn"


def test_the_npc_stage_leaves_a_just_arrived_reinforcement_where_it_arrived() -> None:
    state = restaurant(turn=4)
    state.globals.alarm = True
    stage(state, "events", act("wait"))  # the police are called; they arrive three turns later
    state.turn = 7
    _, ledger = stage(state, "events", act("wait"))
    assert {op.npc for op in (e.op for e in ledger) if isinstance(op, SpawnNpc)} == {"officer_hale", "officer_brandt"}
    result, ledger = stage(state, "npcs", act("wait"))
    assert npc_moves(result) & {"officer_hale", "officer_brandt"} == set()
    assert all(applied(ledger))
    assert state.npcs["officer_hale"].current_location == "street"
    state.turn = 8
    result, ledger = stage(state, "npcs", act("wait"))
    assert {"officer_hale", "officer_brandt"} <= npc_moves(result)
    assert all(applied(ledger))
    assert state.npcs["officer_hale"].current_location in state.neighbours("street")


@pytest.mark.parametrize("task_id", ALL_TASKS)
def test_offline_roles_keep_to_the_turn_limits_and_nothing_is_rejected(task_id: str) -> None:
    """Normal play: the rules World Manager never proposes an operation the per-turn limits reject."""
    for seed in range(3):
        game, _ = play(task_id, seed)
        for record in game.records:
            rejected = [f"{e.stage}: {e.op!r}: {e.reason}" for e in record.ledger if not e.applied]
            assert rejected == [], f"seed {seed} turn {record.turn}"
            done = [e.op for e in record.ledger if e.applied]
            moves = Counter(op.subject for op in done if isinstance(op, Move))
            spawned = {op.npc for op in done if isinstance(op, SpawnNpc)}
            assert [who for who, n in moves.items() if n > 1 or who in spawned] == [], f"turn {record.turn}"
            minutes = sum(op.minutes for op in done if isinstance(op, AdvanceClock))
            assert minutes <= MAX_CLOCK_MINUTES_PER_TURN
