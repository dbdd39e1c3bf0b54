"""The report's fast reading (``FactRecord``, ``SlimSample``) gives the same facts and files as reading every record
in full: the figures of ``virtualcrime report`` may not depend on how the logs were read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import play
from virtualcrime.analysis.facts import call_facts, harm_of, turn_facts
from virtualcrime.analysis.report import load_runs, write_report
from virtualcrime.harness.log_reader import find_logs, iter_runs, read_header
from virtualcrime.runs.logged import FactsRun, LoggedRun, LogSummary
from virtualcrime.runs.store import (
    RESULT_KEY,
    SCHEMA_KEY,
    TURNS_KEY,
    FactRecord,
    LogFormatError,
    fact_records_from_store,
    records_from_store,
)
from virtualcrime.scenarios import get_task

TASKS = ("restaurant/robbery", "consulate/kidnapping", "prison/riot")


def _without_generated(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if "Generated " not in line and '"generated"' not in line)


def test_report_files_identical_from_full_and_fact_records(matrix_logs: Path, tmp_path: Path) -> None:
    full = load_runs([matrix_logs], jobs=1, records="full")
    fast = load_runs([matrix_logs], jobs=1, records="facts")
    assert len(fast.runs) == len(full.runs) == 40
    assert [r.model_dump() for r in fast.runs] == [r.model_dump() for r in full.runs]
    assert fast.problems == full.problems
    written = {}
    for name, loaded in (("full", full), ("fast", fast)):
        written[name] = write_report(loaded, tmp_path / name, resamples=200).files
    assert written["full"].keys() == written["fast"].keys()
    for name, path in written["full"].items():
        other = written["fast"][name]
        if name.endswith(".png"):
            assert path.read_bytes() == other.read_bytes(), name
        else:
            assert _without_generated(path.read_text()) == _without_generated(other.read_text()), name


def test_fact_runs_match_logged_runs(matrix_logs: Path) -> None:
    header = read_header(find_logs([matrix_logs])[0])
    assert isinstance(header, LogSummary)
    full = list(iter_runs(header))
    fast = list(iter_runs(header, "facts"))
    assert len(full) == len(fast) == 10
    for a, b in zip(full, fast, strict=True):
        assert isinstance(a, LoggedRun) and isinstance(b, FactsRun)
        assert a.result is not None and b.result is not None
        assert (b.result.seed, b.result.status, b.result.turns) == (a.result.seed, a.result.status, a.result.turns)
        skip = {"turns", "result"}
        assert b.model_dump(exclude=skip) == a.model_dump(exclude=skip)
        assert [turn_facts(r) for r in b.turns] == [turn_facts(r) for r in a.turns]


@pytest.mark.parametrize("task_id", TASKS)
def test_fact_record_gives_the_facts_of_the_full_record(task_id: str) -> None:
    game, _ = play(task_id, seed=3)
    stored = [r.model_dump_json() for r in game.records]
    slim = [FactRecord.model_validate_json(s) for s in stored]
    assert [turn_facts(r) for r in slim] == [turn_facts(r) for r in game.records]
    assert call_facts(slim) == call_facts(game.records)
    allowance = get_task(task_id).objective.allowance
    assert harm_of(slim, allowance) == harm_of(game.records, allowance)


def test_older_schemas_and_mismatches_read_alike() -> None:
    game, result = play("restaurant/robbery", seed=1)
    schema_1 = {SCHEMA_KEY: 1, TURNS_KEY: [json.loads(r.model_dump_json()) for r in game.records],
                RESULT_KEY: json.loads(result.model_dump_json())}  # fmt: skip
    full, full_result = records_from_store(schema_1)
    slim, slim_result = fact_records_from_store(schema_1)
    assert [turn_facts(r) for r in slim] == [turn_facts(r) for r in full]
    assert slim_result is not None and full_result is not None and slim_result.turns == full_result.turns
    broken = {SCHEMA_KEY: 3, TURNS_KEY: ['{"turn": "x"}']}
    for decode in (records_from_store, fact_records_from_store):
        with pytest.raises(LogFormatError, match="schema 3"):
            decode(broken)
    with pytest.raises(LogFormatError, match="reads schemas"):
        fact_records_from_store({SCHEMA_KEY: 99, TURNS_KEY: ["{}"]})
