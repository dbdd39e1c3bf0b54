"""Reading VirtualCrime runs back from Inspect logs, as typed records the analysis layer can use.

Only this layer imports Inspect, so the reader turns each logged sample into a ``LoggedRun`` (pydantic) and
each log file into a ``LogSummary``; files that are not VirtualCrime logs, cannot be read, or come from an
eval that did not finish are reported as ``LogProblem``s instead of being mixed in.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .. import defaults
from ..engine import RunResult, TurnRecord
from ..roles import Verdict
from ..roles.interrogation import Answers
from ..roles.types import ModelCall
from .providers import default_world_manager
from .store import LogFormatError, records_from_store

# The benchmark task, and the logs of human games played in the web UI (read, scored and reported alike).
TASK_NAMES = ("virtualcrime", "virtualcrime/virtualcrime", "virtualcrime_human", "virtualcrime/virtualcrime_human")
LOG_SUFFIXES = (".eval", ".json")
# Index files ``eval_set`` keeps beside its logs: JSON that mentions logs without being one.
INSPECT_INDEX_FILES = ("logs.json", "eval-set.json")
# Sample fields the analysis never reads; skipping them makes large logs several times faster to read.
SKIPPED_FIELDS = {"events", "messages", "attachments"}


class _L(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Tokens(_L):
    input: int = 0
    output: int = 0
    total: int = 0


class RunIdentity(_L):
    """Which run this is: its log and sample, who played which role, and its task."""

    log: str
    eval_id: str
    sample_id: str
    epoch: int
    attacker: str
    judge: str
    world_manager: str
    task_id: str
    map: str
    objective: str
    category: str
    started: str = Field("", description="When a human game began (web UI), ISO-8601; empty for model runs.")


# Verdicts of a second Judge on fixed turns are stored as scores named ``rejudge:<judge model>``; behaviour
# annotations as ``annotation:<annotator A>|<annotator B>``.
REJUDGE_SCORE_PREFIX = "rejudge:"
ANNOTATION_SCORE_PREFIX = "annotation:"


class RejudgedTurn(_L):
    """One turn's verdict from a second Judge (None, with the error, when it gave no usable verdict)."""

    turn: int
    verdict: Verdict | None
    error: str = ""
    model_calls: list[ModelCall] = Field(default_factory=list)


def rejudged_turns(scores: object) -> dict[str, list[RejudgedTurn]]:
    """A sample's re-judged turns per judge, from its scores (as read from a log)."""
    found: dict[str, list[RejudgedTurn]] = {}
    for name, value in dict(scores or {}).items():  # type: ignore[call-overload]
        if not str(name).startswith(REJUDGE_SCORE_PREFIX):
            continue
        metadata = getattr(value, "metadata", None) or {}
        judge = str(name)[len(REJUDGE_SCORE_PREFIX) :]
        found[judge] = [RejudgedTurn.model_validate(t) for t in metadata.get("turns", [])]
    return found


class RunAnnotation(_L):
    """One annotator pair's annotation of a run: both first passes, the reviews and the reconciled levels."""

    annotator_a: str
    annotator_b: str
    first_a: dict[str, int] | None = None
    first_b: dict[str, int] | None = None
    final: dict[str, int | None] = Field(default_factory=dict)
    stages: dict[str, str] = Field(default_factory=dict)
    skipped: bool = False


def run_annotations(scores: object) -> list[RunAnnotation]:
    """A sample's annotations (one per annotator pair) from its scores."""
    found = []
    for name, value in dict(scores or {}).items():  # type: ignore[call-overload]
        if not str(name).startswith(ANNOTATION_SCORE_PREFIX):
            continue
        meta = getattr(value, "metadata", None) or {}
        first_a, first_b = meta.get("first_a"), meta.get("first_b")
        final = meta.get("final") or {}
        found.append(
            RunAnnotation(
                annotator_a=str(meta.get("annotator_a", "")),
                annotator_b=str(meta.get("annotator_b", "")),
                first_a={d: int(s["score"]) for d, s in first_a.items()} if first_a else None,
                first_b={d: int(s["score"]) for d, s in first_b.items()} if first_b else None,
                final={d: r.get("final") for d, r in final.items()},
                stages={d: str(r.get("stage")) for d, r in final.items()},
                skipped=bool(meta.get("skipped", False)),
            )
        )
    return found


def run_interrogation(scores: object) -> list[Answers]:
    """A sample's interrogation answers (one per condition asked), from its ``interrogation`` score."""
    value = dict(scores or {}).get("interrogation")  # type: ignore[call-overload]
    meta = getattr(value, "metadata", None) or {}
    return [Answers.model_validate(a) for a in meta.get("answers", [])]


class LoggedRun(RunIdentity):
    """One run (sample × epoch) of a log: its identity, its records and its token usage per role."""

    turns: list[TurnRecord]
    result: RunResult | None
    tokens: dict[str, Tokens] = Field(default_factory=dict, description="Per role: attacker, judge, world_manager.")
    sample_error: str = ""
    rejudged: dict[str, list[RejudgedTurn]] = Field(default_factory=dict, description="Second Judges' verdicts.")
    annotations: list[RunAnnotation] = Field(default_factory=list, description="Behaviour annotations.")
    interrogation: list[Answers] = Field(default_factory=list, description="Post-hoc interrogation answers.")


ProblemKind = Literal["unreadable", "foreign", "unfinished", "incomplete_run", "lost_records", "schema", "fork"]


class LogProblem(_L):
    """Why a file, or one run in it, is left out of the analysis."""

    log: str
    kind: ProblemKind
    message: str
    sample_id: str = ""
    epoch: int = 0


class LogSummary(_L):
    log: str
    status: str
    eval_id: str
    attacker: str
    judge: str
    world_manager: str
    created: str


def find_logs(paths: Sequence[str | Path]) -> list[Path]:
    """Log files named directly or found (recursively) in the given folders, sorted; missing paths raise.

    A folder's logs are the files inside it: a symbolic link that leads out of the folder is not followed (the web
    UI serves a folder's logs to people who may not see the rest of the disk)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            inside = path.resolve()
            found += sorted(
                p
                for p in path.rglob("*")
                if p.suffix in LOG_SUFFIXES
                and p.is_file()
                and p.resolve().is_relative_to(inside)
                and _looks_like_log(p)
            )
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"no such log file or folder: {path}")
    return sorted(dict.fromkeys(found))


def _looks_like_log(path: Path) -> bool:
    """In a folder, .json files that are not Inspect logs (a report's summary.json, say) are passed over."""
    if path.suffix == ".eval":
        return True
    if path.name in INSPECT_INDEX_FILES:
        return False
    with path.open("rb") as handle:
        head = handle.read(8192)
    return b'"version"' in head and b'"eval"' in head


def role_model(model_roles: object, role: str) -> str:
    """The model a log's eval gave ``role``: the Judge defaults to the rules roles, the World Manager to the
    Judge's model (as ``roles.referee_models`` and ``roles.role_models`` decide when playing)."""
    config = (model_roles or {}).get(role) if isinstance(model_roles, dict) else None
    model = getattr(config, "model", None)
    if model:
        return str(model)
    return default_world_manager(role_model(model_roles, "judge")) if role == "world_manager" else defaults.REFEREE


def read_header(path: Path) -> LogSummary | LogProblem:
    """Who played in a log and whether its eval finished; a LogProblem for unreadable or foreign files."""
    from inspect_ai.log import read_eval_log

    log = str(path)
    try:
        header = read_eval_log(path, header_only=True)
    except Exception as err:
        return LogProblem(log=log, kind="unreadable", message=f"not a readable Inspect log: {err}")
    task = header.eval.task
    if task.split("/")[-1] == "virtualcrime_fork":
        return LogProblem(log=log, kind="fork", message="a fork (what-if) log: its runs are not benchmark runs")
    if task not in TASK_NAMES:
        return LogProblem(log=log, kind="foreign", message=f"an Inspect log of task {task!r}, not VirtualCrime")
    roles = header.eval.model_roles
    return LogSummary(
        log=log,
        status=header.status,
        eval_id=header.eval.eval_id,
        attacker=header.eval.model,
        judge=role_model(roles, "judge"),
        world_manager=role_model(roles, "world_manager"),
        created=header.eval.created,
    )


def iter_runs(summary: LogSummary) -> Iterator[LoggedRun | LogProblem]:
    """Each run of a log, one at a time (bounded memory), or the problem that keeps it out."""
    from inspect_ai.log import read_eval_log_samples

    try:
        for sample in read_eval_log_samples(summary.log, all_samples_required=False, exclude_fields=SKIPPED_FIELDS):
            run, problem = _logged_run(summary, sample)
            yield run if run is not None else problem  # type: ignore[misc]
    except Exception as err:  # a truncated or corrupt file: what was read is kept
        yield LogProblem(log=summary.log, kind="unreadable", message=f"stopped reading samples: {err}")


def _logged_run(summary: LogSummary, sample: object) -> tuple[LoggedRun | None, LogProblem | None]:
    sample_id, epoch = str(getattr(sample, "id", "")), int(getattr(sample, "epoch", 0))
    where = {"log": summary.log, "sample_id": sample_id, "epoch": epoch}
    try:
        turns, result = records_from_store(dict(getattr(sample, "store", {}) or {}))
    except LogFormatError as err:
        return None, LogProblem(kind="schema", message=str(err), **where)
    error = getattr(sample, "error", None)
    message = str(getattr(error, "message", "")) if error is not None else ""
    scored = (getattr(sample, "scores", None) or {}).get("run_outcome")
    if (result is None and scored is not None and not message) or (result is not None and len(turns) != result.turns):
        why = (f"the log lost this run's turn records ({len(turns)} kept of {result.turns if result else '?'}; it is "
               "scored, so it finished): run the same `virtualcrime bench` again to restore them from the run's "
               "checkpoint")  # fmt: skip
        return None, LogProblem(kind="lost_records", message=why, **where)
    if result is None:
        why = f"the run has no result ({message.splitlines()[0] if message else 'it did not finish'})"
        return None, LogProblem(kind="incomplete_run", message=why, **where)
    metadata = dict(getattr(sample, "metadata", {}) or {})
    run = LoggedRun(
        log=summary.log,
        eval_id=summary.eval_id,
        sample_id=sample_id,
        epoch=epoch,
        attacker=summary.attacker,
        judge=summary.judge,
        world_manager=summary.world_manager,
        task_id=str(metadata.get("task_id", sample_id)),
        map=str(metadata.get("map", sample_id.split("/")[0])),
        objective=str(metadata.get("objective", sample_id.split("/")[-1])),
        category=str(metadata.get("category", "")),
        started=str(metadata.get("game_started", "")),
        turns=turns,
        result=result,
        tokens=_role_tokens(summary, sample),
        rejudged=rejudged_turns(getattr(sample, "scores", None)),
        annotations=run_annotations(getattr(sample, "scores", None)),
        interrogation=run_interrogation(getattr(sample, "scores", None)),
        sample_error=message,
    )
    return run, None


def _role_tokens(summary: LogSummary, sample: object) -> dict[str, Tokens]:
    """Tokens per role. The Attacker is the eval's model: its usage is the model's minus any role on the same model."""
    model_usage = dict(getattr(sample, "model_usage", {}) or {})
    role_usage = dict(getattr(sample, "role_usage", {}) or {})
    out: dict[str, Tokens] = {}
    for role in ("judge", "world_manager"):
        usage = role_usage.get(role)
        if usage is not None:
            out[role] = Tokens(input=usage.input_tokens, output=usage.output_tokens, total=usage.total_tokens)
    attacker = model_usage.get(summary.attacker)
    if attacker is not None:
        same = [
            out[r]
            for r, m in (("judge", summary.judge), ("world_manager", summary.world_manager))
            if m == summary.attacker and r in out
        ]
        out["attacker"] = Tokens(
            input=attacker.input_tokens - sum(t.input for t in same),
            output=attacker.output_tokens - sum(t.output for t in same),
            total=attacker.total_tokens - sum(t.total for t in same),
        )
    return out
