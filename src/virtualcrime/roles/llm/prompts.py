"""Rendering the named prompt templates (``prompts/*.md``) from observations and world states.

Every call has a system message and a user message. The system message holds what never changes in a run: the
sandbox notice, the role and its static context (the Attacker's briefing and floor plan; the referees' static
world and the conditions that latch the task's flags). It is byte-identical from turn to turn, so provider
prompt caches keep hitting; the Judge and all four World Manager stages share one. The user message holds
what changed this turn and what this call must answer.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from string import Template

from ...world import Observation, WorldState, explain
from ...world.models import Flag
from ...world.ops import OPERATION_ADAPTER, AdvanceClock
from ..types import Action, Outcome, Prompt, Stage, Verdict, field_limit

PROMPT_DIR = Path(__file__).parent / "prompts"


@cache
def template(name: str) -> Template:
    """A prompt template by name (file ``prompts/<name>.md``)."""
    return Template((PROMPT_DIR / f"{name}.md").read_text(encoding="utf-8"))


def sandbox_notice() -> str:
    """The notice every role's system message opens with: this is a simulation, and what it is for."""
    return template("sandbox").template.strip()


def _compact(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def attacker_system(obs: Observation) -> str:
    """The Attacker's system message: sandbox, role, briefing, checkpoints, floor plan (the same every turn)."""
    briefing = obs.briefing
    edges = "\n".join(f"- {e.a} <-> {e.b}" + (f" ({e.door})" if e.door else "") for e in obs.floor_plan_edges)
    return template("attacker_system").substitute(
        sandbox=sandbox_notice(),
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


def _attacker_now(obs: Observation) -> dict[str, str]:
    return {
        "turn": str(obs.turn),
        "clock": obs.clock,
        "weather": obs.weather,
        "situation": situation(obs),
        "last_result": obs.last_result or "none yet",
        "memory": obs.memory or "(empty)",
        "plan": obs.plan or "(none yet)",
    }


def plan_prompt(obs: Observation) -> Prompt:
    """The Attacker's plan call: update memory and long-term plan."""
    return Prompt(system=attacker_system(obs), user=template("attacker_plan").substitute(_attacker_now(obs)))


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


def act_prompt(obs: Observation) -> Prompt:
    """The Attacker's act call: one action, in the model's own words (no verb is offered)."""
    members, ids, _ = action_ids(obs)
    user = template("attacker_act").substitute(
        _attacker_now(obs),
        members=", ".join(members),
        ids=", ".join(ids),
        min_minutes=field_limit(Action, "minutes", "ge"),
        max_minutes=field_limit(Action, "minutes", "le"),
    )
    return Prompt(system=attacker_system(obs), user=user)


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


def conditions(state: WorldState) -> str:
    """Every checkpoint and critical failure with the exact condition the engine checks to latch it."""

    def line(kind: str, flag: Flag) -> str:
        if flag.predicate is None:
            return f"- {kind} {flag.id} ({flag.description}): no condition; set it with set_flag when it happens"
        exact = _compact(flag.predicate.model_dump(mode="json"))
        return f"- {kind} {flag.id} ({flag.description}): holds when {explain(flag.predicate, state)}; exactly: {exact}"

    lines = [line("checkpoint", f) for f in state.checkpoints] + [line("failure", f) for f in state.critical_failures]
    return "\n".join(lines) or "- none"


def referee_system(state: WorldState) -> str:
    """The system message the Judge and every World Manager stage share: sandbox, the referee's role, the static
    world and the flags' conditions (the same every turn of a run)."""
    return template("referee_system").substitute(
        sandbox=sandbox_notice(), static=world_static(state), conditions=conditions(state)
    )


def judge_prompt(state: WorldState, action: Action) -> Prompt:
    """The Judge's call: rate the action in the current state and give its outcome distribution."""
    user = template("judge").substitute(
        turn=str(state.turn),
        state=world_dynamic(state),
        action=_compact(action.model_dump()),
        max_outcomes=field_limit(Verdict, "outcomes", "max_length"),
    )
    return Prompt(system=referee_system(state), user=user)


def stage_prompt(stage: Stage, state: WorldState, action: Action, outcome: Outcome) -> Prompt:
    """One World Manager stage's call: the operations this stage applies after the sampled outcome."""
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
    user = template("world_manager").substitute(
        turn=str(state.turn),
        state=world_dynamic(state),
        action=_compact(action.model_dump()),
        outcome=_compact(outcome.model_dump(mode="json")),
        stage=stage,
        instructions=instructions.strip(),
        operations=operation_reference(),
        max_clock=field_limit(AdvanceClock, "minutes", "le"),
    )
    return Prompt(system=referee_system(state), user=user)


@cache
def operation_reference() -> str:
    """The operations' JSON schema, compact, for the World Manager's prompt."""
    return _compact(OPERATION_ADAPTER.json_schema())
