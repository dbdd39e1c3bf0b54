"""The ``virtualcrime/...`` model names, resolvable by Inspect like any model.

``virtualcrime/scripted`` and ``virtualcrime/random`` (Attackers), ``virtualcrime/rules`` (Judge, World Manager)
and ``virtualcrime/rules-strict`` (a harsher Judge) are played in-process by the solver; they have no free-text
interface, so calling ``generate`` on them directly raises an error that says so. ``virtualcrime/local`` is a real
language model (SmolLM2-135M via llama.cpp) that can play any role.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo

OFFLINE_MODELS = {
    "scripted": "the scripted Attacker",
    "random": "the random baseline Attacker",
    "rules": "the rules Judge and World Manager",
    "rules-strict": "the rules Judge with a harsher calibration (a second offline Judge)",
    "local": "SmolLM2-135M-Instruct run in-process by llama.cpp",
}
IN_PROCESS_ROLES = ("scripted", "random", "rules", "rules-strict")


def is_game_role(model: str) -> bool:
    """Whether a model name is one of the in-process game roles (no language model behind it)."""
    provider, _, name = model.partition("/")
    return provider == "virtualcrime" and name in IN_PROCESS_ROLES


class OfflineRoleModel(ModelAPI):
    """Model API for the in-process offline roles."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 - Inspect's own signature
        **model_args: Any,
    ) -> None:
        if model_name not in OFFLINE_MODELS:
            known = ", ".join(f"virtualcrime/{name}" for name in OFFLINE_MODELS)
            raise ValueError(f"unknown model virtualcrime/{model_name}; known: {known}")
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        if self.model_name == "local":
            from .local_model import local_generate

            return await local_generate(self.model_name, input, config)
        raise RuntimeError(
            f"virtualcrime/{self.model_name} is {OFFLINE_MODELS[self.model_name]}, played in-process inside "
            "the virtualcrime task; it does not answer free-text prompts"
        )


@modelapi(name="virtualcrime")
def virtualcrime_models() -> type[ModelAPI]:
    return OfflineRoleModel
