"""Single saves that share their stash's waiting message, with a real worker and a Redis cache of
their own: the cache flushed while saves wait on its marker, and they are judged within a sweep."""

import time

import pytest

from stash import processing
from stash.models import Content

from ..chaos.processes import RedisServer
from ..support.worker import Worker, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

# beat sends the sweeper every STASH_SWEEP_INTERVAL seconds (15 by default); this test sweeps as
# often as this, with the default lease of unclaimed items (60 s) far beyond it.
SWEEP_INTERVAL = 1
LEASE_SECONDS = 60


@pytest.fixture(scope="module")
def cache_server(tmp_path_factory):
    server = RedisServer(tmp_path_factory.mktemp("cache")).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def cached_worker(django_db_setup, django_db_blocker, worker_queue, cache_server, tmp_path_factory):
    worker = Worker(
        f"{worker_queue}-cached", tmp_path_factory.mktemp("cached-worker"), cache_url=cache_server.url
    ).start()
    yield worker
    worker.stop()


@pytest.fixture
def shared_cache(cached_worker, cache_server, settings):
    """This process saves and sweeps with the worker's queue and cache, as a web process and beat do."""
    settings.STASH_QUEUE = cached_worker.queue
    settings.STASH_LEASE_SECONDS = LEASE_SECONDS
    settings.CACHES = cache_server.as_cache(settings)
    return cache_server


def test_saves_that_joined_a_message_are_judged_within_a_sweep_after_the_cache_is_flushed(shared_cache, make_stash):
    stash = make_stash("flushed", hooks=[("require_fields", {"fields": ["text"]}), ("test_sleep", {"seconds": 1.5})])
    (first, _) = processing.submit(stash, {"text": "first", "sleep": True})
    wait_for(lambda: Content.objects.filter(pk=first.pk, status="processing").exists(), message="the first claim")
    # Its message holds the stash's marker while it judges: these saves join it, publishing nothing.
    joined = [processing.submit(stash, {"text": f"joined {i}"})[0].pk for i in range(5)]
    shared_cache.client().flushall()  # the marker and the note that saves joined are gone
    wait_for(lambda: Content.objects.filter(pk=first.pk, status="accepted").exists(), message="the first verdict")
    flushed_at = time.monotonic()

    def judged():
        processing.sweep()  # as beat sends it, every SWEEP_INTERVAL
        return not Content.objects.filter(pk__in=joined, status__in=["pending", "processing"]).exists()

    wait_for(
        judged,
        timeout=SWEEP_INTERVAL + 5,
        interval=SWEEP_INTERVAL,
        message="the verdicts of the saves that joined the message",
    )

    assert time.monotonic() - flushed_at < SWEEP_INTERVAL + 5 < LEASE_SECONDS
    assert set(Content.objects.filter(pk__in=joined).values_list("status", flat=True)) == {"accepted"}
    assert all(item.runs.count() == 1 for item in Content.objects.filter(pk__in=joined))
