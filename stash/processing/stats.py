"""Per-hook statistics: the durable counters of each HookConfig, p50/p95 time from stored trails, and
the precision people's decisions give an enforcing hook over the last 7 and 30 days (``precision``).

    stats.for_configs(stash.hooks.all())   # {config id: HookStats(runs=..., p50_ms=..., ...)}

Counters live on the HookConfig row, written by the workers, so they survive restarts and follow
the config wherever it is moved. Times are read from the trails of the latest ``WINDOW`` pipeline
runs of the configs' stashes, matched by config id (never by position), in one query.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, TypeVar

from stash.core import pipeline
from stash.models import Delivery, HookConfig, PipelineRun
from stash.processing.precision import Precision, for_configs as precision_of

#: How many of the latest runs the time percentiles are read from.
WINDOW = 1000

_Configs = TypeVar("_Configs", bound=Iterable[HookConfig])


@dataclass(frozen=True)
class HookStats:
    """What one configured hook has done: counts since it was created, times of recent runs."""

    runs: int
    kept: int
    dropped: int
    held: int
    errors: int
    overturned: int
    mean_ms: float | None
    p50_ms: float | None
    p95_ms: float | None
    samples: int
    #: {days: Precision} over ``precision.WINDOWS``; empty for an observing hook (it decides nothing).
    precision: dict[int, Precision] = field(default_factory=dict)
    #: "filter", "transform" or "sink" (blank: its hook is not registered).
    kind: str = ""
    #: A transform's items whose payload it changed (the others it kept unchanged).
    changed: int = 0
    #: A sink delivered by its own task: its deliveries by status (``Delivery.Status``); None for
    #: any other hook (a sink called in process records no delivery).
    deliveries: dict[str, int] | None = None

    @property
    def unchanged(self) -> int:
        """A transform's items it kept as they were."""
        return max(self.kept - self.changed, 0)


def percentile(values: Iterable[float], q: float) -> float | None:
    """The nearest-rank ``q``-th percentile (0 < q <= 100) of ``values``; None if there are none."""
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def recent_durations(stash_ids: Iterable[int], window: int = WINDOW) -> dict[int, list[float]]:
    """Durations in ms of each config's steps in the latest ``window`` runs of these stashes.

    Steps skipped by their condition did not run and are left out.
    """
    trails = (
        PipelineRun.objects.filter(content__stash_id__in=list(stash_ids))
        .order_by("-finished_at", "-pk")
        .values_list("trail", flat=True)[:window]
    )
    return durations_by_config(trails)


def durations_by_config(trails: Iterable[Iterable[Mapping[str, Any]]]) -> dict[int, list[float]]:
    """Durations in ms of each config's steps in ``trails`` (stored trails: lists of dicts);
    steps skipped by their condition did not run and are left out."""
    durations: defaultdict[int, list[float]] = defaultdict(list)
    for trail in trails:
        for entry in trail:
            if entry.get("config_id") is not None and entry.get("outcome") != pipeline.SKIPPED:
                durations[entry["config_id"]].append(float(entry.get("duration_ms") or 0))
    return durations


def for_configs(configs: Iterable[HookConfig], window: int = WINDOW) -> dict[int, HookStats]:
    """``HookStats`` of each of ``configs`` (HookConfig instances), by id, in a constant number of
    queries (one for the deliveries of all their sinks)."""
    configs = list(configs)
    durations = recent_durations({config.stash_id for config in configs}, window) if configs else {}
    precisions = precision_of(configs)
    delivering = [config.pk for config in configs if getattr(config.hook_class, "deliver_async", False)]
    deliveries = Delivery.objects.counts_by_config(delivering) if delivering else {}
    result = {}
    for config in configs:
        times = durations.get(config.pk, [])
        hook_class = config.hook_class
        result[config.pk] = HookStats(
            runs=config.runs_count,
            kept=config.kept_count,
            dropped=config.dropped_count,
            held=config.held_count,
            errors=config.errors_count,
            overturned=config.overturned_count,
            mean_ms=config.time_total_us / config.runs_count / 1000 if config.runs_count else None,
            p50_ms=percentile(times, 50),
            p95_ms=percentile(times, 95),
            samples=len(times),
            precision=precisions.get(config.pk, {}),
            kind=hook_class.kind if hook_class else "",
            changed=config.changed_count,
            deliveries=deliveries.get(config.pk),
        )
    return result


def attach(configs: _Configs, window: int = WINDOW) -> _Configs:
    """Set ``config.stats`` on each of ``configs`` (evaluating a queryset once) and return them."""
    by_id = for_configs(configs, window)
    for config in configs:
        config.stats = by_id[config.pk]
    return configs
