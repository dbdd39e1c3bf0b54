"""Replay: browse the log folder, open a run, step through its turns with the full world state."""

from __future__ import annotations

import asyncio
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

from ..engine.render import op_text
from ..harness.log_browser import list_logs, list_runs
from .map_svg import map_svg
from .pages import error_page, page
from .run_cache import NotFound, OpenRun, RunCache, checked_log
from .settings import ServeSettings

INSPECT_VIEW_PORT = 7575


def inspect_view_url(log_path: str, sample_id: str | None = None, epoch: int | None = None) -> str:
    """The ``inspect view`` address of a log (or one of its samples), for ``inspect view --log-dir <log dir>``."""
    url = f"http://127.0.0.1:{INSPECT_VIEW_PORT}/#/logs/{quote(log_path)}"
    if sample_id is not None and epoch is not None:
        url += f"/samples/sample/{quote(sample_id, safe='')}/{epoch}/"
    return url


def key_turn_numbers(opened: OpenRun) -> set[int]:
    """Turns that changed a checkpoint or a critical flag."""
    return {r.turn for r in opened.run.turns if r.new_checkpoints or r.new_failures}


def turn_context(opened: OpenRun, turn: int) -> dict[str, Any]:
    """Everything the turn detail partial shows: record, states around it, map, operations as text."""
    record = next(r for r in opened.run.turns if r.turn == turn)
    after = opened.state_after(turn)
    before = opened.state_before(turn)
    stages = [
        {
            "stage": stage.stage,
            "note": stage.note,
            "applied": [op_text(e.op) for e in record.ledger if e.stage == stage.stage and e.applied],
            "rejected": [(op_text(e.op), e.reason) for e in record.ledger if e.stage == stage.stage and not e.applied],
        }
        for stage in record.stages
    ]
    dims = []
    if record.verdict is not None:
        feasibility = record.verdict.feasibility
        dims = [(name, getattr(feasibility, name)) for name in type(feasibility).model_fields]
    return {
        "record": record,
        "stages": stages,
        "dims": dims,
        "map": map_svg(opened.run.task_id, after) if after is not None else "",
        "state_json": after.model_dump_json(indent=1) if after is not None else "",
        "before": before,
        "after": after,
    }


def replay_router(settings: ServeSettings, runs: RunCache) -> APIRouter:
    router = APIRouter()
    root = settings.log_dir

    @router.get("/replay", response_class=HTMLResponse)
    async def logs() -> Response:
        entries = await asyncio.to_thread(list_logs, root)
        folders: dict[str, list[object]] = {}
        for entry in entries:
            folders.setdefault(str(PurePosixPath(entry.path).parent), []).append(entry)
        return page("replay_logs.html", folders=sorted(folders.items()), log_dir=str(root))

    @router.get("/replay/log", response_class=HTMLResponse)
    async def log(path: str) -> Response:
        try:
            entry = await asyncio.to_thread(checked_log, root, path)
            found = await asyncio.to_thread(list_runs, root, entry)
        except NotFound as err:
            return error_page(str(err), 404, "/replay", "All logs")
        return page("replay_runs.html", entry=entry, runs=found, inspect_url=inspect_view_url(entry.path),
                    log_dir=str(root))  # fmt: skip

    @router.get("/replay/run", response_class=HTMLResponse)
    async def run(path: str, sample: str, epoch: int = 1, turn: int = 1) -> Response:
        try:
            opened = await runs.open(path, sample, epoch)
        except NotFound as err:
            return error_page(str(err), 404, "/replay", "All logs")
        numbers = [r.turn for r in opened.run.turns]
        if not numbers:
            return page("replay_empty.html", opened=opened)
        turn = min(max(turn, numbers[0]), numbers[-1])
        return page(
            "replay_turn.html",
            opened=opened,
            run=opened.run,
            turn=turn,
            numbers=numbers,
            key_turns=key_turn_numbers(opened),
            inspect_url=inspect_view_url(opened.run.log.path, sample, epoch),
            base=f"/replay/run?path={quote(path)}&sample={quote(sample)}&epoch={epoch}",
            log_dir=str(root),
            **turn_context(opened, turn),
        )

    return router
