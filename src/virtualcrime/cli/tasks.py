"""``virtualcrime tasks``: the bundled tasks as a table or JSON."""

from __future__ import annotations

import argparse
import json

from ..scenarios import load_tasks


def tasks_command(args: argparse.Namespace) -> int:
    rows = []
    for task_id, task in sorted(load_tasks().items()):
        spec = task.spec
        rows.append({
            "id": task_id,
            "map": task.map.id,
            "objective": task.objective.id,
            "category": task.objective.category.value,
            "team": len(spec.team),
            "checkpoints": [c.id for c in spec.checkpoints],
            "allowance": task.objective.allowance.model_dump(),
        })
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'task':28} {'category':24} {'team':>4}  {'force/property':>14}  checkpoints")
    for row in rows:
        allowance = f"{row['allowance']['force']}/{row['allowance']['property']}"
        print(f"{row['id']:28} {row['category']:24} {row['team']:>4}  {allowance:>14}  {', '.join(row['checkpoints'])}")
    print(f"{len(rows)} tasks")
    return 0
