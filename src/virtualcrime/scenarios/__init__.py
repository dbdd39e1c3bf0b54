"""Scenario data (objectives, maps, tasks as YAML) and its loader."""

from .loader import DATA_DIR, ScenarioError, get_task, load_objectives, load_tasks
from .schema import MapSpec, Objective, Task, TaskSpec

__all__ = [
    "DATA_DIR",
    "MapSpec",
    "Objective",
    "ScenarioError",
    "Task",
    "TaskSpec",
    "get_task",
    "load_objectives",
    "load_tasks",
]
