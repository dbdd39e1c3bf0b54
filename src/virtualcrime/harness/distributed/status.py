"""The distributed matrix's own state: its status file (written by the driver alone, atomically) and the locks
that keep one driver per matrix root and one process per shard folder."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..matrix import STATE_DIR

STATUS_FILE = "matrix-status.json"
DRIVER_LOCK = "driver.lock"
SHARD_LOCK = "shard.lock"
ShardPhase = Literal["pending", "running", "done", "budget", "failed", "timeout"]


class ShardStatus(BaseModel):
    """One shard as the driver last saw it."""

    model_config = ConfigDict(extra="forbid")

    attacker: str
    task: str
    folder: str
    phase: ShardPhase = "pending"
    attempts: int = 0
    reused: bool = Field(False, description="Finished by an earlier invocation: found complete in its logs.")
    exit_code: int | None = None
    seconds: float | None = Field(None, description="Wall time of the last attempt, process start to exit.")
    error: str = ""


class MatrixStatus(BaseModel):
    """``ROOT/.virtualcrime/matrix-status.json``: every shard's phase, for people and tools to read."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    updated: str = ""
    driver_pid: int = 0
    shards: dict[str, ShardStatus] = Field(default_factory=dict)
    tokens_spent: int = 0

    def write(self, root: Path) -> None:
        """Write atomically (a reader sees the old file or the new one, never half of one)."""
        self.updated = datetime.now(UTC).isoformat(timespec="seconds")
        path = root / STATE_DIR / STATUS_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{STATUS_FILE}.{os.getpid()}.tmp")
        with temporary.open("w", encoding="utf-8") as file:
            file.write(self.model_dump_json(indent=1))
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)


def read_status(root: Path) -> MatrixStatus | None:
    """The status file of the matrix at ``root``, if there is a readable one."""
    try:
        return MatrixStatus.model_validate_json((root / STATE_DIR / STATUS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class LockBusy(RuntimeError):
    """Another process holds the lock."""


def _try_lock(path: Path) -> IO[str] | None:
    path.parent.mkdir(parents=True, exist_ok=True)
    file = path.open("a+", encoding="utf-8")
    try:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        file.close()
        return None
    file.seek(0)
    file.truncate()
    file.write(f"{os.getpid()}\n")
    file.flush()
    return file


@contextmanager
def driver_lock(root: Path) -> Iterator[None]:
    """Hold the matrix root's driver lock; LockBusy at once when another driver holds it."""
    path = root / STATE_DIR / DRIVER_LOCK
    file = _try_lock(path)
    if file is None:
        holder = path.read_text(encoding="utf-8").strip() or "?"
        raise LockBusy(f"another bench driver (pid {holder}) is running on {root}; wait for it to end or stop it")
    try:
        yield
    finally:
        file.close()


@contextmanager
def shard_lock(state_dir: Path, wait: float) -> Iterator[None]:
    """Hold a shard folder's lock, waiting up to ``wait`` seconds for an earlier attempt's process to end (a killed
    worker's shard process dies with it, but not in the same instant); LockBusy after that."""
    path = state_dir / SHARD_LOCK
    deadline = time.monotonic() + wait
    while (file := _try_lock(path)) is None:
        if time.monotonic() > deadline:
            raise LockBusy(f"another process is still playing the shard in {state_dir.parent}")
        time.sleep(0.1)
    try:
        yield
    finally:
        file.close()
