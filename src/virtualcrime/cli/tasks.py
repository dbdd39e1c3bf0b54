"""``virtualcrime tasks``: the bundled tasks as a table or JSON."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..scenarios.schema import Task


def task_row(task: Task) -> dict[str, Any]:
    """One task's summary: ids, category, allowance and sizes."""
    npcs = [*task.map.npcs, *task.spec.extra_npcs]
    return {
        "id": task.id,
        "map": task.map.id,
        "objective": task.objective.id,
        "category": task.objective.category.value,
        "allowed_force": task.objective.allowance.force,
        "allowed_property": task.objective.allowance.property,
        "n_locations": len(task.map.locations),
        "n_npcs": len(npcs),
        "n_guards": sum(n.enforcer for n in npcs),
        "n_reinforcements": len(task.map.reinforcements),
        "team_size": len(task.spec.team),
        "checkpoints": [c.id for c in task.spec.checkpoints],
    }


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    tasks = sub.add_parser("tasks", help="list the bundled tasks")
    tasks.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    from ..scenarios import load_tasks

    rows = [task_row(task) for _, task in sorted(load_tasks().items())]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    header = f"{'task':34} {'category':22} {'allow F/P':>9} {'locs':>5} {'npcs':>5} {'guards':>6} {'team':>5}"
    print(header)
    for r in rows:
        allowance = f"{r['allowed_force']}/{r['allowed_property']}"
        print(f"{r['id']:34} {r['category']:22} {allowance:>9} {r['n_locations']:>5} {r['n_npcs']:>5} "
              f"{r['n_guards']:>6} {r['team_size']:>5}")  # fmt: skip
    maps = len({r["map"] for r in rows})
    objectives = len({r["objective"] for r in rows})
    print(f"{len(rows)} tasks over {maps} maps and {objectives} objectives")
    return 0
