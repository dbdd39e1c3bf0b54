"""Exact replay, verification, and resuming a run from its records at any turn."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log, write_eval_log

from virtualcrime.cli.main import main
from virtualcrime.engine import EngineConfig, Game, Roles, RunResult, TurnRecord
from virtualcrime.engine.replay import first_difference, replay, restore, verify
from virtualcrime.roles import Attacker, Judge
from virtualcrime.roles.rules import STRICT, RulesJudge, RulesWorldManager
from virtualcrime.roles.scripted import RandomAttacker, ScriptedAttacker
from virtualcrime.scenarios import get_task

CONFIG = EngineConfig(max_turns=40)
COMBINATIONS = [
    ("scripted", "rules"),
    ("scripted", "rules-strict"),
    ("random", "rules"),
    ("random", "rules-strict"),
]


def roles(attacker: str, judge: str, seed: int) -> Roles:
    a: Attacker = ScriptedAttacker() if attacker == "scripted" else RandomAttacker(seed)
    j: Judge = RulesJudge() if judge == "rules" else RulesJudge(STRICT, name="virtualcrime/rules-strict")
    return Roles(a, j, RulesWorldManager())


def play(task_id: str, seed: int, attacker: str, judge: str) -> tuple[list[TurnRecord], RunResult]:
    game = Game(get_task(task_id).initial_state(), roles(attacker, judge, seed), seed, CONFIG)
    result = asyncio.run(game.run())
    return game.records, result


@pytest.mark.parametrize(("attacker", "judge"), COMBINATIONS)
@pytest.mark.parametrize("task_id", ["restaurant/robbery", "prison/riot"])
def test_a_played_run_replays_exactly(task_id: str, attacker: str, judge: str) -> None:
    records, result = play(task_id, 3, attacker, judge)
    assert asyncio.run(verify(get_task(task_id).initial_state(), 3, records, result, CONFIG)) == []


def test_verify_names_the_first_turn_and_field_that_differ() -> None:
    records, result = play("restaurant/robbery", 1, "scripted", "rules")
    tampered = [r.model_copy(deep=True) for r in records]
    assert tampered[2].draw is not None
    tampered[2].draw = 0.999  # the log claims a different draw than the seed gives
    problems = asyncio.run(verify(get_task("restaurant/robbery").initial_state(), 1, tampered, result, CONFIG))
    assert problems and problems[0].startswith("turn 3: draw: log 0.999")
    wrong_seed = asyncio.run(verify(get_task("restaurant/robbery").initial_state(), 2, records, result, CONFIG))
    assert wrong_seed and "draw" in wrong_seed[0]


def test_a_replay_of_missing_turns_is_a_clear_mismatch() -> None:
    records, result = play("restaurant/robbery", 1, "scripted", "rules")
    problems = asyncio.run(verify(get_task("restaurant/robbery").initial_state(), 1, records[:-1], result, CONFIG))
    assert problems and "did not end the run" in " ".join(problems)


@pytest.mark.parametrize(("attacker", "judge"), COMBINATIONS)
def test_resuming_at_any_turn_gives_the_uninterrupted_run(attacker: str, judge: str) -> None:
    task_id, seed = "restaurant/kidnapping", 4
    records, result = play(task_id, seed, attacker, judge)
    for cut in sorted({1, len(records) // 2, len(records) - 1}):
        game = asyncio.run(
            restore(get_task(task_id).initial_state(), roles(attacker, judge, seed), seed, records[:cut])
        )
        game.config = CONFIG
        resumed = asyncio.run(game.run())
        assert [r.model_dump() for r in game.records] == [r.model_dump() for r in records], cut
        assert resumed.model_dump() == result.model_dump()


def test_replay_returns_no_result_for_an_unfinished_prefix() -> None:
    records, _ = play("restaurant/robbery", 1, "scripted", "rules")
    replayed, ended = asyncio.run(replay(get_task("restaurant/robbery").initial_state(), 1, records[:2], CONFIG))
    assert len(replayed) == 2 and ended is None


def test_first_difference_paths() -> None:
    assert first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == "a[1].b: log 2 != replay 3"
    assert first_difference({"a": [1]}, {"a": [1, 2]}) == "a: 1 items in the log, 2 in the replay"
    assert first_difference({"a": 1}, {"a": 1}) is None


def test_cli_verify_passes_on_every_offline_role_combination(
    matrix_logs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = sorted(matrix_logs.glob("*.eval"))
    assert len(logs) == 4
    for log in logs:
        assert main(["replay", str(log), "--verify"]) == 0
        assert "10 of 10 run(s) reproduce exactly" in capsys.readouterr().out


def test_cli_verify_reports_a_tampered_log(
    matrix_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = read_eval_log(str(sorted(matrix_logs.glob("*.eval"))[0]))
    sample = (log.samples or [])[0]
    turns = sample.store["RunStore:turns"]
    turns[1]["draw"] = 0.123456
    tampered = tmp_path / "tampered.eval"
    write_eval_log(log, str(tampered))
    assert main(["replay", str(tampered), "--sample", str(sample.id), "--epoch", str(sample.epoch), "--verify"]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "turn 2: draw: log 0.123456" in out
