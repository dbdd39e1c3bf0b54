"""``virtualcrime bench``: killed with SIGKILL mid-matrix and re-run, every run is there once with the records an
uninterrupted run gives; budgets stop the matrix resumably."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.model import modelapi

from conftest import ScriptedModelAPI
from test_llm_roles import scripted_reply
from virtualcrime.cli.main import main
from virtualcrime.engine import EngineConfig, Game, Roles, TurnRecord
from virtualcrime.roles import Attacker
from virtualcrime.roles.rules import RulesJudge, RulesWorldManager
from virtualcrime.roles.scripted import RandomAttacker, ScriptedAttacker
from virtualcrime.runs.store import records_from_store
from virtualcrime.scenarios import get_task

BIN = Path(sys.executable).parent
MAX_TURNS = 20


def bench_args(log_dir: Path, *extra: str) -> list[str]:
    return [
        "bench", "--attackers", "virtualcrime/scripted,virtualcrime/random", "--task", "restaurant", "--seeds", "2",
        "--max-turns", str(MAX_TURNS), "--log-dir", str(log_dir), "--progress-every", "1", *extra,
    ]  # fmt: skip


def logged_runs(log_dir: Path) -> dict[tuple[str, str, int], tuple[list[TurnRecord], Any, list[str]]]:
    """Every finished run in the folder's logs: (attacker, task, epoch) → (records, result, checkpoint notes)."""
    runs: dict[tuple[str, str, int], tuple[list[TurnRecord], Any, list[str]]] = {}
    for path in sorted(log_dir.glob("*.eval")):
        log = read_eval_log(str(path))
        for sample in log.samples or []:
            key = (log.eval.model, str(sample.id), sample.epoch)
            assert key not in runs, f"run {key} logged twice"
            turns, result = records_from_store(dict(sample.store))
            notes = [str(e.data) for e in sample.events if e.event == "info" and e.source == "checkpoint"]
            runs[key] = (turns, result, notes)
    return runs


def reference(attacker: str, task_id: str, epoch: int) -> list[TurnRecord]:
    seed = epoch - 1
    player: Attacker = ScriptedAttacker() if attacker.endswith("scripted") else RandomAttacker(f"{task_id}/seed{seed}")
    game = Game(get_task(task_id).initial_state(), Roles(player, RulesJudge(), RulesWorldManager()), seed,
                EngineConfig(max_turns=MAX_TURNS))  # fmt: skip
    asyncio.run(game.run())
    return game.records


def test_a_matrix_killed_mid_run_resumes_without_losing_or_repeating_anything(tmp_path: Path) -> None:
    log_dir = tmp_path / "matrix"
    command = [str(BIN / "virtualcrime"), *bench_args(log_dir, "--latency", "0.01", "--max-samples", "2")]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    checkpoints = log_dir / ".virtualcrime" / "checkpoints"
    deadline = time.monotonic() + 120
    # Kill once some run is well into its turns: its finished turns are on disk, the rest is not.
    while time.monotonic() < deadline and process.poll() is None:
        if any(len(p.read_text().splitlines()) > 6 for p in checkpoints.glob("*.jsonl")):
            break
        time.sleep(0.02)
    assert process.poll() is None, "the matrix finished before it could be killed"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    interrupted = {p.name: len(p.read_text().splitlines()) - 1 for p in checkpoints.glob("*.jsonl")}
    assert any(turns >= 6 for turns in interrupted.values())

    again = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    runs = logged_runs(log_dir)
    assert len(runs) == 2 * 4 * 2  # attackers × restaurant tasks × seeds, each exactly once
    resumed = 0
    for (attacker, task_id, epoch), (turns, result, notes) in runs.items():
        assert result is not None and result.turns == len(turns)
        assert [t.turn for t in turns] == list(range(1, len(turns) + 1))
        expected = reference(attacker, task_id, epoch)
        assert [t.model_dump() for t in turns] == [t.model_dump() for t in expected], (attacker, task_id, epoch)
        resumed += any(n.startswith("Resumed after turn") for n in notes)
    assert resumed >= 1  # at least one run continued from its checkpoint rather than from turn 1
    assert not list(checkpoints.glob("*.jsonl"))  # cleared once every run is safely in a log


@modelapi(name="budgetmock")
class BudgetMock(ScriptedModelAPI):
    """A language model that plays any role with valid replies and reports 100 + 50 tokens per call."""

    USAGE = (100, 50)

    def reply(self, prompt: str) -> str:
        return scripted_reply(prompt)


def test_a_token_budget_stops_the_matrix_resumably(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bench", "--attackers", "budgetmock/m", "--task", "restaurant/robbery", "--seeds", "2",
            "--max-turns", "6", "--log-dir", str(tmp_path), "--retry-attempts", "1"]  # fmt: skip
    assert main([*args, "--max-tokens", "1500"]) == 3
    out = capsys.readouterr().out
    assert "Stopped: token budget reached" in out and "rerun this command with a higher budget" in out
    ledger = (tmp_path / ".virtualcrime" / "spend.jsonl").read_text().splitlines()
    assert 1500 <= 150 * len(ledger) < 1500 + 2 * 2 * 150  # overshoot: at most the calls of turns under way
    # The same budget again refuses at once; a higher one finishes the matrix from where it stopped.
    assert main([*args, "--max-tokens", "1500"]) == 2
    assert "already" in capsys.readouterr().err
    assert main([*args, "--max-tokens", "100000"]) == 0
    runs = logged_runs(tmp_path)
    assert len(runs) == 2 and all(len(t) == 6 for t, _, _ in runs.values())
    calls = len((tmp_path / ".virtualcrime" / "spend.jsonl").read_text().splitlines())
    assert calls <= 2 * 6 * 2 + 4  # about one attacker plan + act per turn; no turn paid twice beyond the stop


def test_bench_refuses_cost_budget_without_prices(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--attackers", "budgetmock/m", "--log-dir", str(tmp_path), "--max-cost", "1"]) == 2
    assert "none for budgetmock/m" in capsys.readouterr().err
    prices = tmp_path / "prices.yaml"
    prices.write_text("budgetmock/m: {input: 1000000, output: 0}\n")  # $100 per 100-token call
    args = ["bench", "--attackers", "budgetmock/m", "--task", "restaurant/robbery", "--seeds", "1",
            "--max-turns", "4", "--log-dir", str(tmp_path / "logs"), "--prices", str(prices), "--max-cost", "250",
            "--retry-attempts", "0"]  # fmt: skip
    assert main(args) == 3
    assert "cost budget reached" in capsys.readouterr().out
