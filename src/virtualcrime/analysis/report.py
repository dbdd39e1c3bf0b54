"""``virtualcrime report``: logs in, ``report.html``, ``summary.json``, Table 1 and figures out."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..harness.log_reader import WHOLE, Part, RecordReading, find_logs, iter_runs, read_header
from ..runs.digests import Digests
from ..runs.logged import FactsRun, LoggedRun, LogProblem, LogSummary
from .bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from .facts import RunFacts, run_facts
from .figures import draw_all
from .harm.audit import AuditFileError, HarmLabels, audit_files, labels_from
from .harm.lexicon import load_lexicon
from .harm.second_stage import load_text_model
from .html import render_html
from .overharm_figures import overharm_markdown
from .processes import paused_gc, pool_map, worker_context
from .review_store import Rating, ReviewStore, ReviewStoreError, review_stores
from .summary import Summary, build_summary
from .tables import humans_markdown, reviews_markdown, table1_csv, table1_markdown

# A spawned worker process needs ~2 s to start (it imports Inspect): below this much log data, one process is faster.
PARALLEL_FROM_BYTES = 4_000_000
SLICE_FROM_BYTES = 2_000_000  # a log this big is read in slices by several workers
SLICES_PER_WORKER = 2  # slices of each big log per worker: enough to even out long and short runs


class ReportError(ValueError):
    """Nothing usable to report on, or an explicitly named file that is not a VirtualCrime log."""


@dataclass
class LoadedRuns:
    runs: list[RunFacts] = field(default_factory=list)
    logs: list[LogSummary] = field(default_factory=list)
    problems: list[LogProblem] = field(default_factory=list)
    ratings: list[Rating] = field(default_factory=list)
    review_stores: list[str] = field(default_factory=list)
    harm_labels: HarmLabels | None = None


def load_runs(paths: Sequence[str | Path], include_unfinished: bool = False, jobs: int | None = None,
              records: RecordReading = "facts", mapper: Mapper | None = None) -> LoadedRuns:  # fmt: skip
    """Facts of every finished run in the logs found under ``paths``.

    A file named directly that cannot be read or is not a VirtualCrime log raises ReportError; inside folders such
    files are recorded as problems and skipped. Logs of evals that did not finish are left out (and recorded)
    unless ``include_unfinished``, in which case their finished runs are used. ``jobs`` processes read the logs
    (default: one per CPU), unless a ``mapper`` is given: it maps the reader over the logs, one call per log, in
    order (``harness.distributed.mapper`` fans them out over a Ray cluster). Human review ratings are read from
    the review files found for ``paths`` (``review_stores``); one that cannot be read is recorded as a problem.
    ``records`` says how turn records are read: only for what the metrics need (``facts``, the default), or in
    full (``full``: the same figures, slower).
    """
    try:
        files = find_logs(paths)
    except FileNotFoundError as err:
        raise ReportError(str(err)) from err
    named = {Path(p).resolve() for p in paths if Path(p).is_file()}
    loaded = LoadedRuns()
    readable: list[LogSummary] = []
    for path in files:
        header = read_header(path)
        if isinstance(header, LogProblem):
            if path.resolve() in named:
                raise ReportError(f"{path}: {header.message}")
            loaded.problems.append(header)
            continue
        loaded.logs.append(header)
        if header.status != "success":
            loaded.problems.append(
                LogProblem(
                    log=header.log,
                    kind="unfinished",
                    message=f"the eval did not finish (status {header.status})"
                    + ("; its finished runs are included" if include_unfinished else "; left out"),
                )
            )
            if not include_unfinished:
                continue
        readable.append(header)
    # Oldest eval first, so that when the same run appears twice the newer one replaces it (summary.dedupe).
    readable.sort(key=lambda h: (h.created, h.log))
    reader = _facts_of_full_log if records == "full" else _facts_of_log
    with paused_gc():  # the workers' results are unpickled here: as many objects again
        for runs, problems in _map(reader, readable, jobs, mapper):
            loaded.runs.extend(runs)
            loaded.problems.extend(problems)
    warning = provenance_warning(loaded.runs)
    if warning is not None:
        loaded.problems.append(warning)
    load_reviews(paths, loaded)
    load_harm_labels(audit_files(paths), loaded)
    return loaded


def load_harm_labels(files: Sequence[Path], loaded: LoadedRuns) -> None:
    """The reviewed verdicts of harm audit files (``harm audit``; found beside the logs as ``harm-audit*.jsonl``)
    for the report's correction-effect section; a file that cannot be read is recorded as a problem."""
    readable = []
    for path in files:
        try:
            labels_from([path])
        except AuditFileError as err:
            loaded.problems.append(LogProblem(log=str(path), kind="unreadable", message=f"harm labels not read: {err}"))
            continue
        readable.append(path)
    if readable:
        loaded.harm_labels = labels_from(readable)


def load_reviews(paths: Sequence[str | Path], loaded: LoadedRuns) -> None:
    """Add the ratings of every review file found for ``paths`` to ``loaded``; unreadable files become problems."""
    for path in review_stores(paths):
        try:
            ratings = ReviewStore(path.parent).ratings()
        except ReviewStoreError as err:
            loaded.problems.append(
                LogProblem(log=str(path), kind="unreadable", message=f"review ratings not read: {err}")
            )
            continue
        loaded.ratings.extend(ratings)
        loaded.review_stores.append(str(path))


@dataclass(frozen=True)
class LogPart:
    """What one reader call reads: the runs of ``header``'s log in slice ``part`` (``(k, n)``; the whole log is
    ``(0, 1)``)."""

    header: LogSummary
    part: Part = WHOLE


def _facts_of_log(item: LogPart) -> tuple[list[RunFacts], list[LogProblem]]:
    """The facts of a log's runs (of one part of it), and the problems met: runs left out, and results that could
    not be read."""
    return _facts_of(iter_runs(item.header, "facts", item.part))


def _facts_of_full_log(item: LogPart) -> tuple[list[RunFacts], list[LogProblem]]:
    """:func:`_facts_of_log` from full turn records (what the facts were computed from before ``FactRecord``)."""
    return _facts_of(iter_runs(item.header, "full", item.part))


def _facts_of(items: Iterable[LoggedRun | FactsRun | LogProblem]
              ) -> tuple[list[RunFacts], list[LogProblem]]:  # fmt: skip
    with paused_gc():
        return _gathered(items)


def _gathered(items: Iterable[LoggedRun | FactsRun | LogProblem]) -> tuple[list[RunFacts], list[LogProblem]]:
    runs: list[RunFacts] = []
    problems: list[LogProblem] = []
    for item in items:
        if isinstance(item, LogProblem):
            problems.append(item)
            continue
        where = {"log": item.log, "sample_id": item.sample_id, "epoch": item.epoch}
        problems += [LogProblem(kind="payload", message=m, **where) for m in item.payload_problems]
        if item.spec.allowance is None:
            why = (f"objective {item.objective!r} is unknown to this version and the log records no harm allowance "
                   "(it predates run specs); left out")  # fmt: skip
            problems.append(LogProblem(kind="schema", message=why, **where))
            continue
        runs.append(run_facts(item))
    return runs, problems


def provenance_warning(runs: Sequence[RunFacts]) -> LogProblem | None:
    """A warning when the runs reported were played under different scenario files, prompts, rules or harm
    lexicons (their recorded digests differ); None when they agree or older logs recorded none."""
    groups: dict[Digests, list[RunFacts]] = {}
    for run in runs:
        if run.digests is not None:
            groups.setdefault(run.digests, []).append(run)
    differing = sorted({name for a in groups for b in groups for name in a.differing(b)})
    if not differing:
        return None
    parts = "; ".join(
        f"{len(members)} run(s) with {', '.join(f'{name} {getattr(digests, name)}' for name in differing)} "
        f"(e.g. {members[0].log})"
        for digests, members in sorted(groups.items(), key=lambda item: -len(item[1]))
    )
    message = (f"the runs compared were played under different {', '.join(differing)} (recorded digests differ): "
               f"{parts}. Their figures may not be comparable; play the older runs again with this version to compare "
               "them.")  # fmt: skip
    return LogProblem(log="", kind="provenance", message=message)


Read = tuple[list[RunFacts], list[LogProblem]]
LogReader = Callable[[LogPart], Read]
# Maps a reader over the logs, one call per log, results in the logs' order (the figures are computed after
# gathering, so they cannot depend on how the reading was spread).
Mapper = Callable[[LogReader, list[LogPart]], list[Read]]


def _map(fn: LogReader, headers: list[LogSummary], jobs: int | None, mapper: Mapper | None = None) -> list[Read]:
    """``fn`` over the logs, one result per log in order: through ``mapper`` when one is given; else in worker
    processes when there is more than one job and enough to read.

    Reading samples is the slow part of a report (Inspect parses each sample in Python), and runs are independent,
    so they are read side by side: a big log in slices (``SLICE_FROM_BYTES``), several per worker, so that one log
    of long runs does not leave the other workers idle. Where worker processes cannot start (an interactive session
    whose main module cannot be re-imported, a sandbox without process support) the logs are read here instead.
    """
    whole = [LogPart(h) for h in headers]
    if mapper is not None:
        return mapper(fn, whole)
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    size = sum(Path(h.log).stat().st_size for h in headers if Path(h.log).exists())
    context = worker_context()
    if workers <= 1 or (jobs is None and size < PARALLEL_FROM_BYTES) or context is None:
        return list(map(fn, whole))
    parts = _sliced(headers, SLICES_PER_WORKER * workers)
    if context.get_start_method() == "fork":
        _warm_classifier()  # once here, instead of once in every worker
    results = pool_map(fn, parts, workers, context)
    return _joined(parts, results) if results is not None else list(map(fn, whole))


def _sliced(headers: list[LogSummary], slices: int) -> list[LogPart]:
    """Each log as one part, or (an .eval log of ``SLICE_FROM_BYTES`` or more) as ``slices`` consecutive ones."""
    parts: list[LogPart] = []
    for header in headers:
        path = Path(header.log)
        big = path.suffix == ".eval" and path.exists() and path.stat().st_size >= SLICE_FROM_BYTES
        count = slices if big else 1
        parts += [LogPart(header, (k, count)) for k in range(count)]
    return parts


def _joined(parts: list[LogPart], results: list[Read]) -> list[Read]:
    """One result per log from its parts' results, in order (a problem every part met, such as a damaged file,
    once)."""
    joined: list[Read] = []
    for part, (runs, problems) in zip(parts, results, strict=True):
        if part.part[0] == 0:
            joined.append(([], []))
        joined[-1][0].extend(runs)
        joined[-1][1].extend(p for p in problems if p not in joined[-1][1])
    return joined


def _warm_classifier() -> None:
    lexicon = load_lexicon()
    lexicon.compile_all()
    _ = lexicon.index
    load_text_model()


@dataclass
class ReportFiles:
    summary: Summary
    files: dict[str, Path]


def write_report(
    loaded: LoadedRuns,
    out_dir: Path,
    primary_judge: str | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> ReportFiles:
    """Compute the summary and write every report file into ``out_dir``."""
    if not loaded.runs:
        reasons = "; ".join(f"{Path(p.log).name}: {p.message}" for p in loaded.problems[:5])
        raise ReportError("no finished VirtualCrime runs found" + (f" ({reasons})" if reasons else ""))
    try:
        summary = build_summary(
            loaded.runs,
            loaded.logs,
            loaded.problems,
            primary_judge,
            resamples,
            seed,
            ratings=loaded.ratings,
            review_stores=loaded.review_stores,
            harm_labels=loaded.harm_labels,
        )
    except ValueError as err:
        raise ReportError(str(err)) from err
    out_dir.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    figures = draw_all(summary, out_dir)
    files.update({f"{name}.png": path for name, path in figures.items()})
    texts = [
        ("summary.json", summary.model_dump_json(indent=2, by_alias=True)),
        ("table1.md", table1_markdown(summary)),
        ("table1.csv", table1_csv(summary)),
        ("report.html", render_html(summary, figures)),
    ]
    for name, present, render in (
        ("reviews.md", summary.review is not None, reviews_markdown),
        ("humans.md", summary.human_play is not None, humans_markdown),
        ("overharm.md", summary.overharm_pairs is not None, lambda s: overharm_markdown(s.overharm_pairs)),
    ):
        if present:
            texts.append((name, render(summary)))
        else:  # a section this report does not have: no stale copy from an earlier report in the same folder
            (out_dir / name).unlink(missing_ok=True)
    for name, text in texts:
        path = out_dir / name
        path.write_text(text, encoding="utf-8")
        files[name] = path
    return ReportFiles(summary, files)
