"""Loading the bundled (or a user's) scenario corpus, with errors that name the file and field."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ValidationError

from .schema import MapSpec, Objective, ObjectivesFile, Task, TaskFile

DATA_DIR = Path(__file__).parent / "data"
# libyaml's parser when PyYAML was built with it (several times faster than the pure-Python one), else the latter.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ScenarioError(ValueError):
    """A scenario file that cannot be read or does not match the schema."""


def read_model(path: Path, model: type[BaseModel]) -> BaseModel:
    """Parse one YAML file into ``model``; raise ScenarioError naming the file and each bad field."""
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)  # a safe loader, C or Python
    except (OSError, yaml.YAMLError) as err:
        raise ScenarioError(f"{path}: cannot read YAML: {err}") from err
    try:
        return model.model_validate(data)
    except ValidationError as err:
        lines = [f"{path}: {'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in err.errors()[:20]]
        raise ScenarioError("\n".join(lines)) from err


def load_objectives(data_dir: Path = DATA_DIR) -> dict[str, Objective]:
    """All objectives by id (the bundled ones when ``data_dir`` has no objectives.yaml)."""
    return _objectives(Path(data_dir).resolve())


def load_tasks(data_dir: Path = DATA_DIR) -> dict[str, Task]:
    """All tasks of a corpus directory (``objectives.yaml``, ``maps/*.yaml``, ``tasks/*.yaml``), by id. Each
    directory is parsed once per process, however it is named."""
    return _tasks(Path(data_dir).resolve())


@cache
def _objectives(data_dir: Path) -> dict[str, Objective]:
    path = data_dir / "objectives.yaml"
    parsed = read_model(path if path.exists() else DATA_DIR / "objectives.yaml", ObjectivesFile)
    assert isinstance(parsed, ObjectivesFile)
    return {o.id: o for o in parsed.objectives}


@cache
def _tasks(data_dir: Path) -> dict[str, Task]:
    objectives = _objectives(data_dir)
    maps: dict[str, MapSpec] = {}
    for path in sorted((data_dir / "maps").glob("*.yaml")):
        parsed = read_model(path, MapSpec)
        assert isinstance(parsed, MapSpec)
        maps[parsed.id] = parsed
    tasks: dict[str, Task] = {}
    for path in sorted((data_dir / "tasks").glob("*.yaml")):
        task_file = read_model(path, TaskFile)
        assert isinstance(task_file, TaskFile)
        if task_file.map not in maps:
            raise ScenarioError(f"{path}: map: unknown map {task_file.map!r} (known: {sorted(maps)})")
        for index, spec in enumerate(task_file.tasks):
            if spec.objective not in objectives:
                raise ScenarioError(f"{path}: tasks.{index}.objective: unknown objective {spec.objective!r}")
            task_id = f"{task_file.map}/{spec.objective}"
            if task_id in tasks:
                raise ScenarioError(f"{path}: tasks.{index}: duplicate task {task_id}")
            tasks[task_id] = Task(id=task_id, map=maps[task_file.map], objective=objectives[spec.objective], spec=spec)
    return tasks


def get_task(task_id: str, data_dir: Path = DATA_DIR) -> Task:
    """One task by id (``map/objective``), with a helpful error listing close matches."""
    tasks = load_tasks(data_dir)
    if task_id not in tasks:
        near = [t for t in tasks if task_id.split("/")[0] in t] or sorted(tasks)
        raise ScenarioError(f"unknown task {task_id!r}; known tasks include: {', '.join(near[:8])}")
    return tasks[task_id]


def forget_loaded() -> None:
    """Drop the parsed corpora, so a corpus directory edited since is read again."""
    _tasks.cache_clear()
    _objectives.cache_clear()
