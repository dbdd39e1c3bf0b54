"""Shared by the Ray tests: skipping without Ray (failing under VIRTUALCRIME_REQUIRE_RAY=1, as CI sets it), the
matrix they play, its expected records, and reading a matrix root's runs back."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log

from virtualcrime.engine import EngineConfig, Game, Roles
from virtualcrime.roles import Attacker
from virtualcrime.roles.rules import RulesJudge, RulesWorldManager
from virtualcrime.roles.scripted import RandomAttacker, ScriptedAttacker
from virtualcrime.runs.store import records_from_store
from virtualcrime.scenarios import get_task

# Ray replaces 127.0.0.1 by the machine's outward address unless told its clusters stay on this host: keep every
# node, worker and driver of the tests on loopback (read when Ray is first imported, so set before that).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
REQUIRE_RAY = "VIRTUALCRIME_REQUIRE_RAY"
BIN = Path(sys.executable).parent
ATTACKERS = "virtualcrime/scripted,virtualcrime/random"
TASKS = ("restaurant/robbery", "restaurant/arson")
SEEDS = 2
Runs = dict[tuple[str, str, int], list[str]]


def require_ray() -> None:
    """Skip the module without Ray, unless the environment requires it (then it fails). Ray is not imported here:
    importing it puts its vendored packages on sys.path, which the collection of other modules must not see."""
    if importlib.util.find_spec("ray") is not None:
        return
    if os.environ.get(REQUIRE_RAY) == "1":
        raise ImportError(f"{REQUIRE_RAY}=1 but Ray is not installed (bash install.sh installs the ray extra)")
    pytest.skip("Ray is not installed (pip install 'virtualcrime[ray]')", allow_module_level=True)


def start_ray(num_cpus: int) -> str:
    """A local Ray cluster on 127.0.0.1 for this process; returns its address for other processes."""
    import ray

    ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, namespace="virtualcrime",
             _node_ip_address="127.0.0.1")  # fmt: skip
    return str(ray.get_runtime_context().gcs_address)


def bench_args(root: Path, max_turns: int, *extra: str, attackers: str = ATTACKERS) -> list[str]:
    args = ["bench", "--attackers", attackers, "--seeds", str(SEEDS), "--max-turns", str(max_turns),
            "--log-dir", str(root), "--progress-every", "60", "--retry-attempts", "1"]  # fmt: skip
    for task in TASKS:
        args += ["--task", task]
    return [*args, *extra]


def logged_runs(root: Path) -> Runs:
    """Every finished run under ``root`` (any depth): (attacker, task, epoch) → its records as JSON; a run logged
    twice fails the test."""
    runs: Runs = {}
    for path in sorted(root.rglob("*.eval")):
        log = read_eval_log(str(path))
        for sample in log.samples or []:
            turns, result = records_from_store(dict(sample.store))
            if result is None:
                continue
            key = (log.eval.model, str(sample.id), sample.epoch)
            assert key not in runs, f"run {key} logged twice"
            runs[key] = [t.model_dump_json() for t in turns]
    return runs


def reference(max_turns: int) -> Runs:
    """The offline matrix played straight through the engine (no Inspect, no processes)."""
    runs: Runs = {}
    for attacker in ATTACKERS.split(","):
        for task_id in TASKS:
            for epoch in range(1, SEEDS + 1):
                seed = epoch - 1
                player: Attacker = ScriptedAttacker() if attacker.endswith("scripted") else RandomAttacker(
                    f"{task_id}/seed{seed}")  # fmt: skip
                game = Game(get_task(task_id).initial_state(), Roles(player, RulesJudge(), RulesWorldManager()),
                            seed, EngineConfig(max_turns=max_turns))  # fmt: skip
                asyncio.run(game.run())
                runs[(attacker, task_id, epoch)] = [t.model_dump_json() for t in game.records]
    return runs


def checkpoint_turns(root: Path) -> dict[Path, int]:
    """Turns on disk per checkpoint file of every shard (the header line not counted)."""
    found = {}
    for path in root.glob("shards/*/*/.virtualcrime/checkpoints/*.jsonl"):
        try:
            found[path] = len(path.read_text().splitlines()) - 1
        except FileNotFoundError:
            continue
    return found


def wait_for(condition: Any, seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def resumed_notes(root: Path) -> list[str]:
    """The checkpoint notes of every run under ``root`` that continued from its checkpoint."""
    notes = []
    for path in sorted(root.rglob("*.eval")):
        for sample in read_eval_log(str(path)).samples or []:
            notes += [str(e.data) for e in sample.events if e.event == "info" and e.source == "checkpoint"]
    return [n for n in notes if "Resumed after turn" in n]


def shard_status(root: Path) -> dict[str, Any]:
    return dict(json.loads((root / ".virtualcrime" / "matrix-status.json").read_text())["shards"])
