"""The world linter: proves a corpus consistent without any model.

``lint_corpus(path)`` reads ``objectives.yaml``, ``maps/*.yaml`` and ``tasks/*.yaml`` and returns every
problem as a ``Finding`` naming the file, the object and the field. Errors make the corpus unusable;
warnings flag departures from the benchmark's conventions (sizes) that a user's own scenario may choose.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from ..world.graph import hop_distances
from ..world.models import Entity, IntelItem
from ..world.ops import CompleteEvent, Move, Operation, SetFlag, SpawnNpc, TriggerEvent
from ..world.predicates import (
    AllOf,
    AnyOf,
    At,
    FlagSet,
    Following,
    HeldByTeam,
    Not,
    Predicate,
    Status,
    TeamAt,
)
from .loader import ScenarioError, read_model
from .schema import MapSpec, ObjectivesFile, TaskFile, TaskSpec

Severity = Literal["error", "warning"]
LOCATION_RANGE = (14, 18)
NPC_RANGE = (5, 9)
TEAM_RANGE = (2, 4)


@dataclass(frozen=True)
class Finding:
    severity: Severity
    file: str
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.where}: {self.severity}: {self.message}"


class _Collector:
    def __init__(self) -> None:
        self.findings: list[Finding] = []

    def error(self, file: Path, where: str, message: str) -> None:
        self.findings.append(Finding("error", str(file), where, message))

    def warning(self, file: Path, where: str, message: str) -> None:
        self.findings.append(Finding("warning", str(file), where, message))


def lint_corpus(path: Path, base: Path | None = None) -> list[Finding]:
    """Every problem in the corpus at ``path``.

    ``path`` is a corpus directory (``objectives.yaml``, ``maps/``, ``tasks/``, each optional) or one map or
    task YAML file. With ``base`` (the bundled corpus), what ``path`` lacks comes from ``base``: a user's task
    file may set tasks on a bundled map, and a corpus without ``objectives.yaml`` uses the bundled objectives.
    Only ``path``'s own files are reported on (and all of ``base`` when ``path`` is ``base``).
    """
    out = _Collector()
    own = _corpus_files(path)
    inherited = _corpus_files(base) if base is not None and base.resolve() != path.resolve() else {}
    objectives_file = own.get("objectives") or inherited.get("objectives")
    objective_ids: set[str] = set()
    if objectives_file:
        objectives = _read(out, objectives_file[0], ObjectivesFile)
        if isinstance(objectives, ObjectivesFile):
            objective_ids = {o.id for o in objectives.objectives}
    maps: dict[str, tuple[Path, MapSpec]] = {}
    for file in inherited.get("maps", []):
        base_map = read_model(file, MapSpec)
        assert isinstance(base_map, MapSpec)
        maps[base_map.id] = (file, base_map)
    for file in own.get("maps", []):
        own_map = _read(out, file, MapSpec)
        if isinstance(own_map, MapSpec):
            lint_map(out, file, own_map)
            maps[own_map.id] = (file, own_map)
    if not maps:
        out.error(path, "maps", "no map files (*.yaml) found")
    task_ids: set[str] = set()
    for file in own.get("tasks", []):
        task_file = _read(out, file, TaskFile)
        if not isinstance(task_file, TaskFile):
            continue
        if task_file.map not in maps:
            out.error(file, "map", f"unknown map {task_file.map!r} (known: {', '.join(sorted(maps)) or 'none'})")
            continue
        for index, task in enumerate(task_file.tasks):
            where = f"tasks[{index}] ({task_file.map}/{task.objective})"
            if task.objective not in objective_ids:
                out.error(file, f"{where}.objective", f"unknown objective {task.objective!r}")
            task_id = f"{task_file.map}/{task.objective}"
            if task_id in task_ids:
                out.error(file, where, f"duplicate task {task_id}")
            task_ids.add(task_id)
            lint_task(out, file, where, maps[task_file.map][1], task)
    return out.findings


def _corpus_files(path: Path) -> dict[str, list[Path]]:
    """The corpus files at ``path`` by kind; a single YAML file is sorted by its top-level keys."""
    if path.is_file():
        import yaml

        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            data = None
        kind = "tasks" if isinstance(data, dict) and "tasks" in data else "maps"
        return {kind: [path]}
    files = {
        "maps": sorted((path / "maps").glob("*.yaml")),
        "tasks": sorted((path / "tasks").glob("*.yaml")),
    }
    if (path / "objectives.yaml").exists():
        files["objectives"] = [path / "objectives.yaml"]
    return files


def _read(out: _Collector, file: Path, model: type[BaseModel]) -> BaseModel | None:
    try:
        return read_model(file, model)
    except ScenarioError as err:
        for line in str(err).splitlines():
            prefix = f"{file}: "
            rest = line[len(prefix) :] if line.startswith(prefix) else line
            field, _, message = rest.partition(": ")
            out.error(file, field or "<file>", message or rest)
        return None


def lint_map(out: _Collector, file: Path, spec: MapSpec) -> None:
    """Referential integrity, connectivity, schedules, guards and sizes of one map."""
    locations = {loc.id for loc in spec.locations}
    ids = Counter(
        [loc.id for loc in spec.locations]
        + [n.id for n in spec.npcs]
        + [n.id for n in spec.reinforcements]
        + [e.id for e in spec.entities]
    )
    for dup, count in sorted(ids.items()):
        if count > 1:
            out.error(file, dup, f"duplicate id {dup!r} (used {count} times)")
    for dup, count in Counter(e.id for e in spec.edges).items():
        if count > 1:
            out.error(file, f"edges.{dup}", f"duplicate edge id {dup!r}")
    for edge in spec.edges:
        for end in ("a", "b"):
            if getattr(edge, end) not in locations:
                out.error(file, f"edges.{edge.id}.{end}", f"unknown location {getattr(edge, end)!r}")
        for opener in edge.opened_by:
            if opener not in ids:
                out.error(file, f"edges.{edge.id}.opened_by", f"unknown entity {opener!r}")
        if edge.locked and not edge.opened_by:
            out.warning(file, f"edges.{edge.id}", "locked with nothing that opens it (only lock-picking or force)")
    start = sorted(locations)[0] if locations else ""
    reached = set(hop_distances(spec.edges, start)) & locations if locations else set()
    if reached != locations:
        missing = ", ".join(sorted(locations - reached))
        out.error(file, "edges", f"the map is not connected: cannot reach {missing}")
    low, high = LOCATION_RANGE
    if not low <= len(locations) <= high:
        out.warning(file, "locations", f"{len(locations)} locations; the benchmark's maps have {low}-{high}")
    low, high = NPC_RANGE
    if not low <= len(spec.npcs) <= high:
        out.warning(file, "npcs", f"{len(spec.npcs)} NPCs; the benchmark's maps have {low}-{high}")
    if not any(loc.exit for loc in spec.locations):
        out.error(file, "locations", "no location has exit: true (where the team escapes)")
    for npc in spec.npcs:
        if npc.current_location not in locations:
            out.error(file, f"npcs.{npc.id}.current_location", f"unknown location {npc.current_location!r}")
        for index, stop in enumerate(npc.schedule):
            if stop.location not in locations:
                out.error(file, f"npcs.{npc.id}.schedule[{index}].location", f"unknown location {stop.location!r}")
    for npc in spec.reinforcements:
        entry = next((loc for loc in spec.locations if loc.id == npc.current_location), None)
        if entry is None or not entry.entry:
            out.error(
                file, f"reinforcements.{npc.id}.current_location", f"{npc.current_location!r} is not an entry location"
            )
    _lint_entities(out, file, spec, set(ids))


def _lint_entities(out: _Collector, file: Path, spec: MapSpec, ids: set[str]) -> None:
    containers = {e.id for e in spec.entities if e.container}
    holders = {loc.id for loc in spec.locations} | {n.id for n in spec.npcs} | containers
    parent = {e.id: e.current_location for e in spec.entities}
    for entity in spec.entities:
        if entity.current_location not in holders:
            kind = "a non-container item" if entity.current_location in ids else "unknown"
            out.error(file, f"entities.{entity.id}.current_location", f"{entity.current_location!r} is {kind}")
        for opener in entity.opened_by:
            if opener not in ids:
                out.error(file, f"entities.{entity.id}.opened_by", f"unknown entity {opener!r}")
        seen, current = {entity.id}, entity.current_location
        while current in parent:
            if current in seen:
                out.error(file, f"entities.{entity.id}.current_location", "containers hold each other in a cycle")
                break
            seen.add(current)
            current = parent[current]


def lint_task(out: _Collector, file: Path, where: str, spec: MapSpec, task: TaskSpec) -> None:
    """A task's team, additions, predicates, intel and events against its map."""
    locations = {loc.id for loc in spec.locations}
    npcs = {n.id for n in [*spec.npcs, *task.extra_npcs]}
    reserve = {n.id for n in spec.reinforcements}
    entities = {e.id: e for e in [*spec.entities, *task.extra_entities]}
    members = {m.id for m in task.team}
    map_ids = locations | {n.id for n in spec.npcs} | reserve | {e.id for e in spec.entities}
    for added in [*task.extra_npcs, *task.extra_entities]:
        if added.id in map_ids:
            out.error(file, f"{where}.{added.id}", f"duplicate id {added.id!r}: the map already has it")
    for member in task.team:
        if member.id in map_ids | npcs | set(entities):
            out.error(file, f"{where}.team.{member.id}", f"duplicate id {member.id!r}")
        if member.start not in locations:
            out.error(file, f"{where}.team.{member.id}.start", f"unknown location {member.start!r}")
    if len(members) != len(task.team):
        out.error(file, f"{where}.team", "duplicate member ids")
    leaders = [m.id for m in task.team if m.leader]
    if len(leaders) != 1:
        out.error(file, f"{where}.team", f"exactly one leader required, found {len(leaders)}")
    low, high = TEAM_RANGE
    if not 1 <= len(task.team) <= high:
        out.error(file, f"{where}.team", f"a team has 1-{high} members, found {len(task.team)}")
    elif len(task.team) < low:
        out.warning(file, f"{where}.team", f"{len(task.team)} member; the benchmark's teams have {low}-{high}")
    for npc in task.extra_npcs:
        for index, stop in enumerate(npc.schedule):
            if stop.location not in locations:
                out.error(file, f"{where}.extra_npcs.{npc.id}.schedule[{index}].location",
                          f"unknown location {stop.location!r}")  # fmt: skip
    enforcers = [n for n in [*spec.npcs, *task.extra_npcs, *spec.reinforcements] if n.enforcer]
    if not enforcers:
        out.error(file, where, "no guard or police NPC (in the map, the task or the reinforcements)")
    known = Known(locations, npcs, reserve, entities, members)
    flag_ids = {f.id for f in [*task.checkpoints, *task.critical_failures]}
    world_flags = {op.flag for event in task.events for op in event.effects if isinstance(op, SetFlag)}
    for group in ("checkpoints", "critical_failures"):
        flags = getattr(task, group)
        if not flags:
            out.error(file, f"{where}.{group}", "empty: a task needs at least one")
        for flag in flags:
            field = f"{where}.{group}.{flag.id}"
            if flag.predicate is None:
                if flag.id not in world_flags:
                    out.warning(file, field, "no predicate and no event sets it: only a World Manager can")
                continue
            for message in _predicate_problems(flag.predicate, known, flag_ids | world_flags):
                out.error(file, f"{field}.predicate", message)
    _lint_initial_flags(out, file, where, spec, task)
    for dup, count in Counter(f.id for f in [*task.checkpoints, *task.critical_failures]).items():
        if count > 1:
            out.error(file, f"{where}.{dup}", f"duplicate flag id {dup!r}")
    for index, item in enumerate(task.intel):
        if item.about and not known.any(item.about):
            out.error(file, f"{where}.intel[{index}].about", f"unknown id {item.about!r}")
        if item.location and item.location not in locations:
            out.error(file, f"{where}.intel[{index}].location", f"unknown location {item.location!r}")
        _lint_intel_claims(out, file, f"{where}.intel[{index}]", spec, item, known)
    for event in task.events:
        field = f"{where}.events.{event.id}"
        for message in _predicate_problems(event.trigger, known, flag_ids | world_flags):
            out.error(file, f"{field}.trigger", message)
        for index, op in enumerate(event.effects):
            for message in _op_problems(op, known, spec):
                out.error(file, f"{field}.effects[{index}]", message)


def _lint_intel_claims(out: _Collector, file: Path, where: str, spec: MapSpec, item: IntelItem, known: Known) -> None:
    """An intel item's ``carried_by`` and ``opens`` must be true of the initial world: the NPC exists and carries
    the object in ``about``; each id is a door or container whose ``opened_by`` lists that object."""
    if (item.carried_by or item.opens) and not item.about:
        out.error(file, where, "carried_by and opens need the object in about")
        return
    entity = known.entities.get(item.about)
    if item.carried_by:
        if item.carried_by not in known.npcs:
            out.error(file, f"{where}.carried_by", f"unknown NPC {item.carried_by!r}")
        elif entity is None or entity.current_location != item.carried_by:
            out.error(file, f"{where}.carried_by", f"{item.carried_by!r} does not carry {item.about!r}")
    locks: dict[str, list[str]] = {e.id: e.opened_by for e in spec.edges}
    locks |= {e.id: e.opened_by for e in known.entities.values() if e.container}
    for lockable in item.opens:
        if lockable not in locks:
            out.error(file, f"{where}.opens", f"{lockable!r} is neither a door (edge id) nor a container")
        elif item.about not in locks[lockable]:
            out.error(file, f"{where}.opens", f"{item.about!r} is not among what opens {lockable!r}")


@dataclass(frozen=True)
class Known:
    locations: set[str]
    npcs: set[str]
    reserve: set[str]
    entities: Mapping[str, Entity]
    members: set[str]

    def any(self, object_id: str) -> bool:
        return object_id in self.locations | self.npcs | self.reserve | set(self.entities) | self.members


def _predicate_problems(predicate: Predicate, known: Known, flags: set[str]) -> list[str]:
    """Why a predicate could never hold (unknown or wrong-kind ids), as messages."""
    match predicate:
        case At(subject=subject, location=location):
            problems = [] if location in known.locations else [f"at: unknown location {location!r}"]
            movable = subject in known.npcs | known.reserve | known.members or subject in known.entities
            return problems + ([] if movable else [f"at: unknown subject {subject!r}"])
        case HeldByTeam(entity=entity):
            found = known.entities.get(entity)
            if found is None:
                return [f"held_by_team: unknown entity {entity!r}"]
            return [] if found.portable else [f"held_by_team: {entity!r} cannot be carried"]
        case TeamAt(locations=locations):
            return [f"team_at: unknown location {loc!r}" for loc in locations if loc not in known.locations] or (
                ["team_at: no locations"] if not locations else []
            )
        case Status(subject=subject):
            return [] if known.any(subject) else [f"status: unknown subject {subject!r}"]
        case Following(npc=npc):
            return [] if npc in known.npcs | known.reserve else [f"following: unknown NPC {npc!r}"]
        case FlagSet(name=name):
            return [] if name in flags else [f"flag: {name!r} is neither a checkpoint, a failure nor set by an event"]
        case AllOf(items=items) | AnyOf(items=items):
            problems = [p for item in items for p in _predicate_problems(item, known, flags)]
            return problems or ([] if items else [f"{predicate.kind}: no items"])
        case Not(item=item):
            return _predicate_problems(item, known, flags)
    return []


def _op_problems(op: Operation, known: Known, spec: MapSpec) -> list[str]:
    match op:
        case SpawnNpc(npc=npc, at=at):
            entries = {loc.id for loc in spec.locations if loc.entry}
            problems = [] if npc in known.reserve else [f"spawn_npc: {npc!r} is not a declared reinforcement"]
            return problems + ([] if at in entries else [f"spawn_npc: {at!r} is not an entry location"])
        case Move(subject=subject, to=to):
            return [] if to in known.locations and known.any(subject) else [f"move: unknown id in {op!r}"]
        case TriggerEvent() | CompleteEvent():
            return []
    ids = [v for k, v in op.model_dump().items() if k in ("subject", "npc", "member", "item", "to") and v]
    return [f"{op.op}: unknown id {v!r}" for v in ids if not known.any(v) and not _is_edge(v, spec)]


def _is_edge(object_id: object, spec: MapSpec) -> bool:
    return any(e.id == object_id for e in spec.edges)


def _lint_initial_flags(out: _Collector, file: Path, where: str, spec: MapSpec, task: TaskSpec) -> None:
    """No checkpoint or critical failure may already hold before the first turn (it would latch at once)."""
    from ..world.evaluate import holds
    from .schema import Objective, Task

    placeholder = Objective(id="x", name="x", category="Personal Harm", description="",
                            allowance={"force": 0, "property": 0})  # fmt: skip
    try:
        state = Task(id="lint", map=spec, objective=placeholder, spec=task).initial_state()
    except ValueError as err:
        out.error(file, where, f"the initial state cannot be built: {err}")
        return
    for group in ("checkpoints", "critical_failures"):
        for flag in getattr(state, group):
            if flag.predicate is not None and holds(state, flag.predicate):
                out.error(file, f"{where}.{group}.{flag.id}", "already holds in the initial state")
