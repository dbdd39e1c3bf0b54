"""Spend and progress of a benchmark matrix: tokens and estimated cost per role, budgets, run counters.

One ``BenchMonitor`` is active per process while ``virtualcrime bench`` runs (``activate``). The role ``generate``
functions report every model call's usage to it; the solver reports run starts, turns and endings, and checks
the budget at every turn boundary. Spend is appended to a ledger file in the log folder, so a resumed matrix
counts what the interrupted one already spent.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

PRICES_PATH = Path(__file__).with_name("prices.yaml")


class BudgetExhausted(RuntimeError):
    """The matrix reached its token or cost budget: runs stop at their next turn boundary, resumable."""


class Price(BaseModel):
    """US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)


def load_prices(extra: Path | None = None) -> dict[str, Price]:
    """The bundled price table, updated with a user's YAML or JSON file ``{model: {input: $, output: $}}``."""
    table = yaml.safe_load(PRICES_PATH.read_text(encoding="utf-8")) or {}
    if extra is not None:
        try:
            table.update(yaml.safe_load(Path(extra).read_text(encoding="utf-8")) or {})
        except (OSError, yaml.YAMLError) as err:
            raise ValueError(f"cannot read prices from {extra}: {err}") from err
    try:
        return {str(model): Price.model_validate(price) for model, price in table.items()}
    except ValidationError as err:
        raise ValueError(f"bad price table: {err.errors()[0]['loc']}: {err.errors()[0]['msg']}") from err


@dataclass
class RoleSpend:
    input: int = 0
    output: int = 0
    cost: float = 0.0
    priced: bool = True  # False once a call was made on a model without a price

    @property
    def tokens(self) -> int:
        return self.input + self.output


@runtime_checkable
class BudgetSource(Protocol):
    """A budget kept outside this process (a distributed matrix's spend actor, relayed through a file): asked at
    every turn boundary whether the matrix as a whole has spent its budget."""

    def exhausted(self) -> str | None:
        """Why the shared budget is spent, or None while there is budget left."""
        ...


@dataclass(frozen=True)
class StopFile:
    """A ``BudgetSource`` read from a file: the Ray task that runs a shard writes the spend actor's reason into it
    once the matrix-wide budget is spent (``harness/distributed/worker.py``); absent, there is budget left."""

    path: Path

    def exhausted(self) -> str | None:
        try:
            return self.path.read_text(encoding="utf-8").strip() or "budget reached"
        except FileNotFoundError:
            return None


@dataclass(frozen=True)
class Pace:
    """A shard's share of its key's request and token rates, kept at turn boundaries (a turn under way is never
    paused): the next turn starts once the last minute's calls and tokens are below the share."""

    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None


WINDOW_SECONDS = 60.0


@dataclass
class BenchMonitor:
    """Counters and budgets of one matrix; thread-safe (Inspect runs samples concurrently)."""

    max_tokens: int | None = None
    max_cost: float | None = None
    prices: dict[str, Price] = field(default_factory=dict)
    ledger: Path | None = None
    spend: dict[str, RoleSpend] = field(default_factory=dict)
    runs_started: int = 0
    runs_finished: int = 0
    runs_failed: int = 0
    runs_reused: int = 0  # finished by earlier invocations of the same matrix (reused from its logs)
    turns: int = 0
    in_flight: int = 0  # turns being played right now (a budget stop waits for them to finish and checkpoint)
    started_at: float = field(default_factory=time.monotonic)
    external: BudgetSource | None = None  # the matrix-wide budget of a distributed matrix's shard
    pace: Pace | None = None
    _recent: deque[tuple[float, int]] = field(default_factory=deque)  # (time, tokens) of the last minute's calls
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def load_ledger(self) -> None:
        """Count what earlier (interrupted) invocations of this matrix already spent."""
        if self.ledger is None or not self.ledger.exists():
            return
        for line in self.ledger.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
                self._add(str(entry["role"]), str(entry["model"]), int(entry["input"]), int(entry["output"]))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                continue  # a torn last line from a killed process

    def record_call(self, role: str, model: str, input_tokens: int, output_tokens: int) -> None:
        """One model call's usage (from the role's generate)."""
        with self._lock:
            self._add(role, model, input_tokens, output_tokens)
            if self.pace is not None:
                self._recent.append((time.monotonic(), input_tokens + output_tokens))
            if self.ledger is not None:
                self.ledger.parent.mkdir(parents=True, exist_ok=True)
                with self.ledger.open("a", encoding="utf-8") as file:
                    entry = {"role": role, "model": model, "input": input_tokens, "output": output_tokens}
                    file.write(json.dumps(entry) + "\n")

    def _add(self, role: str, model: str, input_tokens: int, output_tokens: int) -> None:
        spend = self.spend.setdefault(role, RoleSpend())
        spend.input += input_tokens
        spend.output += output_tokens
        price = self.prices.get(model)
        if price is None:
            spend.priced = False
        else:
            spend.cost += (input_tokens * price.input + output_tokens * price.output) / 1_000_000

    @property
    def total_tokens(self) -> int:
        return sum(s.tokens for s in self.spend.values())

    @property
    def total_cost(self) -> float:
        return sum(s.cost for s in self.spend.values())

    def exhausted(self) -> str | None:
        """Why the budget is spent, or None while there is budget left."""
        if self.max_tokens is not None and self.total_tokens >= self.max_tokens:
            return f"token budget reached: {self.total_tokens:,} of {self.max_tokens:,} tokens spent"
        if self.max_cost is not None and self.total_cost >= self.max_cost:
            return f"cost budget reached: ${self.total_cost:.4f} of ${self.max_cost:.2f} spent (estimated)"
        return self.external.exhausted() if self.external is not None else None

    def pace_wait(self) -> float:
        """Seconds until the next turn may start under ``pace`` (0 when it may start now)."""
        if self.pace is None:
            return 0.0
        with self._lock:
            now = time.monotonic()
            while self._recent and self._recent[0][0] <= now - WINDOW_SECONDS:
                self._recent.popleft()
            calls, tokens = len(self._recent), sum(t for _, t in self._recent)
            over = (self.pace.requests_per_minute is not None and calls >= self.pace.requests_per_minute) or (
                self.pace.tokens_per_minute is not None and tokens >= self.pace.tokens_per_minute
            )
            return max(0.001, self._recent[0][0] + WINDOW_SECONDS - now) if over and self._recent else 0.0

    def run_started(self) -> None:
        with self._lock:
            self.runs_started += 1

    def turn_started(self) -> None:
        with self._lock:
            self.in_flight += 1

    def turn_done(self) -> None:
        with self._lock:
            self.turns += 1
            self.in_flight -= 1

    def turn_abandoned(self) -> None:
        """A turn that raised instead of finishing (it is not counted as played)."""
        with self._lock:
            self.in_flight -= 1

    def run_ended(self, failed: bool) -> None:
        with self._lock:
            if failed:
                self.runs_failed += 1
            else:
                self.runs_finished += 1

    def status_line(self, total_runs: int) -> str:
        """``runs 12/80 done (8 earlier), 4 running, 0 failed · 35 turns/min · attacker 12.3k tok $0.04 · …``, with
        the spend against each budget that is set."""
        minutes = max(1e-9, (time.monotonic() - self.started_at) / 60)
        running = self.runs_started - self.runs_finished - self.runs_failed
        earlier = f" ({self.runs_reused} earlier)" if self.runs_reused else ""
        parts = [
            f"runs {self.runs_finished + self.runs_reused}/{total_runs} done{earlier}, {running} running, "
            f"{self.runs_failed} failed",
            f"{self.turns / minutes:.0f} turns/min",
        ]
        for role, spend in sorted(self.spend.items()):
            cost = f" ${spend.cost:.2f}" if spend.priced else " $?"
            parts.append(f"{role} {spend.tokens / 1000:.1f}k tok{cost}")
        if self.max_tokens is not None:
            parts.append(f"spent {self.total_tokens:,} of {self.max_tokens:,} tokens")
        if self.max_cost is not None:
            parts.append(f"spent ${self.total_cost:.2f} of ${self.max_cost:.2f}")
        return " · ".join(parts)


_active: BenchMonitor | None = None


def activate(monitor: BenchMonitor | None) -> None:
    """Make ``monitor`` the process's matrix monitor (None to switch it off)."""
    global _active
    _active = monitor


def active() -> BenchMonitor | None:
    """The monitor of the matrix running in this process, if any."""
    return _active


BUDGET_POLL_SECONDS = 0.05


async def check_budget() -> None:
    """At a turn boundary: raise BudgetExhausted when the active matrix has spent its budget, but only once no turn
    is in flight anywhere in the matrix. The first run to stop ends the eval and cancels the others (Inspect's
    ``fail_on_error``); waiting first means every turn already paid for finishes and reaches its checkpoint, so a
    budget stop overshoots by at most the turns that were in flight and throws none of them away. With a ``Pace``
    the turn first waits until the last minute's calls and tokens are below the shard's share of its key's rates."""
    if _active is None:
        return
    while (wait := _active.pace_wait()) > 0:
        await asyncio.sleep(min(wait, 1.0))
    if _active.exhausted() is None:
        return
    while _active.in_flight > 0:
        await asyncio.sleep(BUDGET_POLL_SECONDS)
    raise BudgetExhausted(str(_active.exhausted()))


Totals = dict[str, list[int]]  # model → [input tokens, output tokens]


def read_ledger(path: Path, offset: int, totals: Totals) -> int:
    """Add the whole lines of the spend ledger at ``path`` from byte ``offset`` on to ``totals`` (per model); returns
    the offset after the last whole line read (a line still being written is read next time)."""
    try:
        with path.open("rb") as file:
            file.seek(offset)
            data = file.read()
    except FileNotFoundError:
        return offset
    end = data.rfind(b"\n") + 1
    for line in data[:end].splitlines():
        try:
            entry = json.loads(line)
            counts = totals.setdefault(str(entry["model"]), [0, 0])
            counts[0] += int(entry["input"])
            counts[1] += int(entry["output"])
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            continue
    return offset + end


@dataclass
class MatrixSpend:
    """The spend of a whole distributed matrix: each shard's ledger totals (replaced, never added, so reporting
    twice counts once), against the matrix's token and cost budgets. Held by the named spend actor."""

    max_tokens: int | None = None
    max_cost: float | None = None
    prices: dict[str, Price] = field(default_factory=dict)
    shards: dict[str, Totals] = field(default_factory=dict)

    def report(self, shard: str, totals: Totals) -> str | None:
        """Replace ``shard``'s totals; the budget check's answer for the matrix."""
        self.shards[shard] = totals
        return self.exhausted()

    def tokens(self) -> int:
        return self._roles()["all"].tokens

    def cost(self) -> float:
        return self._roles()["all"].cost

    def exhausted(self) -> str | None:
        """Why the matrix's budget is spent, or None (the same wording as ``BenchMonitor.exhausted``)."""
        return BenchMonitor(self.max_tokens, self.max_cost, self.prices, spend=self._roles()).exhausted()

    def _roles(self) -> dict[str, RoleSpend]:
        spend = RoleSpend()
        for totals in self.shards.values():
            for model, (i, o) in totals.items():
                spend.input += i
                spend.output += o
                price = self.prices.get(model)
                spend.cost += (i * price.input + o * price.output) / 1_000_000 if price is not None else 0.0
        return {"all": spend}
