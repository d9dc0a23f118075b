"""stash's Prometheus series (``stash_*``), read from the database on each scrape.

    metrics.exposition()     # bytes in the Prometheus text format, for /metrics

The workers write everything these series count (verdicts, hook counters, pipeline runs, the
counts of ``processing.worker_counts``) to the database they share, wherever they run; so a scrape of
any web process reads the same figures, and none is lost when a process restarts. A scrape costs
nine queries, each bounded by an index or a limit (figures in docs/metrics.md):

- ``stash_items{stash,status}``: items per stash and status (gauge; every status, zeros too).
- ``stash_queue_lag_seconds{stash}``: age of the stash's oldest pending or processing item,
  since it was submitted or last edited (0 when none waits).
- ``stash_hook_verdicts_total{stash,config,hook,outcome}``: each hook config's kept, dropped
  (held, and what an observing hook would drop or hold, count as dropped) and error counts;
  ``stash_hook_overturned_total``: its verdicts a reviewer overturned.
- ``stash_hook_duration_seconds{stash,config,hook}``: a summary (``_sum``, ``_count``) of every
  run of the hook since the config was created: ``rate(_sum) / rate(_count)`` is its mean time.
- ``stash_hook_recent_duration_seconds`` and ``stash_run_recent_duration_seconds{stash}``:
  histograms of the hooks' and whole runs' times in the latest ``stats.WINDOW`` pipeline runs
  (of all stashes). The window is a gauge histogram: read its quantiles with
  ``histogram_quantile(0.95, stash_hook_recent_duration_seconds_bucket)``, not with ``rate()``.
- ``stash_hook_precision{stash,config,hook,window}`` (``window`` ``7d`` or ``30d``) and
  ``stash_hook_precision_decisions{...}``: of the items an enforcing hook rejected or held, the share
  people kept rejected, and how many they decided, in the window (``processing.precision``; one
  grouped query; a hook no one decided on in 30 days has no precision series, only 0 decisions);
  ``stash_hook_auto_observed_total{stash,config,hook}``: times the system switched it to observe.
- ``stash_sweeper_recovered_total``, ``stash_sweeper_failed_total``: items the sweeper sent
  again, and items it set failed (out of attempts).
- ``stash_sink_deliveries_total{stash,config,hook,outcome}`` (``delivered`` or ``failed``: given
  up after its retries) and ``stash_sink_retries_total{stash,config,hook}``, per sink config
  delivered by its own task.
- ``stash_review_overdue{stash}``: held items waiting longer than their stash's ``review_hours``
  (stashes with a deadline; 0 when none is overdue).
- ``stash_submissions_refused_total{stash,reason}``: submissions refused with 429 because the
  stash had ``max_waiting`` items waiting (``reason="max_waiting"``); counted in the cache, so it
  starts again from 0 when the cache is emptied (``rate()`` reads that as a reset).
- ``stash_metrics_up``: 1, or 0 (and none of the above) when the database could not be read;
  ``stash_metrics_collect_seconds``: how long reading all of these took.
"""

from __future__ import annotations

import logging
import time
from bisect import bisect_right
from collections import defaultdict

from django.db.models import Count
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeHistogramMetricFamily,
    GaugeMetricFamily,
    SummaryMetricFamily,
)
from prometheus_client.utils import floatToGoString

from stash.core import registry
from stash.core.exceptions import NotRegistered
from stash.models import Content, HookConfig, PipelineRun, Stash, backpressure
from stash.processing import precision, review_queue, stats, worker_counts

logger = logging.getLogger(__name__)

#: Upper bounds (seconds) of the duration histograms' buckets.
BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
HOOK_LABELS = ["stash", "config", "hook"]
_CONFIG_FIELDS = (
    "pk",
    "stash_id",
    "hook",
    "mode",
    "kept_count",
    "dropped_count",
    "held_count",
    "errors_count",
    "overturned_count",
    "runs_count",
    "time_total_us",
)


class StashCollector:
    """A prometheus_client collector: every ``collect()`` reads the figures afresh.

    When the database cannot be read, the error is logged and only ``stash_metrics_up 0`` is
    given: the page still answers, with the Django series.
    """

    def collect(self):
        started = time.perf_counter()
        try:
            families, up = list(_read()), 1
        except Exception:
            logger.exception("Could not read the stash_ series.")
            families, up = [], 0
        yield from families
        yield GaugeMetricFamily(
            "stash_metrics_up", "1 if the stash_ series could be read from the database, else 0.", value=up
        )
        yield GaugeMetricFamily(
            "stash_metrics_collect_seconds",
            "Seconds taken to read the stash_ series.",
            value=time.perf_counter() - started,
        )


def _read():
    stashes = dict(Stash.objects.order_by("pk").values_list("pk", "slug"))
    rows = HookConfig.objects.order_by("pk").values_list(*_CONFIG_FIELDS)
    configs = [dict(zip(_CONFIG_FIELDS, row, strict=True)) for row in rows]
    for config in configs:
        config["labels"] = [stashes.get(config["stash_id"], ""), str(config["pk"]), config["hook"]]
    yield from _items(stashes)
    yield _queue_lag(stashes)
    yield _review_overdue(stashes)
    yield _refused_full(stashes)
    yield from _hook_counters(configs)
    yield from _recent_durations(stashes, configs)
    totals = worker_counts.totals()
    yield from _worker_events(configs, totals)
    yield from _precision(configs, totals)


def _items(stashes):
    counts = {
        (stash_id, status): n
        for stash_id, status, n in Content.objects.order_by()
        .values("stash_id", "status")
        .annotate(n=Count("*"))
        .values_list("stash_id", "status", "n")
    }
    items = GaugeMetricFamily("stash_items", "Items per stash and status.", labels=["stash", "status"])
    for stash_id, slug in stashes.items():
        for status in Content.Status.values:
            items.add_metric([slug, status], counts.get((stash_id, status), 0))
    yield items


def _queue_lag(stashes):
    seconds = Content.objects.lag_by_stash()
    lag = GaugeMetricFamily(
        "stash_queue_lag_seconds",
        "Age of the stash's oldest pending or processing item (0: none waits).",
        labels=["stash"],
    )
    for stash_id, slug in stashes.items():
        lag.add_metric([slug], seconds.get(stash_id, 0.0))
    return lag


def _review_overdue(stashes):
    counts = review_queue.overdue_counts()
    overdue = GaugeMetricFamily(
        "stash_review_overdue",
        "Held items waiting longer than their stash's review deadline (stashes with one).",
        labels=["stash"],
    )
    for stash_id, n in sorted(counts.items()):
        if stash_id in stashes:
            overdue.add_metric([stashes[stash_id]], n)
    return overdue


def _refused_full(stashes):
    counts = backpressure.refused(list(stashes))
    refused = CounterMetricFamily(
        "stash_submissions_refused",
        "Submissions a stash refused (429) while max_waiting items waited to be judged; kept in the cache.",
        labels=["stash", "reason"],
    )
    for stash_id, slug in stashes.items():
        refused.add_metric([slug, "max_waiting"], counts.get(stash_id, 0))
    return refused


def _hook_counters(configs):
    verdicts = CounterMetricFamily(
        "stash_hook_verdicts",
        "Each hook config's verdicts: kept, dropped, held, error.",
        labels=[*HOOK_LABELS, "outcome"],
    )
    overturned = CounterMetricFamily(
        "stash_hook_overturned", "Each hook config's verdicts that a reviewer overturned.", labels=HOOK_LABELS
    )
    duration = SummaryMetricFamily(
        "stash_hook_duration_seconds", "Time of every run of each hook config.", labels=HOOK_LABELS
    )
    for config in configs:
        labels = config["labels"]
        for outcome, field in (
            ("kept", "kept_count"),
            ("dropped", "dropped_count"),
            ("held", "held_count"),
            ("error", "errors_count"),
        ):
            verdicts.add_metric([*labels, outcome], config[field])
        overturned.add_metric(labels, config["overturned_count"])
        duration.add_metric(labels, count_value=config["runs_count"], sum_value=config["time_total_us"] / 1e6)
    yield from (verdicts, overturned, duration)


def _recent_durations(stashes, configs):
    rows = PipelineRun.objects.order_by("-pk").values_list("content__stash_id", "duration_ms", "trail")[: stats.WINDOW]
    runs, trails = defaultdict(list), []
    for stash_id, duration_ms, trail in rows:
        runs[stash_id].append(duration_ms / 1000)
        trails.append(trail)
    steps = stats.durations_by_config(trails)
    hooks = GaugeHistogramMetricFamily(
        "stash_hook_recent_duration_seconds",
        f"Time of each hook config's steps in the latest {stats.WINDOW} pipeline runs.",
        labels=HOOK_LABELS,
    )
    for config in configs:
        _add_histogram(hooks, config["labels"], [ms / 1000 for ms in steps.get(config["pk"], ())])
    whole = GaugeHistogramMetricFamily(
        "stash_run_recent_duration_seconds",
        f"Time of the latest {stats.WINDOW} pipeline runs, per stash.",
        labels=["stash"],
    )
    for stash_id, slug in stashes.items():
        _add_histogram(whole, [slug], runs.get(stash_id, []))
    yield from (hooks, whole)


def _add_histogram(family, labels, values):
    ordered = sorted(values)
    buckets = [(floatToGoString(bound), bisect_right(ordered, bound)) for bound in BUCKETS]
    family.add_metric(labels, [*buckets, ("+Inf", len(ordered))], gsum_value=sum(ordered))


def _worker_events(configs, totals):
    for name, help_text in (
        (worker_counts.SWEEP_RECOVERED, "Items the sweeper sent again (a lost message, a dead worker)."),
        (worker_counts.SWEEP_FAILED, "Items the sweeper set failed: out of attempts."),
    ):
        yield CounterMetricFamily(
            f"stash_sweeper_{name.removeprefix('sweep_')}", help_text, value=totals.get((name, None), 0)
        )
    deliveries = CounterMetricFamily(
        "stash_sink_deliveries",
        "Each sink's deliveries: delivered, or failed after its retries.",
        labels=[*HOOK_LABELS, "outcome"],
    )
    retries = CounterMetricFamily(
        "stash_sink_retries", "Each sink's deliveries that failed and were retried.", labels=HOOK_LABELS
    )
    for config in configs:
        pk = config["pk"]
        counts = {
            name: totals.get((name, pk), 0)
            for name in (worker_counts.SINK_DELIVERED, worker_counts.SINK_FAILED, worker_counts.SINK_RETRIED)
        }
        if not (_delivered_by_task(config["hook"]) or any(counts.values())):
            continue
        deliveries.add_metric([*config["labels"], "delivered"], counts[worker_counts.SINK_DELIVERED])
        deliveries.add_metric([*config["labels"], "failed"], counts[worker_counts.SINK_FAILED])
        retries.add_metric(config["labels"], counts[worker_counts.SINK_RETRIED])
    yield from (deliveries, retries)


def _precision(configs, totals):
    """Precision gauges of the enforcing hooks (one grouped query); how often the system switched
    each hook to observe (of ``totals``, the worker counts)."""
    figures = precision.for_enforcing()
    value = GaugeMetricFamily(
        "stash_hook_precision",
        "Of the items an enforcing hook rejected or held that people decided in the window: the share kept rejected.",
        labels=[*HOOK_LABELS, "window"],
    )
    count = GaugeMetricFamily(
        "stash_hook_precision_decisions",
        "Items an enforcing hook rejected or held that people decided in the window.",
        labels=[*HOOK_LABELS, "window"],
    )
    switched = CounterMetricFamily(
        "stash_hook_auto_observed",
        "Times the system switched the hook to observe: its precision fell below its minimum.",
        labels=HOOK_LABELS,
    )
    for config in configs:
        times = totals.get((worker_counts.HOOK_AUTO_OBSERVED, config["pk"]), 0)
        if times:
            switched.add_metric(config["labels"], times)
        if config["mode"] != "enforce":
            continue
        windows = figures.get(config["pk"], {})
        for days in precision.WINDOWS:
            figure = windows.get(days, precision.Precision())
            labels = [*config["labels"], f"{days}d"]
            count.add_metric(labels, figure.decisions)
            if figure.value is not None:
                value.add_metric(labels, figure.value)
    yield from (value, count, switched)


def _delivered_by_task(hook_name) -> bool:
    try:
        return bool(getattr(registry.get(hook_name), "deliver_async", False))
    except NotRegistered:
        return False


_registry = CollectorRegistry(auto_describe=False)
_registry.register(StashCollector())


def exposition() -> bytes:
    """The ``stash_*`` series now, in the Prometheus text format (six queries)."""
    return generate_latest(_registry)
