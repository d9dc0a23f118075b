"""Live saves ahead of a bulk backlog, with a real worker on each broker (the configured one —
the embedded default's or Redis — and RabbitMQ): a save made after thousands of bulk items is
judged while most of them still wait; a worker killed mid-backlog loses nothing and judges
nothing twice."""

import time

import pytest
from django.db import transaction
from django.db.models import Count, Max
from django.utils import timezone

from stash import processing
from stash.models import Content, PipelineRun

from ..support.worker import WORKER_LEASE_SECONDS, wait_for
from .test_rabbitmq import _rabbitmq_worker, rabbitmq_worker  # noqa: F401 - fixtures

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

HOOKS = [("require_fields", {"fields": ["text"]}), ("keyword_blocklist", {"words": ["spam"]})]
BACKLOG = 5_000


@pytest.fixture(params=["configured", "rabbitmq"])
def any_worker(request):
    return request.getfixturevalue("worker" if request.param == "configured" else "rabbitmq_worker")


def import_backlog(stash, count=BACKLOG):
    """A bulk import, as a program would make it: ``submit_many`` a thousand at a time, in one
    transaction, so that the whole backlog waits in the queue when the live save comes."""
    items = []
    with transaction.atomic():
        for start in range(0, count, 1000):
            items += processing.submit_many(
                stash, [{"text": f"row {i}"} for i in range(start, min(count, start + 1000))]
            )
    return items


def open_bulk(stash):
    return Content.objects.filter(stash=stash, status__in=["pending", "processing"]).count()


@pytest.mark.parametrize("same_stash", [False, True], ids=["other stash", "same stash"])
def test_a_live_save_is_judged_ahead_of_a_bulk_backlog(any_worker, make_stash, same_stash):
    importer = make_stash("import", hooks=HOOKS)
    comments = importer if same_stash else make_stash("comments", hooks=HOOKS)
    import_backlog(importer)
    live, _ = processing.submit(comments, {"text": "a live comment"})
    # Counted once the save is in: the worker starts on the backlog as soon as the import commits,
    # and on SQLite the save's own insert may first wait for the write lock while slices are recorded.
    open_at_save = open_bulk(importer)

    wait_for(
        lambda: Content.objects.filter(pk=live.pk, status="accepted").exists(),
        timeout=60,
        message="the live save's verdict",
    )
    still_open = open_bulk(importer)

    # Judged while most of the backlog still waited: behind it, it would have waited for all of it.
    assert open_at_save > BACKLOG // 5, f"the backlog was mostly judged ({open_at_save} open) before the save"
    assert still_open > open_at_save // 2, f"only {still_open} of {open_at_save} bulk items were still open"
    wait_for(lambda: not open_bulk(importer), timeout=120, message="the backlog's verdicts")
    assert PipelineRun.objects.count() == BACKLOG + 1  # each judged exactly once


def test_a_worker_killed_mid_backlog_loses_nothing_and_judges_nothing_twice(worker, make_stash, settings):
    settings.STASH_LEASE_SECONDS = WORKER_LEASE_SECONDS
    importer, comments = make_stash("import", hooks=HOOKS), make_stash("comments", hooks=HOOKS)
    bulk = import_backlog(importer, 3_000)
    live = [processing.submit(comments, {"text": f"comment {i}"})[0] for i in range(20)]
    wait_for(lambda: PipelineRun.objects.count() >= 200, timeout=60, message="the backlog to be under way")

    worker.kill()
    worker.restart()
    # The sweeper sends again what the killed worker held, once its claims' leases run out.
    while Content.objects.filter(status__in=["pending", "processing"]).exists():
        leases = Content.objects.filter(status="processing").aggregate(last=Max("lease_until"))["last"]
        time.sleep(max(0.5, (leases - timezone.now()).total_seconds() + 0.2 if leases else 0.5))
        processing.sweep()

    items = Content.objects.filter(pk__in=[item.pk for item in bulk + live])
    assert items.count() == 3_020
    assert dict(items.values_list("status").annotate(n=Count("pk")).order_by()) == {"accepted": 3_020}
    runs = PipelineRun.objects.values("content").annotate(n=Count("pk")).filter(n__gt=1)
    assert not runs.exists(), "items judged twice"
