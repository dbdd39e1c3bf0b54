"""Exact replay, verification, and resuming a run from its records at any turn."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import get_model

from test_llm_roles import mock_outputs
from virtualcrime.cli.main import main
from virtualcrime.engine import EngineConfig, Game, Roles, RunResult, TurnRecord
from virtualcrime.engine.replay import first_difference, replay, restore, verify
from virtualcrime.harness.task import virtualcrime
from virtualcrime.roles import Attacker, Judge
from virtualcrime.roles.rules import STRICT, RulesJudge, RulesWorldManager
from virtualcrime.roles.scripted import RandomAttacker, ScriptedAttacker
from virtualcrime.runs.store import records_from_store
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
    second = json.loads(turns[1])  # each record is stored as one JSON string
    second["draw"] = 0.123456
    turns[1] = json.dumps(second)
    tampered = tmp_path / "tampered.eval"
    write_eval_log(log, str(tampered))
    assert main(["replay", str(tampered), "--task", str(sample.id), "--seed", str(sample.epoch - 1), "--verify"]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "turn 2: draw: log 0.123456" in out


def fork_log(log_dir: Path) -> Path:
    [log] = sorted(log_dir.glob("*.eval"))
    return log


def test_fork_with_the_parents_roles_and_seed_reproduces_the_parent(
    matrix_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parent_path = next(
        p for p in sorted(matrix_logs.glob("*.eval")) if "random" in read_eval_log(str(p), header_only=True).eval.model
    )
    parent = read_eval_log(str(parent_path))
    sample = next(s for s in parent.samples or [] if s.id == "prison/riot" and s.epoch == 2)
    parent_turns, parent_result = records_from_store(dict(sample.store))
    assert main(["fork", str(parent_path), "--task", "prison/riot", "--seed", "1", "--turn", "4",
                 "--log-dir", str(tmp_path)]) == 0  # fmt: skip
    fork = read_eval_log(str(fork_log(tmp_path)))
    [forked] = fork.samples or []
    turns, result = records_from_store(dict(forked.store))
    assert [t.model_dump() for t in turns] == [t.model_dump() for t in parent_turns]
    assert result is not None and parent_result is not None and result.model_dump() == parent_result.model_dump()
    assert forked.metadata["parent"] == {
        "log": str(parent_path.resolve()), "sample_id": "prison/riot", "epoch": 2, "seed": 1, "turn": 4,
    }  # fmt: skip


def test_fork_with_a_new_seed_and_judge_keeps_the_prefix_and_replays(
    matrix_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parent_path = sorted(matrix_logs.glob("*.eval"))[0]
    parent = read_eval_log(str(parent_path))
    sample = next(s for s in parent.samples or [] if s.id == "restaurant/robbery" and s.epoch == 1)
    parent_turns, _ = records_from_store(dict(sample.store))
    args = ["fork", str(parent_path), "--task", "restaurant/robbery", "--seed", "0", "--turn", "3", "--new-seed", "77",
            "--judge", "virtualcrime/rules-strict", "--log-dir", str(tmp_path)]  # fmt: skip
    assert main(args) == 0
    fork_path = fork_log(tmp_path)
    fork = read_eval_log(str(fork_path))
    assert fork.eval.model_roles is not None and fork.eval.model_roles["judge"].model == "virtualcrime/rules-strict"
    turns, result = records_from_store(dict((fork.samples or [])[0].store))
    assert [t.model_dump() for t in turns[:2]] == [t.model_dump() for t in parent_turns[:2]]
    assert result is not None and result.seed == 77
    capsys.readouterr()
    assert main(["replay", str(fork_path), "--verify"]) == 0
    assert "1 of 1 run(s) reproduce exactly" in capsys.readouterr().out
    # A fork is a what-if, not a benchmark run: the report lists it and leaves it out.
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "r")]) == 2
    assert "fork" in capsys.readouterr().err


def test_fork_rejects_a_turn_the_parent_never_reached(matrix_logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parent_path = sorted(matrix_logs.glob("*.eval"))[0]
    assert main(["fork", str(parent_path), "--task", "restaurant/robbery", "--seed", "0", "--turn", "999"]) == 2
    assert "--turn must be between 1 and" in capsys.readouterr().err
    assert main(["fork", str(parent_path), "--task", "nowhere/none", "--turn", "2"]) == 2
    assert "has no run of task 'nowhere/none'" in capsys.readouterr().err
    # Two seeds of the task in the log: the seed must be named, never guessed.
    assert main(["fork", str(parent_path), "--task", "restaurant/robbery", "--turn", "2"]) == 2
    assert "seeds 0, 1); choose one with --seed" in capsys.readouterr().err


def test_verify_re_executes_language_model_roles_from_their_recorded_replies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def mock():  # type: ignore[no-untyped-def]
        return get_model("mockllm/model", custom_outputs=mock_outputs, memoize=False)

    [log] = inspect_eval(
        virtualcrime(tasks="restaurant/robbery", seeds=1, max_turns=3),
        model=mock(),
        model_roles={"judge": mock(), "world_manager": "virtualcrime/rules"},
        log_dir=str(tmp_path),
        display="none",
    )
    assert main(["replay", log.location, "--verify"]) == 0
    assert "3 turns reproduce exactly (re-executed)" in capsys.readouterr().out
    # Change what the Judge's model said on turn 1, as the record keeps it: re-parsing it no longer gives the verdict.
    full = read_eval_log(log.location)
    sample = (full.samples or [])[0]
    turns = sample.store["RunStore:turns"]
    first = json.loads(turns[0])
    judged = next(c for c in first["model_calls"] if c["call"] == "judge")
    reply = json.loads(judged["replies"][-1]["text"])
    reply["outcomes"][0]["probability"], reply["outcomes"][-1]["probability"] = 0.0, 1.0
    judged["replies"][-1]["text"] = json.dumps(reply)
    turns[0] = json.dumps(first)
    tampered = tmp_path / "tampered.eval"
    write_eval_log(full, str(tampered))
    assert main(["replay", str(tampered), "--verify"]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "re-executed" in out and "turn 1:" in out
    # A log written before records kept the replies: they are read from its model events instead.
    full = read_eval_log(log.location)
    sample = (full.samples or [])[0]
    legacy = []
    for line in sample.store["RunStore:turns"]:
        record = json.loads(line)
        for call in record["model_calls"]:
            call["replies"] = []
        legacy.append(json.dumps(record))
    sample.store["RunStore:turns"] = legacy
    judge_event = next(e for e in sample.events if e.event == "model" and e.role == "judge")
    reply = json.loads(judge_event.output.completion)
    reply["outcomes"][0]["probability"], reply["outcomes"][-1]["probability"] = 0.0, 1.0
    judge_event.output.completion = judge_event.output.choices[0].message.content = json.dumps(reply)
    older = tmp_path / "older.eval"
    write_eval_log(full, str(older))
    assert main(["replay", str(older), "--verify"]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "re-executed" in out and "turn 1:" in out
