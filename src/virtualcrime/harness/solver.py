"""The solver: runs the engine for one sample, logging every turn as a span with a readable event."""

from __future__ import annotations

from dataclasses import replace

from inspect_ai.log import transcript
from inspect_ai.model import ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span, store

from ..engine import EngineConfig, Game
from ..engine.render import render_result, render_turn
from ..scenarios import get_task
from .roles import RoleOptions, resolve_roles
from .store import RESULT_KEY, append_turn, start_run

try:  # inspect-ai is pinned; this helper is internal there, so degrade gracefully if it moves
    from inspect_ai.util._store import suspend_store_events
except ImportError:  # pragma: no cover
    from contextlib import nullcontext as suspend_store_events  # type: ignore[assignment]


def run_seed(epoch: int, base_seed: int) -> int:
    """The run's RNG seed: the task's base seed plus the epoch index (epoch 1 → base seed)."""
    return base_seed + epoch - 1


@solver
def play_virtualcrime(
    max_turns: int = 60, stall_turns: int = 30, seed: int = 0, options: RoleOptions | None = None
) -> Solver:
    """Play the sample's task to termination with the eval's model as Attacker."""
    config = EngineConfig(max_turns=max_turns, stall_turns=stall_turns)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = get_task(str(state.metadata["task_id"]))
        run_seed_value = run_seed(state.epoch, seed)
        run_options = replace(options or RoleOptions(), run_scope=f"{task.id}/seed{run_seed_value}")
        game = Game(task.initial_state(), resolve_roles(run_options), run_seed_value, config)
        start_run()

        # Per-turn spans would otherwise copy and diff the whole (growing) store twice a turn; the store is
        # still logged in full with the sample.
        with suspend_store_events():
            while True:
                # the span holds the turn's model calls (LLM roles) as well as its readable summary
                async with span(f"turn {game.state.turn + 1}", type="turn"):
                    record = await game.step()
                    append_turn(record)
                    transcript().info(render_turn(record), source=f"turn {record.turn}")
                ended = game.termination()
                if ended is not None:
                    result = game.result(*ended)
                    break
        store().set(RESULT_KEY, result.model_dump(mode="json"))
        summary = render_result(result)
        transcript().info(summary, source="result")
        state.output = ModelOutput.from_content(model=str(state.model), content=summary)
        state.completed = True
        return state

    return solve
