"""Reading VirtualCrime runs back from Inspect logs, as the ``runs`` types every reader uses.

Only this layer imports Inspect (and only when it reads): the reader turns each logged sample into a ``LoggedRun``
with its spec, records and post-hoc payloads, and each log file into a ``LogSummary``; files that are not
VirtualCrime logs, cannot be read, or come from an eval that did not finish are reported as ``LogProblem``s instead
of being mixed in.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import defaults
from ..engine import RunResult
from ..runs.legacy import legacy_spec
from ..runs.logged import FactsRun, LoggedRun, LogProblem, LogSummary, Tokens
from ..runs.payloads import (
    rejudged_turns,
    run_annotations,
    run_interrogation,
)
from ..runs.spec import RoleModels, RunKind, RunSpec, default_world_manager
from ..runs.store import (
    FACTS_KEY,
    RESULT_KEY,
    SCHEMA_KEY,
    SPEC_KEY,
    LogFormatError,
    fact_records_from_store,
    records_from_store,
    spec_from_store,
)
from .eval_file import EvalFile, open_eval_file

# The VirtualCrime tasks, by Inspect task name (with or without the package prefix): the benchmark, the logs of
# human games played in the web UI (read, scored and reported alike) and forks.
TASK_KINDS: dict[str, RunKind] = {"virtualcrime": "benchmark", "virtualcrime_human": "human",
                                  "virtualcrime_fork": "fork"}  # fmt: skip
LOG_SUFFIXES = (".eval", ".json")
# Index files ``eval_set`` keeps beside its logs: JSON that mentions logs without being one.
INSPECT_INDEX_FILES = ("logs.json", "eval-set.json")
# Sample fields the analysis never reads; skipping them makes large logs several times faster to read.
SKIPPED_FIELDS = {"events", "messages", "attachments"}
# How turn records are read: in full, or only for what the report's metrics need (``FactRecord``).
RecordReading = Literal["full", "facts"]


Part = tuple[int, int]  # (k, n): the k-th of n consecutive slices of a log's runs
WHOLE: Part = (0, 1)


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
    """The model a log's eval gave ``role`` (its model roles as Inspect's objects or as their JSON): the Judge
    defaults to the rules roles, the World Manager to the Judge's model (as ``roles.referee_models`` and
    ``roles.role_models`` decide when playing)."""
    config = (model_roles or {}).get(role) if isinstance(model_roles, dict) else None
    model = config.get("model") if isinstance(config, dict) else getattr(config, "model", None)
    if model:
        return str(model)
    return default_world_manager(role_model(model_roles, "judge")) if role == "world_manager" else defaults.REFEREE


def read_header(path: Path) -> LogSummary | LogProblem:
    """Who played in a log and whether its eval finished; a LogProblem for unreadable or foreign files. A finished
    .eval file is read without Inspect (``eval_file``), any other log with it."""
    log = str(path)
    direct = open_eval_file(path)
    if direct is not None:
        with direct:
            found = _summary(log, direct.header() or {})
        if found is not None:
            return found
    from inspect_ai.log import read_eval_log

    try:
        header = read_eval_log(path, header_only=True)
    except Exception as err:
        return LogProblem(log=log, kind="unreadable", message=f"not a readable Inspect log: {err}")
    return _summary(log, header.model_dump(mode="json")) or LogProblem(
        log=log, kind="unreadable", message="not a readable Inspect log: its header names no task"
    )


def _summary(log: str, header: dict[str, Any]) -> LogSummary | LogProblem | None:
    """A log's summary from its header's JSON (None when the header lacks what a summary needs)."""
    spec = header.get("eval")
    if not isinstance(spec, dict) or not isinstance(spec.get("task"), str):
        return None
    task = spec["task"]
    kind = kind_of_task(task)
    if kind == "fork":
        return LogProblem(log=log, kind="fork", message="a fork (what-if) log: its runs are not benchmark runs")
    if kind is None:
        return LogProblem(log=log, kind="foreign", message=f"an Inspect log of task {task!r}, not VirtualCrime")
    roles = spec.get("model_roles")
    try:
        return LogSummary(
            log=log,
            status=header.get("status", ""),
            eval_id=spec.get("eval_id", ""),
            attacker=spec.get("model", ""),
            judge=role_model(roles, "judge"),
            world_manager=role_model(roles, "world_manager"),
            created=spec.get("created", ""),
            kind=kind,
            task_args=dict(spec.get("task_args") or {}),
        )
    except ValidationError:
        return None


def kind_of_task(task: str) -> RunKind | None:
    """What kind of runs an eval task holds, from its name (None: not a VirtualCrime task)."""
    package, _, name = task.rpartition("/")
    return TASK_KINDS.get(name) if package in ("", "virtualcrime") else None


def score_metadata(scores: object) -> dict[str, dict[str, Any] | None]:
    """A sample's scores (as Inspect reads them) as score name → metadata, what the payload decoders take."""
    return {str(name): getattr(value, "metadata", None) for name, value in dict(scores or {}).items()}  # type: ignore[call-overload]


def run_spec(sample: object, kind: RunKind, task_args: dict[str, Any], roles: RoleModels,
             result_seed: int | None) -> RunSpec:  # fmt: skip
    """A logged run's spec: the one its store records, or (older logs) the one derived from the log's ``kind``,
    task arguments, eval roles and the result's seed. Raises LogFormatError when a recorded spec is unreadable."""
    recorded = spec_from_store(dict(getattr(sample, "store", {}) or {}))
    if recorded is not None:
        return recorded
    return legacy_spec(kind=kind, sample_id=str(getattr(sample, "id", "")), epoch=int(getattr(sample, "epoch", 1)),
                       metadata=dict(getattr(sample, "metadata", {}) or {}), task_args=task_args, roles=roles,
                       result_seed=result_seed)  # fmt: skip


def sample_spec(log: Any, sample: Any, result: RunResult | None = None) -> RunSpec:
    """The spec of one sample of a log (its ``EvalLog``, the header alone is enough, and the sample)."""
    roles = RoleModels(attacker=log.eval.model, judge=role_model(log.eval.model_roles, "judge"),
                       world_manager=role_model(log.eval.model_roles, "world_manager"))  # fmt: skip
    score = (sample.scores or {}).get("run_outcome")
    recorded = (score.metadata or {}).get("seed") if score is not None else None
    seed = result.seed if result is not None else None if recorded is None else int(recorded)
    return run_spec(sample, kind_of_task(log.eval.task) or "benchmark", dict(log.eval.task_args or {}), roles, seed)


@overload
def iter_runs(summary: LogSummary) -> Iterator[LoggedRun | LogProblem]: ...
@overload
def iter_runs(summary: LogSummary, records: Literal["full"], part: Part = ...) -> Iterator[LoggedRun | LogProblem]: ...
@overload
def iter_runs(summary: LogSummary, records: Literal["facts"], part: Part = ...) -> Iterator[FactsRun | LogProblem]: ...


def iter_runs(
    summary: LogSummary, records: RecordReading = "full", part: Part = WHOLE
) -> Iterator[LoggedRun | FactsRun | LogProblem]:
    """Each run of a log, one at a time (bounded memory), or the problem that keeps it out. ``records="facts"``
    reads each sample and turn record only for what the report's metrics need (``FactsRun``; several times faster).
    ``part=(k, n)`` reads only the k-th of n consecutive slices of the log's runs, so that several processes can
    share one big log; the n parts in order are the whole log in order."""
    try:
        for sample in _samples(summary.log, slim=records == "facts", part=part):
            run, problem = _logged_run(summary, sample, records)
            yield run if run is not None else problem  # type: ignore[misc]
    except Exception as err:  # a truncated or corrupt file: what was read is kept
        yield LogProblem(log=summary.log, kind="unreadable", message=f"stopped reading samples: {err}")


class _Slim(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _SlimScore(_Slim):
    metadata: dict[str, Any] | None = None


class _SlimUsage(_Slim):
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0


class _SlimError(_Slim):
    message: str = ""


class SlimSample(_Slim):
    """The fields of an Inspect ``EvalSample`` a ``FactsRun`` is made of, read straight from the log's JSON (its
    events, messages and attachments are skipped by the JSON parser, not built into Python objects)."""

    id: int | str
    epoch: int
    store: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    scores: dict[str, _SlimScore] | None = None
    error: _SlimError | None = None
    model_usage: dict[str, _SlimUsage] = Field(default_factory=dict)
    role_usage: dict[str, _SlimUsage] = Field(default_factory=dict)


class _LeanStore(_Slim):
    """The store keys a ``FactsRun`` reads when the run's facts are stored: not its full turn records (tens of KiB a
    turn), which the JSON parser then skips."""

    schema_version: Any = Field(None, alias=SCHEMA_KEY)
    spec: Any = Field(None, alias=SPEC_KEY)
    result: Any = Field(None, alias=RESULT_KEY)
    facts: Any = Field(None, alias=FACTS_KEY)


class _LeanSample(SlimSample):
    store: _LeanStore = Field(default_factory=_LeanStore)  # type: ignore[assignment]


def _slim_sample(raw: bytes) -> SlimSample:
    """A sample as a ``SlimSample``: its store without the full turn records when it has the run's stored facts
    (a run that ended with this version), else with them. A sample whose bytes do not name the facts key is
    parsed once, in full (an older log)."""
    if _FACTS_NAME in raw:
        lean = _LeanSample.model_validate_json(raw)
        if lean.store.facts is not None:
            store = lean.store.model_dump(by_alias=True, exclude_none=True)
            return SlimSample.model_construct(**{**dict(lean), "store": store})
    return SlimSample.model_validate_json(raw)


_FACTS_NAME = json.dumps(FACTS_KEY).encode()


def samples_without_events(log: str | Path) -> Iterator[Any]:
    """The samples of a log one at a time, without their events, messages and attachments (``SKIPPED_FIELDS``;
    store, scores and metadata are there): what deciding which runs a post-hoc command asks needs."""
    return _samples(str(log))


def _samples(log: str, slim: bool = False, part: Part = WHOLE) -> Iterator[Any]:
    """The samples of a log (without ``SKIPPED_FIELDS``), one at a time, as ``read_eval_log_samples(log,
    all_samples_required=False)`` reads them. An .eval file's zip directory is read once for all of them, not once a
    sample (which made reading a 480-run log twice as slow); ``slim``: as ``SlimSample``s; ``part``: one slice of
    them (a log this reader cannot slice, another Inspect version's or a .json log, is read whole by part 0)."""
    if slim:
        direct = open_eval_file(log)
        if direct is not None:
            with direct:
                yield from _direct_samples(direct, part)
            return
    from inspect_ai.log import read_eval_log, read_eval_log_sample_async, read_eval_log_samples

    try:
        from inspect_ai._util.async_zip import AsyncZipReader
        from inspect_ai._util.asyncfiles import AsyncFilesystem
        from inspect_ai.log._recorders.eval import _sample_filename
    except ImportError:  # another Inspect version: its own reader, slower
        own_reader = False
    else:
        own_reader = log.endswith(".eval") and not _in_event_loop()
    if not own_reader:
        if part[0] == 0:
            yield from read_eval_log_samples(log, all_samples_required=False, exclude_fields=SKIPPED_FIELDS)
        return
    header = read_eval_log(log, header_only=True)
    if header.eval.dataset.sample_ids is None:
        raise RuntimeError("This log file does not include sample_ids")
    runs = _runs_in_part(header.eval.dataset.sample_ids, header.eval.config.epochs or 1, part)
    loop = asyncio.new_event_loop()
    files = AsyncFilesystem()
    loop.run_until_complete(files.__aenter__())
    try:
        reader = AsyncZipReader(files, log)
        for sample_id, epoch in runs:
            try:
                if slim:
                    raw = loop.run_until_complete(reader.read_member_fully(_sample_filename(sample_id, epoch)))
                    yield _slim_sample(raw)
                    continue
                read = read_eval_log_sample_async(log, sample_id, epoch, exclude_fields=SKIPPED_FIELDS,
                                                  reader=reader)  # fmt: skip
                sample = loop.run_until_complete(read)
            except (IndexError, KeyError):  # not in the file (an eval that did not finish)
                continue
            yield sample
    finally:
        loop.run_until_complete(files.__aexit__(None, None, None))
        loop.close()


def _runs_in_part(sample_ids: Sequence[str | int], epochs: int, part: Part) -> list[tuple[str | int, int]]:
    """The (sample id, epoch) pairs of a log in the order its readers give them, and of those the part's slice."""
    runs = [(s, e) for s in sample_ids for e in range(1, epochs + 1)]
    index, count = part
    return runs[index * len(runs) // count : (index + 1) * len(runs) // count]


def _direct_samples(direct: EvalFile, part: Part) -> Iterator[SlimSample]:
    """The part's samples of a finished .eval file as ``SlimSample``s, in the order Inspect's reader gives them."""
    spec = (direct.header() or {}).get("eval") or {}
    sample_ids = (spec.get("dataset") or {}).get("sample_ids")
    if sample_ids is None:
        raise RuntimeError("This log file does not include sample_ids")
    epochs = (spec.get("config") or {}).get("epochs") or 1
    for sample_id, epoch in _runs_in_part(sample_ids, epochs, part):
        raw = direct.sample(sample_id, epoch)
        if raw is not None:  # not in the file: an eval that did not finish
            yield _slim_sample(raw)


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _logged_run(summary: LogSummary, sample: object, records: RecordReading = "full"
                ) -> tuple[LoggedRun | FactsRun | None, LogProblem | None]:  # fmt: skip
    sample_id, epoch = str(getattr(sample, "id", "")), int(getattr(sample, "epoch", 0))
    where = {"log": summary.log, "sample_id": sample_id, "epoch": epoch}
    store = dict(getattr(sample, "store", {}) or {})
    try:
        turns, result = fact_records_from_store(store) if records == "facts" else records_from_store(store)
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
    scores = score_metadata(getattr(sample, "scores", None))
    try:
        spec = run_spec(sample, summary.kind, summary.task_args, summary.roles, result.seed)
    except (LogFormatError, ValidationError) as err:
        return None, LogProblem(kind="schema", message=f"its run spec cannot be read: {err}", **where)
    payloads: dict[str, Any] = {}
    payload_problems = []
    for name, decode in (("rejudged", rejudged_turns), ("annotations", run_annotations),
                         ("interrogation", run_interrogation)):  # fmt: skip
        try:
            payloads[name] = decode(scores)
        except ValidationError as err:
            payload_problems.append(f"its {name} results cannot be read ({err.error_count()} mismatches); left out")
    run = (FactsRun if records == "facts" else LoggedRun)(
        log=summary.log,
        eval_id=summary.eval_id,
        sample_id=sample_id,
        epoch=epoch,
        attacker=spec.roles.attacker,
        judge=spec.roles.judge,
        world_manager=spec.roles.world_manager,
        task_id=spec.task_id,
        map=str(metadata.get("map", sample_id.split("/")[0])),
        objective=spec.objective,
        category=str(metadata.get("category", "")),
        started=spec.human.started if spec.human is not None else "",
        spec=spec,
        turns=turns,
        result=result,
        tokens=_role_tokens(summary, sample),
        sample_error=message,
        payload_problems=payload_problems,
        **payloads,
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
