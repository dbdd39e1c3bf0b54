"""``virtualcrime run``'s work: play tasks in one Inspect eval and summarise the log it wrote."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from pydantic import BaseModel, ConfigDict

from .. import defaults
from ..runs.legacy import run_seed
from ..scenarios import ScenarioError
from .log_reader import role_model
from .roles import RoleConfigError, eval_models
from .task import virtualcrime


class RunRow(BaseModel):
    """One run of the eval: its task, the seed it was played with and how it ended."""

    model_config = ConfigDict(extra="forbid")

    task: str
    seed: int
    status: str
    turns: int | None
    reason: str


class RoleTokens(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: str
    model: str
    input: int
    output: int


class EvalSummary(BaseModel):
    """What a person needs after ``virtualcrime run``: the roles, each run's ending, tokens and the log."""

    model_config = ConfigDict(extra="forbid")

    log: str
    status: str
    error: str = ""
    attacker: str
    judge: str
    world_manager: str
    runs: list[RunRow]
    tokens: list[RoleTokens]

    @property
    def wins(self) -> int:
        return sum(r.status == "won" for r in self.runs)

    @property
    def errored(self) -> int:
        return sum(r.status == "error" for r in self.runs)


def summarise(log: EvalLog) -> EvalSummary:
    """The summary of a finished (or failed) eval log of the virtualcrime task."""
    base_seed = int((log.eval.task_args or {}).get("seed", 0))
    runs = []
    for sample in sorted(log.samples or [], key=lambda s: (str(s.id), s.epoch)):
        score = (sample.scores or {}).get("run_outcome")
        if score is None or sample.error is not None:
            error = sample.error.message.splitlines()[0] if sample.error else "no score"
            runs.append(RunRow(task=str(sample.id), seed=run_seed(sample.epoch, base_seed), status="error",
                               turns=None, reason=error[:200]))  # fmt: skip
            continue
        value = score.value if isinstance(score.value, dict) else {}
        runs.append(
            RunRow(
                task=str(sample.id),
                seed=int((score.metadata or {}).get("seed", run_seed(sample.epoch, base_seed))),
                status=str(score.answer),
                turns=int(value["turns"]) if "turns" in value else None,
                reason=str(score.explanation or ""),
            )
        )
    roles = {"attacker": log.eval.model, **{r: role_model(log.eval.model_roles, r) for r in ("judge", "world_manager")}}
    stats = log.stats
    usages = [("attacker", stats.model_usage.get(log.eval.model)), *stats.role_usage.items()]
    tokens = [RoleTokens(role=role, model=roles.get(role, ""), input=u.input_tokens, output=u.output_tokens)
              for role, u in usages if u is not None]  # fmt: skip
    return EvalSummary(
        log=str(Path(log.location).resolve()),
        status=log.status,
        error=log.error.message if log.error else "",
        attacker=roles["attacker"],
        judge=roles["judge"],
        world_manager=roles["world_manager"],
        runs=runs,
        tokens=tokens,
    )


def play_tasks(
    tasks: list[str] | None,
    *,
    attacker: str,
    judge: str,
    world_manager: str,
    seeds: int,
    seed: int,
    max_turns: int,
    stall_turns: int,
    log_dir: str,
    display: str,
    timeout: int = defaults.CALL_TIMEOUT,
    max_retries: int = defaults.MAX_RETRIES,
    max_attempts: int = defaults.MAX_ATTEMPTS,
    structured_output: bool = True,
) -> EvalSummary:
    """Play ``tasks`` × ``seeds`` in one eval; RoleConfigError or ValueError before anything runs when the models
    or tasks cannot be used."""
    model, model_roles = eval_models(attacker, judge, world_manager)
    try:
        task = virtualcrime(tasks=",".join(tasks) if tasks else None, seeds=seeds, seed=seed, max_turns=max_turns,
                            stall_turns=stall_turns, timeout=timeout, max_retries=max_retries,
                            max_attempts=max_attempts, structured_output=structured_output)  # fmt: skip
    except ScenarioError as err:
        raise ValueError(str(err)) from err
    logs = inspect_eval(
        task,
        model=model,
        model_roles=dict(model_roles),
        log_dir=log_dir,
        display=display,  # type: ignore[arg-type]
        max_retries=max_retries,
        timeout=timeout,
        fail_on_error=False,
    )
    return summarise(logs[0])


__all__ = ["EvalSummary", "RoleConfigError", "RunRow", "play_tasks", "summarise"]
