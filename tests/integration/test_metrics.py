"""/metrics after a real worker judged, swept and delivered: its counts are the database's."""

from datetime import timedelta

import pytest
from django.utils import timezone

from stash import tasks
from stash.models import Content, PipelineRun
from stash.processing import worker_counts

from ..support.metrics_support import scrape
from ..support.worker import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

DONE = ("accepted", "rejected", "held", "failed")


def all_judged(n, timeout=60):
    wait_for(
        lambda: Content.objects.filter(status__in=DONE).count() == n,
        timeout=timeout,
        message=f"verdicts on all {n} items",
    )


def test_after_a_run_the_series_count_what_the_worker_did(worker, client, make_stash):
    stash = make_stash(
        "audit", hooks=[("require_fields", {"fields": ["text"]}), ("keyword_blocklist", {"words": ["spam"]})]
    )
    require, blocklist = stash.hooks.in_order()
    payloads = [{"title": "no text"}] * 7 + [{"text": "buy spam now"}] * 5 + [{"text": "hello"}] * 18
    for payload in payloads:
        Content.objects.create(stash=stash, payload=payload)
    all_judged(len(payloads))

    page = scrape(client)
    for status in ("accepted", "rejected", "pending", "processing", "held", "failed"):
        assert page.value("stash_items", stash="audit", status=status) == Content.objects.filter(status=status).count()
    assert page.value("stash_items", stash="audit", status="accepted") == 18
    assert page.value("stash_items", stash="audit", status="rejected") == 12
    assert page.value("stash_queue_lag_seconds", stash="audit") == 0

    for config, kept, dropped in ((require, 23, 7), (blocklist, 18, 5)):
        config.refresh_from_db()
        labels = {"stash": "audit", "config": config.pk, "hook": config.hook}
        assert (page.value("stash_hook_verdicts_total", **labels, outcome="kept"), config.kept_count) == (kept, kept)
        assert (page.value("stash_hook_verdicts_total", **labels, outcome="dropped"), config.dropped_count) == (
            dropped,
            dropped,
        )
        assert page.value("stash_hook_verdicts_total", **labels, outcome="error") == config.errors_count == 0
        assert page.value("stash_hook_duration_seconds_count", **labels) == config.runs_count == kept + dropped
        assert page.value("stash_hook_duration_seconds_sum", **labels) == pytest.approx(config.time_total_us / 1e6)
        assert page.value("stash_hook_recent_duration_seconds_bucket", **labels, le="+Inf") == kept + dropped
    assert (
        page.value("stash_run_recent_duration_seconds_bucket", stash="audit", le="+Inf")
        == PipelineRun.objects.count()
        == len(payloads)
    )


def test_sink_deliveries_and_retries_on_the_worker_are_counted(worker, client, make_stash):
    stash = make_stash("audit", hooks=[("require_fields", {"fields": ["text"]}), ("test_flaky_sink", {"failures": 1})])
    sink = stash.hooks.get(hook="test_flaky_sink")
    for text in ("one", "two", "three"):
        Content.objects.create(stash=stash, payload={"text": text})
    Content.objects.create(stash=stash, payload={"title": "rejected: the sink only acts on accepted items"})
    all_judged(4)
    # Each accepted item's delivery fails once, and is delivered on its retry (within 5 s).
    wait_for(
        lambda: worker_counts.totals().get((worker_counts.SINK_DELIVERED, sink.pk)) == 3,
        timeout=60,
        message="three deliveries",
    )

    labels = {"stash": "audit", "config": sink.pk, "hook": "test_flaky_sink"}
    page = scrape(client)
    assert page.value("stash_sink_deliveries_total", **labels, outcome="delivered") == 3
    assert page.value("stash_sink_retries_total", **labels) == 3
    assert page.value("stash_sink_deliveries_total", **labels, outcome="failed") == 0


def test_a_delivery_that_fails_past_its_retries_is_counted_as_failed(worker, client, make_stash):
    stash = make_stash("audit", hooks=[("test_flaky_sink", {"failures": 100})])
    sink = stash.hooks.get()
    # An accepted item whose verdict sent nothing (bulk_create saves without signals) ...
    [item] = Content.objects.bulk_create([Content(stash=stash, payload={"text": "hi"}, status="accepted")])
    # ... and its delivery on its last try: this failure is final.
    tasks.deliver_sink.apply_async(
        args=[sink.pk, str(item.pk), "on_accept"], queue=worker.queue, retries=tasks.deliver_sink.max_retries
    )
    wait_for(
        lambda: worker_counts.totals().get((worker_counts.SINK_FAILED, sink.pk)) == 1, message="the failed delivery"
    )

    labels = {"stash": "audit", "config": sink.pk, "hook": "test_flaky_sink"}
    page = scrape(client)
    assert page.value("stash_sink_deliveries_total", **labels, outcome="failed") == 1
    assert page.value("stash_sink_deliveries_total", **labels, outcome="delivered") == 0
    assert page.value("stash_sink_retries_total", **labels) == 0


def test_the_sweeper_on_the_worker_counts_what_it_recovers_and_fails(worker, client, make_stash, settings):
    stash = make_stash("audit", hooks=[("require_fields", {"fields": ["text"]})])
    past = timezone.now() - timedelta(minutes=5)
    # Saved without signals: no message was ever sent for these, as if it had been lost.
    lost = Content.objects.bulk_create(
        [Content(stash=stash, payload={"text": str(i)}, lease_until=past) for i in range(3)]
    )
    Content.objects.bulk_create(
        [
            Content(
                stash=stash,
                payload={"text": "dies"},
                status="processing",
                attempts=settings.STASH_MAX_ATTEMPTS,
                lease_until=past,
            )
        ]
    )
    page = scrape(client)
    assert page.value("stash_queue_lag_seconds", stash="audit") > 0

    tasks.sweep.apply_async(queue=worker.queue)
    all_judged(4)

    page = scrape(client)
    assert page.value("stash_sweeper_recovered_total") == 3
    assert page.value("stash_sweeper_failed_total") == 1
    assert page.value("stash_items", stash="audit", status="accepted") == len(lost)
    assert page.value("stash_items", stash="audit", status="failed") == 1
