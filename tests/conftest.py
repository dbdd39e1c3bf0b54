"""Shared fixtures: offline roles and a helper to play a whole run without Inspect."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, ModelUsage
from inspect_ai.tool import ToolChoice, ToolInfo

from virtualcrime.engine import EngineConfig, Game, Roles, RunResult
from virtualcrime.roles.rules import RulesJudge, RulesWorldManager
from virtualcrime.roles.scripted import ScriptedAttacker
from virtualcrime.scenarios import get_task

MATRIX_TASKS = ["restaurant/robbery", "vault/theft", "university/arson", "prison/riot", "ship/hijacking"]
MATRIX_ATTACKERS = ["virtualcrime/scripted", "virtualcrime/random"]
MATRIX_JUDGES = ["virtualcrime/rules", "virtualcrime/rules-strict"]


def offline_roles() -> Roles:
    return Roles(ScriptedAttacker(), RulesJudge(), RulesWorldManager())


def play(task_id: str, seed: int, config: EngineConfig | None = None) -> tuple[Game, RunResult]:
    """Play one run of ``task_id`` with the offline roles; return the finished game and its result."""
    game = Game(get_task(task_id).initial_state(), offline_roles(), seed, config)
    result = asyncio.run(game.run())
    return game, result


REQUIRE_LOCAL = "VIRTUALCRIME_REQUIRE_LOCAL"  # CI sets it: there the local extra must be installed and working


@pytest.fixture(scope="session")
def local_model() -> None:
    """For tests that run ``virtualcrime/local``: skip when the local extra is not installed (fail under
    ``VIRTUALCRIME_REQUIRE_LOCAL``); fail, naming the library, version and signal, when the model crashes or
    does not answer. The probe runs the model in its worker process, never in this one, so a native crash fails
    the tests that need the model and the rest of the suite runs on."""
    from virtualcrime.harness.local_model import LocalModelCrashed, LocalModelUnavailable, probe

    try:
        probe()
    except LocalModelUnavailable as err:
        if os.environ.get(REQUIRE_LOCAL):
            pytest.fail(f"{REQUIRE_LOCAL} is set but {err}", pytrace=False)
        pytest.skip(str(err))
    except LocalModelCrashed as err:
        pytest.fail(f"the local model does not work: {err}", pytrace=False)


@pytest.fixture
def robbery_state():  # type: ignore[no-untyped-def]
    return get_task("restaurant/robbery").initial_state()


@pytest.fixture(scope="session")
def matrix_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Offline logs: 2 attackers × 2 judges on 5 tasks × 2 seeds (one log per combination)."""
    from inspect_ai import eval as inspect_eval

    from virtualcrime.harness.task import virtualcrime

    folder = tmp_path_factory.mktemp("matrix_logs")
    for attacker in MATRIX_ATTACKERS:
        for judge in MATRIX_JUDGES:
            [log] = inspect_eval(
                virtualcrime(tasks=MATRIX_TASKS, seeds=2, max_turns=20),
                model=attacker,
                model_roles={"judge": judge, "world_manager": "virtualcrime/rules"},
                log_dir=str(folder),
                display="none",
            )
            assert log.status == "success"
    return folder


class ScriptedModelAPI(ModelAPI):
    """A language model for tests: ``reply(prompt)`` decides the text from the whole prompt (system and user
    messages joined); every call reports ``USAGE`` tokens.

    Subclass it, implement ``reply`` and register the subclass with ``@modelapi(name=...)``.
    """

    USAGE = (10, 10)

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, **model_args: Any) -> None:  # fmt: skip
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())

    def reply(self, prompt: str) -> str:
        raise NotImplementedError

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        # the whole prompt, system message included, as the model sees it
        prompt = "\n\n".join(message.text for message in input)
        output = ModelOutput.from_content(model=self.model_name, content=self.reply(prompt))
        tokens_in, tokens_out = self.USAGE
        output.usage = ModelUsage(input_tokens=tokens_in, output_tokens=tokens_out, total_tokens=tokens_in + tokens_out)
        return output
