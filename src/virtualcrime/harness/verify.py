"""``replay --verify``'s work: re-execute logged runs and say whether each reproduces its records exactly.

An ordinary run is re-executed: offline roles decide again and language-model roles parse their recorded replies
again, with the run's seed. A fork (whose early turns were played by its parent's roles), a human game (the
person's actions cannot be asked again) and a log without model events are replayed from the recorded role
outputs instead. Each run is read on its own, so a large log is never held whole in memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log_sample
from pydantic import BaseModel, ConfigDict

from ..engine import RunStatus
from ..engine.replay import verify
from ..scenarios import ScenarioError, get_task
from .log_browser import LogEntry, RunEntry, read_selected
from .reexecute import reexecution_roles, replies_in_records
from .roles import RoleOptions

FINISHED = {status.value for status in RunStatus}


class Verification(BaseModel):
    """How one run fared: reproduced exactly or not, how it was checked, and the first differences."""

    model_config = ConfigDict(extra="forbid")

    task: str
    seed: int
    turns: int
    how: str
    ending: str
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_runs(path: Path, entry: LogEntry, runs: list[RunEntry]) -> Iterator[Verification]:
    """Re-execute each of ``runs`` of the log at ``path`` (from ``log_browser.select_runs``)."""
    models = {"attacker": entry.attacker, "judge": entry.judge, "world_manager": entry.world_manager}
    for run in runs:
        logged = read_selected(path, entry, run)
        config = logged.spec.limits
        ending = logged.result.status.value if logged.result is not None else "unfinished"
        base = {"task": run.sample_id, "seed": logged.seed, "turns": len(logged.turns), "ending": ending}
        lost = logged.result.turns - len(logged.turns) if logged.result is not None else 0
        if (logged.result is None and run.status in FINISHED) or lost > 0:
            yield Verification(**base, how="not replayed", problems=[
                f"the log lost this run's turn records ({len(logged.turns)} kept; the run is scored {run.status}): run "
                "the same `virtualcrime bench` again to restore them from the run's checkpoint"])  # fmt: skip
            continue
        try:
            state = get_task(logged.task_id).initial_state()
        except (ValueError, ScenarioError) as err:
            yield Verification(**base, how="not replayed", problems=[str(err)])
            continue
        roles, how = None, "replayed from recorded role outputs"
        uses_models = any(t.model_calls for t in logged.turns)
        if entry.kind == "benchmark":
            events: list[Any] = []
            if uses_models and replies_in_records(logged.turns) is None:  # an older log: replies only in events
                events = list(read_eval_log_sample(str(path), id=run.sample_id, epoch=run.epoch).events or [])
            if events or not uses_models or replies_in_records(logged.turns) is not None:
                options = RoleOptions(run_scope=f"{logged.task_id}/seed{logged.seed}",
                                      max_attempts=int(entry.task_args.get("max_attempts", 3)))  # fmt: skip
                roles, how = reexecution_roles(models, logged.turns, events, options), "re-executed"
        problems = asyncio.run(verify(state, logged.seed, logged.turns, logged.result, config, logged.reseed, roles))
        yield Verification(**base, how=how, problems=problems)
