"""Rendering the named prompt templates (``prompts/*.md``) from observations and world states.

Static parts (sandbox notice, briefing, map) come first and are identical every turn, so provider prompt caches
can hit; the changing state follows.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from string import Template

from ...world import Observation, WorldState
from ...world.ops import OPERATION_ADAPTER
from ..types import Action, Outcome, Stage
from ..verbs import RULES

PROMPT_DIR = Path(__file__).parent / "prompts"
SUGGESTED_VERB_LIST = [v for v in RULES if v != "other"]
SUGGESTED_VERBS = ", ".join(SUGGESTED_VERB_LIST)


@cache
def template(name: str) -> Template:
    """A prompt template by name (file ``prompts/<name>.md``)."""
    return Template((PROMPT_DIR / f"{name}.md").read_text(encoding="utf-8"))


def _compact(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def attacker_static(obs: Observation) -> str:
    """The Attacker's unchanging context: role, briefing, checkpoints, floor plan."""
    briefing = obs.briefing
    edges = "\n".join(f"- {e.a} <-> {e.b}" + (f" ({e.door})" if e.door else "") for e in obs.floor_plan_edges)
    return template("attacker_role").substitute(
        sandbox=template("sandbox").template.strip(),
        objective_name=briefing.objective_name,
        objective=briefing.objective,
        intel="\n".join(f"- {i.text}" for i in briefing.intel) or "- none",
        goals="; ".join(f"{g.id}: {g.description}" for g in obs.goals),
        failures="; ".join(obs.failure_states),
        locations="\n".join(f"- {k}: {v}" for k, v in obs.floor_plan_locations.items()),
        edges=edges,
    )


def situation(obs: Observation) -> str:
    """What the team sees now, as compact JSON lines."""
    locked = [e.id for e in obs.floor_plan_edges if e.locked]
    parts = {
        "team": [m.model_dump() for m in obs.team],
        "places_in_view": [loc.model_dump() for loc in obs.locations],
        "people_in_view": [n.model_dump() for n in obs.npcs],
        "items_in_view": [e.model_dump() for e in obs.entities],
        "locked_doors_beside_you": locked,
        "goals_reached": [g.id for g in obs.goals if g.reached],
        "alarm_ringing": obs.alarm_heard,
    }
    return "\n".join(f"{key}: {_compact(value)}" for key, value in parts.items())


def _attacker_common(obs: Observation) -> dict[str, str]:
    return {
        "static": attacker_static(obs),
        "turn": str(obs.turn),
        "clock": obs.clock,
        "weather": obs.weather,
        "situation": situation(obs),
        "last_result": obs.last_result or "none yet",
        "memory": obs.memory or "(empty)",
        "plan": obs.plan or "(none yet)",
    }


def plan_prompt(obs: Observation) -> str:
    return template("attacker_plan").substitute(_attacker_common(obs))


def action_ids(obs: Observation) -> tuple[list[str], list[str], dict[str, str]]:
    """Team member ids, every id the Attacker may name this turn, and names → ids."""
    members = [m.id for m in obs.team]
    here = {m.location for m in obs.team}
    adjacent = {e.b if e.a in here else e.a for e in obs.floor_plan_edges if {e.a, e.b} & here}
    ids = [*members, *(n.id for n in obs.npcs), *(e.id for e in obs.entities), *sorted(here | adjacent)]
    ids += [e.id for e in obs.floor_plan_edges if {e.a, e.b} & here]
    ids += [loc for loc in obs.floor_plan_locations if loc not in ids]
    names = {m.name: m.id for m in obs.team} | {n.name: n.id for n in obs.npcs} | {e.name: e.id for e in obs.entities}
    names |= {name: loc for loc, name in obs.floor_plan_locations.items()}
    return members, list(dict.fromkeys(ids)), names


def act_prompt(obs: Observation) -> str:
    members, ids, _ = action_ids(obs)
    return template("attacker_act").substitute(
        _attacker_common(obs), verbs=SUGGESTED_VERBS, members=", ".join(members), ids=", ".join(ids)
    )


def world_static(state: WorldState) -> str:
    """The unchanging part of the full state: briefing, locations, connections and what opens them."""
    return "\n".join(
        [
            f"briefing: {_compact(state.briefing.model_dump())}",
            "locations: "
            + _compact(
                [
                    {
                        "id": loc.id,
                        "name": loc.name,
                        "description": loc.description,
                        "exit": loc.exit,
                        "entry": loc.entry,
                    }
                    for loc in state.locations.values()
                ]
            ),
            "connections: "
            + _compact(
                [{"id": e.id, "a": e.a, "b": e.b, "door": e.door, "opened_by": e.opened_by} for e in state.edges]
            ),
        ]
    )


def world_dynamic(state: WorldState) -> str:
    """The changing part of the full state (everything the Judge and World Manager may use)."""
    body = state.model_dump(
        mode="json",
        exclude={"briefing": True, "attacker": {"memory", "plan"}, "edges": True, "locations": True},
    )
    body["doors_locked"] = [e.id for e in state.edges if e.locked]
    body["locations"] = {
        loc.id: {"tags": loc.tags, "observable": loc.observable, "history": loc.history}
        for loc in state.locations.values()
    }
    return "\n".join(f"{key}: {_compact(value)}" for key, value in body.items())


def judge_prompt(state: WorldState, action: Action) -> str:
    return template("judge").substitute(
        sandbox=template("sandbox").template.strip(),
        static=world_static(state),
        turn=str(state.turn),
        state=world_dynamic(state),
        action=_compact(action.model_dump()),
    )


def stage_prompt(stage: Stage, state: WorldState, action: Action, outcome: Outcome) -> str:
    open_flags = [f.id for f in [*state.checkpoints, *state.critical_failures] if f.predicate is None]
    events = "\n".join(
        f"- {e.id}: {e.description}; trigger {_compact(e.trigger.model_dump())}; delay {e.delay_turns} turns; "
        f"triggered at turn {e.triggered_turn}; done {e.done}; "
        f"effects {_compact([op.model_dump() for op in e.effects])}"
        for e in state.events
    )
    instructions = template(f"stage_{stage}").safe_substitute(
        events=events or "- none", open_flags=", ".join(open_flags) or "none"
    )
    return template("world_manager").substitute(
        sandbox=template("sandbox").template.strip(),
        static=world_static(state),
        turn=str(state.turn),
        state=world_dynamic(state),
        action=_compact(action.model_dump()),
        outcome=_compact(outcome.model_dump(mode="json")),
        stage=stage,
        instructions=instructions.strip(),
        operations=operation_reference(),
    )


@cache
def operation_reference() -> str:
    """The operations' JSON schema, compact, for the World Manager's prompt."""
    return _compact(OPERATION_ADAPTER.json_schema())
