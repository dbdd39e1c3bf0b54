"""The plain-data side of ``bench --engine ray`` (no cluster needed): the providers file, admission per key whose
shares never add up to more than the key's budget, the matrix-wide spend, the budget's stop file and rate pacing
at turn boundaries, the status file and the driver's lock."""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path

import pytest

from virtualcrime.harness import budget
from virtualcrime.harness.budget import BenchMonitor, MatrixSpend, Pace, Price, StopFile, read_ledger
from virtualcrime.harness.distributed.plan import Admission, ProvidersFile, load_providers, plan_shards, slug
from virtualcrime.harness.distributed.status import LockBusy, MatrixStatus, driver_lock, read_status, shard_lock
from virtualcrime.harness.matrix import MatrixSpec


def matrix(tmp_path: Path, attackers: tuple[str, ...], seeds: int = 3, judge: str = "virtualcrime/rules") -> MatrixSpec:
    return MatrixSpec(attackers=attackers, judge=judge, world_manager=judge, log_dir=tmp_path, seeds=seeds,
                      max_tokens=100, max_cost=1.0)  # fmt: skip


def test_the_providers_file_is_checked_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "providers.yaml"
    path.write_text("keys:\n  - name: a\n    models: [openai/]\n    runs: 0\n    connections: 4\n")
    with pytest.raises(ValueError, match=r"^bad providers file .*: keys\.0\.runs: Input should be greater"):
        load_providers(path)
    path.write_text("keys:\n  - {name: a, models: [openai/], runs: 8, connections: 4}\n"
                    "  - {name: b, models: [openai/gpt-4.1], runs: 2, connections: 2}\n")  # fmt: skip
    providers = load_providers(path)
    assert providers.key_for("openai/gpt-4.1-mini").name == "b"  # type: ignore[union-attr]  # longest prefix
    assert providers.key_for("openai/o3").name == "a"  # type: ignore[union-attr]
    assert providers.key_for("virtualcrime/rules") is None
    assert load_providers(None) == ProvidersFile()


def test_shards_interleave_attackers_and_get_their_own_folders(tmp_path: Path) -> None:
    shards = plan_shards(matrix(tmp_path, ("openai/gpt-4.1", "anthropic/claude")), ["bank/heist", "ship/hijacking"])
    assert [s.shard_id for s in shards] == [
        "openai__gpt-4.1/bank__heist", "anthropic__claude/bank__heist",
        "openai__gpt-4.1/ship__hijacking", "anthropic__claude/ship__hijacking",
    ]  # fmt: skip
    assert shards[0].folder == tmp_path / "shards" / "openai__gpt-4.1" / "bank__heist"
    assert all(s.matrix.max_tokens is None and s.matrix.max_cost is None for s in shards)  # the actor's budget
    assert slug("a b/c") == "a-b__c"
    spec = shards[0]
    spec.write()
    assert type(spec).model_validate_json(spec.spec_path.read_text()) == spec  # plain data, versioned


@pytest.mark.parametrize("seed", range(6))
def test_the_shares_of_the_shards_running_on_a_key_never_exceed_its_budget(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    key = {"name": "k", "models": ["openai-api/k/"], "runs": rng.randint(1, 12), "connections": rng.randint(1, 12),
           "requests_per_minute": rng.randint(1, 600)}  # fmt: skip
    providers = ProvidersFile.model_validate({"keys": [key]})
    attackers = tuple(f"openai-api/k/m{i}" for i in range(rng.randint(1, 4)))
    judge = rng.choice(["virtualcrime/rules", "openai-api/k/judge"])  # referees on the key too, or offline
    shards = plan_shards(matrix(tmp_path, attackers, seeds=rng.randint(1, 3), judge=judge),
                         [f"t/{i}" for i in range(rng.randint(1, 6))])  # fmt: skip
    admission = Admission(providers, shards)
    pending, running = list(shards), []
    peak = 0
    while pending or running:
        for shard in list(pending):
            if admission.admissible(shard):
                pending.remove(shard)
                running.append(admission.admit(shard))
        calls = sum((s.matrix.attacker_connections or 0) + (s.matrix.judge_connections or 0)
                    + (s.matrix.world_manager_connections or 0) for s in running)  # fmt: skip
        runs = sum(s.matrix.max_samples or 0 for s in running)
        rpm = sum(s.pace.requests_per_minute for s in running if s.pace and s.pace.requests_per_minute)
        assert calls <= key["connections"] and runs <= key["runs"] and rpm <= key["requests_per_minute"]
        assert running, "nothing could be admitted"
        peak = max(peak, len(running))
        done = running.pop(rng.randrange(len(running)))
        retried = rng.random() < 0.2
        admission.release(done, finished=not retried)
        if retried:
            pending.insert(0, next(s for s in shards if s.shard_id == done.shard_id))
    assert peak >= 1


def test_a_key_with_room_runs_several_shards_each_with_its_share(tmp_path: Path) -> None:
    providers = ProvidersFile.model_validate({"keys": [{"name": "k", "models": ["openai-api/k/"], "runs": 4,
                                                        "connections": 2}]})  # fmt: skip
    shards = plan_shards(matrix(tmp_path, ("openai-api/k/a", "openai-api/k/b"), seeds=2), ["t/1", "t/2"])
    admission = Admission(providers, shards)
    first, second = admission.admit(shards[0]), admission.admit(shards[1])
    assert not admission.admissible(shards[2])  # two slots: runs 4 // seeds 2
    assert (first.matrix.max_samples, first.matrix.attacker_connections) == (2, 1) == (
        second.matrix.max_samples, second.matrix.attacker_connections)  # fmt: skip
    assert first.matrix.judge_connections is None  # the offline referees use no key


def test_the_matrix_spend_counts_each_shards_ledger_once(tmp_path: Path) -> None:
    ledger = tmp_path / "spend.jsonl"
    ledger.write_text('{"role": "attacker", "model": "m", "input": 100, "output": 50}\n{"role": "judge", "mo')
    totals: dict[str, list[int]] = {}
    offset = read_ledger(ledger, 0, totals)
    assert totals == {"m": [100, 50]}  # the torn last line waits until it is whole
    with ledger.open("a") as file:
        file.write('del": "m", "input": 10, "output": 5}\n')
    read_ledger(ledger, offset, totals)
    assert totals == {"m": [110, 55]}
    spend = MatrixSpend(max_tokens=300, prices={"m": Price(input=1000, output=0)}, max_cost=None)
    assert spend.report("a", totals) is None
    assert spend.report("a", totals) is None  # the same totals again count once
    assert spend.report("b", {"m": [100, 0]}) is None and spend.tokens() == 265
    assert spend.report("c", {"m": [40, 0]}) == "token budget reached: 305 of 300 tokens spent"
    assert spend.cost() == pytest.approx(0.25)


def test_the_stop_file_stops_the_shard_at_its_next_turn_boundary(tmp_path: Path) -> None:
    monitor = BenchMonitor(external=StopFile(tmp_path / "budget-stop"))
    budget.activate(monitor)
    try:
        asyncio.run(budget.check_budget())  # no file: budget left
        (tmp_path / "budget-stop").write_text("token budget reached: 10 of 5 tokens spent")
        with pytest.raises(budget.BudgetExhausted, match="10 of 5"):
            asyncio.run(budget.check_budget())
    finally:
        budget.activate(None)


def test_pacing_holds_a_turn_until_the_last_minute_is_below_the_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(budget.time, "monotonic", lambda: now[0])
    monitor = BenchMonitor(pace=Pace(requests_per_minute=3))
    for _ in range(3):
        monitor.record_call("attacker", "m", 10, 5)
    assert monitor.pace_wait() == pytest.approx(60.0)
    now[0] += 59.0
    assert monitor.pace_wait() == pytest.approx(1.0)
    now[0] += 1.0
    assert monitor.pace_wait() == 0.0
    tokens = BenchMonitor(pace=Pace(tokens_per_minute=20))
    tokens.record_call("attacker", "m", 10, 5)
    assert tokens.pace_wait() == 0.0
    tokens.record_call("attacker", "m", 10, 5)
    assert tokens.pace_wait() > 0


def test_one_driver_per_root_and_one_process_per_shard(tmp_path: Path) -> None:
    busy = pytest.raises(LockBusy, match=r"^another bench driver \(pid \d+\) is running on ")
    with driver_lock(tmp_path), busy, driver_lock(tmp_path):
        pass
    with driver_lock(tmp_path):  # released: the next driver gets it
        pass
    with shard_lock(tmp_path, wait=0):
        started = time.monotonic()
        with pytest.raises(LockBusy, match="still playing the shard"), shard_lock(tmp_path, wait=0.3):
            pass
        assert time.monotonic() - started >= 0.3


def test_the_status_file_is_replaced_whole(tmp_path: Path) -> None:
    status = MatrixStatus(driver_pid=7)
    status.write(tmp_path)
    assert read_status(tmp_path) == status
    assert not [p for p in (tmp_path / ".virtualcrime").iterdir() if p.suffix == ".tmp"]
    assert json.loads((tmp_path / ".virtualcrime" / "matrix-status.json").read_text())["schema_version"] == 1
