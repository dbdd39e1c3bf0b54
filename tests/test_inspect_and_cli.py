"""The Inspect task, the virtualcrime/* model names, the log contents, and the CLI over them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import get_model

from conftest import offline_roles
from virtualcrime.cli.main import main
from virtualcrime.harness.task import virtualcrime
from virtualcrime.runs.store import records_from_store
from virtualcrime.scenarios import get_task

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def robbery_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    log_dir = tmp_path_factory.mktemp("logs")
    logs = inspect_eval(
        virtualcrime(tasks="restaurant/robbery", seeds=2),
        model="virtualcrime/scripted",
        log_dir=str(log_dir),
        display="none",
    )
    assert logs[0].status == "success"
    return Path(logs[0].location)


def test_log_holds_typed_records_scores_and_readable_turn_events(robbery_log: Path) -> None:
    log = read_eval_log(str(robbery_log), resolve_attachments=True)
    assert log.eval.model == "virtualcrime/scripted"
    # Only the Judge has a default; a World Manager not named is the Judge's model.
    assert {role: cfg.model for role, cfg in (log.eval.model_roles or {}).items()} == {"judge": "virtualcrime/rules"}
    assert log.samples is not None and len(log.samples) == 2
    for sample in log.samples:
        turns, result = records_from_store(dict(sample.store))
        assert result is not None and result.turns == len(turns) > 0
        assert result.seed == sample.epoch - 1
        score = sample.scores["run_outcome"]  # type: ignore[index]
        assert score.answer == result.status.value
        assert score.value == {"won": int(result.status.value == "won"), "turns": result.turns}
        infos = [e for e in sample.events if e.event == "info" and str(e.source).startswith("turn ")]
        assert len(infos) == result.turns
        assert "**Action:**" in str(infos[0].data) and "**Draw:**" in str(infos[0].data)
        spans = [e for e in sample.events if e.event == "span_begin" and e.name.startswith("turn ")]
        assert len(spans) == result.turns


def test_same_seed_through_inspect_matches_the_engine_directly(robbery_log: Path) -> None:
    from conftest import play

    log = read_eval_log(str(robbery_log))
    sample = next(s for s in log.samples or [] if s.epoch == 1)
    turns, _ = records_from_store(dict(sample.store))
    game, _ = play("restaurant/robbery", seed=0)
    assert [t.model_dump() for t in turns] == [r.model_dump() for r in game.records]


def test_offline_model_names_resolve_and_refuse_free_text() -> None:
    import asyncio

    rules = get_model("virtualcrime/rules")
    assert rules.api.model_name == "rules"
    with pytest.raises(RuntimeError, match="played in-process"):
        asyncio.run(rules.generate("hello"))
    with pytest.raises(ValueError, match="unknown model virtualcrime/oracle"):
        get_model("virtualcrime/oracle")


def test_inspect_eval_command_line_finds_task_and_models(tmp_path: Path) -> None:
    command = [
        str(BIN / "inspect"), "eval", "virtualcrime/virtualcrime", "-T", "tasks=restaurant/arson", "-T", "seeds=1",
        "--model", "virtualcrime/scripted", "--model-role", "judge=virtualcrime/rules",
        "--model-role", "world_manager=virtualcrime/rules", "--log-dir", str(tmp_path), "--display", "plain",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    logs = list(tmp_path.glob("*.eval"))
    assert len(logs) == 1
    log = read_eval_log(str(logs[0]))
    assert log.status == "success" and log.samples and log.samples[0].id == "restaurant/arson"


def test_cli_run_prints_a_summary_and_the_log_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--task", "restaurant/kidnapping", "--seeds", "1", "--log-dir", str(tmp_path),
                 "--display", "none"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "restaurant/kidnapping" in out and "won " in out and " of 1 runs" in out
    log_line = next(line for line in out.splitlines() if line.startswith("Log: "))
    assert Path(log_line.removeprefix("Log: ")).exists()


def test_cli_run_rejects_an_unknown_task(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--task", "restaurant/heist", "--display", "none"]) == 2
    assert "unknown task 'restaurant/heist'" in capsys.readouterr().err


def test_cli_run_rejects_a_model_that_cannot_play_the_attacker(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--task", "restaurant/arson", "--attacker", "virtualcrime/rules", "--display", "none"]) == 2
    assert "cannot play the Attacker" in capsys.readouterr().err


def test_cli_replay_prints_a_transcript(robbery_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(robbery_log), "--task", "restaurant/robbery", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert (
        "\nTurn 1 · " in out
        and "Verdict (judge" in out
        and "Draw: u=" in out
        and "Run restaurant/robbery seed 0" in out
    )
    assert "**" not in out and "`" not in out and "###" not in out  # plain text into a pipe, not raw Markdown
    assert main(["replay", str(robbery_log), "--seed", "1", "--turn", "2", "--brief"]) == 0
    out = capsys.readouterr().out
    assert "Turn 2 · " in out and "Turn 1 · " not in out and "Team:" not in out and "seed 1" in out


def test_cli_tasks_lists_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["id"] for r in rows} >= {"restaurant/robbery", "restaurant/arson"}


def test_cli_help_does_not_import_inspect() -> None:
    code = (
        "import sys\nfrom virtualcrime.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "assert 'inspect_ai' not in sys.modules, 'inspect_ai imported by --help'\n"
        "assert 'pydantic' not in sys.modules, 'pydantic imported by --help'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "run" in done.stdout and "replay" in done.stdout


def test_records_of_schema_1_logs_still_read() -> None:
    from virtualcrime.engine import EngineConfig, Game
    from virtualcrime.runs.store import LogFormatError

    game = Game(get_task("restaurant/robbery").initial_state(), offline_roles(), 0, EngineConfig(max_turns=2))
    result = asyncio.run(game.run())
    old = {
        "RunStore:schema_version": 1,
        "RunStore:turns": [r.model_dump(mode="json") for r in game.records],
        "RunStore:result": result.model_dump(mode="json"),
    }
    turns, read = records_from_store(old)
    assert turns == game.records and read == result
    with pytest.raises(LogFormatError, match="schema 99"):
        records_from_store({**old, "RunStore:schema_version": 99})


def test_records_of_schema_2_logs_read_without_the_observation_keys_schema_3_dropped() -> None:
    from virtualcrime.engine import EngineConfig, Game

    game = Game(get_task("vault/theft").initial_state(), offline_roles(), 0, EngineConfig(max_turns=3))
    result = asyncio.run(game.run())
    legacy = []
    for record in game.records:
        data = record.model_dump(mode="json")
        observation = data["observation"]
        for npc in observation["npcs"]:
            npc.update(alertness=2, following="")
        for entity in observation["entities"]:
            entity["lock_opened_by"] = ["a_key"]
        for edge in observation["floor_plan_edges"]:
            edge["lock_opened_by"] = []
        for location in observation["locations"]:
            location["recent"] = ["[turn 1] something happened"]
        legacy.append(json.dumps(data))
    stored = {"RunStore:schema_version": 2, "RunStore:turns": legacy, "RunStore:result": result.model_dump_json()}
    turns, read = records_from_store(stored)
    assert turns == game.records and read == result
