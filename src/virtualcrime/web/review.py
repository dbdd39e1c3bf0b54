"""Review: raters score the Judge's outcome distribution and the World Manager's update on sampled key turns.

Each rating is written to the log folder's SQLite review file as soon as it is submitted (``ReviewStore``);
``virtualcrime report`` reads that file for mean ratings and agreement between raters.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..analysis.review_store import MAX_COMMENT, Rating, ReviewStore, ReviewStoreError, TurnRef
from ..harness.log_reader import find_logs, iter_runs, read_header
from ..runs.logged import LogProblem
from .forms import NAME, NAME_RULE, FormErrors, parse_form
from .key_turns import ReviewItem, RunTurns, TurnMark, sample_review_turns
from .map_svg import map_svg
from .pages import error_page, page
from .replay import turn_context
from .run_cache import NotFound, RunCache
from .settings import ServeSettings

_runs_cache: dict[tuple[str, int], list[RunTurns]] = {}


def _log_runs(root: Path, path: Path) -> list[RunTurns]:
    """The benchmark or human runs of one log (cached by modification time); forks and foreign logs give none."""
    key = (str(path), path.stat().st_mtime_ns)
    if key not in _runs_cache:
        header = read_header(path)
        found = []
        if not isinstance(header, LogProblem):
            for run in iter_runs(header):
                if isinstance(run, LogProblem):
                    continue
                found.append(RunTurns(log=path.relative_to(root).as_posix(), eval_id=run.eval_id,
                                      sample_id=run.sample_id, epoch=run.epoch, judge=run.judge,
                                      world_manager=run.world_manager,
                                      turns=[TurnMark.of(t) for t in run.turns]))  # fmt: skip
        _runs_cache[key] = found
    return _runs_cache[key]


def review_items(settings: ServeSettings) -> list[ReviewItem]:
    """The review sequence for the log folder as it is now."""
    root = settings.log_dir
    paths = find_logs([root]) if root.exists() else []
    runs = [run for path in paths for run in _log_runs(root, path)]
    current = {(str(p), p.stat().st_mtime_ns) for p in paths}
    for stale in [key for key in _runs_cache if key[0].startswith(str(root)) and key not in current]:
        del _runs_cache[stale]  # rewritten or removed logs
    return sample_review_turns(runs, settings.review_seed, settings.review_share)


def _posted_ref(values: dict[str, str]) -> TurnRef | None:
    """The turn a rating form was shown for (its hidden fields), or None if they are missing or malformed."""
    try:
        return TurnRef(eval_id=values["eval_id"], sample_id=values["sample_id"], epoch=int(values["epoch"]),
                       turn=int(values["turn"]))  # fmt: skip
    except (KeyError, ValueError):
        return None


def review_router(settings: ServeSettings, runs: RunCache) -> APIRouter:
    router = APIRouter()

    def store() -> ReviewStore:
        settings.log_dir.mkdir(parents=True, exist_ok=True)
        return ReviewStore(settings.log_dir)

    @router.get("/review", response_class=HTMLResponse)
    async def start(rater: str = "") -> Response:
        if rater:
            return RedirectResponse(f"/review/next?rater={quote(rater)}", status_code=303)
        items = await asyncio.to_thread(review_items, settings)
        return page("review_start.html", items=len(items), keys=sum(i.key for i in items), settings=settings,
                    errors={}, values={})  # fmt: skip

    @router.get("/review/next")
    async def next_item(rater: str) -> Response:
        if not NAME.fullmatch(rater):
            items = await asyncio.to_thread(review_items, settings)
            return page("review_start.html", status=422, items=len(items), keys=sum(i.key for i in items),
                        settings=settings, errors={"rater": NAME_RULE}, values={"rater": rater})  # fmt: skip
        items = await asyncio.to_thread(review_items, settings)
        try:
            done = await asyncio.to_thread(lambda: store().rated_by(rater))
        except ReviewStoreError as err:
            return error_page(f"the review file cannot be used: {err}", 500)
        for index, item in enumerate(items):
            if item.ref not in done:
                return RedirectResponse(f"/review/turn?rater={quote(rater)}&i={index}", status_code=303)
        return page("review_done.html", rater=rater, rated=len(done), items=len(items))

    async def turn_page(rater: str, index: int, errors: dict[str, str] | None = None,
                        values: dict[str, str] | None = None, status: int = 200) -> Response:  # fmt: skip
        items = await asyncio.to_thread(review_items, settings)
        if not NAME.fullmatch(rater):
            return error_page(f"rater: {NAME_RULE}", 422, "/review", "Review")
        if not 0 <= index < len(items):
            return error_page(f"there is no review item {index} (there are {len(items)})", 404, "/review", "Review")
        item = items[index]
        try:
            opened = await runs.open(item.log, item.ref.sample_id, item.ref.epoch)
            existing = await asyncio.to_thread(lambda: store().rating(item.ref, rater))
            done = await asyncio.to_thread(lambda: store().rated_by(rater))
        except NotFound as err:
            return error_page(str(err), 404, "/review", "Review")
        except ReviewStoreError as err:
            return error_page(f"the review file cannot be used: {err}", 500)
        context = turn_context(opened, item.ref.turn)
        before = opened.state_before(item.ref.turn)
        return page("review_turn.html", status=status, item=item, index=index, total=len(items), rater=rater,
                    rated=len(done), existing=existing, errors=errors or {}, values=values or {}, run=opened.run,
                    map_before=map_svg(opened.run.task_id, before) if before is not None else "",
                    state_before_json=before.model_dump_json(indent=1) if before is not None else "",
                    **context)  # fmt: skip

    @router.get("/review/turn", response_class=HTMLResponse)
    async def show(rater: str, i: int) -> Response:
        return await turn_page(rater, i)

    @router.post("/review/rate")
    async def rate(request: Request) -> Response:
        try:
            values = parse_form(await request.body())
        except FormErrors as err:
            return error_page(str(err), 422, "/review", "Review")
        rater, errors = values.get("rater", ""), {}
        ref = _posted_ref(values)
        items = await asyncio.to_thread(review_items, settings)
        # the rating is for the turn the form showed, named by its hidden fields; the position is only navigation
        index = next((n for n, candidate in enumerate(items) if candidate.ref == ref), None)
        if not NAME.fullmatch(rater) or index is None:
            return error_page("unknown rater, or that turn is not in the review sample", 422, "/review", "Review")
        item = items[index]
        scores: dict[str, int | None] = {"judge_rating": None}
        for field in ("judge_rating", "world_manager_rating") if item.judge_asked else ("world_manager_rating",):
            raw = values.get(field, "")
            if raw not in {"1", "2", "3", "4", "5"}:
                errors[field] = "choose a rating from 1 to 5"
            else:
                scores[field] = int(raw)
        comment = values.get("comment", "").replace("\r\n", "\n").strip()
        if len(comment) > MAX_COMMENT:
            errors["comment"] = f"at most {MAX_COMMENT} characters (this has {len(comment)})"
        if errors:
            return await turn_page(rater, index, errors, values, 422)
        rating = Rating(ref=item.ref, log=item.log, rater=rater, comment=comment, judge=item.judge,
                        world_manager=item.world_manager, created=datetime.now(UTC).isoformat(timespec="seconds"),
                        **scores)  # fmt: skip
        try:
            await asyncio.to_thread(lambda: store().save(rating))
        except ReviewStoreError as err:
            return error_page(f"the rating was not saved: {err}", 500)
        return RedirectResponse(f"/review/next?rater={quote(rater)}", status_code=303)

    return router
