"""A stash's last hours, hour by hour: each hook's drop, hold and error rates and p95 time, and its queue.

    activity = for_stash(stash)
    activity.hooks[0].hours[-1].drop_rate     # the first hook's share of drops in the latest hour
    activity.hooks[0].day.p95_ms              # its p95 time over the whole window
    activity.lag.waiting, activity.lag.oldest_seconds

Read from the stored trails of the stash's pipeline runs finished in the window (``HOURS`` hours up
to now, in hourly buckets, the oldest first), by config id, and aggregated by the database: one
statement unnests the trails (``jsonb_array_elements`` on PostgreSQL, ``json_each`` on SQLite),
counts each hour's outcomes and picks each hour's nearest-rank 95th percentile with window
functions. With the stash's hooks and its queue that is three queries, whatever the number of hooks.

A step counts when it ran (a step skipped by its condition did not). Its *drop* is a drop, or what
an observing hook would have dropped; its *hold* likewise; its *error* an error or a timeout.
Other databases have no unnesting this module knows: there ``Unsupported`` is raised.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Count, Min
from django.utils import timezone

from stash.core import pipeline
from stash.models import Content, HookConfig, PipelineRun, Stash

#: How many hours back the activity goes, one bucket each.
HOURS = 24
#: The percentile of step times shown.
PERCENTILE = 95
#: Where a row of the statement holds the whole window rather than one hour.
WHOLE_WINDOW = -1

# The steps of the runs in the window, one row each: (config_id, bucket, outcome, would, ms).
# ``bucket`` is the hour since the window's start; parameters: start, stash id, start, end.
_STEPS = {
    "postgresql": """
        SELECT (step.value ->> 'config_id')::bigint AS config_id,
               FLOOR(EXTRACT(EPOCH FROM (run.finished_at - %s)) / 3600)::integer AS bucket,
               step.value ->> 'outcome' AS outcome,
               COALESCE(step.value ->> 'would', '') AS would,
               COALESCE((step.value ->> 'duration_ms')::double precision, 0) AS ms
        FROM {run} run
        JOIN {content} content ON content.id = run.content_id
        CROSS JOIN LATERAL jsonb_array_elements(run.trail) AS step(value)
        WHERE content.stash_id = %s AND run.finished_at >= %s AND run.finished_at < %s""",
    "sqlite": """
        SELECT json_extract(step.value, '$.config_id') AS config_id,
               CAST((julianday(run.finished_at) - julianday(%s)) * 24 AS INTEGER) AS bucket,
               json_extract(step.value, '$.outcome') AS outcome,
               COALESCE(json_extract(step.value, '$.would'), '') AS would,
               COALESCE(json_extract(step.value, '$.duration_ms'), 0) AS ms
        FROM {run} run
        JOIN {content} content ON content.id = run.content_id, json_each(run.trail) AS step
        WHERE content.stash_id = %s AND run.finished_at >= %s AND run.finished_at < %s""",
}

# Counts and the nearest-rank percentile (rank ceil(q/100 * n), in integers) per config and
# hour, and per config over the whole window. Parameters: the steps', then the number of hours.
_AGGREGATE = """
    WITH steps AS ({steps}),
    ran AS (
        SELECT config_id, bucket, ms,
               CASE WHEN outcome = '{dropped}' OR (outcome = '{observed}' AND would = 'drop')
                    THEN 1 ELSE 0 END AS dropped,
               CASE WHEN outcome = '{held}' OR (outcome = '{observed}' AND would = 'hold')
                    THEN 1 ELSE 0 END AS held,
               CASE WHEN outcome IN ('{error}', '{timeout}') THEN 1 ELSE 0 END AS errors,
               ROW_NUMBER() OVER (PARTITION BY config_id, bucket ORDER BY ms) AS hour_rank,
               COUNT(*) OVER (PARTITION BY config_id, bucket) AS hour_n,
               ROW_NUMBER() OVER (PARTITION BY config_id ORDER BY ms) AS window_rank,
               COUNT(*) OVER (PARTITION BY config_id) AS window_n
        FROM steps
        WHERE config_id IS NOT NULL AND outcome <> '{skipped}' AND bucket >= 0 AND bucket < %s
    )
    SELECT config_id, bucket, COUNT(*), SUM(dropped), SUM(held), SUM(errors),
           MAX(CASE WHEN hour_rank = (hour_n * {q} + 99) / 100 THEN ms END)
    FROM ran GROUP BY config_id, bucket
    UNION ALL
    SELECT config_id, {whole}, COUNT(*), SUM(dropped), SUM(held), SUM(errors),
           MAX(CASE WHEN window_rank = (window_n * {q} + 99) / 100 THEN ms END)
    FROM ran GROUP BY config_id"""


class Unsupported(Exception):
    """The database has no way to unnest trails that this module knows (neither PostgreSQL nor SQLite)."""


@dataclass(frozen=True)
class Bucket:
    """What one hook did in one hour (or the whole window): steps run, drops, holds, errors, p95."""

    runs: int = 0
    dropped: int = 0
    held: int = 0
    errors: int = 0
    p95_ms: float | None = None

    @property
    def drop_rate(self) -> float | None:
        return self._rate(self.dropped)

    @property
    def hold_rate(self) -> float | None:
        return self._rate(self.held)

    @property
    def error_rate(self) -> float | None:
        return self._rate(self.errors)

    def _rate(self, count: int) -> float | None:
        """``count`` out of the steps run; None for an hour without any."""
        return count / self.runs if self.runs else None


@dataclass(frozen=True)
class HookActivity:
    """One configured hook: its ``hours`` (``HOURS`` buckets, the oldest first) and its ``day`` (all of them)."""

    config: HookConfig
    hours: tuple[Bucket, ...]
    day: Bucket


@dataclass(frozen=True)
class QueueLag:
    """The stash's items waiting for a verdict: how many, and since when the oldest was saved."""

    waiting: int
    oldest_seconds: float | None


@dataclass(frozen=True)
class StashActivity:
    """A stash's hooks between ``start`` and ``end`` (now), and its queue at ``end``."""

    start: datetime
    end: datetime
    hooks: list[HookActivity]
    lag: QueueLag

    @property
    def hours(self) -> int:
        return round((self.end - self.start).total_seconds() / 3600)


def for_stash(
    stash: Stash, configs: Iterable[HookConfig] | None = None, now: datetime | None = None, hours: int = HOURS
) -> StashActivity:
    """The activity of ``stash``'s hooks (``configs``, default: all of them in order) over the
    ``hours`` before ``now``, and its queue now. Raises ``Unsupported`` on other databases."""
    end = now or timezone.now()
    start = end - timedelta(hours=hours)
    configs = list(stash.hooks.in_order() if configs is None else configs)
    rows = _aggregate(stash.pk, start, end, hours)
    return StashActivity(
        start=start, end=end, hooks=[_hook(config, rows, hours) for config in configs], lag=queue_lag(stash, end)
    )


def queue_lag(stash: Stash, now: datetime | None = None) -> QueueLag:
    """How many of ``stash``'s items are pending or processing, and the age of the oldest (as
    ``/metrics``' ``stash_queue_lag_seconds`` reads it: since its current revision was saved)."""
    waiting = (
        Content.objects.filter(stash=stash).waiting().order_by().aggregate(n=Count("pk"), oldest=Min("updated_at"))
    )
    oldest = waiting["oldest"]
    seconds = None if oldest is None else max(((now or timezone.now()) - oldest).total_seconds(), 0.0)
    return QueueLag(waiting=waiting["n"], oldest_seconds=seconds)


def _hook(config: HookConfig, rows: dict[tuple[int, int], Bucket], hours: int) -> HookActivity:
    return HookActivity(
        config=config,
        hours=tuple(rows.get((config.pk, hour), Bucket()) for hour in range(hours)),
        day=rows.get((config.pk, WHOLE_WINDOW), Bucket()),
    )


def _aggregate(stash_id: int, start: datetime, end: datetime, hours: int) -> dict[tuple[int, int], Bucket]:
    """``{(config id, hour or WHOLE_WINDOW): Bucket}`` of the stash's runs between ``start`` and ``end``."""
    steps = _STEPS.get(connection.vendor)
    if steps is None:
        raise Unsupported(f"Hook activity is read on PostgreSQL and SQLite, not {connection.vendor}.")
    quote = connection.ops.quote_name
    sql = _AGGREGATE.format(
        steps=steps.format(run=quote(PipelineRun._meta.db_table), content=quote(Content._meta.db_table)),
        dropped=pipeline.DROPPED,
        held=pipeline.HELD,
        observed=pipeline.OBSERVED,
        error=pipeline.ERROR,
        timeout=pipeline.TIMEOUT,
        skipped=pipeline.SKIPPED,
        q=PERCENTILE,
        whole=WHOLE_WINDOW,
    )
    adapt = connection.ops.adapt_datetimefield_value
    params: Sequence[Any] = [adapt(start), stash_id, adapt(start), adapt(end), hours]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {
            (int(config_id), int(bucket)): Bucket(
                runs=int(runs),
                dropped=int(dropped),
                held=int(held),
                errors=int(errors),
                p95_ms=None if p95 is None else float(p95),
            )
            for config_id, bucket, runs, dropped, held, errors, p95 in cursor.fetchall()
        }
