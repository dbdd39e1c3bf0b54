"""What ``virtualcrime serve`` was started with."""

from __future__ import annotations

import ipaddress
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

TOKEN_ENV = "VIRTUALCRIME_TOKEN"
DEFAULT_ROLE = "virtualcrime/rules"


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
    max_turns: int = Field(60, ge=1, le=1000)
    stall_turns: int = Field(30, ge=1, le=1000)
    play_seed: int | None = Field(
        None, ge=0, description="RNG seed of every human game (default: a fresh random seed per game, recorded)."
    )
    review_seed: int = 0
    review_share: float = Field(0.1, ge=0.0, le=1.0, description="Share of other judged turns sampled for review.")

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
