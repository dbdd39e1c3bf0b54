"""Human games as ordinary VirtualCrime logs: the ``human/<player>`` model and the ``virtualcrime_human`` task.

A person plays the Attacker in the web UI; the server runs the same engine turn with the configured Judge and
World Manager and keeps each finished turn's record in a checkpoint file. When the game ends (or the player gives
up) this task writes those records into an Inspect log, exactly as a model's run is stored: the records are
replayed through the engine (recorded role outputs, same seed) to rebuild the final state and result, so the
log is checked for consistency on the way in and ``virtualcrime report`` / ``replay --verify`` read it unchanged.
The eval's model is ``human/<player>``, a provider that records who played and refuses to generate text.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import transcript
from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, modelapi
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolChoice, ToolInfo
from pydantic import BaseModel, ConfigDict, ValidationError

from ..engine import RunStatus, TurnRecord
from ..engine.render import render_turn
from ..engine.replay import recorded_roles, restore
from ..runs.spec import RunSpec
from ..scenarios import get_task
from .scorer import run_outcome
from .solver import complete_sample
from .store import append_turn, start_run, store_result
from .task import sample_for

try:  # see solver.py: internal to the pinned inspect-ai
    from inspect_ai.util._store import suspend_store_events
except ImportError:  # pragma: no cover
    from contextlib import nullcontext as suspend_store_events  # type: ignore[assignment]

HUMAN_TASK = "virtualcrime_human"
HUMAN_PROVIDER = "human"
PLAYER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$")


def is_human(model: str) -> bool:
    """Whether a model name stands for a person who played in the web UI (``human/<player>``)."""
    return model.startswith(f"{HUMAN_PROVIDER}/")


class HumanPlayerModel(ModelAPI):
    """``human/<player>``: names the person who played; there is no model to call."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 - Inspect's own signature
        **model_args: Any,
    ) -> None:
        if not PLAYER_NAME.fullmatch(model_name):
            raise ValueError(f"human/{model_name}: a player name is 1-32 letters, digits, '.', '_' or '-'")
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        raise RuntimeError(
            f"human/{self.model_name} is a person who played in the web UI (virtualcrime serve); "
            "there is no model to ask"
        )


@modelapi(name=HUMAN_PROVIDER)
def human_models() -> type[ModelAPI]:
    return HumanPlayerModel


def read_records(path: Path) -> list[TurnRecord]:
    """The turn records of a game file (JSON Lines: a header line, then one record per turn), up to the first line
    that is not a whole record (a write torn by a crash) or not the next turn."""
    records: list[TurnRecord] = []
    for line in Path(path).read_text(encoding="utf-8").splitlines()[1:]:
        try:
            record = TurnRecord.model_validate_json(line)
        except ValidationError:
            break
        if record.turn != len(records) + 1:
            break
        records.append(record)
    return records


@task(name=HUMAN_TASK)
def virtualcrime_human(records_file: str, spec: str) -> Task:
    """The log of one human game: ``records_file``'s turns, played as ``spec`` (a ``RunSpec`` as JSON) says.

    Args:
        records_file: The game's turn file (header line, then one TurnRecord per line).
        spec: The game's run spec as JSON: task, seed, limits, role models (the Attacker is ``human/<player>``),
            allowance, digests and the player's origin (name, game id, start, whether it was abandoned).
    """
    run = RunSpec.model_validate_json(spec)
    if run.human is None:
        raise ValueError("a human game's spec names its player (spec.human)")
    scenario = get_task(run.task_id)
    base = sample_for(scenario)
    sample = Sample(
        id=scenario.id,
        input=base.input,
        metadata={
            **(base.metadata or {}),
            "player": run.human.player,
            "game_id": run.human.game_id,
            "seed": run.seed,
            "game_started": run.human.started,
        },
    )
    records = read_records(Path(records_file))
    return Task(
        dataset=MemoryDataset([sample], name=HUMAN_TASK),
        solver=store_human_game(records, run),
        scorer=run_outcome(),
        config=GenerateConfig(max_retries=1, timeout=30),
        model_roles={"judge": "virtualcrime/rules", "world_manager": "virtualcrime/rules"},
    )


@solver
def store_human_game(records: list[TurnRecord], spec: RunSpec) -> Solver:
    """Replay the game's records through the engine and store them, with the spec and the result, like any run."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        scenario = get_task(spec.task_id)
        game = await restore(scenario.initial_state(), recorded_roles(records), spec.seed, records, spec.limits)
        ended = game.termination()
        abandoned = spec.human is not None and spec.human.abandoned
        if ended is None:
            if not abandoned:
                raise ValueError(f"the game has not ended after {len(records)} turns and was not abandoned")
            ended = (RunStatus.ABANDONED, f"abandoned by the player after {len(records)} turns")
        result = game.result(*ended)
        with suspend_store_events():
            start_run(spec)
            for record in game.records:
                append_turn(record)
                transcript().info(render_turn(record), source=f"turn {record.turn}")
            store_result(result)
        return complete_sample(state, result)

    return solve


class HumanGame(BaseModel):
    """Everything a human game's log is written from: its turn file and its spec."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    records_file: Path
    spec: RunSpec

    @property
    def game_id(self) -> str:
        assert self.spec.human is not None
        return self.spec.human.game_id


def existing_game_log(log_dir: Path, game_id: str) -> Path | None:
    """A log already written for the web game ``game_id`` in ``log_dir`` (e.g. just before a crash), if any."""
    from inspect_ai.log import read_eval_log_sample_summaries

    for path in sorted(Path(log_dir).glob(f"*{HUMAN_TASK.replace('_', '-')}*.eval")):
        try:
            summaries = read_eval_log_sample_summaries(str(path))
        except Exception:  # unreadable or unfinished: not this game's finished log
            continue
        if any((s.metadata or {}).get("game_id") == game_id for s in summaries):
            return path
    return None


def write_human_log(game: HumanGame, log_dir: Path) -> Path:
    """Write one finished or abandoned human game as a log in ``log_dir`` (once: a log already there for the game
    is returned instead); returns the log's path.

    Blocking (it runs an Inspect eval): call it from a worker thread inside a server.
    """
    existing = existing_game_log(log_dir, game.game_id)
    if existing is not None:
        return existing
    game_task = virtualcrime_human(records_file=str(game.records_file), spec=game.spec.model_dump_json())
    roles = game.spec.roles
    [log] = inspect_eval(
        game_task,
        model=roles.attacker,
        model_roles={"judge": roles.judge, "world_manager": roles.world_manager},
        log_dir=str(log_dir),
        display="none",
        max_retries=1,
        timeout=30,
        fail_on_error=True,
    )
    if log.status != "success":
        message = log.error.message if log.error else log.status
        raise RuntimeError(f"writing the log of game {game.game_id} failed: {message}")
    return Path(log.location)
