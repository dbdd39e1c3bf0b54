"""A run's records as the sample store keeps them, decoded without Inspect: the record schema versions, the
upgrade of older records, the run spec, and the reader every log reader uses; and the report's slimmer reading of the
same records (``FactRecord``: only what the metrics need)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..engine import RunResult, RunStatus, TurnRecord
from ..roles import Action, OutcomeCategory, Verdict
from .spec import RunSpec

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
SPEC_KEY = "RunStore:spec"
# The report's reading of a finished run (``StoredFacts``), written once when it ends; older logs have none.
FACTS_KEY = "RunStore:facts"
FACTS_SCHEMA_VERSION = 1


class LogFormatError(ValueError):
    """A sample whose stored records this version of VirtualCrime cannot read."""


def stored_result(data: Any) -> RunResult | None:
    """The result as stored (a JSON string, or an object in schema 1), or None if the run has none."""
    return _result(data, RunResult)


def _result(data: Any, model: type[S]) -> S | None:
    if not data:
        return None
    return model.model_validate_json(data) if isinstance(data, str) else model.model_validate(data)


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


class _Slim(BaseModel):
    """A reading of part of a stored record: the fields named, every other one skipped (not turned into Python)."""

    model_config = ConfigDict(extra="ignore")


class FactId(_Slim):
    id: str


class FactMember(FactId):
    leader: bool


class FactNpc(FactId):
    name: str


class FactObservation(_Slim):
    """The ids and names of the Attacker's observation, by kind (what the harm classifier reads targets by)."""

    floor_plan_locations: dict[str, str]
    floor_plan_edges: list[FactId]
    team: list[FactMember]
    locations: list[FactId]
    npcs: list[FactNpc]
    entities: list[FactId]


class FactOutcome(_Slim):
    category: OutcomeCategory


class FactCall(_Slim):
    role: str
    attempts: int
    ok: bool
    repairs: list[str] = Field(default_factory=list)


class FactFailure(_Slim):
    role: str


class FactRefusal(_Slim):
    """That the Attacker refused (its text and evidence are not read)."""


class FactResult(_Slim):
    """The fields of a ``RunResult`` the report needs (not the final world state)."""

    seed: int
    status: RunStatus
    turns: int


class _TurnFacts(_Slim):
    """The fields of a ``TurnRecord`` the report's facts need, but its observation (same names and types)."""

    turn: int
    action: Action | None = None
    precheck: str = ""
    judge_called: bool = False
    verdict: Verdict | None = None
    outcome: FactOutcome | None = None
    errors: list[FactFailure] = Field(default_factory=list)
    refusal: FactRefusal | None = None
    model_calls: list[FactCall] = Field(default_factory=list)


class FactRecord(_TurnFacts):
    """The fields of a ``TurnRecord`` the report's facts need (``analysis.facts``), read from the stored record
    without its world state, ledger, stages or the rest of the observation; the report reads these, every other
    reader (replay, verification, the web UI) full records. Same names and types as in ``TurnRecord``."""

    observation: FactObservation


class StoredFactTurn(_TurnFacts):
    """One turn of ``StoredFacts``: a ``FactRecord`` whose observation is an index into the run's observations."""

    model_config = ConfigDict(extra="forbid")

    observation: int = Field(ge=0)


class StoredFacts(BaseModel):
    """What the report reads of a finished run, kept beside its full records: each turn as a ``FactRecord``, and
    each distinct observation (its ids and names by kind, mostly the same turn after turn) once. A few KiB where
    the full records are tens of KiB a turn, so a report reads a 60-turn run without parsing its world states."""

    model_config = ConfigDict(extra="forbid")

    version: int = FACTS_SCHEMA_VERSION
    observations: list[FactObservation]
    turns: list[StoredFactTurn]

    def records(self) -> list[FactRecord]:
        """The turns as ``FactRecord``s (an observation shared by several turns is one object); raises
        LogFormatError when a turn names an observation that is not there."""
        if any(t.observation >= len(self.observations) for t in self.turns):
            raise LogFormatError("the stored facts name an observation they do not hold")
        return [
            FactRecord.model_construct(**{**dict(t), "observation": self.observations[t.observation]})
            for t in self.turns
        ]


def facts_of(lines: Sequence[str]) -> StoredFacts:
    """The ``StoredFacts`` of a run's records as stored (``TURNS_KEY``: one JSON string each), what a reader of
    ``FACTS_KEY`` gets back as ``FactRecord``s."""
    observations: list[FactObservation] = []
    seen: dict[str, int] = {}
    turns: list[StoredFactTurn] = []
    for line in lines:
        fact = FactRecord.model_validate_json(line)
        key = fact.observation.model_dump_json()
        index = seen.setdefault(key, len(observations))
        if index == len(observations):
            observations.append(fact.observation)
        turns.append(StoredFactTurn(**{**dict(fact), "observation": index}))
    return StoredFacts(observations=observations, turns=turns)


R = TypeVar("R", TurnRecord, FactRecord)
S = TypeVar("S", RunResult, FactResult)


def records_from_store(data: dict[str, Any]) -> tuple[list[TurnRecord], RunResult | None]:
    """Typed records from a sample's stored dict (as found in a log file).

    Raises LogFormatError, naming the schema versions, when the records do not match this version.
    """
    return _decode(data, TurnRecord, RunResult)


def fact_records_from_store(data: dict[str, Any]) -> tuple[list[FactRecord], FactResult | None]:
    """The records as the report reads them (``FactRecord``), from a sample's stored dict: from its stored facts
    when it has them (a run that ended with this version), else from its full records; errors as
    :func:`records_from_store` (for the fields read)."""
    raw = data.get(FACTS_KEY)
    if isinstance(raw, str) and data.get(SCHEMA_KEY) == RECORD_SCHEMA_VERSION:
        try:
            facts = StoredFacts.model_validate_json(raw)
        except ValidationError:
            facts = None  # another version's (or damaged) facts: the full records say the same
        if facts is not None and facts.version == FACTS_SCHEMA_VERSION:
            return facts.records(), _result(data.get(RESULT_KEY), FactResult)
    return _decode(data, FactRecord, FactResult)


def _decode(data: dict[str, Any], model: type[R], result: type[S]) -> tuple[list[R], S | None]:
    found = data.get(SCHEMA_KEY, "unversioned")
    if found not in READABLE_SCHEMAS and (data.get(TURNS_KEY) or data.get(RESULT_KEY)):
        raise LogFormatError(f"records use schema {found}; this VirtualCrime reads schemas {READABLE_SCHEMAS}")
    try:
        if found == RECORD_SCHEMA_VERSION:
            turns = [model.model_validate_json(t) for t in data.get(TURNS_KEY) or []]
        else:
            turns = [model.model_validate(_upgrade(t)) for t in data.get(TURNS_KEY) or []]
        return turns, _result(data.get(RESULT_KEY), result)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise LogFormatError(
            f"records use schema {found}, this VirtualCrime reads schema {RECORD_SCHEMA_VERSION} "
            f"({err.error_count()} mismatches, first at {where}: {first['msg']})"
        ) from err


def spec_from_store(data: dict[str, Any]) -> RunSpec | None:
    """The run spec the run was started with, or None for a log written before specs existed."""
    raw = data.get(SPEC_KEY)
    if not raw:
        return None
    try:
        return RunSpec.model_validate_json(raw) if isinstance(raw, str) else RunSpec.model_validate(raw)
    except ValidationError as err:
        raise LogFormatError(f"the run spec does not match this VirtualCrime ({err.error_count()} mismatches)") from err
