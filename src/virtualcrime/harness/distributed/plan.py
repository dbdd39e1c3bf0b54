"""The shards of a distributed matrix and how they share provider keys: plain, versioned data (no model objects,
no keys: every node reads its keys from its own environment).

A shard is one attacker × one task with the matrix's seeds as Inspect epochs: one Inspect task, one log, its own
folder ``ROOT/shards/<attacker>/<task>/``, played by one ``eval_set`` in its own process. A providers file says,
per provider key (a set of model-name prefixes), how many runs and calls may be under way at once over the whole
matrix and, optionally, the requests and tokens per minute. Shards are admitted per key; each admitted shard gets
its key's budget divided by the shards that can run on the key, so the sum over the running shards stays within
it (see ``Admission``).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..budget import Pace
from ..matrix import MatrixSpec

SHARDS_DIR = "shards"
ROLES = ("attacker", "judge", "world_manager")


class ProviderKey(BaseModel):
    """One provider key (or local server): the models that use it and its limits over the whole matrix."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    models: list[str] = Field(min_length=1, description="Model-name prefixes served through this key.")
    runs: int = Field(ge=1, description="Runs at once over the key.")
    connections: int = Field(ge=1, description="Model calls in flight at once over the key.")
    shards: int | None = Field(None, ge=1, description="Shards at once on the key (default: runs // seeds).")
    requests_per_minute: int | None = Field(None, ge=1)
    tokens_per_minute: int | None = Field(None, ge=1)

    def serves(self, model: str) -> int:
        """The length of the longest prefix of ``model`` this key serves (0: not this key's)."""
        return max((len(p) for p in self.models if model.startswith(p)), default=0)


class ProvidersFile(BaseModel):
    """``--providers FILE``: the keys of a distributed matrix (YAML)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    keys: list[ProviderKey] = Field(default_factory=list)

    def key_for(self, model: str) -> ProviderKey | None:
        """The key whose prefix matches ``model`` longest; None for a model on no key (offline roles)."""
        best = max(self.keys, key=lambda k: k.serves(model), default=None)
        return best if best is not None and best.serves(model) else None


def load_providers(path: Path | None) -> ProvidersFile:
    """The providers file at ``path`` (an empty one without a path); ValueError in one line when it is bad."""
    if path is None:
        return ProvidersFile()
    try:
        return ProvidersFile.model_validate(yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {})
    except (OSError, yaml.YAMLError) as err:
        raise ValueError(f"cannot read the providers file {path}: {err}") from err
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ValueError(f"bad providers file {path}: {where}: {first['msg']}") from err


class ShardSpec(BaseModel):
    """What a shard process plays: the one-attacker, one-task matrix in the shard's folder, with its share of its
    keys' limits, and where the matrix-wide budget's answer is relayed to it. Written to the shard's folder as
    ``.virtualcrime/shard.json``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    shard_id: str
    matrix: MatrixSpec
    keys: tuple[str, ...] = ()
    pace: Pace | None = None

    @property
    def folder(self) -> Path:
        return self.matrix.log_dir

    @property
    def state_dir(self) -> Path:
        return self.matrix.state_dir

    @property
    def spec_path(self) -> Path:
        return self.state_dir / "shard.json"

    @property
    def stop_file(self) -> Path:
        return self.state_dir / "budget-stop"

    def write(self) -> Path:
        """Write the spec into the shard's folder (atomically); returns its path."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        temporary = self.spec_path.with_suffix(".tmp")
        temporary.write_text(self.model_dump_json(indent=1), encoding="utf-8")
        temporary.replace(self.spec_path)
        return self.spec_path


def slug(name: str) -> str:
    """A model or task name as one folder name: ``openai/gpt-4.1`` → ``openai__gpt-4.1``."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", name.replace("/", "__")) or "_"


def plan_shards(spec: MatrixSpec, task_ids: list[str]) -> list[ShardSpec]:
    """The matrix's shards, interleaved across attackers (task by task, each attacker in turn), without limits yet;
    budgets are the matrix's, kept by the spend actor, so no shard has its own."""
    shards = []
    for task in task_ids:
        for attacker in spec.attackers:
            folder = spec.log_dir / SHARDS_DIR / slug(attacker) / slug(task)
            matrix = replace(spec, attackers=(attacker,), tasks=(task,), log_dir=folder, max_tokens=None,
                             max_cost=None, prices=None)  # fmt: skip
            shards.append(ShardSpec(shard_id=f"{slug(attacker)}/{slug(task)}", matrix=matrix))
    return shards


def shard_models(shard: ShardSpec) -> dict[str, str]:
    """Role → model of a shard."""
    return {"attacker": shard.matrix.attackers[0], "judge": shard.matrix.judge,
            "world_manager": shard.matrix.world_manager}  # fmt: skip


class Admission:
    """Which shard may start next, and with what share of its keys.

    A key admits at most ``slots`` shards at once: its ``shards`` (default ``runs // seeds``, so a shard can play
    all its seeds at once), at most its runs and at most its connections over the roles a shard plays on it. A
    shard admitted while ``n`` unfinished shards use the key gets ``1 / min(slots, n)`` of the key's runs,
    connections and rates. Unfinished shards only become fewer, and at most ``min(slots, n)`` run at any time,
    so the shares of the shards running at once never add up to more than the key's budget.
    """

    def __init__(self, providers: ProvidersFile, shards: list[ShardSpec]) -> None:
        self.providers = providers
        self.roles_on: dict[str, dict[str, list[str]]] = {}  # shard → key → roles played on it
        for shard in shards:
            on: dict[str, list[str]] = {}
            for role, model in shard_models(shard).items():
                key = providers.key_for(model)
                if key is not None:
                    on.setdefault(key.name, []).append(role)
            self.roles_on[shard.shard_id] = on
        self.keys = {key.name: key for key in providers.keys}
        self.unfinished = {name: 0 for name in self.keys}
        for on in self.roles_on.values():
            for name in on:
                self.unfinished[name] += 1
        seeds = shards[0].matrix.seeds if shards else 1
        self.slots = {}
        for name, key in self.keys.items():
            widest = max((len(on[name]) for on in self.roles_on.values() if name in on), default=1)
            self.slots[name] = max(1, min(key.shards or max(1, key.runs // seeds), key.runs,
                                          key.connections // widest))  # fmt: skip
        self.running = {name: 0 for name in self.keys}

    def admissible(self, shard: ShardSpec) -> bool:
        """Whether every key the shard uses has a free slot."""
        return all(self.running[name] < self.slots[name] for name in self.roles_on[shard.shard_id])

    def admit(self, shard: ShardSpec) -> ShardSpec:
        """Take the shard's slots; return it with its share of each key's limits (and the user's limits where they
        are lower)."""
        matrix = shard.matrix
        limits = {"attacker": matrix.attacker_connections, "judge": matrix.judge_connections,
                  "world_manager": matrix.world_manager_connections}  # fmt: skip
        samples, rpm, tpm = matrix.max_samples, None, None
        for name, roles in self.roles_on[shard.shard_id].items():
            key = self.keys[name]
            divisor = max(1, min(self.slots[name], self.unfinished[name]))
            share = max(1, key.connections // divisor // len(roles))
            for role in roles:
                limits[role] = min(share, limits[role] or share)
            samples = min(max(1, key.runs // divisor), samples or key.runs)
            if key.requests_per_minute is not None:
                rpm = min(max(1, key.requests_per_minute // divisor), rpm or key.requests_per_minute)
            if key.tokens_per_minute is not None:
                tpm = min(max(1, key.tokens_per_minute // divisor), tpm or key.tokens_per_minute)
            self.running[name] += 1
        admitted = replace(matrix, max_samples=samples, attacker_connections=limits["attacker"],
                           judge_connections=limits["judge"],
                           world_manager_connections=limits["world_manager"])  # fmt: skip
        pace = Pace(rpm, tpm) if rpm is not None or tpm is not None else None
        return shard.model_copy(update={"matrix": admitted, "pace": pace,
                                        "keys": tuple(self.roles_on[shard.shard_id])})  # fmt: skip

    def release(self, shard: ShardSpec, finished: bool) -> None:
        """The shard stopped; ``finished`` when it will not run again."""
        for name in self.roles_on[shard.shard_id]:
            self.running[name] -= 1
            if finished:
                self.unfinished[name] -= 1
