"""``virtualcrime fork``'s work: pick the parent run by task and seed, check the roles, play the fork's eval."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import eval as inspect_eval
from pydantic import BaseModel, ConfigDict

from .. import defaults
from ..engine.render import render_result
from ..runs.store import records_from_store
from .fork import ForkError, virtualcrime_fork
from .human import is_human
from .log_browser import RunNotFound, read_selected, select_runs
from .roles import RoleConfigError, eval_models, referee_models


class ForkOutcome(BaseModel):
    """The fork that was played: its parent, roles, seed and how it ended."""

    model_config = ConfigDict(extra="forbid")

    task: str
    parent_seed: int
    turn: int
    new_seed: int | None
    attacker: str
    judge: str
    world_manager: str
    result: str
    log: str


def fork_run(
    log: Path,
    task: str,
    seed: int | None,
    turn: int,
    *,
    new_seed: int | None = None,
    attacker: str | None = None,
    judge: str | None = None,
    world_manager: str | None = None,
    log_dir: str = "logs",
    display: str = "none",
    timeout: int = defaults.CALL_TIMEOUT,
    max_retries: int = defaults.MAX_RETRIES,
    max_attempts: int = defaults.MAX_ATTEMPTS,
    structured_output: bool = True,
) -> ForkOutcome:
    """Fork the run of ``task`` with ``seed`` in ``log`` (``seed`` may be None when the log holds one such run)
    before ``turn``; roles default to the parent's. ForkError, in one line, for anything that cannot be forked."""
    try:
        entry, runs = select_runs(log, task, seed)
    except RunNotFound as err:
        raise ForkError(str(err)) from err
    if entry.kind == "fork":
        raise ForkError(f"{log.name} is a fork's log; fork its parent run instead (the log it names)")
    if len(runs) > 1:
        seeds = ", ".join(str(r.seed) for r in runs)
        raise ForkError(f"{log.name} holds {len(runs)} runs of {task} (seeds {seeds}); choose one with --seed")
    [parent] = runs
    attacker = attacker or entry.attacker
    if is_human(attacker):
        raise ForkError(f"{log.name} was played by a person ({attacker}); give --attacker MODEL to play on from turn "
                        f"{turn} with a model")  # fmt: skip
    # A new Judge brings its World Manager along unless one is named too (the World Manager follows the Judge).
    if judge and not world_manager:
        judge, world_manager = referee_models(judge, None)
    judge, world_manager = judge or entry.judge, world_manager or entry.world_manager
    try:
        model, model_roles = eval_models(attacker, judge, world_manager)
    except RoleConfigError as err:
        raise ForkError(str(err)) from err
    logged = read_selected(log, entry, parent)
    fork = virtualcrime_fork(
        log=str(log.resolve()),
        sample_id=parent.sample_id,
        epoch=parent.epoch,
        turn=turn,
        parent_seed=logged.seed,
        seed=new_seed,
        max_turns=logged.spec.limits.max_turns,
        stall_turns=logged.spec.limits.stall_turns,
        max_retries=max_retries,
        timeout=timeout,
        max_attempts=max_attempts,
        structured_output=structured_output,
    )
    [played] = inspect_eval(
        fork,
        model=model,
        model_roles=dict(model_roles),
        log_dir=log_dir,
        display=display,  # type: ignore[arg-type]
        max_retries=max_retries,
        timeout=timeout,
    )
    if played.status != "success" or not played.samples:
        raise ForkError(f"the fork did not finish: {played.error.message if played.error else played.status}")
    _, result = records_from_store(dict(played.samples[0].store))
    return ForkOutcome(task=parent.sample_id, parent_seed=logged.seed, turn=turn, new_seed=new_seed,
                       attacker=attacker, judge=judge, world_manager=world_manager,
                       result=render_result(result) if result is not None else "the fork ended without a result",
                       log=str(Path(played.location).resolve()))  # fmt: skip
