"""Rendering the named prompt templates (``prompts/*.md``) from observations and world states.

Every call has a system message and a user message, laid out so that providers' prefix caches hit. The system
message holds what never changes in a run: the sandbox notice, the role and its static context (the Attacker's
briefing and floor plan; for the referees, how the world is written, the static world and the conditions that latch
the task's flags). It is byte-identical from turn to turn; the Judge and all four World Manager stages share one.

The referees' user messages then share one prefix within a turn: the world as the turn began (its changing part,
compact: ``render``) and the action. The Judge's instructions follow it. A stage adds, in this order, the sampled
outcome, the World Manager's instructions and operations (the same for all four stages), the operations the
earlier stages of the turn applied (and those rejected, with the reason), and last its own instructions. The
world a stage acts on is the one shown with those operations applied, the same information as the live state.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from string import Template

from ...world import LedgerEntry, Observation, WorldState
from ...world.models import Event
from ...world.ops import MAX_CLOCK_MINUTES_PER_TURN, AdvanceClock
from ..types import Action, Outcome, Prompt, Stage, Verdict, field_limit
from . import render

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
    """The unchanging part of the full state, written once in the referees' system message (see ``render``)."""
    return render.static_world(state)


def world_dynamic(state: WorldState) -> str:
    """The changing part of the full state, one line per object (everything the Judge and World Manager may use
    besides the static world; see ``render``)."""
    return render.dynamic_world(state)


def conditions(state: WorldState) -> str:
    """Every checkpoint and critical failure with the exact condition the engine checks to latch it."""
    return render.conditions(state)


def referee_system(state: WorldState) -> str:
    """The system message the Judge and every World Manager stage share: sandbox, the referee's role, how the world
    is written, the static world and the flags' conditions (the same every turn of a run)."""
    return template("referee_system").substitute(
        sandbox=sandbox_notice(), legend=render.legend(), static=world_static(state), conditions=conditions(state)
    )


def referee_prefix(state: WorldState, action: Action) -> str:
    """The start of the user message the Judge and all four stages share, byte for byte: the world as the turn
    began and the action."""
    return (
        template("referee_user")
        .substitute(turn=str(state.turn), state=world_dynamic(state), action=_compact(action.model_dump()))
        .rstrip()
    )


def judge_prompt(state: WorldState, action: Action) -> Prompt:
    """The Judge's call: rate the action in the current state and give its outcome distribution."""
    task = template("judge").substitute(max_outcomes=field_limit(Verdict, "outcomes", "max_length"))
    shared = referee_shared(state, action)
    return Prompt(system=shared.system, user=f"{shared.user}\n\n{task}")


def referee_shared(state: WorldState, action: Action) -> Prompt:
    """What the Judge and all four stages of a turn share, byte for byte: the system message and the start of the
    user message (``referee_system`` and ``referee_prefix`` of the world as the turn began)."""
    return Prompt(system=referee_system(state), user=referee_prefix(state, action))


def stage_prompt(
    stage: Stage,
    state: WorldState,
    action: Action,
    outcome: Outcome,
    earlier: Sequence[LedgerEntry] = (),
    turn_start: WorldState | None = None,
    shared: Prompt | None = None,
) -> Prompt:
    """One World Manager stage's call. ``state`` is the world this stage acts on (after the earlier stages),
    ``earlier`` the ledger of the earlier stages of this turn and ``turn_start`` the world as the turn began (the
    Judge's), which the prompt shows so that its start is the Judge's, byte for byte; the earlier operations follow
    it. Without ``turn_start``, ``state`` must be the turn's start (no operation applied yet). ``shared`` is
    ``referee_shared(turn_start, action)`` when the caller has it already (the four stages of a turn render it
    once)."""
    if turn_start is None:
        if any(e.applied for e in earlier):
            raise ValueError("a stage after applied operations needs the turn-start state to render its prompt")
        turn_start = state
    common = (
        template("world_manager")
        .substitute(
            outcome=_compact(outcome.model_dump(mode="json")),
            operations=operation_reference(),
            max_clock=field_limit(AdvanceClock, "minutes", "le"),
        )
        .rstrip()
    )
    spent = state.globals.advanced_minutes if state.globals.advanced_turn == state.turn else 0
    moved = render.moved_this_turn(state)
    now = (
        f"Now: clock {render.clock_text(state.globals.clock)} ({spent} of {MAX_CLOCK_MINUTES_PER_TURN} minutes used "
        f"this turn); moved this turn, so cannot move again: {', '.join(moved) or 'nobody'}."
    )
    own = template(f"stage_{stage}").safe_substitute(events=_event_progress(state), open_flags=_open_flags(state))
    user = (
        template("world_manager_stage")
        .substitute(common=common, earlier=render.earlier_ops(earlier), now=now, stage=stage, instructions=own.strip())
        .rstrip()
    )
    shared = shared if shared is not None else referee_shared(turn_start, action)
    return Prompt(system=shared.system, user=f"{shared.user}\n\n{user}")


def _event_progress(state: WorldState) -> str:
    """Each task event's progress now (its trigger, delay and effects are in the static world)."""

    def line(event: Event) -> str:
        if event.done:
            return f"- {event.id}: done"
        if event.triggered_turn is None:
            return f"- {event.id}: not triggered yet"
        due = event.triggered_turn + event.delay_turns
        return f"- {event.id}: triggered at turn {event.triggered_turn}, effects due from turn {due}"

    return "\n".join(line(e) for e in state.events) or "- none"


def _open_flags(state: WorldState) -> str:
    return ", ".join(f.id for f in [*state.checkpoints, *state.critical_failures] if f.predicate is None) or "none"


def operation_reference() -> str:
    """The operations, one per line with their fields, limits and choices (from the operation models)."""
    return render.operation_reference()
