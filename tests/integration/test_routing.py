"""Two workers on two queues: a flood on a stash with a queue of its own never delays another stash,
and whatever the busy stash's worker sends again stays on that stash's queue (on the configured
broker, and on RabbitMQ at ``STASH_TEST_AMQP_URL``, as in test_rabbitmq)."""

import os
import socket
import statistics
import time

import pytest
from django.db import connection, transaction
from kombu import Connection

from stash import processing
from stash.models import Content

from ..support.worker import WORKER_TIME_LIMIT, WORKER_TIME_LIMIT_MARGIN, Worker, publishing_to, wait_for
from .test_hangs import STUCK
from .test_rabbitmq import AMQP_URL, unreachable
from .test_worker import judged, submit

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

#: Items of the flood: 20,000 by default (the issue's figure), fewer with STASH_ROUTING_FLOOD.
FLOOD = int(os.environ.get("STASH_ROUTING_FLOOD", "20000"))
#: The longest a verdict of the other stash may take from its save, in seconds, on PostgreSQL.
#: SQLite has one write lock for every process: there a save and a claim of the other stash wait
#: for the flood's writes whatever queue it is on (up to 1.5 s measured on a busy 2-CPU machine),
#: so on the embedded default the test checks the routing and prints the figures.
BOUND = 1.0
HOOKS = [{"hook": "test_judged_by"}, ("require_fields", {"fields": ["n"]})]
UNJUDGED = [Content.Status.PENDING, Content.Status.PROCESSING]


class StashQueueWorker(Worker):
    """A worker for one stash's queue (``-Q``). Its default queue (``STASH_QUEUE``) is one that no
    worker reads: anything it sent there rather than to the stash's queue would never be judged."""

    def env(self):
        return {**super().env(), "STASH_QUEUE": f"{self.queue}-unread"}


@pytest.fixture(scope="module")
def busy_worker(django_db_setup, django_db_blocker, worker_queue, tmp_path_factory):
    worker = StashQueueWorker(f"{worker_queue}-busy", tmp_path_factory.mktemp("busy-worker")).start()
    yield worker
    worker.stop()


def node(worker):
    """The node name of ``worker`` (``--hostname <queue>@%h``)."""
    return f"{worker.queue}@{socket.gethostname()}"


def judges(content_ids):
    """The names of the workers that judged ``content_ids`` (written by the test_judged_by hook)."""
    return set(Content.objects.filter(pk__in=content_ids).values_list("payload__judged_by", flat=True).distinct())


def test_a_flood_on_a_stash_with_its_own_queue_does_not_delay_another_stash(worker, busy_worker, make_stash):
    """20,000 items on one stash, from bulk submissions, all judged by its queue's worker; items
    saved one at a time meanwhile to a stash on the default queue, all by the default queue's
    worker, each within ``BOUND`` of its save (see ``BOUND`` for SQLite)."""
    flood = make_stash("flood", hooks=HOOKS, queue=busy_worker.queue)
    other = make_stash("other", hooks=HOOKS)  # the default queue: the session's worker
    latencies, during = [], 0

    def save_one():
        """Save an item of the other stash, wait for its verdict, and note save -> verdict."""
        nonlocal during
        item = submit(other, n=len(latencies))
        item = wait_for(
            lambda: Content.objects.filter(pk=item.pk, status="accepted").first(),
            interval=0.01,
            message="the other stash's verdict",
        )
        during += Content.objects.filter(stash=flood, status__in=UNJUDGED).exists()
        latencies.append((item.processed_at - item.created_at).total_seconds())

    # The flood in bulk submissions of 1,000, one save of the other stash after each; then one
    # save at a time until the flood is judged.
    started = time.monotonic()
    for start in range(0, FLOOD, processing.BULK_LIMIT):
        processing.submit_many(flood, [{"n": n} for n in range(start, min(FLOOD, start + processing.BULK_LIMIT))])
        save_one()
    while Content.objects.filter(stash=flood, status__in=UNJUDGED).exists():
        save_one()
    took = time.monotonic() - started

    flood_ids = list(Content.objects.filter(stash=flood).values_list("pk", flat=True))
    assert len(flood_ids) == FLOOD
    assert not Content.objects.filter(stash=flood).exclude(status="accepted").exists()
    assert during >= 10, f"only {during} saves were judged while the flood was"
    print(
        f"\nflood of {FLOOD} judged in {took:.1f} s; {len(latencies)} saves of the other stash meanwhile "
        f"({during} before the flood's end), save -> verdict: median {statistics.median(latencies) * 1000:.0f} ms, "
        f"max {max(latencies) * 1000:.0f} ms"
    )
    if connection.vendor == "postgresql":
        assert max(latencies) <= BOUND, latencies
    assert judges(flood_ids) == {node(busy_worker)}
    others = list(Content.objects.filter(stash=other).values_list("pk", flat=True))
    assert judges(others) == {node(worker)}


def stopped_and_recovered(stash_worker, make_stash, settings):
    """A batch of a stash on ``stash_worker``'s queue runs past its time limit there (a hook stuck
    where no alarm reaches it). Its recovery, the items it sends back alone and the stuck item's
    second stop must all go to the stash's queue: anywhere else, nothing would judge them."""
    settings.STASH_TIME_LIMIT, settings.STASH_TIME_LIMIT_MARGIN = WORKER_TIME_LIMIT, WORKER_TIME_LIMIT_MARGIN
    stash = make_stash("stuck", hooks=[{**STUCK, "on_error": "hold"}, *HOOKS], queue=stash_worker.queue)
    with transaction.atomic():
        items = [submit(stash, stuck=True, n=0), *(submit(stash, n=n) for n in (1, 2))]

    verdicts = [judged(item, timeout=60) for item in items]

    assert [(item.status, item.runs.count()) for item in verdicts] == [("held", 1), ("accepted", 1), ("accepted", 1)]
    assert "still running past its timeout of 300 ms" in verdicts[0].reason
    assert "Hard time limit" in stash_worker.read_log()
    assert judges([item.pk for item in verdicts[1:]]) == {node(stash_worker)}


def test_a_message_stopped_on_a_stash_queue_is_recovered_from_that_queue(busy_worker, make_stash, settings):
    stopped_and_recovered(busy_worker, make_stash, settings)


@pytest.fixture(scope="module")
def amqp_busy_worker(django_db_setup, django_db_blocker, worker_queue, tmp_path_factory):
    problem = unreachable(AMQP_URL)
    if problem:
        pytest.fail(f"RabbitMQ is not reachable at {AMQP_URL} ({problem}).", pytrace=False)
    worker = StashQueueWorker(
        f"{worker_queue}-amqp-busy", tmp_path_factory.mktemp("amqp-busy"), broker_url=AMQP_URL
    ).start()
    yield worker
    worker.stop()
    with Connection(AMQP_URL) as connection:  # the queue outlives its worker on the broker: remove it
        connection.default_channel.queue_delete(worker.queue)


def test_on_rabbitmq_too_a_stopped_message_is_recovered_from_its_stash_queue(amqp_busy_worker, make_stash, settings):
    settings.CELERY_BROKER_URL = AMQP_URL
    with publishing_to(AMQP_URL):
        stopped_and_recovered(amqp_busy_worker, make_stash, settings)
