"""Turning a model's reply into a typed object: find the JSON, repair what is safe, reject the rest.

Every public ``parse_*`` function returns ``(object, repairs)`` where ``repairs`` lists, in words, each
change made to the model's answer, or raises ``ModelOutputError``. Nothing else escapes: any other failure
inside is converted. Importable without Inspect, so the parsing can be tested alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ...world.ops import OPERATION_ADAPTER, Operation
from ..types import (
    Action,
    Feasibility,
    Outcome,
    OutcomeCategory,
    PlanUpdate,
    Stage,
    StageResult,
    Verdict,
)

MAX_OUTCOMES = 4
MIN_MINUTES, MAX_MINUTES, DEFAULT_MINUTES = 1, 120, 5
DIMENSIONS = tuple(Feasibility.model_fields)
T = TypeVar("T")


class ModelOutputError(ValueError):
    """A reply that cannot be safely turned into the expected object. ``raw`` keeps the reply."""

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


def extract_json(text: str) -> tuple[dict[str, Any], list[str]]:
    """The first JSON object in ``text`` (prose, code fences and trailing text allowed; a truncated object is
    closed if only brackets and a string are missing)."""
    repairs: list[str] = []
    if not text or not text.strip():
        raise ModelOutputError("the reply is empty", text)
    fenced = re.search(r"```(?:json)?\s*(\{.*?)```", text, flags=re.S)
    body = fenced.group(1) if fenced else text
    if fenced:
        repairs.append("took the JSON from a code fence")
    start = body.find("{")
    if start < 0:
        raise ModelOutputError("no JSON object in the reply", text)
    if body[:start].strip() and not fenced:
        repairs.append("ignored text before the JSON object")
    candidate, complete = _balanced_object(body[start:])
    if not complete:
        candidate = _close_truncated(candidate)
        repairs.append("closed a truncated JSON object")
    elif body[start + len(candidate) :].strip() and not fenced:
        repairs.append("ignored text after the JSON object")
    cleaned = re.sub(r",\s*([}\]])", r"\1", candidate)
    if cleaned != candidate:
        repairs.append("removed trailing commas")
    try:
        data = json.loads(cleaned)
    except json.JSONDecodeError as err:
        raise ModelOutputError(f"the JSON does not parse: {err.msg} at position {err.pos}", text) from err
    if not isinstance(data, dict):
        raise ModelOutputError("the reply's JSON is not an object", text)
    return data, repairs


def _brackets(text: str) -> tuple[list[tuple[int, str]], bool]:
    """The brackets of ``text`` outside JSON strings, with their positions, and whether it ends inside a string."""
    found: list[tuple[int, str]] = []
    in_string, escape = False, False
    for index, char in enumerate(text):
        if in_string:
            if escape:
                escape = False
            elif char == "\\":
                escape = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[]}":
            found.append((index, char))
    return found, in_string


def _balanced_object(text: str) -> tuple[str, bool]:
    """The prefix of ``text`` up to the brace closing its first ``{``, and whether it was closed."""
    depth = 0
    for index, char in _brackets(text)[0]:
        depth += 1 if char in "{[" else -1
        if depth == 0:
            return text[: index + 1], True
    return text, False


def _close_truncated(text: str) -> str:
    """Close an object cut off mid-way: end an open string, drop a dangling key or comma, close brackets."""
    brackets, in_string = _brackets(text)
    stack: list[str] = []
    for _, char in brackets:
        if char in "{[":
            stack.append("}" if char == "{" else "]")
        elif stack:
            stack.pop()
    fixed = text + ('"' if in_string else "")
    fixed = re.sub(r',\s*"[^"]*"\s*:?\s*$', "", fixed)  # a key with no value
    fixed = re.sub(r"[,:]\s*$", "", fixed.rstrip())
    return fixed + "".join(reversed(stack))


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
    """The Attacker's plan call: ``{"memory": str, "plan": str}`` (over-long text is cut and recorded)."""

    def parse(raw: str) -> tuple[PlanUpdate, list[str]]:
        data, repairs = extract_json(raw)
        for field, limit in (("memory", 4000), ("plan", 2000)):
            value = data.get(field)
            if value is None:
                raise ModelOutputError(f"plan: missing {field!r}", raw)
            if not isinstance(value, str):
                data[field] = json.dumps(value) if isinstance(value, dict | list) else str(value)
                repairs.append(f"turned {field} into text")
            if len(data[field]) > limit:
                data[field] = data[field][:limit]
                repairs.append(f"cut {field} to {limit} characters")
        return _validate(PlanUpdate, {"memory": data["memory"], "plan": data["plan"]}, raw, "plan"), repairs

    return _guard(parse, text)


def parse_action(
    text: str, members: Collection[str] = (), known_ids: Collection[str] = (), names: dict[str, str] | None = None
) -> tuple[Action, list[str]]:
    """The Attacker's act call. With ``members`` / ``known_ids`` the actor must be a team member and the target
    (and item) a known id; a name or a differently-cased id is mapped to its id (recorded)."""

    def parse(raw: str) -> tuple[Action, list[str]]:
        data, repairs = extract_json(raw)
        data = {k: v for k, v in data.items() if k in Action.model_fields}
        lookup = {k.lower(): k for k in known_ids} | {n.lower(): i for n, i in (names or {}).items()}
        for field in ("verb", "description", "actor", "target", "item"):
            if field in data and data[field] is not None and not isinstance(data[field], str):
                data[field] = str(data[field])
                repairs.append(f"turned {field} into text")
        if not str(data.get("verb") or "").strip():
            raise ModelOutputError("action: the verb is missing or empty", raw)
        data.setdefault("description", "")
        if "minutes" not in data:
            data["minutes"] = DEFAULT_MINUTES
            repairs.append(f"minutes missing: used {DEFAULT_MINUTES}")
        minutes = data["minutes"]
        try:
            number = round(float(minutes))
        except (TypeError, ValueError) as err:
            raise ModelOutputError(f"action: minutes is not a number: {minutes!r}", raw) from err
        clamped = min(MAX_MINUTES, max(MIN_MINUTES, number))
        if clamped != minutes:
            repairs.append(f"set minutes {minutes!r} to {clamped} (range {MIN_MINUTES}-{MAX_MINUTES})")
        data["minutes"] = clamped
        for field in ("actor", "target", "item"):
            value = str(data.get(field) or "").strip()
            data[field] = value
            if not value or not lookup or value in known_ids:
                continue
            mapped = lookup.get(value.lower())
            if mapped is None:
                raise ModelOutputError(f"action: {field} {value!r} is not a known id", raw)
            data[field] = mapped
            repairs.append(f"mapped {field} {value!r} to id {mapped!r}")
        if members and data["actor"] not in members:
            raise ModelOutputError(f"action: actor {data['actor']!r} is not a team member ({', '.join(members)})", raw)
        if len(data["description"]) > 1000:
            data["description"] = data["description"][:1000]
            repairs.append("cut description to 1000 characters")
        return _validate(Action, data, raw, "action"), repairs

    return _guard(parse, text)


def _category(value: object, raw: str) -> OutcomeCategory:
    key = re.sub(r"[^a-z]+", "_", str(value).strip().lower()).strip("_")
    try:
        return OutcomeCategory(key)
    except ValueError as err:
        raise ModelOutputError(f"verdict: unknown outcome category {value!r}", raw) from err


def parse_verdict(text: str) -> tuple[Verdict, list[str]]:
    """The Judge's verdict. Safe repairs: category spelling, ratings clamped to 1-5, probabilities renormalised,
    the lowest outcomes merged down to four."""

    def parse(raw: str) -> tuple[Verdict, list[str]]:
        data, repairs = extract_json(raw)
        feasibility = data.get("feasibility")
        if not isinstance(feasibility, dict):
            raise ModelOutputError("verdict: 'feasibility' must be an object with the eight dimensions", raw)
        dims: dict[str, dict[str, object]] = {}
        for name in DIMENSIONS:
            rating = feasibility.get(name)
            if isinstance(rating, int | float) and not isinstance(rating, bool):
                rating = {"score": rating, "reason": ""}
            if not isinstance(rating, dict) or not isinstance(rating.get("score"), int | float):
                raise ModelOutputError(f"verdict: feasibility.{name} needs a numeric score", raw)
            score = round(float(rating["score"]))
            if not 1 <= score <= 5:
                repairs.append(f"clamped {name} score {rating['score']} to 1-5")
                score = min(5, max(1, score))
            dims[name] = {"score": score, "reason": str(rating.get("reason", ""))[:400]}
        raw_outcomes = data.get("outcomes")
        if not isinstance(raw_outcomes, list) or not raw_outcomes:
            raise ModelOutputError("verdict: 'outcomes' must be a non-empty list", raw)
        outcomes: list[dict[str, Any]] = []
        for index, item in enumerate(raw_outcomes):
            if not isinstance(item, dict):
                raise ModelOutputError(f"verdict: outcome {index} is not an object", raw)
            category = _category(item.get("category"), raw)
            if category.value != item.get("category"):
                repairs.append(f"read outcome category {item.get('category')!r} as {category.value!r}")
            try:
                probability = float(item.get("probability"))  # type: ignore[arg-type]
            except (TypeError, ValueError) as err:
                raise ModelOutputError(f"verdict: outcome {index} has no numeric probability", raw) from err
            if not probability >= 0 or probability == float("inf"):
                raise ModelOutputError(f"verdict: outcome {index} has probability {probability}", raw)
            catastrophic = item.get("catastrophic", False)
            if not isinstance(catastrophic, bool):
                raise ModelOutputError(f"verdict: outcome {index} catastrophic must be true or false", raw)
            outcomes.append({"category": category, "description": str(item.get("description", ""))[:600],
                             "probability": probability, "catastrophic": catastrophic})  # fmt: skip
        outcomes = _merge_lowest(outcomes, repairs)
        total = sum(o["probability"] for o in outcomes)
        if total <= 0:
            raise ModelOutputError("verdict: the outcome probabilities sum to 0", raw)
        if abs(total - 1.0) > 1e-6:
            repairs.append(f"renormalised outcome probabilities (they summed to {total:.4g})")
        for outcome in outcomes:
            outcome["probability"] = outcome["probability"] / total
        _fix_rounding(outcomes)
        risky = data.get("risky", False)
        if not isinstance(risky, bool):
            raise ModelOutputError("verdict: risky must be true or false", raw)
        verdict = {
            "feasibility": dims,
            "risky": risky,
            "outcomes": [Outcome(**o) for o in outcomes],
            "rationale": str(data.get("rationale", ""))[:1500],
        }
        return _validate(Verdict, verdict, raw, "verdict"), repairs

    return _guard(parse, text)


def _merge_lowest(outcomes: list[dict[str, Any]], repairs: list[str]) -> list[dict[str, Any]]:
    """Merge the least likely outcomes into the most likely one of the same side until at most four remain."""
    merged = list(outcomes)
    while len(merged) > MAX_OUTCOMES:
        low = min(range(len(merged)), key=lambda i: merged[i]["probability"])
        gone = merged.pop(low)
        side = [i for i, o in enumerate(merged) if o["category"].non_failure == gone["category"].non_failure]
        host = max(side or range(len(merged)), key=lambda i: merged[i]["probability"])
        merged[host]["probability"] += gone["probability"]
        merged[host]["catastrophic"] = merged[host]["catastrophic"] or gone["catastrophic"]
        repairs.append(f"merged outcome {gone['category'].value!r} into {merged[host]['category'].value!r}")
    return merged


def _fix_rounding(outcomes: list[dict[str, Any]]) -> None:
    residue = 1.0 - sum(o["probability"] for o in outcomes)
    largest = max(outcomes, key=lambda o: o["probability"])
    largest["probability"] = min(1.0, max(0.0, largest["probability"] + residue))


def parse_stage(text: str, stage: Stage) -> tuple[StageResult, list[str]]:
    """A World Manager stage: ``{"ops": [...], "note": str}``. Operations that are not valid world operations
    are dropped (recorded); the world layer then validates the rest against the state."""

    def parse(raw: str) -> tuple[StageResult, list[str]]:
        data, repairs = extract_json(raw)
        ops_data = data.get("ops", data.get("operations"))
        if ops_data is None:
            raise ModelOutputError(f"{stage}: missing 'ops' list", raw)
        if not isinstance(ops_data, list):
            raise ModelOutputError(f"{stage}: 'ops' must be a list", raw)
        ops: list[Operation] = []
        for index, item in enumerate(ops_data):
            try:
                # strict JSON validation: no silent coercion of "yes" to true or "5" to 5
                ops.append(OPERATION_ADAPTER.validate_json(json.dumps(item), strict=True))
            except ValidationError as err:
                first = err.errors()[0]
                repairs.append(f"dropped op {index} ({first['msg']} at {'.'.join(map(str, first['loc']))})")
        note = str(data.get("note", ""))[:1500]
        return StageResult(stage=stage, ops=ops, note=note), repairs

    return _guard(parse, text)


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a provider is asked to follow for ``model``."""
    return model.model_json_schema()
