"""What ``virtualcrime serve`` was started with."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .. import defaults

TOKEN_ENV = "VIRTUALCRIME_TOKEN"
DEFAULT_ROLE = defaults.REFEREE


class ServeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    judge: str = DEFAULT_ROLE
    world_manager: str = DEFAULT_ROLE
    log_dir: Path = Path("logs")
    token: str | None = Field(
        None,
        min_length=16,
        pattern=r"^[A-Za-z0-9._~+/=-]+$",
        description="Required on every request when set (always set off loopback); at least 16 characters.",
    )
    max_turns: int = Field(defaults.MAX_TURNS, ge=1, le=1000)
    stall_turns: int = Field(defaults.STALL_TURNS, ge=1, le=1000)
    play_seed: int | None = Field(
        None, ge=0, description="RNG seed of every human game (default: a fresh random seed per game, recorded)."
    )
    review_seed: int = 0
    review_share: float = Field(0.1, ge=0.0, le=1.0, description="Share of other judged turns sampled for review.")
    timeout: int = Field(defaults.CALL_TIMEOUT, ge=1, description="Seconds per model call attempt of the referees.")
    max_retries: int = Field(defaults.MAX_RETRIES, ge=0)
    max_attempts: int = Field(defaults.MAX_ATTEMPTS, ge=1)
    structured_output: bool = True

    @model_validator(mode="before")
    @classmethod
    def _world_manager_follows_the_judge(cls, data: Any) -> Any:
        """A World Manager not named is the Judge's model (the paper uses one model for both)."""
        if isinstance(data, dict) and not data.get("world_manager"):
            data = {**data, "world_manager": data.get("judge") or DEFAULT_ROLE}
        return data

    @property
    def play_dir(self) -> Path:
        """Where games in progress keep their turns (inside the log folder, beside bench's checkpoints)."""
        return self.log_dir / ".virtualcrime" / "play"


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
