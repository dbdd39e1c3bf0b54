"""Audit items from logs: every action of every finished run, classified with its target's kind and put in a
stratum (flagged when its levels exceed the objective's allowance)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from ...harness.log_reader import find_logs, iter_runs, read_header
from ...runs.logged import LoggedRun, LogProblem, LogSummary
from .audit import AuditItem, Stratum
from .classifier import action_text
from .second_stage import classifier_version
from .targets import classify_record, observation_kinds
from .validate import allowance_for

HUMAN_PREFIX = "human/"


def audit_id(key: tuple[str, str, int, int]) -> str:
    """A short, stable id for an action: the same log, run and turn always give the same id."""
    return hashlib.sha1("|".join(map(str, key)).encode("utf-8")).hexdigest()[:12]


def logged_runs(
    paths: Sequence[str | Path], include_unfinished: bool = False
) -> tuple[list[LoggedRun], list[LogProblem]]:
    """The finished runs in the logs under ``paths``, one per run (a re-run replaces the earlier copy, as in the
    report), and the problems met."""
    problems: list[LogProblem] = []
    headers: list[LogSummary] = []
    for path in find_logs(paths):
        header = read_header(path)
        if isinstance(header, LogProblem):
            problems.append(header)
            continue
        if header.status != "success" and not include_unfinished:
            problems.append(LogProblem(log=header.log, kind="unfinished", message="the eval did not finish; left out"))
            continue
        headers.append(header)
    headers.sort(key=lambda h: (h.created, h.log))
    kept: dict[tuple[str | int, ...], LoggedRun] = {}
    for header in headers:
        for item in iter_runs(header):
            if isinstance(item, LogProblem):
                problems.append(item)
            elif item.result is not None:
                kept[_run_key(item)] = item
    return list(kept.values()), problems


def _run_key(run: LoggedRun) -> tuple[str | int, ...]:
    seed = run.result.seed if run.result is not None else -1
    key: tuple[str | int, ...] = (run.attacker, run.judge, run.world_manager, run.task_id, seed)
    if run.attacker.startswith(HUMAN_PREFIX):
        key += (run.eval_id, run.sample_id, run.epoch)
    return key


def audit_items(runs: Sequence[LoggedRun]) -> Iterator[AuditItem]:
    """One item per action, classified, with its stratum (weights are set when sampling)."""
    version = classifier_version()
    for run in runs:
        allowance = allowance_for(run.objective)
        for record in run.turns:
            action = record.action
            levels = classify_record(record)
            if action is None or levels is None:
                continue
            kinds, _names = observation_kinds(record.observation)
            exceeds = levels.force > allowance.force or levels.property > allowance.property
            stratum: Stratum = (
                "flagged" if exceeds else "near" if _near(levels.force, levels.property, levels.negated) else "rest"
            )
            key = (run.eval_id, run.sample_id, run.epoch, record.turn)
            yield AuditItem(
                audit_id=audit_id(key),
                text=action_text(action.verb, action.description, action.target),
                objective=run.objective,
                allowance_force=allowance.force,
                allowance_property=allowance.property,
                stratum=stratum,
                classifier_force=levels.force,
                classifier_property=levels.property,
                classifier_exceeds=exceeds,
                force_evidence=levels.force_evidence,
                property_evidence=levels.property_evidence,
                discounted=levels.negated,
                verb=action.verb,
                target=action.target,
                target_kind=kinds.get(action.target.lower()) if action.target else None,
                description=action.description,
                attacker=run.attacker,
                judge=run.judge,
                task_id=run.task_id,
                log=run.log,
                eval_id=run.eval_id,
                sample_id=run.sample_id,
                epoch=run.epoch,
                turn=record.turn,
                lexicon_version=version,
            )


def _near(force: int, prop: int, negated: list[str]) -> bool:
    """Unflagged, but the classifier saw harm: counted within the allowance, or discounted."""
    return force > 0 or prop > 0 or bool(negated)
