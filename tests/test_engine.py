"""The turn loop: determinism, both ends of the game, pre-check, limits and role failures."""

from __future__ import annotations

import asyncio

import pytest

from conftest import offline_roles, play
from virtualcrime.engine import EngineConfig, Game, Roles, RunStatus, sample_outcome, structural_problem
from virtualcrime.roles import Action, OutcomeCategory, PlanUpdate, RoleError, Verdict
from virtualcrime.roles.rules import RulesJudge, RulesWorldManager
from virtualcrime.scenarios import get_task
from virtualcrime.world import Observation

RESTAURANT = ["restaurant/robbery", "restaurant/kidnapping", "restaurant/assassination", "restaurant/arson"]


def records_json(task_id: str, seed: int) -> list[str]:
    game, _ = play(task_id, seed)
    return [r.model_dump_json() for r in game.records]


@pytest.mark.parametrize("task_id", RESTAURANT)
def test_same_seed_gives_identical_records(task_id: str) -> None:
    assert records_json(task_id, 7) == records_json(task_id, 7)


def test_a_game_that_releases_its_records_plays_the_same_run() -> None:
    kept, result = play("restaurant/robbery", 7)
    game = Game(get_task("restaurant/robbery").initial_state(), offline_roles(), 7)
    game.release_records()
    streamed: list[str] = []
    released = asyncio.run(game.run(on_turn=lambda record: streamed.append(record.model_dump_json())))
    assert game.records == [] and streamed == [r.model_dump_json() for r in kept.records]
    assert released.model_dump_json() == result.model_dump_json()


def test_different_seeds_differ_somewhere() -> None:
    runs = {tuple(records_json("restaurant/robbery", seed)) for seed in range(4)}
    assert len(runs) > 1


def test_scripted_attacker_wins_and_is_arrested_across_seeds() -> None:
    outcomes: dict[str, set[str]] = {}
    for task_id in RESTAURANT:
        for seed in range(6):
            _, result = play(task_id, seed)
            outcomes.setdefault(result.status.value, set()).add(task_id)
            if result.status == RunStatus.LOST:
                assert "member_arrested" in result.critical_failures_reached
    assert outcomes.get("won"), "no restaurant task was won on seeds 0-5"
    assert outcomes.get("lost"), "no restaurant task was lost by arrest on seeds 0-5"


@pytest.mark.parametrize("task_id", RESTAURANT)
def test_records_are_consistent_with_the_rules(task_id: str) -> None:
    game, result = play(task_id, 3)
    assert result.turns == len(game.records)
    for record in game.records:
        assert record.invariant_violations == []
        assert record.verdict is not None and record.outcome is not None and record.draw is not None
        assert abs(sum(o.probability for o in record.verdict.outcomes) - 1) < 1e-6
        assert 1 <= len(record.verdict.outcomes) <= 4
        assert record.verdict.outcomes[record.outcome_index or 0] == record.outcome
        assert sample_outcome(record.verdict, record.draw) == record.outcome_index
        assert [s.stage for s in record.stages] == ["direct_effects", "events", "npcs", "synthesis"]
        assert all(e.reason for e in record.rejected)
    last = game.records[-1]
    if result.status == RunStatus.WON:
        assert all(last.checkpoints.values())


def test_sample_outcome_uses_the_cumulative_distribution() -> None:
    verdict = Verdict.model_validate(
        {
            "feasibility": {d: {"score": 3, "reason": "x"} for d in (
                "existence", "physical", "method", "logical_consistency", "safety", "skill", "relationship",
                "objectivity")},
            "risky": False,
            "outcomes": [
                {"category": "success", "description": "a", "probability": 0.25},
                {"category": "failure", "description": "b", "probability": 0.5},
                {"category": "failure_with_consequence", "description": "c", "probability": 0.25},
            ],
        }
    )  # fmt: skip
    assert [sample_outcome(verdict, u) for u in (0.0, 0.2499, 0.25, 0.7499, 0.75, 0.9999)] == [0, 0, 1, 1, 2, 2]


def test_verdict_rejects_a_distribution_that_does_not_sum_to_one() -> None:
    with pytest.raises(ValueError, match="sum to"):
        Verdict.model_validate(
            {
                "feasibility": {d: {"score": 3, "reason": "x"} for d in (
                    "existence", "physical", "method", "logical_consistency", "safety", "skill", "relationship",
                    "objectivity")},
                "risky": False,
                "outcomes": [{"category": "success", "description": "a", "probability": 0.5}],
            }
        )  # fmt: skip


class FixedAttacker:
    """Plays a fixed list of actions (then waits), for tests."""

    name = "fixed"

    def __init__(self, actions: list[Action]) -> None:
        self.actions = list(actions)

    async def plan(self, observation: Observation) -> PlanUpdate:
        return PlanUpdate(memory="", plan="fixed")

    async def act(self, observation: Observation) -> Action:
        if self.actions:
            return self.actions.pop(0)
        return Action(verb="wait", description="wait", actor="boss", minutes=5)


class CountingJudge(RulesJudge):
    def __init__(self) -> None:
        self.calls = 0

    async def judge(self, state, action):  # type: ignore[no-untyped-def]
        self.calls += 1
        return await super().judge(state, action)


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        (Action(verb="move", description="", actor="boss", target="kitchen"), "not adjacent"),
        (Action(verb="walk", description="", actor="guard_roth", target="street"), "not a team member"),
        (Action(verb="take", description="", actor="ghost", target="cash_box"), "not a team member"),
        (Action(verb="take", description="", actor="boss", target="gold_bars"), "does not exist"),
        (Action(verb="give", description="", actor="boss", target="finch", item="laser"), "does not exist"),
        (Action(verb="go", description="", actor="boss", target="parking_lot"), "already in"),
    ],
)
def test_structural_precheck_skips_the_judge(action: Action, reason: str) -> None:
    state = get_task("restaurant/robbery").initial_state()
    assert reason in structural_problem(state, action)
    judge = CountingJudge()
    game = Game(state, Roles(FixedAttacker([action]), judge, RulesWorldManager()), seed=0)
    record = asyncio.run(game.step())
    assert judge.calls == 0 and not record.judge_called
    assert record.outcome is not None and record.outcome.category == OutcomeCategory.IMPOSSIBLE
    assert record.verdict is not None and record.verdict.outcomes[0].probability == 1.0
    assert game.state.members["boss"].current_location == "parking_lot"


def test_a_legal_move_is_judged_and_applied() -> None:
    state = get_task("restaurant/robbery").initial_state()
    judge = CountingJudge()
    action = Action(verb="walk", description="to the street", actor="moss", target="street")
    game = Game(state, Roles(FixedAttacker([action]), judge, RulesWorldManager()), seed=0)
    record = asyncio.run(game.step())
    assert judge.calls == 1
    moved = record.outcome is not None and record.outcome.category.non_failure
    assert (game.state.members["moss"].current_location == "street") == moved


def test_turn_cap_and_stall_limits_are_configurable() -> None:
    state = get_task("restaurant/robbery").initial_state()
    game = Game(state, Roles(FixedAttacker([]), RulesJudge(), RulesWorldManager()), 0, EngineConfig(max_turns=5))
    assert asyncio.run(game.run()).status == RunStatus.TURN_CAPPED
    assert len(game.records) == 5
    config = EngineConfig(max_turns=50, stall_turns=4)
    game = Game(state, Roles(FixedAttacker([]), RulesJudge(), RulesWorldManager()), 0, config)
    result = asyncio.run(game.run())
    assert (result.status, result.turns) == (RunStatus.STALLED, 4)


class BrokenJudge:
    name = "broken"

    async def judge(self, state, action):  # type: ignore[no-untyped-def]
        raise RoleError("judge", "reply is not the schema", raw="Sure! The outcome is: great")


def test_role_failures_are_recorded_and_end_the_run_as_error() -> None:
    state = get_task("restaurant/robbery").initial_state()
    roles = Roles(offline_roles().attacker, BrokenJudge(), RulesWorldManager())
    game = Game(state, roles, 0, EngineConfig(max_consecutive_failures=3))
    result = asyncio.run(game.run())
    assert result.status == RunStatus.ERROR and result.turns == 3
    assert all(r.errors and r.errors[0].raw.startswith("Sure!") for r in game.records)


class CrashingAttacker(FixedAttacker):
    async def act(self, observation: Observation) -> Action:
        raise RecursionError("maximum recursion depth exceeded")


def test_an_unexpected_role_exception_is_recorded_not_raised() -> None:
    state = get_task("restaurant/robbery").initial_state()
    game = Game(state, Roles(CrashingAttacker([]), RulesJudge(), RulesWorldManager()), 0)
    result = asyncio.run(game.run())
    assert result.status == RunStatus.ERROR
    error = game.records[0].errors[0]
    assert error.role == "attacker" and "act: unexpected RecursionError" in error.message
