"""The JSON schemas each call asks the provider to follow (where it supports structured output)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from ...world.ops import OPERATION_ADAPTER
from ..types import Action, PlanUpdate, Verdict


class _StageReply(BaseModel):
    ops: list[dict[str, Any]] = Field(description="World operations, each an object with an 'op' field.")
    note: str = ""


PLAN_SCHEMA: dict[str, Any] = PlanUpdate.model_json_schema()
ACTION_SCHEMA: dict[str, Any] = Action.model_json_schema()
VERDICT_SCHEMA: dict[str, Any] = Verdict.model_json_schema()
STAGE_SCHEMA: dict[str, Any] = _StageReply.model_json_schema() | {
    "$defs": {"operation": OPERATION_ADAPTER.json_schema()}
}


def action_schema(members: list[str], ids: list[str]) -> dict[str, Any]:
    """This turn's action schema: the actor must be a team member and the target / item a known id (or empty).

    Providers with constrained decoding (llama.cpp grammars, OpenAI strict schemas) then cannot name anything
    else. The verb and the description are the model's own free text (bounded in length): no list of verbs is
    offered, here or in the prompt.
    """
    schema: dict[str, Any] = json.loads(json.dumps(ACTION_SCHEMA))
    properties = schema["properties"]
    properties["actor"]["enum"] = members
    properties["target"]["enum"] = ["", *ids]
    properties["item"]["enum"] = ["", *ids]
    schema["required"] = ["verb", "description", "actor", "target", "minutes"]
    return schema
