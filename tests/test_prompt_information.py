"""No loss of information: the referees' prompts carry the whole state DESIGN.md says they see.

A decoder written here, from the prompt grammar the system message states (its legend) and nothing else, rebuilds a
``WorldState`` from a Judge prompt's text alone: every field of every object, the briefing, the flags, the events,
the clock and the last result. Everything except the Attacker's memory and plan (which the referees never see) must
equal the real state, on states from long offline runs on several maps. A World Manager stage's prompt shows the
turn's start (byte for byte the Judge's) and the operations the earlier stages applied; applying the listed
operations to the decoded start must give the live state that the stage acts on, which the old prompts showed.
Nothing is rendered lossy: the bookkeeping fields (``last_moved_turn``, the clock's per-turn budget) are kept too.
"""

from __future__ import annotations

import asyncio
import json
import re
import types
import typing
from typing import Any

import pytest
from pydantic import BaseModel

from virtualcrime.engine import EngineConfig, Game, Roles
from virtualcrime.engine.replay import first_difference
from virtualcrime.roles import Action, Outcome, Stage, StageContext, StageResult
from virtualcrime.roles.llm.prompts import judge_prompt, referee_prefix, stage_prompt
from virtualcrime.roles.rules import RulesJudge, RulesWorldManager
from virtualcrime.roles.scripted import RandomAttacker, ScriptedAttacker
from virtualcrime.roles.types import Prompt
from virtualcrime.scenarios import get_task
from virtualcrime.world import LedgerEntry, WorldState, apply_in_place, parse_operation
from virtualcrime.world.models import Edge, Entity, Event, Flag, Globals, IntelItem, Location, Member, Npc

DECODER = json.JSONDecoder()
QUOTED = r'"(?:[^"\\]|\\.)*"'
WORD = re.compile(r"[a-z][a-z0-9_]*")
KEYWORD = re.compile(r"(true|false|null)\b")
STATIC_OBJECT = re.compile(rf"^(?P<id>[a-z][a-z0-9_]*)(?: (?P<name>{QUOTED}))?(?: \((?P<attrs>.*?)\))?: (?P<text>.*)$")
CONNECTION = re.compile(rf"^(?P<id>\S+): (?P<a>\S+) <-> (?P<b>\S+)(?: (?P<door>{QUOTED}))?(?: \((?P<attrs>.*)\))?$")
INTEL = re.compile(rf"^- (?P<text>{QUOTED})(?: \((?P<attrs>.*)\))?$")
CONDITION = re.compile(
    r"^- (?P<kind>checkpoint|failure) (?P<id>\S+) \((?P<description>.*?)\): "
    r"(?:holds when .*; exactly: (?P<exact>\{.*\})|no condition; set it with set_flag when it happens)$"
)
TURN = re.compile(r"^## The world now \(turn (\d+)\), before this turn's action$", flags=re.MULTILINE)
APPLIED = re.compile(r"^- (?P<stage>[a-z_]+): (?P<op>\{.*?\})(?P<rejected> REJECTED \(.*\), changed nothing)?$")
KEYS = {"at": "current_location", "moved": "last_moved_turn", "fixed": "portable"}  # the legend's names
MODELS: dict[str, type[BaseModel]] = {
    "locations": Location,
    "members": Member,
    "npcs": Npc,
    "entities": Entity,
    "events": Event,
    "globals": Globals,
}


# --- the grammar ---------------------------------------------------------------------------------------------------


def value_at(text: str, i: int) -> tuple[Any, int]:
    """One value: JSON, a bare list ``[a, b]`` or a bare word."""
    if text[i] == "[":
        try:
            return DECODER.raw_decode(text, i)
        except json.JSONDecodeError:
            end = text.index("]", i)
            return [w for w in text[i + 1 : end].split(", ") if w], end + 1
    if text[i] in '"{-' or text[i].isdigit() or KEYWORD.match(text, i):
        return DECODER.raw_decode(text, i)
    word = WORD.match(text, i)
    assert word is not None, f"no value at {text[i : i + 40]!r}"
    return word.group(0), word.end()


def parse_fields(text: str) -> dict[str, Any]:
    """``key=value, key, …`` (a key alone is a true flag)."""
    out: dict[str, Any] = {}
    i = 0
    while i < len(text):
        key = WORD.match(text, i)
        assert key is not None, f"no key at {text[i : i + 40]!r}"
        i = key.end()
        value: Any = True
        if text.startswith("=", i):
            value, i = value_at(text, i + 1)
        out[key.group(0)] = value
        assert i == len(text) or text.startswith(", ", i), f"junk at {text[i : i + 40]!r}"
        i += 2
    return out


def sections(text: str) -> dict[str, list[str]]:
    """The one-line ``key: value`` entries that open a block, then each ``title:`` header and the lines under it."""
    out: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if re.fullmatch(r"[a-z_]+:", line):
            current = line[:-1]
            out[current] = []
        elif not current and (one := re.fullmatch(r"([a-z_]+): (.*)", line)):
            out[one.group(1)] = [one.group(2)]
        elif line.strip():
            out[current].append(line)
    return out


def between(text: str, start: str, end: str) -> str:
    return text[text.index(start) + len(start) : text.index(end)] if end else text[text.index(start) + len(start) :]


def legend_defaults(system: str) -> dict[str, dict[str, Any]]:
    """The defaults the legend lists (the others are the empty value of their field: [], "", false, 0, null)."""
    listed = between(system, "leaving out defaults (", ") and objects with only defaults")
    general, *kinds = listed.split("; ")
    assert general == "empty lists and texts, false, 0, null", general
    out: dict[str, dict[str, Any]] = {}
    for part in kinds:
        kind, fields = part.split(" ", 1)
        out[kind] = {KEYS.get(k, k): v for k, v in parse_fields(fields).items()}
    assert "a name left out is the id in words, capitalised for locations and members" in system
    return out


def empty(annotation: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin is list:
        return []
    if origin in (typing.Union, types.UnionType) and type(None) in typing.get_args(annotation):
        return None
    return {str: "", bool: False, int: 0}[annotation]


def complete(model: type[BaseModel], given: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """Every field of ``model``: the given value, else the legend's default, else the empty value of its type (the
    model's own defaults are never used, so a field the prompt does not carry would show as a difference)."""
    out = {}
    for name, info in model.model_fields.items():
        if name in given:
            out[name] = given[name]
        elif name in defaults:
            out[name] = defaults[name]
        else:
            out[name] = empty(info.annotation)
    return out


def renamed(fields: dict[str, Any]) -> dict[str, Any]:
    return {KEYS.get(k, k): v for k, v in fields.items()}


def schedule(text: str) -> list[dict[str, str]]:
    return [dict(zip(("at", "location"), stop.split(" "), strict=True)) for stop in text.split("; ")] if text else []


def minutes(clock: str) -> int:
    day, _, hhmm = clock.rpartition(" ")
    hours, mins = hhmm.split(":")
    return (int(day.split()[1]) - 1 if day else 0) * 24 * 60 + int(hours) * 60 + int(mins)


# --- the decoder ---------------------------------------------------------------------------------------------------


def read_world(prompt: Prompt) -> WorldState:
    """The state a referee's prompt shows (the turn's start), from its text alone (memory and plan are empty)."""
    system, user = prompt.system, prompt.user
    defaults = legend_defaults(system)
    static = sections(between(system, "## The world (static)\n", "\n## The task's flags"))
    now = sections(between(user, "before this turn's action\n", "\n## The action"))

    def objects(title: str, model: type[BaseModel], lines: list[str]) -> dict[str, dict[str, Any]]:
        out = {}
        for line in lines:
            match = STATIC_OBJECT.match(line)
            assert match, line
            oid = match["id"]
            words = oid.replace("_", " ")
            if match["name"]:
                name = json.loads(match["name"])
            else:  # the id in words, capitalised for locations and members
                name = words.capitalize() if model in (Location, Member) else words
            fields = renamed(parse_fields(match["attrs"] or ""))
            if model is Entity:
                fields["portable"] = not fields.get("portable", False)  # the flag `fixed`: not portable
            if "schedule" in fields:
                fields["schedule"] = schedule(fields["schedule"])
            text = match["text"]
            description = json.loads(text) if text.startswith('"') else text  # quoted only when it must be
            out[oid] = {"id": oid, "name": name, "description": description, **fields}
        return out

    def changing(title: str) -> dict[str, dict[str, Any]]:
        out = {}
        for line in now.get(title, []):
            oid, _, rest = line.partition(": ")
            out[oid] = renamed(parse_fields(rest))
        return out

    def build(title: str, model: type[BaseModel], table: dict[str, dict[str, Any]], live: dict[str, Any]) -> Any:
        return {
            oid: complete(model, {**fields, **live.get(oid, {})}, defaults.get(title, {}))
            for oid, fields in table.items()
        }

    all_npcs = objects("npcs", Npc, static["npcs"])
    in_world, reserve = changing("npcs"), changing("reserve_npcs")
    assert set(in_world) | set(reserve) == set(all_npcs) and not set(in_world) & set(reserve)
    edges = []
    locked = set(now["doors_locked"][0].split(", ")) if "doors_locked" in now else set()
    for line in static["connections"]:
        match = CONNECTION.match(line)
        assert match, line
        fields = {
            "id": match["id"],
            "a": match["a"],
            "b": match["b"],
            "locked": match["id"] in locked,
            "door": json.loads(match["door"]) if match["door"] else "",
            **parse_fields(match["attrs"] or ""),
        }
        edges.append(complete(Edge, fields, {}))
    intel = []
    for line in static.get("intel", []):
        match = INTEL.match(line)
        assert match, line
        intel.append(complete(IntelItem, {"text": json.loads(match["text"]), **parse_fields(match["attrs"] or "")}, {}))
    reached = parse_fields(now["flags_reached"][0]) if "flags_reached" in now else {}
    flags: dict[str, list[dict[str, Any]]] = {"checkpoint": [], "failure": []}
    for line in between(system, "when any failure holds.\n", "").splitlines():
        match = CONDITION.match(line)
        assert match, line
        exact = json.loads(match["exact"]) if match["exact"] else None
        flags[match["kind"]].append(
            complete(
                Flag,
                {
                    "id": match["id"],
                    "description": match["description"],
                    "predicate": exact,
                    "reached": match["id"] in reached,
                    "reached_turn": reached.get(match["id"]),
                },
                {},
            )
        )
    events = []
    progress = changing("events")
    for line in static.get("events", []):
        oid, _, rest = line.partition(": ")
        fields = parse_fields(rest) | progress.get(oid, {})
        fields["effects"] = [parse_operation(op) for op in fields.get("effects", [])]
        events.append(complete(Event, {"id": oid, **fields}, defaults.get("events", {})))
    clock = parse_fields(now["globals"][0])
    clock["clock"] = minutes(clock["clock"])
    turn = TURN.search(user)
    assert turn is not None
    return WorldState.model_validate(
        {
            "turn": int(turn.group(1)),
            "briefing": {**parse_fields(static["briefing"][0]), "intel": intel},
            "locations": build(
                "locations", Location, objects("locations", Location, static["locations"]), changing("locations")
            ),
            "edges": edges,
            "members": build("members", Member, objects("members", Member, static["members"]), changing("members")),
            "npcs": build("npcs", Npc, {k: v for k, v in all_npcs.items() if k in in_world}, in_world),
            "reserve_npcs": build("npcs", Npc, {k: v for k, v in all_npcs.items() if k in reserve}, reserve),
            "entities": build(
                "entities", Entity, objects("entities", Entity, static["entities"]), changing("entities")
            ),
            "globals": complete(Globals, clock, defaults.get("globals", {})),
            "attacker": {
                "memory": "",
                "plan": "",
                "last_result": json.loads(now["last_result"][0]) if "last_result" in now else "",
            },
            "checkpoints": flags["checkpoint"],
            "critical_failures": flags["failure"],
            "events": events,
            "world_flags": parse_fields(now["world_flags"][0]) if "world_flags" in now else {},
        }
    )


def read_applied(prompt: Prompt) -> list[tuple[str, Any, bool]]:
    """The earlier stages' operations a stage prompt lists: (stage, operation, applied)."""
    listed = between(prompt.user, "## Applied so far this turn, in order\n", "\nNow: clock")
    out = []
    for line in listed.splitlines():
        if line == "- none yet":
            continue
        match = APPLIED.match(line)
        assert match, line
        out.append((match["stage"], parse_operation(json.loads(match["op"])), match["rejected"] is None))
    return out


def seen_by_referees(state: WorldState) -> WorldState:
    """The state without what the referees never see: the Attacker's memory and plan."""
    return state.model_copy(update={"attacker": state.attacker.model_copy(update={"memory": "", "plan": ""})})


def same(decoded: WorldState, real: WorldState, where: str) -> None:
    if decoded != real:
        difference = first_difference(real.model_dump(mode="json"), decoded.model_dump(mode="json"))
        pytest.fail(f"{where}: the prompt does not carry {difference}")


# --- the runs ------------------------------------------------------------------------------------------------------


class Capturing:
    """The rules World Manager, recording what each stage of every turn was given."""

    name = "capturing"
    renders_turn_start = True

    def __init__(self) -> None:
        self.inner = RulesWorldManager()
        self.seen: list[tuple[Stage, WorldState, Action, Outcome, list[LedgerEntry], WorldState]] = []

    async def run_stage(self, stage: Stage, context: StageContext) -> StageResult:
        assert context.turn_start is not None
        if context.state.turn % EVERY == 0:
            self.seen.append(
                (
                    stage,
                    context.state.model_copy(deep=True),
                    context.action,
                    context.outcome,
                    list(context.earlier),
                    context.turn_start,
                )
            )
        return await self.inner.run_stage(stage, context)


RUNS = [
    ("vault/theft", "random"),
    ("shopping_mall/armored_truck_heist", "random"),
    ("hospital/kidnapping", "random"),
    ("ship/hijacking", "random"),
    ("prison/riot", "scripted"),
    ("university/arson", "random"),
]
EVERY = 3  # check every third turn of each run, and every stage of it


def long_run(task_id: str, attacker: str, tries: int = 10) -> Capturing:
    """The first run of seeds 0, 1, … that lasts 60 turns (the scripted Attacker: seed 1, however long it lasts)."""
    longest: tuple[int, Capturing] | None = None
    for seed in range(tries) if attacker == "random" else [1]:
        manager = Capturing()
        player = RandomAttacker(seed) if attacker == "random" else ScriptedAttacker()
        game = Game(
            get_task(task_id).initial_state(),
            Roles(player, RulesJudge(), manager),
            seed,
            EngineConfig(max_turns=60, stall_turns=60),
        )
        turns = asyncio.run(game.run()).turns
        if longest is None or turns > longest[0]:
            longest = (turns, manager)
        if turns == 60:
            break
    assert longest is not None
    return longest[1]


@pytest.mark.parametrize(("task_id", "attacker"), RUNS)
def test_the_judge_prompt_carries_the_whole_state_and_each_stage_prompt_the_live_state(
    task_id: str, attacker: str
) -> None:
    manager = long_run(task_id, attacker)
    turns = sorted({start.turn for _, _, _, _, _, start in manager.seen})
    assert len(turns) >= 4, f"{task_id}: the run is too short to test"
    checked = 0
    for stage, live, action, outcome, earlier, start in manager.seen:
        judge = judge_prompt(start, action)
        if stage == "direct_effects":
            same(read_world(judge), seen_by_referees(start), f"{task_id} turn {start.turn}, Judge")
        prompt = stage_prompt(stage, live, action, outcome, earlier, start)
        assert prompt.system == judge.system
        assert prompt.user.startswith(referee_prefix(start, action) + "\n\n")  # the Judge's user message starts so too
        assert judge.user.startswith(referee_prefix(start, action) + "\n\n")
        rebuilt = read_world(prompt)
        listed = read_applied(prompt)
        assert [(e.stage, e.op, e.applied) for e in earlier] == listed
        ledger = apply_in_place(rebuilt, [op for _, op, applied in listed if applied], "replayed")
        assert all(entry.applied for entry in ledger), f"{task_id} turn {start.turn}: a listed operation failed again"
        same(rebuilt, seen_by_referees(live), f"{task_id} turn {start.turn}, stage {stage}")
        checked += 1
    assert checked == 4 * len(turns)


def test_every_field_away_from_its_default_survives() -> None:
    """A state with every optional field set (flags, tags, hidden, locks, followers, a day-two clock, reached flags,
    a spawned reinforcement, fired events, world flags): the decoder still rebuilds it exactly."""
    state = get_task("vault/theft").initial_state()
    state.turn = 41
    member = next(iter(state.members.values()))
    member.hidden, member.tags, member.status, member.last_moved_turn = True, ["disguised"], "injured", 41  # type: ignore[assignment]
    member.history, member.observable = ['She said "wait", then ran.', "[turn 40] x"], 'Looks "calm"; hides.'
    npc = next(iter(state.npcs.values()))
    npc.following, npc.investigating, npc.alertness, npc.status = member.id, "lobby", 3, "compliant"  # type: ignore[assignment]
    npc.tags, npc.guarding = ["bribed"], "client_oberlin"
    entity = next(e for e in state.entities.values() if e.container)
    entity.locked, entity.tags = True, ["on_fire", "disabled"]
    reinforcement = state.reserve_npcs.pop("officer_varn")
    reinforcement.current_location, reinforcement.last_moved_turn = "plaza", 41
    state.npcs[reinforcement.id] = reinforcement
    state.edges[0].locked = True
    state.globals.clock, state.globals.alarm, state.globals.alarm_turn = 2 * 24 * 60 + 75, True, 39
    state.globals.advanced_turn, state.globals.advanced_minutes, state.globals.weather = 41, 35, "fog"
    state.checkpoints[0].reached, state.checkpoints[0].reached_turn = True, 17
    state.events[0].triggered_turn, state.events[0].done = 39, True
    state.world_flags = {"lights_out": True, "tip_off": False}
    state.attacker.last_result = "Turn 40: the lights go out."
    state.locations["lobby"].tags = ["smouldering"]
    state.locations["plaza"].description = "Two lines:\nthe plaza, then the street."
    state.locations["vault"].description = '"The Vault", as the staff call it.'
    state.locations["vault"].name = "Vault"  # the name the prompt leaves out: the id in words
    action = Action(verb="wait", description="Wait.", actor=member.id)
    same(read_world(judge_prompt(state, action)), seen_by_referees(state), "every field set")
