"""The Inspect task: one sample per VirtualCrime task, epochs as seeds."""

from __future__ import annotations

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig

from .. import defaults
from ..engine import EngineConfig
from ..scenarios import load_tasks
from ..scenarios.schema import Task as ScenarioTask
from .roles import RoleOptions
from .scorer import run_outcome
from .solver import play_virtualcrime

DEFAULT_ROLE_MODEL = defaults.REFEREE


def _task_ids(tasks: str | list[str] | None) -> list[str]:
    known = load_tasks()
    if tasks is None or tasks == "all":
        return sorted(known)
    wanted = [t.strip() for t in (tasks.split(",") if isinstance(tasks, str) else tasks) if t.strip()]
    chosen: list[str] = []
    for item in wanted:
        matches = [t for t in sorted(known) if t == item or t.startswith(item.rstrip("/") + "/")]
        if not matches:
            raise ValueError(f"unknown task {item!r}; known: {', '.join(sorted(known))}")
        chosen += [m for m in matches if m not in chosen]
    return chosen


def sample_for(task: ScenarioTask) -> Sample:
    return Sample(
        id=task.id,
        input=task.initial_state().briefing.objective,
        metadata={
            "task_id": task.id,
            "map": task.map.id,
            "objective": task.objective.id,
            "category": task.objective.category.value,
        },
    )


@task
def virtualcrime(
    tasks: str | list[str] | None = None,
    seeds: int = 3,
    seed: int = 0,
    max_turns: int = defaults.MAX_TURNS,
    stall_turns: int = defaults.STALL_TURNS,
    cache: bool = False,
    max_retries: int = defaults.MAX_RETRIES,
    timeout: int = defaults.CALL_TIMEOUT,
    max_attempts: int = defaults.MAX_ATTEMPTS,
    structured_output: bool = True,
    attacker_connections: int | None = None,
    judge_connections: int | None = None,
    world_manager_connections: int | None = None,
    checkpoint_dir: str | None = None,
    latency: float = 0.0,
) -> Task:
    """VirtualCrime: the eval's model plays the Attacker; model roles ``judge`` and ``world_manager`` judge.

    Args:
        tasks: Task ids (``map/objective``) or map names, comma separated; default all tasks.
        seeds: Runs per task (Inspect epochs); run i uses RNG seed ``seed + i``.
        seed: Base seed.
        max_turns: Turn limit of a run.
        stall_turns: End a run after this many turns without a new checkpoint.
        cache: Cache model replies, scoped to the run, turn and role (re-running a finished run is then free).
        max_retries: Provider retries per model call (rate limits, server errors, timeouts).
        timeout: Seconds before one model call times out.
        max_attempts: Attempts per role call when the reply cannot be used (the error is shown to the model).
        structured_output: Pass each call's JSON schema as a response schema; turn off for servers that reject
            OpenAI's json_schema response format (e.g. llama-cpp-python's server); replies are parsed either way.
        attacker_connections: Concurrent connections to the Attacker's model (default: Inspect's per provider);
            likewise judge_connections and world_manager_connections.
        checkpoint_dir: Write each finished turn to a per-run checkpoint file here; a retried run resumes after
            its last recorded turn (``virtualcrime bench`` sets this).
        latency: Seconds every role call waits first, as a provider round trip would (scale benchmarks, tests).
    """
    connections = tuple(
        (role, n)
        for role, n in (
            ("attacker", attacker_connections),
            ("judge", judge_connections),
            ("world_manager", world_manager_connections),
        )
        if n is not None
    )
    known = load_tasks()
    return Task(
        dataset=MemoryDataset([sample_for(known[t]) for t in _task_ids(tasks)], name="virtualcrime"),
        solver=play_virtualcrime(
            config=EngineConfig(max_turns=max_turns, stall_turns=stall_turns),
            seed=seed,
            options=RoleOptions(
                cache=cache,
                max_retries=max_retries,
                timeout=timeout,
                max_attempts=max_attempts,
                structured_output=structured_output,
                connections=connections,
                latency=latency,
            ),
            checkpoint_dir=checkpoint_dir,
        ),
        scorer=run_outcome(),
        epochs=Epochs(seeds),
        # Inspect's defaults retry forever with no timeout; a benchmark must not hang on one provider call.
        config=GenerateConfig(max_retries=max_retries, timeout=timeout),
        # No default World Manager: one not named is the Judge's model (harness.roles.role_models).
        model_roles={"judge": DEFAULT_ROLE_MODEL},
    )
