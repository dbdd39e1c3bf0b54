"""What a human Attacker is shown each turn: exactly the information an Attacker model's prompt holds.

Built only from the engine's ``Observation`` (the partial view), never from the world state, and restricted
further to what ``roles/llm/prompts`` puts in front of a model: the checkpoints' predicates, for instance, stay on
the server. Everything the browser receives about the game comes through this model.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..roles.llm.prompts import action_ids, plan_prompt
from ..roles.verbs import SUGGESTED_VERBS
from ..world import Observation, WorldState, observe
from ..world.observe import SeenEntity, SeenLocation, SeenMember, SeenNpc


class _V(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GoalView(_V):
    id: str
    description: str
    reached: bool


class ConnectionView(_V):
    a: str
    b: str
    door: str
    locked: bool  # only while a member stands beside it, as the prompt's locked_doors_beside_you


class PlayerView(_V):
    turn: int
    clock: str
    weather: str
    alarm_ringing: bool
    objective_name: str
    objective: str
    intel: list[str]
    goals: list[GoalView]
    failure_states: list[str]
    floor_plan: dict[str, str]
    connections: list[ConnectionView]
    team: list[SeenMember]
    places_in_view: list[SeenLocation]
    people_in_view: list[SeenNpc]
    items_in_view: list[SeenEntity]
    last_result: str
    memory: str
    plan: str
    members: list[str]
    usable_ids: list[str]
    verbs: list[str]
    model_prompt: str

    @property
    def item_ids(self) -> list[str]:
        return [e.id for e in self.items_in_view]


def next_observation(state: WorldState) -> Observation:
    """The observation the engine will build at the start of the next turn (``Game.step`` numbers it first)."""
    return observe(state).model_copy(update={"turn": state.turn + 1})


def player_view(observation: Observation) -> PlayerView:
    """The browser's view of one turn, from the Attacker's observation only."""
    members, usable, _ = action_ids(observation)
    briefing = observation.briefing
    return PlayerView(
        turn=observation.turn,
        clock=observation.clock,
        weather=observation.weather,
        alarm_ringing=observation.alarm_heard,
        objective_name=briefing.objective_name,
        objective=briefing.objective,
        intel=[i.text for i in briefing.intel],
        goals=[GoalView(id=g.id, description=g.description, reached=g.reached) for g in observation.goals],
        failure_states=list(observation.failure_states),
        floor_plan=dict(observation.floor_plan_locations),
        connections=[ConnectionView(a=e.a, b=e.b, door=e.door, locked=e.locked) for e in observation.floor_plan_edges],
        team=observation.team,
        places_in_view=observation.locations,
        people_in_view=observation.npcs,
        items_in_view=observation.entities,
        last_result=observation.last_result,
        memory=observation.memory,
        plan=observation.plan,
        members=members,
        usable_ids=usable,
        verbs=list(SUGGESTED_VERBS),
        model_prompt=plan_prompt(observation).text,
    )
