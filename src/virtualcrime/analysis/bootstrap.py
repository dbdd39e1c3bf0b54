"""Task-clustered percentile bootstrap, vectorised with numpy.

Every metric here is a ratio of sums (e.g. Σ non-failure probability / number of turns), computed per task and
group (attacker, or attacker × judge). One resample draws the tasks with replacement — all runs of a task move
together — which is the same as giving each task a multinomial count; the resampled ratio of every group is then
one matrix product. Using the same counts for every group makes differences between groups *paired*.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0
LEVEL = 0.95

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Interval:
    """A point estimate with its percentile interval; all None when the statistic is undefined (no data)."""

    value: float | None
    low: float | None
    high: float | None

    @property
    def excludes_zero(self) -> bool:
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)


class Estimate(BaseModel):
    """A rate with its 95 % task-clustered bootstrap interval; ``den`` is what it averages over."""

    model_config = ConfigDict(extra="forbid")

    value: float | None
    low: float | None
    high: float | None
    num: float | None = Field(0.0, description="Σ numerator; None for a statistic that is not one ratio (a median).")
    den: float | None = Field(0.0, description="Σ denominator; None for a statistic that is not one ratio.")

    @classmethod
    def of(cls, interval: Interval, num: float | None = 0.0, den: float | None = 0.0) -> Estimate:
        return cls(value=interval.value, low=interval.low, high=interval.high, num=num, den=den)

    def text(self, digits: int = 3, sign: bool = False) -> str:
        """``0.812 [0.771, 0.850]`` (``+0.04 [...]`` with ``sign``); the value alone without an interval; ``n/a``
        when the statistic is undefined."""
        form = f"{'+' if sign else ''}.{digits}f"
        if self.value is None:
            return "n/a"
        if self.low is None or self.high is None:
            return format(self.value, form)
        return f"{format(self.value, form)} [{format(self.low, form)}, {format(self.high, form)}]"


def task_counts(n_tasks: int, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> FloatArray:
    """(resamples × tasks) matrix: how often each task is drawn in each resample of ``n_tasks`` tasks."""
    if n_tasks < 1:
        return np.zeros((n_resamples, 0))
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n_tasks, np.full(n_tasks, 1.0 / n_tasks), size=n_resamples)
    return counts.astype(np.float64)


def ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    """num / den with NaN where den is 0 (a group with no data in a resample)."""
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def percentile_interval(samples: FloatArray, level: float = LEVEL) -> tuple[FloatArray, FloatArray]:
    """Lower and upper percentile bounds along axis 0, ignoring NaN resamples (NaN where all are NaN)."""
    tail = (1.0 - level) / 2.0 * 100.0
    valid = ~np.isnan(samples)
    low = np.full(samples.shape[1:], np.nan)
    high = np.full(samples.shape[1:], np.nan)
    has_any = valid.any(axis=0)
    if has_any.any():
        bounds = np.nanpercentile(samples[:, has_any], [tail, 100.0 - tail], axis=0)
        low[has_any], high[has_any] = bounds[0], bounds[1]
    return low, high


@dataclass(frozen=True)
class Bootstrap:
    """Resampled ratios of per-task sums. ``num`` and ``den`` are (tasks × groups) arrays of sums."""

    counts: FloatArray
    level: float = LEVEL

    @classmethod
    def for_tasks(cls, n_tasks: int, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> Bootstrap:
        return cls(task_counts(n_tasks, n_resamples, seed))

    @property
    def n_resamples(self) -> int:
        return int(self.counts.shape[0])

    def resample(self, num: FloatArray, den: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Point ratios per group (groups,) and resampled ratios (resamples × groups)."""
        point = ratio(num.sum(axis=0), den.sum(axis=0))
        samples = ratio(self.counts @ num, self.counts @ den)
        return point, samples

    def intervals(self, point: FloatArray, samples: FloatArray) -> list[Interval]:
        """One Interval per group (last axis) from a point vector and its resamples."""
        low, high = percentile_interval(samples, self.level)
        return [_interval(p, lo, hi) for p, lo, hi in zip(point, low, high, strict=True)]

    def ratio_intervals(self, num: FloatArray, den: FloatArray) -> list[Interval]:
        """Point estimate and interval of Σnum/Σden for every group."""
        return self.intervals(*self.resample(num, den))

    def paired_differences(self, num: FloatArray, den: FloatArray) -> dict[tuple[int, int], Interval]:
        """For every pair of groups (i < j), the interval of ratio_i − ratio_j over the same resampled tasks."""
        point, samples = self.resample(num, den)
        i, j = np.triu_indices(point.shape[0], k=1)
        diffs = samples[:, i] - samples[:, j]
        found = self.intervals(point[i] - point[j], diffs)
        return {(int(a), int(b)): iv for a, b, iv in zip(i, j, found, strict=True)}


def nanmedian(values: FloatArray, axis: int) -> FloatArray:
    """Median ignoring NaN; NaN (without a warning) where a slice has no value."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(np.nanmedian(values, axis=axis), dtype=float)


def median_of_ratios(counts: FloatArray, num: FloatArray, den: FloatArray) -> FloatArray:
    """Per resample and group, the median over judges of each judge's resampled ratio.

    ``counts`` is (resamples × tasks); ``num`` and ``den`` are (tasks × groups × judges) sums. Each judge's ratio is
    Σ count·num / Σ count·den over the same drawn tasks, so everything a task holds (every run, every re-judged turn,
    under every judge) moves together; a judge without data in a resample is left out of that resample's median.
    Returns (resamples × groups), NaN where no judge has data.
    """
    tasks, groups, judges = num.shape
    flat_num = counts @ num.reshape(tasks, groups * judges)
    flat_den = counts @ den.reshape(tasks, groups * judges)
    rates = ratio(flat_num, flat_den).reshape(counts.shape[0], groups, judges)
    return nanmedian(rates, axis=2)


def _interval(point: float, low: float, high: float) -> Interval:
    def clean(x: float) -> float | None:
        return None if np.isnan(x) else float(x)

    return Interval(clean(point), clean(low), clean(high))


def rank(values: FloatArray) -> FloatArray:
    """Ranks (1-based) with ties given their average rank."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    sorted_values = values[order]
    start = 0
    for end in range(1, len(values) + 1):
        if end == len(values) or sorted_values[end] != sorted_values[start]:
            ranks[order[start:end]] = (start + end + 1) / 2.0
            start = end
    return ranks


def pearson(x: FloatArray, y: FloatArray) -> float | None:
    """Pearson correlation; None for fewer than two points or a constant variable."""
    if len(x) < 2 or np.std(x) == 0 or np.std(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def spearman(x: FloatArray, y: FloatArray) -> float | None:
    """Spearman's ρ: Pearson correlation of average ranks; None when undefined."""
    if len(x) < 2:
        return None
    return pearson(rank(np.asarray(x, dtype=float)), rank(np.asarray(y, dtype=float)))
