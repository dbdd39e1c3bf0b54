"""A matrix that loses nothing and pays once: a log that lost its records is repaired from the run's checkpoint
(or the run is played on), a budget stop throws no paid turn away, growing a matrix plays only what is new, and
runs that took several invocations still re-execute exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log, write_eval_log

from test_bench import BudgetMock, logged_runs  # noqa: F401  (registers budgetmock/m)
from virtualcrime.cli.main import main
from virtualcrime.harness.checkpoint import RunCheckpoint
from virtualcrime.harness.log_reader import sample_spec
from virtualcrime.runs.store import records_from_store

TASK = "restaurant/robbery"


def bench(log_dir: Path, *extra: str, seeds: int = 2, attacker: str = "virtualcrime/scripted") -> list[str]:
    return ["bench", "--attackers", attacker, "--task", TASK, "--seeds", str(seeds), "--max-turns", "6",
            "--log-dir", str(log_dir), "--retry-attempts", "1", *extra]  # fmt: skip


def ledger_calls(log_dir: Path) -> int:
    path = log_dir / ".virtualcrime" / "spend.jsonl"
    return len(path.read_text().splitlines()) if path.exists() else 0


def paid_attempts(log_dir: Path) -> int:
    """Model calls the kept records account for (every attempt of every call is a paid request)."""
    return sum(c.attempts for turns, _, _ in logged_runs(log_dir).values() for t in turns for c in t.model_calls)


def lose_store(log_dir: Path, keep_checkpoint: bool) -> tuple[str, list[str]]:
    """Do what Inspect's crash recovery can do: keep a run's score but empty its store. With ``keep_checkpoint``
    the run's checkpoint (which a killed invocation leaves behind) is there; returns the sample id and records."""
    [path] = sorted(log_dir.glob("*.eval"))
    log = read_eval_log(str(path))
    sample = (log.samples or [])[0]
    records, result = records_from_store(dict(sample.store))
    if keep_checkpoint:
        RunCheckpoint(log_dir / ".virtualcrime" / "checkpoints", sample_spec(log, sample, result)).start(records)
    sample.store = {}
    write_eval_log(log, str(path))
    return f"{sample.id}#{sample.epoch}", [r.model_dump_json() for r in records]


@pytest.mark.parametrize("keep_checkpoint", [True, False])
def test_a_log_that_lost_a_runs_records_is_made_whole_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], keep_checkpoint: bool
) -> None:
    assert main(bench(tmp_path)) == 0
    before = {k: [t.model_dump_json() for t in v[0]] for k, v in logged_runs(tmp_path).items()}
    _, records = lose_store(tmp_path, keep_checkpoint)
    assert records  # the run had turns to lose
    capsys.readouterr()
    # Nothing downstream takes the damaged run for a finished one with no turns.
    assert main(["replay", str(next(tmp_path.glob("*.eval"))), "--verify"]) == 1
    assert "the log lost this run's turn records" in capsys.readouterr().out
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "r"), "--resamples", "200"]) == 0
    assert "lost this run's turn records" in (tmp_path / "r" / "summary.json").read_text()
    assert main(bench(tmp_path)) == 0  # the same command again
    out = capsys.readouterr().out
    assert ("repaired:" in out) is keep_checkpoint
    after = {k: [t.model_dump_json() for t in v[0]] for k, v in logged_runs(tmp_path).items()}
    assert after == before  # every run once, with exactly its records
    assert not list((tmp_path / ".virtualcrime" / "checkpoints").glob("*.jsonl"))
    assert main(["replay", str(next(tmp_path.glob("*.eval"))), "--verify"]) == 0


def test_a_budget_stop_keeps_every_paid_turn_and_the_runs_verify_after_resuming(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = bench(tmp_path, "--latency", "0.02", "--max-samples", "4", seeds=4, attacker="budgetmock/m")
    assert main([*args, "--max-tokens", "2000"]) == 3
    assert main([*args, "--max-tokens", "2600"]) == 3  # a second stop, with turns under way again
    assert main([*args, "--max-tokens", "1000000"]) == 0
    # Every request paid for is an attempt some kept turn records: nothing was cancelled mid-turn and paid again.
    assert ledger_calls(tmp_path) == paid_attempts(tmp_path)
    runs = logged_runs(tmp_path)
    assert len(runs) == 4 and all(len(turns) == 6 for turns, _, _ in runs.values())
    capsys.readouterr()
    for path in sorted(tmp_path.glob("*.eval")):  # runs played over three invocations still re-execute exactly
        assert main(["replay", str(path), "--verify"]) == 0
    assert "re-executed" in capsys.readouterr().out


def test_growing_a_finished_matrix_plays_only_the_new_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(bench(tmp_path, seeds=2, attacker="budgetmock/m")) == 0
    old = {k[1:]: [t.model_dump_json() for t in v[0]] for k, v in logged_runs(tmp_path).items()}
    paid = ledger_calls(tmp_path)
    capsys.readouterr()
    assert main(bench(tmp_path, seeds=3, attacker="budgetmock/m")) == 0
    assert "2 finished run(s) of earlier invocations were replayed from their records" in capsys.readouterr().out
    newest = max(tmp_path.glob("*.eval"), key=lambda p: p.stat().st_mtime)
    log = read_eval_log(str(newest))
    grown = {(str(s.id), s.epoch): [t.model_dump_json() for t in records_from_store(dict(s.store))[0]]
             for s in log.samples or []}  # fmt: skip
    assert set(grown) == {(TASK, 1), (TASK, 2), (TASK, 3)}
    assert all(grown[key] == records for key, records in old.items())  # replayed, not played again
    new_calls = sum(c.attempts for line in grown[(TASK, 3)] for c in _calls(line))
    assert ledger_calls(tmp_path) - paid == new_calls  # only the new seed's run called the model


def _calls(line: str) -> list[object]:
    from virtualcrime.engine import TurnRecord

    return list(TurnRecord.model_validate(json.loads(line)).model_calls)
