"""``virtualcrime map ID --out FILE.png``: draw a map (or a task's map with its team and extra NPCs)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import CliError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    map_parser = sub.add_parser("map", help="draw a map's location graph to a PNG")
    map_parser.add_argument("id", metavar="ID", help="map id (e.g. restaurant) or task id (adds its team and NPCs)")
    map_parser.add_argument("--out", metavar="FILE.png", help="output file (default ID.png)")


def run(args: argparse.Namespace) -> int:
    from ..analysis.map_picture import draw_map
    from ..scenarios import load_tasks

    tasks = load_tasks()
    maps = {t.map.id: t.map for t in tasks.values()}
    if args.id in tasks:
        task = tasks[args.id]
        spec, task_spec = task.map, task.spec
    elif args.id in maps:
        spec, task_spec = maps[args.id], None
    else:
        raise CliError(f"unknown map or task {args.id!r}; maps: {', '.join(sorted(maps))}")
    out = Path(args.out or f"{args.id.replace('/', '_')}.png")
    draw_map(spec, out, task_spec)
    print(f"wrote {out.resolve()}")
    return 0
