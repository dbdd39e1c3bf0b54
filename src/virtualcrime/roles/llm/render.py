"""The referees' compact world: what never changes, once, in the shared system message; what can change, one line
per object, in the user message; operations as compact JSON.

Only fields that differ from their defaults are written (the defaults are stated once, in the legend, taken from the
models), so empty and default fields take no room and every id appears once per object. Static per-object text
(names, descriptions, roles, skills, schedules, what opens a lock) is in the system message, which stays
byte-identical for the whole run; the user message lists only what operations can change. The line grammar:

* static object: ``id "Name" (attribute, key=value, …): description`` (the description in JSON quotes only if it
  holds a line break or starts with a quote); connection: ``id: a <-> b "door" (…)``;
  event: ``id: key=value, …``; intel: ``- "text" (key=value, …)``;
* changing object: ``id: key=value, …``;
* a value is an id-like word written bare, a list of such words as ``[a, b]``, or else JSON (text, numbers, other
  lists); a flag that is true where its default is false is written by its name alone.

Nothing is dropped: ``tests/test_prompt_information.py`` rebuilds every field of the state from the prompt's text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any, get_args

from pydantic import BaseModel

from ...world import WorldState, explain
from ...world import ops as ops_module
from ...world.models import Briefing, Edge, Entity, Event, Flag, Globals, IntelItem, Location, Member, Npc
from ...world.ops import LedgerEntry, Operation

Fields = tuple[str, ...]

STATIC: dict[type[BaseModel], Fields] = {
    Location: ("name", "description", "entry", "exit"),
    Edge: ("a", "b", "door", "opened_by"),
    Member: ("name", "description", "leader", "skills"),
    Npc: ("name", "description", "role", "schedule", "guarding"),
    Entity: ("name", "description", "key", "portable", "container", "opened_by"),
    Event: ("description", "trigger", "delay_turns", "effects"),
    IntelItem: ("text", "about", "location", "carried_by", "opens"),
    Briefing: ("task_id", "objective_id", "objective_name", "objective"),
}
"""Each model's fields that no operation changes, written once in the system message."""
_TEXTS: Fields = ("tags", "observable", "history")
DYNAMIC: dict[type[BaseModel], Fields] = {
    Location: _TEXTS,
    Edge: ("locked",),
    Member: ("current_location", "status", "hidden", "last_moved_turn", *_TEXTS),
    Npc: ("current_location", "status", "alertness", "following", "investigating", "last_moved_turn", *_TEXTS),
    Entity: ("current_location", "locked", *_TEXTS),
    Event: ("triggered_turn", "done"),
    Globals: ("clock", "weather", "alarm", "alarm_turn", "advanced_turn", "advanced_minutes"),
}
"""Each model's fields that operations can change, written in the user message at the start of every turn."""
KEYS = {"current_location": "at", "last_moved_turn": "moved", "portable": "fixed"}
"""The fields the prompt writes under another name (``fixed`` is ``not portable``); the others keep theirs."""
MINUTES_PER_DAY = 24 * 60
_BARE = re.compile(r"^[a-z][a-z0-9_]*$")


def compact(data: object) -> str:
    """JSON without spaces (non-ASCII kept as is)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def clock_text(minutes: int) -> str:
    """Simulated minutes since midnight of day one as ``HH:MM`` (``day N HH:MM`` from the second day)."""
    day, minute = divmod(minutes, MINUTES_PER_DAY)
    text = f"{minute // 60:02d}:{minute % 60:02d}"
    return text if day == 0 else f"day {day + 1} {text}"


def _plain(model: type[BaseModel], name: str, value: Any) -> Any:
    """A field's value as data: enums by value, a schedule as ``HH:MM place; …``, the clock as text, operations
    without their defaults, predicates as JSON data."""
    if name == "schedule":
        return "; ".join(f"{stop.at} {stop.location}" for stop in value)
    if model is Entity and name == "portable":
        return not value  # written as `fixed`: an item that cannot be carried
    if model is Globals and name == "clock":
        return clock_text(value)
    if name == "effects":
        return [op_data(op) for op in value]
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [getattr(v, "value", v) for v in value]
    return getattr(value, "value", value)


@cache
def default(model: type[BaseModel], name: str) -> Any:
    """A field's default as data (``...``: it has none, or the clock, and is always written). Cached: compare it,
    never change it."""
    info = model.model_fields[name]
    if info.is_required() or (model is Globals and name == "clock"):
        return ...
    return _plain(model, name, info.get_default(call_default_factory=True))


def fields(obj: BaseModel, spec: Fields) -> dict[str, Any]:
    """The fields of ``obj`` named in ``spec`` that differ from their defaults, under the prompt's keys."""
    model = type(obj)
    out: dict[str, Any] = {}
    for name in spec:
        value = _plain(model, name, getattr(obj, name))
        if value != default(model, name):
            out[KEYS.get(name, name)] = value
    return out


def _is_word(value: Any) -> bool:
    return isinstance(value, str) and bool(_BARE.match(value)) and value not in ("true", "false", "null")


def value_text(value: Any) -> str:
    """A value as the prompt writes it: an id-like word bare, a list of them as ``[a, b]``, anything else (text,
    numbers, other lists) as JSON."""
    if _is_word(value):
        return str(value)
    if isinstance(value, list) and value and all(_is_word(v) for v in value):
        return "[" + ", ".join(value) + "]"
    return compact(value)


def fields_text(model: type[BaseModel], spec: Fields, data: dict[str, Any]) -> str:
    """``key=value, …``; a flag that is true where its default is false is written by its name alone."""
    names = {KEYS.get(name, name): name for name in spec}
    return ", ".join(
        key if value is True and default(model, names[key]) is False else f"{key}={value_text(value)}"
        for key, value in data.items()
    )


def fixed(obj: BaseModel) -> bool:
    """An item that is not portable (written ``fixed``): nothing can move it (a transfer needs a portable item), so
    where it is belongs to the static world."""
    return isinstance(obj, Entity) and not obj.portable


def changing_line(oid: str, obj: BaseModel) -> str:
    """One object's changing fields, ``id: key=value, …`` ("" when all are at their defaults)."""
    model, spec = type(obj), DYNAMIC[type(obj)]
    data = fields(obj, spec)
    if fixed(obj):
        data.pop("at")
    return f"{oid}: {fields_text(model, spec, data)}" if data else ""


def static_line(oid: str, obj: BaseModel) -> str:
    """One object's static fields (see the module's line grammar)."""
    model, spec = type(obj), STATIC[type(obj)]
    data = fields(obj, spec)
    if isinstance(obj, Edge):
        door = data.pop("door", "")
        ends = f"{data.pop('a')} <-> {data.pop('b')}" + (f" {compact(door)}" if door else "")
        return f"{oid}: {ends}" + (f" ({fields_text(model, spec, data)})" if data else "")
    if isinstance(obj, Event):
        return f"{oid}: {fields_text(model, spec, data)}"
    if isinstance(obj, Entity) and fixed(obj):
        data["at"] = obj.current_location
    name, description = data.pop("name"), data.pop("description", "")
    shown = "" if name == implied_name(oid, model) else f" {compact(name)}"
    attributes = f" ({fields_text(model, spec, data)})" if data else ""
    return f"{oid}{shown}{attributes}: {line_text(description)}"


def line_text(text: str) -> str:
    """Free text that ends a line: as it is, or in JSON quotes if it holds a line break or starts with a quote."""
    return compact(text) if "\n" in text or text.startswith('"') else text


def implied_name(oid: str, model: type[BaseModel]) -> str:
    """The name an object has when the prompt leaves it out: its id in words (capitalised for places and members)."""
    words = oid.replace("_", " ")
    return words.capitalize() if model in (Location, Member) else words


def _section(title: str, lines: Iterable[str]) -> list[str]:
    listed = [line for line in lines if line]
    return [f"{title}:", *listed] if listed else []


def all_npcs(state: WorldState) -> dict[str, Npc]:
    """NPCs in the world and reinforcements alike, by id: a spawn moves one out of the reserve, so the static part
    lists them all in one order that no spawn changes."""
    return dict(sorted({**state.npcs, **state.reserve_npcs}.items()))


def static_world(state: WorldState) -> str:
    """What never changes in a run: the briefing and every object's static fields (the same every turn)."""
    brief = state.briefing
    lines = ["briefing: " + fields_text(Briefing, STATIC[Briefing], fields(brief, STATIC[Briefing]))]
    intel = []
    for item in brief.intel:
        data = fields(item, STATIC[IntelItem])
        text = compact(data.pop("text"))
        intel.append(f"- {text}" + (f" ({fields_text(IntelItem, STATIC[IntelItem], data)})" if data else ""))
    lines += ["intel:", *intel] if intel else []
    lines += _section("locations", (static_line(i, o) for i, o in state.locations.items()))
    lines += _section("connections", (static_line(e.id, e) for e in state.edges))
    lines += _section("members", (static_line(i, o) for i, o in state.members.items()))
    lines += _section("npcs", (static_line(i, o) for i, o in all_npcs(state).items()))
    lines += _section("entities", (static_line(i, o) for i, o in state.entities.items()))
    lines += _section("events", (static_line(e.id, e) for e in state.events))
    return "\n".join(lines)


def _empty(value: Any) -> bool:
    """Whether a default goes without saying: an empty list or text, false, 0 or null."""
    return value is None or value is False or (type(value) is int and value == 0) or value in ([], "")


def _defaults(model: type[BaseModel], *specs: Fields) -> list[str]:
    shown = [(KEYS.get(name, name), default(model, name)) for spec in specs for name in spec]
    return [f"{key}={value_text(value)}" for key, value in shown if value is not ... and not _empty(value)]


def legend() -> str:
    """How the world is written: the line grammar and every default that is not empty (taken from the models)."""
    kinds = (("members", Member), ("npcs", Npc), ("entities", Entity), ("events", Event), ("globals", Globals))
    defaults = "; ".join(
        f"{title} {', '.join(shown)}"
        for title, model in kinds
        if (shown := _defaults(model, STATIC.get(model, ()), DYNAMIC[model]))
    )
    return (
        'Static world: an object a line, `id "Name" (attributes): description` (a name left out is the id in words, '
        'capitalised for locations and members); a connection `id: a <-> b "door"`. Each message gives what can '
        "change, `id: key=value, …`, leaving out defaults (empty lists and texts, false, 0, null; "
        f"{defaults}) and objects with only defaults; a true flag is its name alone; text is in JSON quotes. Locked "
        "connections: those in doors_locked; reached flags: those in flags_reached (with their turn). `at`: where "
        "a member, NPC or item is (for an item: a location, or the member, NPC or container holding it); a fixed "
        "item never moves (its `at` is static). `moved`: the turn of its latest move or arrival (one move per turn). "
        "reserve_npcs: reinforcements not yet on the map."
    )


def dynamic_world(state: WorldState) -> str:
    """What can change: the clock, the last result, locks, flags, events' progress and each object's changing
    fields, one line per object (only fields that differ from their defaults)."""
    lines = ["globals: " + fields_text(Globals, DYNAMIC[Globals], fields(state.globals, DYNAMIC[Globals]))]
    if state.attacker.last_result:
        lines.append("last_result: " + compact(state.attacker.last_result))
    locked = [e.id for e in state.edges if e.locked]
    if locked:
        lines.append("doors_locked: " + ", ".join(locked))
    reached = [
        f"{f.id}={value_text(f.reached_turn)}" for f in [*state.checkpoints, *state.critical_failures] if f.reached
    ]
    if reached:
        lines.append("flags_reached: " + ", ".join(reached))
    if state.world_flags:
        lines.append("world_flags: " + ", ".join(f"{k}={value_text(v)}" for k, v in state.world_flags.items()))
    lines += _section("events", (changing_line(e.id, e) for e in state.events))
    lines += _section("members", (changing_line(i, o) for i, o in state.members.items()))
    lines += _section("npcs", (changing_line(i, o) for i, o in state.npcs.items()))
    lines += _section("reserve_npcs", (changing_line(i, o) for i, o in state.reserve_npcs.items()))
    lines += _section("entities", (changing_line(i, o) for i, o in state.entities.items()))
    lines += _section("locations", (changing_line(i, o) for i, o in state.locations.items()))
    return "\n".join(lines)


def conditions(state: WorldState) -> str:
    """Every checkpoint and critical failure with the exact condition the engine checks to latch it."""
    everyone = state.model_copy(update={"npcs": all_npcs(state)})  # wording that no reinforcement's arrival changes

    def line(kind: str, flag: Flag) -> str:
        if flag.predicate is None:
            return f"- {kind} {flag.id} ({flag.description}): no condition; set it with set_flag when it happens"
        exact = compact(flag.predicate.model_dump(mode="json"))
        return (
            f"- {kind} {flag.id} ({flag.description}): holds when {explain(flag.predicate, everyone)}; exactly: {exact}"
        )

    lines = [line("checkpoint", f) for f in state.checkpoints] + [line("failure", f) for f in state.critical_failures]
    return "\n".join(lines) or "- none"


def op_data(op: Operation) -> dict[str, Any]:
    """An operation as JSON data without its default fields (``op`` first, always)."""
    return {"op": op.op} | op.model_dump(mode="json", exclude_defaults=True, exclude={"op"})


def op_line(op: Operation) -> str:
    """An operation as one compact JSON object, as the World Manager writes it."""
    return compact(op_data(op))


def earlier_ops(entries: Sequence[LedgerEntry]) -> str:
    """What the earlier stages of this turn did, in order: each operation applied, and each rejected (it changed
    nothing) with the reason."""
    lines = [
        f"- {e.stage}: {op_line(e.op)}" + ("" if e.applied else f" REJECTED ({e.reason}), changed nothing")
        for e in entries
    ]
    return "\n".join(lines) or "- none yet"


def moved_this_turn(state: WorldState) -> list[str]:
    """Members and NPCs that already moved (or arrived) in this turn: they cannot move again."""
    movers: list[Member | Npc] = [*state.members.values(), *state.npcs.values()]
    return [m.id for m in movers if m.last_moved_turn == state.turn]


def operation_classes() -> list[type[BaseModel]]:
    """The operation models, in the order of the ``Operation`` union."""
    return list(get_args(get_args(Operation)[0]))


def _describe(text: str) -> str:
    """A model docstring for a prompt: ``CONSTANT`` replaced by its value, ``name`` by `name`."""

    def name(match: re.Match[str]) -> str:
        value = getattr(ops_module, match.group(1), None)
        return str(value) if isinstance(value, int) else f"`{match.group(1)}`"

    return re.sub(r"``(\w+)``", name, " ".join(text.split()))


def _value_hint(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    """What a field takes, as the reference writes it."""
    if "$ref" in schema:
        schema = defs[schema["$ref"].split("/")[-1]]
    if "enum" in schema:
        return "|".join(compact(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "integer":
        return f"{schema['minimum']}..{schema['maximum']}" if "minimum" in schema else "integer"
    if kind == "boolean":
        return "true|false"
    if "maxLength" in schema:
        return f'"text≤{schema["maxLength"]}"'
    if "pattern" in schema:
        return '"snake_case_name"'
    return "id"


@cache
def operation_reference() -> str:
    """The operations one per line, from their models: the JSON object with each field's type (``id``: an object's
    id; ``"text≤N"``: at most N characters; ``a..b``: a whole number; ``=x``: may be left out, and is x then) and
    what the operation does."""
    lines = []
    for model in operation_classes():
        schema = model.model_json_schema()
        defs = schema.get("$defs", {})
        parts = [f'"op":"{schema["properties"]["op"]["const"]}"']
        for name, prop in schema["properties"].items():
            if name != "op":
                given = f"={compact(prop['default'])}" if "default" in prop else ""
                parts.append(f'"{name}":{_value_hint(prop, defs)}{given}')
        about = f" {_describe(model.__doc__)}" if model.__doc__ else ""
        lines.append("- {" + ",".join(parts) + "}" + about)
    return "\n".join(lines)
