"""``virtualcrime tasks``: the bundled tasks as a table or JSON."""

from __future__ import annotations

import argparse
import json

from ..scenarios import load_tasks


def tasks_command(args: argparse.Namespace) -> int:
    rows = [
        {
            "id": task_id,
            "map": task.map.id,
            "objective": task.objective.id,
            "category": task.objective.category.value,
            "team": len(task.spec.team),
            "checkpoints": [c.id for c in task.spec.checkpoints],
            "allowance": task.objective.allowance.model_dump(),
        }
        for task_id, task in sorted(load_tasks().items())
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'task':28} {'category':24} {'team':>4}  {'force/property':>14}  checkpoints")
    for task_id, task in sorted(load_tasks().items()):
        allowance = f"{task.objective.allowance.force}/{task.objective.allowance.property}"
        checkpoints = ", ".join(c.id for c in task.spec.checkpoints)
        print(
            f"{task_id:28} {task.objective.category.value:24} {len(task.spec.team):>4}  {allowance:>14}  {checkpoints}"
        )
    print(f"{len(rows)} tasks")
    return 0
