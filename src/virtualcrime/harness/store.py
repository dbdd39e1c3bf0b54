"""The typed per-sample store: every TurnRecord of a run, and its result."""

from __future__ import annotations

from typing import Any

from inspect_ai.util import StoreModel, store
from pydantic import Field

from ..engine import RunResult, TurnRecord


class RunStore(StoreModel):
    """Read with ``store_as(RunStore)`` inside a sample, or ``RunStore.from_sample(sample)`` from a log."""

    turns: list[TurnRecord] = Field(default_factory=list)
    result: RunResult | None = None


TURNS_KEY = "RunStore:turns"
RESULT_KEY = "RunStore:result"


def append_turn(record: TurnRecord) -> None:
    """Append one record to the sample's store as plain JSON (cheap: no re-validation of earlier turns)."""
    current = store()
    turns = list(current.get(TURNS_KEY, []))
    turns.append(record.model_dump(mode="json"))
    current.set(TURNS_KEY, turns)


def records_from_store(data: dict[str, Any]) -> tuple[list[TurnRecord], RunResult | None]:
    """Typed records from a sample's stored dict (as found in a log file)."""
    turns = [TurnRecord.model_validate(t) for t in data.get(TURNS_KEY) or []]
    raw = data.get(RESULT_KEY)
    return turns, RunResult.model_validate(raw) if raw else None
