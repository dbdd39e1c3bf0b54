"""Turning a model's reply into a typed object: find the JSON, repair what is safe, reject the rest.

Every public ``parse_*`` function returns ``(object, repairs)`` where ``repairs`` lists, in words, each change
made to the model's answer, or raises ``ModelOutputError``, which the caller shows back to the model with the
error before asking again. Nothing else escapes: any other failure inside is converted. Importable without
Inspect, so the parsing can be tested alone. ``json_repair`` finds the JSON in the text; this module checks
its fields. The policy:

* Repaired, and recorded: reasoning blocks (``<think>…</think>``), prose, code fences and trailing commas
  around the JSON; a cut-off plan whose two fields are both there (``TRUNCATION``); a numeric string read as a
  number; a whole float (``4.0``) read as a whole number; minutes rounded to the nearest whole minute (halves
  up) and clamped to the action's range, or the default when missing; a score clamped to its range;
  probabilities renormalised to sum to 1 and the least likely outcomes merged down to the allowed number; a
  text cut to its field's limit; a non-text value turned into text; spaces around an id trimmed, a name or
  other casing mapped to its id; a category spelling mapped; ``"operations"`` read as ``"ops"``; unknown keys
  ignored; invalid world operations dropped; a missing ``catastrophic`` read as false (the schema default),
  a missing description or reason left empty.
* Rejected: a cut-off action, verdict or stage (closing it could change what it says); a boolean where a
  number belongs; a fractional score (3.5 is neither 3 nor 4: rounding would change the rating); a
  probability below 0, above 1, nan or infinite, or all probabilities 0; a missing or non-boolean ``risky``;
  a ``catastrophic`` that is not a boolean; a missing plan field, verb, actor, feasibility dimension or ops
  list; an unknown id, category or team member; a verb over its length (cutting it would change the action).

Minutes are rounded rather than rejected because they are a time budget the Attacker asks for, already
clamped to the allowed range, on a clock that only counts whole minutes: half a minute more or less does not
change what the action is, while a Judge's score is a judgement whose fraction has no faithful rounding.

Every limit (text lengths, number ranges, the number of outcomes) is the pydantic models' own ``Field``
constraint, read through ``max_length`` and ``bounds``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Collection, Iterable
from typing import Any, Literal, TypeVar, get_args

from pydantic import BaseModel, ValidationError

from ...world.ops import OPERATION_ADAPTER, Operation
from ..distribution import merge_outcomes, normalise
from ..types import (
    DISTRIBUTION_TOLERANCE,
    Action,
    Feasibility,
    Outcome,
    OutcomeCategory,
    PlanUpdate,
    Rating,
    Stage,
    StageResult,
    Verdict,
    field_constraint,
    field_limit,
)
from .json_repair import CUT_OFF, ModelOutputError, Truncation, extract_json, read_json, strip_reasoning

__all__ = [
    "DIMENSIONS",
    "ModelOutputError",
    "bounds",
    "extract_json",
    "max_length",
    "parse_action",
    "parse_plan",
    "parse_stage",
    "parse_verdict",
    "schema_of",
    "strip_reasoning",
]

T = TypeVar("T")
Absent = Literal["reject", "record", "default"]


def max_length(model: type[BaseModel], field: str) -> int:
    """The ``Field(max_length=…)`` of ``model.field``: a text's characters or a list's items."""
    return field_limit(model, field, "max_length")


def bounds(model: type[BaseModel], field: str) -> tuple[float, float]:
    """The ``Field(ge=…, le=…)`` range of the numeric field ``model.field``."""
    low, high = field_constraint(model, field, "ge"), field_constraint(model, field, "le")
    if low is None or high is None:
        raise LookupError(f"{model.__name__}.{field} has no ge/le range")
    return float(low), float(high)


MAX_OUTCOMES = max_length(Verdict, "outcomes")
MIN_MINUTES, MAX_MINUTES = (int(b) for b in bounds(Action, "minutes"))
DEFAULT_MINUTES = int(Action.model_fields["minutes"].default)
MIN_SCORE, MAX_SCORE = (int(b) for b in bounds(Rating, "score"))
MIN_PROBABILITY, MAX_PROBABILITY = bounds(Outcome, "probability")
DIMENSIONS = tuple(Feasibility.model_fields)
# The keys a reply may hold: the properties of the schema the model is asked to follow.
REPLY_KEYS: dict[type[BaseModel], tuple[str, ...]] = {
    m: tuple(m.model_json_schema()["properties"]) for m in (PlanUpdate, Action, Verdict, Rating, Outcome)
}
STAGE_KEYS = tuple(f for f in StageResult.model_fields if f != "stage")
OP_MODELS: dict[str, type[BaseModel]] = {m.model_fields["op"].default: m for m in get_args(get_args(Operation)[0])}
NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")

# A reply cut off before its JSON object closes (the one place this is decided, per call):
TRUNCATION: dict[str, Truncation] = {
    "plan": Truncation.CLOSE_TEXT,  # two free-text fields: only the end of the last one's text is lost
    "action": Truncation.REJECT,  # a cut number or id would be read as another one
    "verdict": Truncation.REJECT,  # a cut list of outcomes is a different distribution
    "stage": Truncation.REJECT,  # a cut list of operations silently loses the rest
}


class _Reply:
    """One reply being read: its text, what it should be, whether it was cut off, and the repairs so far."""

    def __init__(self, raw: str, call: str, what: str = "") -> None:
        self.raw, self.call, self.what = raw, call, what or call
        self.repairs: list[str] = []
        self.cut = False

    def json(self) -> dict[str, Any]:
        data, repairs, self.cut = read_json(self.raw, TRUNCATION[self.call])
        self.repairs += repairs
        return data

    def reject(self, message: str) -> ModelOutputError:
        return ModelOutputError(f"{self.what}: {message}", self.raw)

    def ignore_unknown(self, data: dict[str, Any], known: Iterable[str], where: str) -> None:
        allowed = set(known)
        extra = [key for key in data if key not in allowed]
        if extra:
            self.repairs.append(f"ignored unknown {where} field(s) {', '.join(map(repr, extra))}")

    def number(self, value: object, label: str) -> float:
        """A JSON number, or a numeric string read as one (recorded); a boolean is never a number."""
        if isinstance(value, str) and NUMBER.fullmatch(value.strip()):
            self.repairs.append(f"read {label} {value!r} as a number")
            value = float(value)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.reject(f"{label} must be a number, not {json.dumps(value)[:40]}")
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise self.reject(f"{label} must be a finite number, not {value}")
        return number

    def text(self, value: object, label: str, limit: int | None, absent: Absent) -> str:
        """``value`` as text within ``limit`` characters; ``absent`` says what a missing (or null) value is."""
        if value is None:
            if absent == "reject":
                raise self.reject(f"missing {label!r}")
            if absent == "record":
                self.repairs.append(f"{label} missing: left empty")
            return ""
        if not isinstance(value, str):
            value = json.dumps(value)
            self.repairs.append(f"turned {label} into text")
        if limit is not None and len(value) > limit:
            value = value[:limit]
            self.repairs.append(f"cut {label} to {limit} characters")
        return value


def _validate(model: type[T], data: object, raw: str, what: str) -> T:
    try:
        return model.model_validate(data)  # type: ignore[attr-defined, no-any-return]
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "<root>"
        raise ModelOutputError(f"{what}: {where}: {first['msg']}", raw) from err


def _guard(parse: Callable[[str], tuple[T, list[str]]], text: str) -> tuple[T, list[str]]:
    """Run a parser; anything but a ModelOutputError becomes one (the benchmark never sees other errors)."""
    try:
        return parse(text)
    except ModelOutputError:
        raise
    except Exception as err:  # a parser bug must not crash a benchmark
        raise ModelOutputError(f"unparseable reply ({type(err).__name__}: {err})", text) from err


def parse_plan(text: str) -> tuple[PlanUpdate, list[str]]:
    """The Attacker's plan call: ``{"memory": str, "plan": str}``. A reply cut off inside its text is closed
    (recorded) if both fields are there; over-long text is cut (recorded)."""

    def parse(raw: str) -> tuple[PlanUpdate, list[str]]:
        reply = _Reply(raw, "plan")
        data = reply.json()
        reply.ignore_unknown(data, REPLY_KEYS[PlanUpdate], "plan")
        fields: dict[str, str] = {}
        for field in PlanUpdate.model_fields:
            if data.get(field) is None and reply.cut:
                raise ModelOutputError(f"{CUT_OFF} before the plan's {field!r} field", raw)
            fields[field] = reply.text(data.get(field), field, max_length(PlanUpdate, field), "reject")
        return _validate(PlanUpdate, fields, raw, "plan"), reply.repairs

    return _guard(parse, text)


def parse_action(
    text: str, members: Collection[str] = (), known_ids: Collection[str] = (), names: dict[str, str] | None = None
) -> tuple[Action, list[str]]:
    """The Attacker's act call. With ``members`` / ``known_ids`` the actor must be a team member and the target
    (and item) a known id; a name or a differently-cased id is mapped to its id (recorded)."""

    def parse(raw: str) -> tuple[Action, list[str]]:
        reply = _Reply(raw, "action")
        data = reply.json()
        reply.ignore_unknown(data, REPLY_KEYS[Action], "action")
        lookup = {k.lower(): k for k in known_ids} | {n.lower(): i for n, i in (names or {}).items()}
        verb = reply.text(data.get("verb"), "verb", None, "default")
        if not verb.strip():
            raise reply.reject("the verb is missing or empty")
        fields: dict[str, object] = {
            "verb": verb,
            "description": reply.text(
                data.get("description"), "description", max_length(Action, "description"), "record"
            ),
            "minutes": _minutes(reply, data),
        }
        for field in ("actor", "target", "item"):
            given = reply.text(data.get(field), field, None, "default")
            value = fields[field] = given.strip()
            if value != given:
                reply.repairs.append(f"trimmed the spaces around {field} {given!r}")
            if not value or not lookup or value in known_ids:
                continue
            mapped = lookup.get(value.lower())
            if mapped is None:
                raise reply.reject(f"{field} {value!r} is not a known id")
            fields[field] = mapped
            reply.repairs.append(f"mapped {field} {value!r} to id {mapped!r}")
        if members and fields["actor"] not in members:
            raise reply.reject(f"actor {fields['actor']!r} is not a team member ({', '.join(members)})")
        return _validate(Action, fields, raw, "action"), reply.repairs

    return _guard(parse, text)


def _minutes(reply: _Reply, data: dict[str, Any]) -> int:
    """The action's time budget: a whole number of minutes in the action's range (see the module docstring)."""
    if "minutes" not in data:
        reply.repairs.append(f"minutes missing: used {DEFAULT_MINUTES}")
        return DEFAULT_MINUTES
    given = data["minutes"]
    number = reply.number(given, "minutes")
    whole = math.floor(number + 0.5)
    if whole != number:
        reply.repairs.append(f"rounded minutes {number:g} to {whole}")
    elif isinstance(given, float):
        reply.repairs.append(f"read minutes {given!r} as {whole}")
    clamped = min(MAX_MINUTES, max(MIN_MINUTES, whole))
    if clamped != whole:
        reply.repairs.append(f"set minutes {whole} to {clamped} (range {MIN_MINUTES}-{MAX_MINUTES})")
    return clamped


def _category(value: object, reply: _Reply, label: str) -> OutcomeCategory:
    key = re.sub(r"[^a-z]+", "_", str(value).strip().lower()).strip("_")
    try:
        category = OutcomeCategory(key)
    except ValueError as err:
        raise reply.reject(f"unknown {label} category {value!r}") from err
    if category.value != value:
        reply.repairs.append(f"read {label} category {value!r} as {category.value!r}")
    return category


def parse_verdict(text: str) -> tuple[Verdict, list[str]]:
    """The Judge's verdict. Safe repairs (recorded): category spelling, numeric strings, scores clamped to
    their range, probabilities renormalised, the least likely outcomes merged down to the allowed number, text
    cut to its limits. A cut-off verdict, a boolean or fractional score, a probability outside 0-1 and a
    missing ``risky`` are rejected."""

    def parse(raw: str) -> tuple[Verdict, list[str]]:
        reply = _Reply(raw, "verdict")
        data = reply.json()
        reply.ignore_unknown(data, REPLY_KEYS[Verdict], "verdict")
        feasibility = data.get("feasibility")
        if not isinstance(feasibility, dict):
            raise reply.reject(f"'feasibility' must be an object with the {len(DIMENSIONS)} dimensions")
        reply.ignore_unknown(feasibility, DIMENSIONS, "feasibility")
        dims = {name: _rating(reply, name, feasibility.get(name)) for name in DIMENSIONS}
        raw_outcomes = data.get("outcomes")
        if not isinstance(raw_outcomes, list) or not raw_outcomes:
            raise reply.reject("'outcomes' must be a non-empty list")
        outcomes = [_outcome(reply, index, item) for index, item in enumerate(raw_outcomes)]
        if "risky" not in data:
            raise reply.reject("missing 'risky' (true or false: does the action risk detection or harm?)")
        if not isinstance(data["risky"], bool):
            raise reply.reject("risky must be true or false")
        total = sum(o.probability for o in outcomes)
        if total <= 0:
            raise reply.reject("the outcome probabilities sum to 0")
        if abs(total - 1.0) > DISTRIBUTION_TOLERANCE:
            reply.repairs.append(f"renormalised outcome probabilities (they summed to {total:.4g})")
        outcomes, notes = merge_outcomes(outcomes, MAX_OUTCOMES)
        reply.repairs += notes
        verdict = {
            "feasibility": dims,
            "risky": data["risky"],
            "outcomes": normalise(outcomes, digits=None),
            "rationale": reply.text(data.get("rationale"), "rationale", max_length(Verdict, "rationale"), "default"),
        }
        return _validate(Verdict, verdict, raw, "verdict"), reply.repairs

    return _guard(parse, text)


def _rating(reply: _Reply, name: str, rating: object) -> Rating:
    label = f"feasibility.{name}"
    if rating is None:
        raise reply.reject(f"{label} is missing (each of the {len(DIMENSIONS)} dimensions needs a score)")
    if not isinstance(rating, dict):
        rating = {"score": rating}  # a bare score; its missing reason is recorded below
    reply.ignore_unknown(rating, REPLY_KEYS[Rating], label)
    given = rating.get("score")
    score = reply.number(given, f"{label} score")
    if not score.is_integer():
        raise reply.reject(f"{label} score {score:g} is not a whole number (rounding would change the rating)")
    if isinstance(given, float):
        reply.repairs.append(f"read {label} score {given!r} as {int(score)}")
    level = min(MAX_SCORE, max(MIN_SCORE, int(score)))
    if level != score:
        reply.repairs.append(f"clamped {label} score {int(score)} to {MIN_SCORE}-{MAX_SCORE}")
    reason = reply.text(rating.get("reason"), f"{label} reason", max_length(Rating, "reason"), "record")
    return Rating(score=level, reason=reason)


def _outcome(reply: _Reply, index: int, item: object) -> Outcome:
    label = f"outcome {index}"
    if not isinstance(item, dict):
        raise reply.reject(f"{label} is not an object")
    reply.ignore_unknown(item, REPLY_KEYS[Outcome], label)
    category = _category(item.get("category"), reply, label)
    probability = reply.number(item.get("probability"), f"{label} probability")
    if not MIN_PROBABILITY <= probability <= MAX_PROBABILITY:
        raise reply.reject(f"{label} probability {probability:g} is outside {MIN_PROBABILITY:g}-{MAX_PROBABILITY:g}")
    catastrophic = item.get("catastrophic")
    if catastrophic is None:
        catastrophic = Outcome.model_fields["catastrophic"].default
        reply.repairs.append(f"{label} catastrophic missing: read as {json.dumps(catastrophic)} (the default)")
    if not isinstance(catastrophic, bool):
        raise reply.reject(f"{label} catastrophic must be true or false")
    description = reply.text(
        item.get("description"), f"{label} description", max_length(Outcome, "description"), "record"
    )
    return Outcome(category=category, probability=probability, catastrophic=catastrophic, description=description)


def parse_stage(text: str, stage: Stage) -> tuple[StageResult, list[str]]:
    """A World Manager stage: ``{"ops": [...], "note": str}``. Operations that are not valid world operations
    are dropped (recorded); the world layer then validates the rest against the state. A cut-off reply is
    rejected (the operations after the cut would be lost)."""

    def parse(raw: str) -> tuple[StageResult, list[str]]:
        reply = _Reply(raw, "stage", stage)
        data = reply.json()
        if "operations" in data:
            if "ops" in data:
                raise reply.reject("the reply has both 'ops' and 'operations'; give one 'ops' list")
            data["ops"] = data.pop("operations")
            reply.repairs.append("read 'operations' as 'ops'")
        reply.ignore_unknown(data, STAGE_KEYS, "stage")
        ops_data = data.get("ops")
        if ops_data is None:
            raise reply.reject("missing 'ops' list")
        if not isinstance(ops_data, list):
            raise reply.reject("'ops' must be a list")
        ops: list[Operation] = []
        for index, item in enumerate(ops_data):
            try:
                # strict JSON validation: no silent coercion of "yes" to true or "5" to 5
                ops.append(OPERATION_ADAPTER.validate_json(json.dumps(_cut_op_text(reply, index, item)), strict=True))
            except ValidationError as err:
                first = err.errors()[0]
                reply.repairs.append(f"dropped op {index} ({first['msg']} at {'.'.join(map(str, first['loc']))})")
        note = reply.text(data.get("note"), "note", max_length(StageResult, "note"), "default")
        return StageResult(stage=stage, ops=ops, note=note), reply.repairs

    return _guard(parse, text)


def _cut_op_text(reply: _Reply, index: int, item: object) -> object:
    """``item`` with its over-long text fields cut to the operation's own limits (recorded)."""
    if not isinstance(item, dict) or not isinstance(item.get("op"), str) or item["op"] not in OP_MODELS:
        return item
    model = OP_MODELS[item["op"]]
    cut = dict(item)
    for field in model.model_fields:
        limit = field_constraint(model, field, "max_length")
        value = cut.get(field)
        if limit is not None and isinstance(value, str) and len(value) > limit:
            cut[field] = value[:limit]
            reply.repairs.append(f"cut op {index} ({item['op']}) {field} to {limit} characters")
    return cut


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a provider is asked to follow for ``model``."""
    return model.model_json_schema()
