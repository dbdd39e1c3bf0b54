"""The typed per-sample store: every TurnRecord of a run, and its result."""

from __future__ import annotations

from typing import Any

from inspect_ai.util import StoreModel, store
from pydantic import Field, ValidationError

from ..engine import RunResult, TurnRecord

# Bump when TurnRecord / RunResult change incompatibly; readers name both versions in their error.
RECORD_SCHEMA_VERSION = 1


class RunStore(StoreModel):
    """Read with ``store_as(RunStore)`` inside a sample; from a log use ``records_from_store``."""

    schema_version: int = RECORD_SCHEMA_VERSION
    turns: list[TurnRecord] = Field(default_factory=list)
    result: RunResult | None = None


SCHEMA_KEY = "RunStore:schema_version"
TURNS_KEY = "RunStore:turns"
RESULT_KEY = "RunStore:result"


class LogFormatError(ValueError):
    """A sample whose stored records this version of VirtualCrime cannot read."""


def start_run() -> None:
    """Mark the sample's store with the record schema version before the first turn."""
    store().set(SCHEMA_KEY, RECORD_SCHEMA_VERSION)


def append_turn(record: TurnRecord) -> None:
    """Append one record to the sample's store as plain JSON (cheap: no re-validation of earlier turns)."""
    current = store()
    turns = list(current.get(TURNS_KEY, []))
    turns.append(record.model_dump(mode="json"))
    current.set(TURNS_KEY, turns)


def records_from_store(data: dict[str, Any]) -> tuple[list[TurnRecord], RunResult | None]:
    """Typed records from a sample's stored dict (as found in a log file).

    Raises LogFormatError, naming the schema versions, when the records do not match this version.
    """
    found = data.get(SCHEMA_KEY, "unversioned")
    try:
        turns = [TurnRecord.model_validate(t) for t in data.get(TURNS_KEY) or []]
        raw = data.get(RESULT_KEY)
        return turns, RunResult.model_validate(raw) if raw else None
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise LogFormatError(
            f"records use schema {found}, this VirtualCrime reads schema {RECORD_SCHEMA_VERSION} "
            f"({err.error_count()} mismatches, first at {where}: {first['msg']})"
        ) from err
