"""The typed per-sample store: every TurnRecord of a run, its spec and its result (the Inspect side; decoding is
``runs.store``)."""

from __future__ import annotations

from inspect_ai.util import store

from ..engine import RunResult, TurnRecord
from ..runs.spec import RunSpec
from ..runs.store import FACTS_KEY, RECORD_SCHEMA_VERSION, RESULT_KEY, SCHEMA_KEY, SPEC_KEY, TURNS_KEY, facts_of


def start_run(spec: RunSpec) -> None:
    """Mark the sample's store with the record schema version and write the run's spec, before the first turn."""
    current = store()
    current.set(SCHEMA_KEY, RECORD_SCHEMA_VERSION)
    current.set(SPEC_KEY, spec.model_dump_json())


def append_turn(record: TurnRecord) -> str:
    """Append one record to the sample's store as a JSON string (no re-validation of earlier turns); returns it."""
    current = store()
    turns = list(current.get(TURNS_KEY, []))
    line = record.model_dump_json()
    turns.append(line)
    current.set(TURNS_KEY, turns)
    return line


def store_result(result: RunResult) -> None:
    """Keep the run's result in the sample's store, and the facts the report reads of the records appended."""
    current = store()
    current.set(FACTS_KEY, facts_of(current.get(TURNS_KEY, [])).model_dump_json())
    current.set(RESULT_KEY, result.model_dump_json())
