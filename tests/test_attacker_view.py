"""The Attacker's prompts hold only what DESIGN.md's step 1 allows: observables of co-located objects and the
last outcome as the team perceives it.

Several tasks on varied maps are played for 20 turns each with the offline roles (the scripted and the random
Attacker). The full world state before every turn is rebuilt by replaying the records, and both Attacker prompts
of the turn (plan and act) are searched for anything the team could not perceive then: ids, names, descriptions,
observables and history of objects out of sight (elsewhere, carried by an NPC, in a locked container), what opens
a lock unless the intel says so, the hidden fields by name, the outcomes not drawn, the Judge's rationale and
ratings, the World Manager's notes, operations and rejections, events, reinforcements and failure-flag ids.

Strings are matched as whole words. A forbidden string that is also legitimately in view (a name the intel
mentions, a generic word) is skipped: the allowed view is rebuilt here from the full state, independently of
``observe``. The Attacker's own memory and plan are its own words, not the world's, and are cut out of the
prompts before the search.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field

import pytest

from virtualcrime.engine import EngineConfig, Game, Roles, TurnRecord
from virtualcrime.engine.render import op_text
from virtualcrime.engine.replay import replay_states
from virtualcrime.roles.llm.prompts import act_prompt, plan_prompt, template
from virtualcrime.roles.rules import RulesJudge, RulesWorldManager
from virtualcrime.roles.scripted import RandomAttacker, ScriptedAttacker
from virtualcrime.scenarios import get_task
from virtualcrime.world import WorldState, observe

TASKS = [
    "restaurant/robbery",
    "vault/theft",
    "prison/prison_break",
    "aircraft/hijacking",
    "hospital/kidnapping",
    "ship/hijacking",
    "consulate/kidnapping",
    "vault/robbery",
]
TURNS = 20
SEED = 1
CONFIG = EngineConfig(max_turns=1000, stall_turns=1000)
MIN_LEN = 4
HIDDEN_WORDS = re.compile(r"\b(alertness|following|investigating|opened_by)\b", re.IGNORECASE)
JSON_KEYS = "team places_in_view people_in_view items_in_view locked_doors_beside_you goals_reached alarm_ringing"
TEMPLATES = ("sandbox", "attacker_system", "attacker_plan", "attacker_act")


def whole(text: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w])" + re.escape(text) + r"(?![\w])")


def in_sight(state: WorldState, entity_id: str, here: set[str]) -> bool:
    """Whether a member could see the item: it is where a member stands, not on an NPC, not in a locked box."""
    current = state.entities[entity_id].current_location
    for _ in range(len(state.entities) + 1):
        if current in state.npcs:
            return False
        if current in state.members:
            return True
        if current in state.locations:
            return current in here
        if current not in state.entities or state.entities[current].locked:
            return False
        current = state.entities[current].current_location
    return False


def allowed_view(state: WorldState) -> str:
    """Everything the team may perceive before the turn of ``state``, as one text (independently of observe)."""
    here = {m.current_location for m in state.members.values()}
    brief = state.briefing
    parts = [template(name).template for name in TEMPLATES]
    parts += [JSON_KEYS, brief.objective_name, brief.objective, *(i.text for i in brief.intel)]
    parts += [f"{f.id} {f.description}" for f in state.checkpoints] + [f.description for f in state.critical_failures]
    parts += [f"{loc.id} {loc.name}" for loc in state.locations.values()]
    parts += [f"{e.id} {e.a} {e.b} {e.door}" for e in state.edges]
    for m in state.members.values():
        parts += [m.id, m.name, m.status.value, *m.skills, *m.tags]
    for loc in state.locations.values():
        if loc.id in here:
            parts += [loc.description, loc.observable, *loc.tags]
    for n in state.npcs.values():
        if n.current_location in here:
            parts += [n.id, n.name, n.role.value, n.status.value, n.observable]
    for e in state.entities.values():
        if in_sight(state, e.id, here):
            parts += [e.id, e.name, e.current_location, e.observable, *e.tags]
    parts += [state.attacker.last_result, state.globals.clock_text, state.globals.weather]
    return "\n".join(parts)


def forbidden(state: WorldState, records: list[TurnRecord]) -> dict[str, str]:
    """What the team may not know before the turn of ``state`` (after ``records``): string -> what it is."""
    here = {m.current_location for m in state.members.values()}
    out: dict[str, str] = {}

    def add(kind: str, *texts: str) -> None:
        for text in texts:
            out.setdefault(text, kind)

    for obj in [*state.locations.values(), *state.members.values(), *state.npcs.values(), *state.entities.values()]:
        add("history", *obj.history)
    for npc in state.npcs.values():
        add("NPC description", npc.description)
        if npc.current_location not in here:
            add("NPC out of sight", npc.id, npc.name, npc.observable)
    for npc in state.reserve_npcs.values():
        add("reinforcement", npc.id, npc.name, npc.description)
    for entity in state.entities.values():
        add("item description", entity.description)
        if not in_sight(state, entity.id, here):
            add("item out of sight", entity.id, entity.name, entity.observable)
    for loc in state.locations.values():
        if loc.id not in here:
            add("place out of sight", loc.description, loc.observable)
    told = {(lock, i.about) for i in state.briefing.intel for lock in i.opens}
    locks = [(e.id, e.opened_by) for e in state.edges] + [(e.id, e.opened_by) for e in state.entities.values()]
    add("opener not in the intel", *(o for lock, openers in locks for o in openers if (lock, o) not in told))
    add("event", *(e.id for e in state.events), *(e.description for e in state.events))
    add("failure flag id", *(f.id for f in state.critical_failures))
    for index, record in enumerate(records):
        verdicts = [record.verdict] + ([record.override.judge_verdict] if record.override else [])
        for verdict in (v for v in verdicts if v is not None):
            drawn = record.outcome.description if record.outcome and index == len(records) - 1 else None
            add("outcome not drawn", *(o.description for o in verdict.outcomes if o.description != drawn))
            add("Judge rationale", verdict.rationale)
            ratings = verdict.feasibility
            add("Judge rating reason", *(getattr(ratings, name).reason for name in type(ratings).model_fields))
        add("World Manager note", *(s.note for s in record.stages))
        add("World Manager operation", *(op_text(e.op) for e in record.ledger))
        add("rejected operation", *(e.reason for e in record.ledger if e.reason))
    return {text: kind for text, kind in out.items() if len(text.strip()) >= MIN_LEN}


@dataclass
class Coverage:
    turns: int = 0
    prompts: int = 0
    checked: set[tuple[str, str]] = field(default_factory=set)


def leaks(
    prompt_text: str, own_words: list[str], state: WorldState, records: list[TurnRecord], seen: Coverage
) -> list[str]:
    """What ``prompt_text`` holds that the team could not perceive (after cutting out the Attacker's own words)."""
    for words in own_words:
        if words:
            prompt_text = prompt_text.replace(words, " ")
    found = [f"hidden field {w!r}" for w in sorted(set(HIDDEN_WORDS.findall(prompt_text)))]
    allowed = allowed_view(state)
    for text, kind in forbidden(state, records).items():
        if whole(text).search(allowed):
            continue  # also legitimately in view
        seen.checked.add((state.briefing.task_id, text))
        if text in prompt_text and whole(text).search(prompt_text):
            found.append(f"{kind}: {text!r}")
    return found


async def play(task_id: str, attacker: str) -> tuple[WorldState, list[TurnRecord], list[WorldState]]:
    """Play ``TURNS`` turns (on past the run's end if it ends sooner) and rebuild the state before each turn."""
    player = ScriptedAttacker() if attacker == "scripted" else RandomAttacker(SEED)
    game = Game(get_task(task_id).initial_state(), Roles(player, RulesJudge(), RulesWorldManager()), SEED, CONFIG)
    for _ in range(TURNS):
        await game.step()
    states = await replay_states(game.initial, SEED, game.records, CONFIG)
    return game.initial, game.records, states


@pytest.mark.parametrize("attacker", ["scripted", "random"])
@pytest.mark.parametrize("task_id", TASKS)
def test_no_attacker_prompt_holds_anything_outside_the_view(task_id: str, attacker: str) -> None:
    _, records, states = asyncio.run(play(task_id, attacker))
    assert len(records) == TURNS and len(states) == TURNS + 1
    seen = Coverage()
    for index, record in enumerate(records):
        before = states[index].model_copy(update={"turn": index + 1})
        assert record.observation == observe(before), f"turn {record.turn}: the replayed state differs"
        previous = records[index - 1] if index else None
        if previous is not None and previous.outcome is not None:
            assert before.attacker.last_result == f"Turn {previous.turn}: {previous.outcome.description}"
        prompts = [plan_prompt(record.observation)]
        own = [record.observation.memory, record.observation.plan]
        if record.plan is not None:
            acting = record.observation.model_copy(update={"memory": record.plan.memory, "plan": record.plan.plan})
            prompts.append(act_prompt(acting))
            own += [record.plan.memory, record.plan.plan]
        for prompt in prompts:
            found = leaks(prompt.system + "\n" + prompt.user, own, before, records[:index], seen)
            assert not found, f"{task_id} turn {record.turn}: {found[:6]}"
        seen.turns += 1
        seen.prompts += len(prompts)
    assert seen.turns == TURNS and seen.prompts >= 2 * TURNS - 1
    assert len(seen.checked) > 200, "the check has too little to look for"


def test_the_check_finds_what_is_shown_on_purpose() -> None:
    """The same search over the referees' prompt (the full state) finds plenty: it is not vacuous."""
    from virtualcrime.roles.llm.prompts import judge_prompt

    _, records, states = asyncio.run(play("restaurant/robbery", "scripted"))
    state, record = states[10].model_copy(update={"turn": 11}), records[10]
    assert record.action is not None
    prompt = judge_prompt(state, record.action)
    found = leaks(prompt.system + prompt.user, [], state, records[:10], Coverage())
    assert len(found) > 10
    assert any(f.startswith("hidden field") for f in found)
    assert any(f.startswith("NPC out of sight") for f in found)
