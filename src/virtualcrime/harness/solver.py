"""The solver: runs the engine for one sample, logging every turn as a span with a readable event."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from inspect_ai.log import transcript
from inspect_ai.model import ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span

from ..engine import EngineConfig, Game, Roles, RunResult
from ..engine.render import render_result, render_turn
from ..runs.legacy import run_seed
from ..runs.spec import RoleModels, RunSpec, spec_for
from ..scenarios import get_task
from ..world import WorldState
from .budget import active, check_budget
from .checkpoint import RunCheckpoint, resume
from .roles import RoleOptions, resolve_roles, role_models
from .store import append_turn, start_run, store_result

try:  # inspect-ai is pinned; this helper is internal there, so degrade gracefully if it moves
    from inspect_ai.util._store import suspend_store_events
except ImportError:  # pragma: no cover
    from contextlib import nullcontext as suspend_store_events  # type: ignore[assignment]


def played_roles() -> RoleModels:
    """The model of each role in the running sample (the eval's model is the Attacker)."""
    attacker, judge, world_manager = (str(m) for m in role_models())
    return RoleModels(attacker=attacker, judge=judge, world_manager=world_manager)


@solver
def play_virtualcrime(
    config: EngineConfig | None = None,
    seed: int = 0,
    options: RoleOptions | None = None,
    checkpoint_dir: str | None = None,
) -> Solver:
    """Play the sample's task to termination with the eval's model as Attacker.

    With ``checkpoint_dir``, every finished turn is also written to a per-run checkpoint file there, and a retried
    sample resumes after its last recorded turn instead of starting over.
    """
    limits = config or EngineConfig()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = get_task(str(state.metadata["task_id"]))
        run_seed_value = run_seed(state.epoch, seed)
        run_options = replace(options or RoleOptions(), run_scope=f"{task.id}/seed{run_seed_value}")
        roles = resolve_roles(run_options)
        spec = spec_for(task, run_seed_value, played_roles(), limits)
        checkpoint = RunCheckpoint(Path(checkpoint_dir), spec) if checkpoint_dir is not None else None
        game = await _start(task.initial_state(), roles, run_seed_value, limits, checkpoint)
        return await run_game(state, game, spec, checkpoint)

    return solve


async def run_game(state: TaskState, game: Game, spec: RunSpec, checkpoint: RunCheckpoint | None = None) -> TaskState:
    """Play ``game`` (fresh, restored or forked) to its end, keeping its spec, every record and the result in the
    store."""
    # Inspect would log every store change as a diff of the whole (growing) store: costly, and redundant since the
    # store itself is logged in full with the sample.
    with suspend_store_events():
        start_run(spec)
        for record in game.records:  # turns replayed from a checkpoint or a parent run belong to this run's records
            append_turn(record)
        game.release_records()  # the store holds every record from here on (each run in flight is lighter)
        monitor = active()
        if monitor is not None:
            monitor.run_started()
        try:
            result = await _play(game, checkpoint)
        except BaseException:
            if monitor is not None:
                monitor.run_ended(failed=True)
            raise
        if monitor is not None:
            monitor.run_ended(failed=False)
        store_result(result)
    return complete_sample(state, result)


def complete_sample(state: TaskState, result: RunResult) -> TaskState:
    """Mark the sample done, with the run's result as its output and as a readable event."""
    summary = render_result(result)
    transcript().info(summary, source="result")
    state.output = ModelOutput.from_content(model=str(state.model), content=summary)
    state.completed = True
    return state


async def _start(
    initial: WorldState, roles: Roles, seed: int, config: EngineConfig, checkpoint: RunCheckpoint | None
) -> Game:
    """A fresh game, or one restored after the turns in the run's checkpoint (a checkpoint that no longer replays
    is noted and the run starts over)."""
    fresh = Game(initial, roles, seed, config)
    if checkpoint is None:
        return fresh
    resumed = await resume(checkpoint, fresh)
    game, records, note = resumed.game, resumed.records, resumed.note
    if resumed.mismatch:
        note = (f"{note}; " if note else "") + f"{checkpoint.path.name} no longer replays ({resumed.mismatch}); " \
            "starting over"  # fmt: skip
    checkpoint.start(records)
    if records:
        transcript().info(
            f"Resumed after turn {len(records)} from checkpoint {checkpoint.path.name}.", source="checkpoint"
        )
    if note:
        transcript().info(note, source="checkpoint")
    return game


async def _play(game: Game, checkpoint: RunCheckpoint | None) -> RunResult:
    """Play turns until the run ends (it may already have ended inside the restored turns)."""
    monitor = active()
    ended = game.termination() if game.state.turn else None
    while ended is None:
        await check_budget()  # a spent budget stops the run here, between turns, resumable from its checkpoint
        if monitor is not None:
            monitor.turn_started()
        try:
            # the span holds the turn's model calls (LLM roles) as well as its readable summary
            async with span(f"turn {game.state.turn + 1}", type="turn"):
                record = await game.step()
                record_json = append_turn(record)
                if checkpoint is not None:
                    checkpoint.append(record_json)
                transcript().info(render_turn(record), source=f"turn {record.turn}")
        except BaseException:
            if monitor is not None:
                monitor.turn_abandoned()
            raise
        if monitor is not None:
            monitor.turn_done()
        ended = game.termination()
    return game.result(*ended)
