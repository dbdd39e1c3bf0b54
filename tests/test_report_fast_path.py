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
    FACTS_KEY,
    RESULT_KEY,
    SCHEMA_KEY,
    TURNS_KEY,
    FactRecord,
    LogFormatError,
    StoredFacts,
    fact_records_from_store,
    facts_of,
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


@pytest.mark.parametrize("task_id", TASKS)
def test_stored_facts_give_the_fact_records_of_the_full_records(task_id: str) -> None:
    game, result = play(task_id, seed=3)
    stored = facts_of([r.model_dump_json() for r in game.records])
    # The observation the harm classifier reads targets by repeats from turn to turn: it is kept once.
    assert len(stored.observations) < len(stored.turns) == len(game.records)
    again = StoredFacts.model_validate_json(stored.model_dump_json()).records()
    slim = [FactRecord.model_validate_json(r.model_dump_json()) for r in game.records]
    assert [r.model_dump() for r in again] == [r.model_dump() for r in slim]
    store = {SCHEMA_KEY: 3, TURNS_KEY: [r.model_dump_json() for r in game.records],
             RESULT_KEY: result.model_dump_json(), FACTS_KEY: stored.model_dump_json()}  # fmt: skip
    turns, _ = fact_records_from_store(store)
    assert [r.model_dump() for r in turns] == [r.model_dump() for r in slim]
    # Read from the stored facts, not the full records ...
    turns, _ = fact_records_from_store({**store, TURNS_KEY: ['{"turn": "x"}']})
    assert len(turns) == len(game.records)
    # ... and from the full records when the stored facts are another version's or damaged.
    for facts in ('{"version": 2, "observations": [], "turns": [], "more": 1}', "{not json"):
        turns, _ = fact_records_from_store({**store, FACTS_KEY: facts})
        assert [r.model_dump() for r in turns] == [r.model_dump() for r in slim]
    with pytest.raises(LogFormatError, match="observation they do not hold"):
        StoredFacts(observations=[], turns=stored.turns[:1]).records()


def test_a_logged_run_keeps_its_facts_and_the_report_reads_them(matrix_logs: Path) -> None:
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(find_logs([matrix_logs])[0]))
    assert log.samples
    for sample in log.samples:
        assert sample.store[FACTS_KEY] == facts_of(sample.store[TURNS_KEY]).model_dump_json()


def test_a_log_read_in_slices_is_the_whole_log_in_order(matrix_logs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import virtualcrime.analysis.report as report

    header = read_header(find_logs([matrix_logs])[0])
    assert isinstance(header, LogSummary)
    whole = [(r.sample_id, r.epoch) for r in iter_runs(header, "facts")]  # type: ignore[union-attr]
    sliced = [(r.sample_id, r.epoch) for k in range(3) for r in iter_runs(header, "facts", (k, 3))]  # type: ignore[union-attr]
    assert sliced == whole and len(whole) == 10
    # Every log sliced, over two workers: the same runs, in the same order, as one process reading each log whole.
    monkeypatch.setattr(report, "SLICE_FROM_BYTES", 0)
    one = load_runs([matrix_logs], jobs=1)
    two = load_runs([matrix_logs], jobs=2)
    assert [r.model_dump() for r in two.runs] == [r.model_dump() for r in one.runs] and two.problems == one.problems


def test_the_direct_eval_reader_reads_what_inspect_reads(
    matrix_logs: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import virtualcrime.harness.log_reader as log_reader
    from virtualcrime.harness.eval_file import open_eval_file

    path = find_logs([matrix_logs])[0]
    direct = read_header(path)
    direct_runs = [r.model_dump() for r in iter_runs(direct, "facts")]  # type: ignore[arg-type]
    monkeypatch.setattr(log_reader, "open_eval_file", lambda _: None)  # Inspect's own reader
    assert read_header(path) == direct
    assert [r.model_dump() for r in iter_runs(direct, "facts")] == direct_runs  # type: ignore[arg-type]
    # What the direct reader leaves to Inspect: another suffix, a file that is no zip.
    assert open_eval_file(path.with_suffix(".json")) is None
    broken = tmp_path / "broken.eval"
    broken.write_bytes(b"PK\x03\x04 not a zip")
    assert open_eval_file(broken) is None
