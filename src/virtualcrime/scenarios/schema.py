"""YAML scenario format: objectives, maps and tasks, validated with pydantic and built into a WorldState.

A map file holds the place (locations, edges, NPCs, reinforcements, entities, start time, weather); a task
file holds the tasks set on one map (objective, briefing, intel, team, checkpoints, failures, events).
The same format serves all 40 tasks: task-specific people and items go in ``extra_npcs`` / ``extra_entities``.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from ..world.models import (
    Briefing,
    Edge,
    Entity,
    Event,
    Flag,
    Globals,
    IntelItem,
    Location,
    Member,
    Npc,
    ScheduleStop,
    WorldState,
)


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ObjectiveCategory(StrEnum):
    PERSONAL_HARM = "Personal Harm"
    VIOLENT_PROPERTY = "Violent Property"
    NON_VIOLENT_PROPERTY = "Non-Violent Property"
    PUBLIC_ORDER = "Public Order & System"


class HarmAllowance(_Spec):
    force: int = Field(ge=0, le=4)
    property: int = Field(ge=0, le=4)


class Objective(_Spec):
    id: str = Field(pattern=r"^[a-z][a-z_]*$")
    name: str
    category: ObjectiveCategory
    description: str
    allowance: HarmAllowance


class ObjectivesFile(_Spec):
    objectives: list[Objective]


class MapSpec(_Spec):
    id: str = Field(pattern=r"^[a-z][a-z_]*$")
    name: str
    description: str
    start_time: str = Field(pattern=r"^\d{2}:\d{2}$")
    weather: str
    locations: list[Location]
    edges: list[Edge]
    npcs: list[Npc]
    reinforcements: list[Npc] = Field(
        default_factory=list,
        description="NPCs that only arrive via spawn_npc; current_location is their entry.",
    )
    entities: list[Entity]


class MemberSpec(_Spec):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    name: str
    description: str
    start: str
    leader: bool = False
    skills: list[str] = Field(default_factory=list)


class TaskSpec(_Spec):
    objective: str
    briefing: str = Field(description="Task-specific briefing, shown after the objective's description.")
    intel: list[IntelItem] = Field(default_factory=list)
    team: list[MemberSpec]
    checkpoints: list[Flag]
    critical_failures: list[Flag]
    events: list[Event] = Field(default_factory=list)
    extra_npcs: list[Npc] = Field(default_factory=list)
    extra_entities: list[Entity] = Field(default_factory=list)


class TaskFile(_Spec):
    map: str
    tasks: list[TaskSpec]


class Task(_Spec):
    """A fully resolved task: its id, map, objective and the initial world state."""

    id: str
    map: MapSpec
    objective: Objective
    spec: TaskSpec

    def initial_state(self) -> WorldState:
        """A fresh initial world state for one run of this task."""
        spec, world_map = self.spec, self.map
        start = ScheduleStop(at=world_map.start_time, location="x").minute
        state = WorldState(
            briefing=Briefing(
                task_id=self.id,
                objective_id=self.objective.id,
                objective_name=self.objective.name,
                objective=f"{self.objective.description}\n\n{spec.briefing}".strip(),
                intel=spec.intel,
            ),
            locations={loc.id: loc for loc in world_map.locations},
            edges=list(world_map.edges),
            members={
                m.id: Member(
                    id=m.id,
                    name=m.name,
                    description=m.description,
                    current_location=m.start,
                    leader=m.leader,
                    skills=m.skills,
                )
                for m in spec.team
            },
            npcs={n.id: n for n in [*world_map.npcs, *spec.extra_npcs]},
            reserve_npcs={n.id: n for n in world_map.reinforcements},
            entities={e.id: e for e in [*world_map.entities, *spec.extra_entities]},
            globals=Globals(clock=start, weather=world_map.weather),
            checkpoints=spec.checkpoints,
            critical_failures=spec.critical_failures,
            events=spec.events,
        )
        return state.model_copy(deep=True)
