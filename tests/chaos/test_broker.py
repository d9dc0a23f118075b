"""The broker fails: down at save time, refusing in on_commit, flushed, restarted, delivering thrice."""

import threading
import time

import pytest
from django.db import transaction
from kombu.exceptions import OperationalError

from hooksite.celery import app
from stash import processing
from stash.models import Content, PipelineRun

from .ledger import CHECKS, payload, scaled

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def items(start, count, **extra):
    """``count`` payloads from number ``start``; every fifth is spam (rejected)."""
    return [payload(i, spam=i % 5 == 0, **extra) for i in range(start, start + count)]


def test_broker_down_at_save_time(chaos, own_broker):
    """Saves made while the broker is stopped succeed; the sweeper sends them once it is back."""
    stash = chaos.stash("broker-down")
    singles, bulk = scaled(4, 40), scaled(20, 400)
    with own_broker.redis.stopped():
        chaos.submit(stash, items(0, singles))
        chaos.submit_bulk(stash, items(singles, bulk))
        assert Content.objects.filter(stash=stash, status="pending").count() == singles + bulk
        chaos.healed()
    chaos.settle()


def test_publish_raising_in_on_commit(chaos, chaos_worker, monkeypatch):
    """A publish that raises after commit never fails the save; the sweeper sends the items."""
    stash = chaos.stash("publish-raises")

    def refuse(*args, **kwargs):
        raise OperationalError("chaos: the broker refused the message")

    monkeypatch.setattr(app, "send_task", refuse)
    chaos.submit(stash, items(0, scaled(5, 50)))
    chaos.submit_bulk(stash, items(100_000, scaled(20, 400)))
    monkeypatch.undo()
    chaos.healed()
    chaos.settle()


def test_rolled_back_transaction(chaos, chaos_worker):
    """Items of a rolled-back transaction or savepoint are never judged and take no queue number."""
    stash = chaos.stash("rolled-back")

    class Abort(Exception):
        pass

    doomed = []
    with pytest.raises(Abort), transaction.atomic():
        doomed += [processing.submit(stash, p)[0].pk for p in items(0, scaled(5, 50))]
        raise Abort
    with transaction.atomic():
        chaos.submit(stash, items(1000, scaled(10, 100)))
        with pytest.raises(Abort), transaction.atomic():  # a savepoint inside a committed transaction
            doomed += [c.pk for c in processing.submit_many(stash, items(2000, scaled(10, 100)))]
            raise Abort
        chaos.submit_bulk(stash, items(3000, scaled(10, 100)))
    chaos.settle()
    assert not Content.objects.filter(pk__in=doomed).exists()
    assert not PipelineRun.objects.filter(content_id__in=doomed).exists()


def test_duplicate_delivery(chaos, chaos_worker, monkeypatch):
    """Every message is delivered three times (saves and sweeps alike): each item is judged once."""
    stash = chaos.stash("delivered-thrice")
    send_task = app.send_task

    def thrice(*args, **kwargs):
        for _ in range(3):
            sent = send_task(*args, **kwargs)
        return sent

    monkeypatch.setattr(app, "send_task", thrice)
    chaos.submit(stash, items(0, scaled(10, 100)))
    chaos.submit_bulk(stash, items(1000, scaled(30, 600)))
    chaos.settle()


def test_redis_flushed(chaos, own_broker):
    """FLUSHALL on the broker while items wait and run: the lost messages are sent again, and
    saves made after the flush are delivered."""
    stash = chaos.stash("flushed", hooks=[*CHECKS, ("test_sleep", {"seconds": 0.01})])
    chaos.submit_bulk(stash, items(0, scaled(30, 300), sleep=True))
    chaos.submit(stash, items(10_000, scaled(5, 50)))
    own_broker.redis.client().flushall()
    chaos.submit(stash, items(20_000, scaled(5, 50)))
    chaos.submit_bulk(stash, items(30_000, scaled(20, 200)))
    chaos.healed()
    chaos.settle()


def test_broker_restarted_under_load(chaos, own_broker):
    """The broker stops and starts again while items are saved and judged."""
    stash = chaos.stash("restarted")
    count = scaled(60, 600)  # at least

    def restart():
        time.sleep(0.5)
        with own_broker.redis.stopped():
            time.sleep(1)

    restarter = threading.Thread(target=restart)
    restarter.start()
    start = 0
    while start < count or restarter.is_alive():  # saves go on all through the restart
        chaos.submit(stash, items(start, 5))
        chaos.submit_bulk(stash, items(start + 5, 5))
        start += 10
        time.sleep(scaled(0.05, 0.01))
    restarter.join()
    chaos.healed()
    chaos.settle()
