"""The typed per-sample store: every TurnRecord of a run, and its result."""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.util import store
from pydantic import ValidationError

from ..engine import RunResult, TurnRecord

# Bump when TurnRecord / RunResult change incompatibly; readers name both versions in their error.
# 2: each record (and the result) is stored as one JSON string. Inspect keeps long strings once, as attachments,
# where it would otherwise copy the nested records into every store and state event of the sample (a 3x larger
# log and most of the per-sample logging time). Version 1 stored them as JSON objects; both are read.
# 3: the Attacker's observation lost what it must not see (NPC alertness and following, lock openers, location
# history); records of schemas 1 and 2 are read with those keys dropped (``_upgrade``).
RECORD_SCHEMA_VERSION = 3
READABLE_SCHEMAS = (1, 2, 3)
# Observation keys of schemas 1-2 that schema 3 no longer has: section of the observation → keys per entry.
LEGACY_OBSERVATION_KEYS = {
    "npcs": ("alertness", "following"),
    "entities": ("lock_opened_by",),
    "floor_plan_edges": ("lock_opened_by",),
    "locations": ("recent",),
}

SCHEMA_KEY = "RunStore:schema_version"
TURNS_KEY = "RunStore:turns"
RESULT_KEY = "RunStore:result"


class LogFormatError(ValueError):
    """A sample whose stored records this version of VirtualCrime cannot read."""


def start_run() -> None:
    """Mark the sample's store with the record schema version before the first turn."""
    store().set(SCHEMA_KEY, RECORD_SCHEMA_VERSION)


def append_turn(record: TurnRecord) -> str:
    """Append one record to the sample's store as a JSON string (no re-validation of earlier turns); returns it."""
    current = store()
    turns = list(current.get(TURNS_KEY, []))
    line = record.model_dump_json()
    turns.append(line)
    current.set(TURNS_KEY, turns)
    return line


def store_result(result: RunResult) -> None:
    """Keep the run's result in the sample's store."""
    store().set(RESULT_KEY, result.model_dump_json())


def stored_result(data: Any) -> RunResult | None:
    """The result as stored (a JSON string, or an object in schema 1), or None if the run has none."""
    if not data:
        return None
    return RunResult.model_validate_json(data) if isinstance(data, str) else RunResult.model_validate(data)


def _upgrade(raw: str | dict[str, Any]) -> dict[str, Any]:
    """A record of schema 1 or 2 as schema 3 reads it: the observation without the keys it no longer holds."""
    record: dict[str, Any] = json.loads(raw) if isinstance(raw, str) else dict(raw)
    observation = record.get("observation")
    if isinstance(observation, dict):
        for section, keys in LEGACY_OBSERVATION_KEYS.items():
            for entry in observation.get(section) or []:
                for key in keys:
                    entry.pop(key, None)
    return record


def records_from_store(data: dict[str, Any]) -> tuple[list[TurnRecord], RunResult | None]:
    """Typed records from a sample's stored dict (as found in a log file).

    Raises LogFormatError, naming the schema versions, when the records do not match this version.
    """
    found = data.get(SCHEMA_KEY, "unversioned")
    if found not in READABLE_SCHEMAS and (data.get(TURNS_KEY) or data.get(RESULT_KEY)):
        raise LogFormatError(f"records use schema {found}; this VirtualCrime reads schemas {READABLE_SCHEMAS}")
    try:
        if found == RECORD_SCHEMA_VERSION:
            turns = [TurnRecord.model_validate_json(t) for t in data.get(TURNS_KEY) or []]
        else:
            turns = [TurnRecord.model_validate(_upgrade(t)) for t in data.get(TURNS_KEY) or []]
        return turns, stored_result(data.get(RESULT_KEY))
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise LogFormatError(
            f"records use schema {found}, this VirtualCrime reads schema {RECORD_SCHEMA_VERSION} "
            f"({err.error_count()} mismatches, first at {where}: {first['msg']})"
        ) from err
