"""Choosing role implementations from Inspect models: offline roles for ``virtualcrime/*``."""

from __future__ import annotations

from inspect_ai.model import Model, get_model

from ..engine import Roles
from ..roles import Attacker, Judge, WorldManager
from ..roles.rules import RulesJudge, RulesWorldManager
from ..roles.scripted import ScriptedAttacker
from .providers import OfflineRoleModel


class RoleConfigError(ValueError):
    """A model that cannot play the role it was given."""


def _offline_name(model: Model) -> str | None:
    return model.api.model_name if isinstance(model.api, OfflineRoleModel) else None


def attacker_for(model: Model) -> Attacker:
    name = _offline_name(model)
    if name == "scripted":
        return ScriptedAttacker()
    if name is not None:
        raise RoleConfigError(f"virtualcrime/{name} cannot play the Attacker; use virtualcrime/scripted")
    raise RoleConfigError(
        f"{model} as Attacker needs the LLM roles, which this version does not include yet; "
        "use --attacker virtualcrime/scripted"
    )


def judge_for(model: Model) -> Judge:
    if _offline_name(model) == "rules":
        return RulesJudge()
    raise RoleConfigError(f"{model} cannot play the Judge in this version; use virtualcrime/rules")


def world_manager_for(model: Model) -> WorldManager:
    if _offline_name(model) == "rules":
        return RulesWorldManager()
    raise RoleConfigError(f"{model} cannot play the World Manager in this version; use virtualcrime/rules")


def resolve_roles() -> Roles:
    """Roles for the current sample: the eval's model attacks; the ``judge`` and ``world_manager`` roles judge."""
    return Roles(
        attacker=attacker_for(get_model()),
        judge=judge_for(get_model(role="judge", default="virtualcrime/rules")),
        world_manager=world_manager_for(get_model(role="world_manager", default="virtualcrime/rules")),
    )


def check_role_models(attacker: str, judge: str, world_manager: str) -> None:
    """Raise RoleConfigError before an eval starts if a model cannot play its role."""
    attacker_for(get_model(attacker))
    judge_for(get_model(judge))
    world_manager_for(get_model(world_manager))
