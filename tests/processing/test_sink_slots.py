"""Delivery slots: at most ``STASH_SINK_CONCURRENCY`` deliveries of one hook config run at once.

A delivery beyond the limit is not run: it is sent again to wait a second or two (not lost, and
not one of its error retries); slots come free when a delivery ends and when they expire; a cache
that fails lets deliveries run. The deliveries run as a worker runs them (``apply``); what they
send again is caught at the publishing boundary (``broker``).
"""

import time

import pytest
from django.core.cache import cache

from stash import hooks, processing, tasks
from stash.db import publishing
from stash.models import Content
from stash.processing import delivery_slots as slots, worker_counts

pytestmark = pytest.mark.django_db

CALLS = []


class Recording(hooks.Sink):
    """Delivered by its own task; records each item it is called for, and fails for ``"fail"``."""

    deliver_async = True

    def on_accept(self, item, result):
        CALLS.append(item.payload["text"])
        if item.payload["text"] == "fail":
            raise RuntimeError("the receiver is down")


@pytest.fixture
def due(register_temporarily, make_stash, settings):
    """``due(text)``: judge an item of a stash with the recording sink; its delivery's args."""
    register_temporarily("test_recording_sink", Recording)
    CALLS.clear()
    settings.STASH_SINK_CONCURRENCY = 2
    stash = make_stash("audit", hooks=[("test_recording_sink", {})])

    def judge(text="hello"):
        content = Content.objects.create(stash=stash, payload={"text": text})
        (delivery,) = processing.judge([content.pk]).deliveries
        return delivery.args

    judge.config_id = stash.hooks.get().pk
    return judge


def taken(config_id):
    return [n for n in range(4) if cache.get(slots.slot_key(config_id, n)) is not None]


def test_a_delivery_beyond_the_limit_waits_in_the_queue_without_running(due, broker, settings):
    first, second, third = due("one"), due("two"), due("three")
    # Two deliveries of the config are running (the limit is 2): they hold its slots.
    with processing.delivery_slot(due.config_id), processing.delivery_slot(due.config_id):
        result = tasks.deliver_sink.apply(args=third)

    assert CALLS == []  # not run
    assert result.state == "RETRY"
    [message] = broker.messages  # sent again, to wait a second or two in the sink queue
    assert (message["name"], message["args"], message["queue"]) == (
        publishing.DELIVER_TASK,
        third,
        settings.STASH_SINK_QUEUE,
    )
    assert 0.5 * tasks.SLOT_WAIT <= message["countdown"] <= 1.5 * tasks.SLOT_WAIT
    assert message["retries"] == 0  # a wait for a slot is none of its error retries
    assert worker_counts.totals().get((worker_counts.SINK_RETRIED, due.config_id)) is None

    # Once the slots are free, the message sent again delivers it; so do the others.
    for args in (message["args"], first, second):
        assert tasks.deliver_sink.apply(args=args).state == "SUCCESS"
    assert CALLS == ["three", "one", "two"]
    assert taken(due.config_id) == []


def test_a_delivery_put_back_keeps_the_count_of_its_error_retries(due, broker):
    args = due()
    with processing.delivery_slot(due.config_id), processing.delivery_slot(due.config_id):
        tasks.deliver_sink.apply(args=args, retries=3)

    [message] = broker.messages
    assert message["retries"] == 3


def test_slots_are_per_hook_config(due, broker):
    args = due()
    with processing.delivery_slot(due.config_id + 1000), processing.delivery_slot(due.config_id + 1000):
        assert tasks.deliver_sink.apply(args=args).state == "SUCCESS"

    assert CALLS == ["hello"] and broker.messages == []


def test_a_delivery_frees_its_slot_when_it_fails_too(due, broker):
    for _ in range(3):  # more than the limit, one after the other
        result = tasks.deliver_sink.apply(args=due("fail"), retries=tasks.deliver_sink.max_retries)
        assert result.state == "FAILURE"

    assert CALLS == ["fail"] * 3 and broker.messages == []
    assert taken(due.config_id) == []


def test_a_slot_held_by_a_killed_worker_comes_free_when_it_expires(due, broker, settings):
    settings.STASH_SINK_SLOT_SECONDS = 1
    args = due()
    # Two deliveries whose worker was killed: their slots are never freed by them.
    assert slots.take_slot(due.config_id) and slots.take_slot(due.config_id)
    assert slots.take_slot(due.config_id) is None

    time.sleep(1.5)
    assert tasks.deliver_sink.apply(args=args).state == "SUCCESS"
    assert CALLS == ["hello"] and broker.messages == []


def test_an_expired_slot_taken_by_another_delivery_is_not_freed_by_its_first_holder(due, settings):
    settings.STASH_SINK_CONCURRENCY = 1
    key = slots.slot_key(due.config_id, 0)
    first = slots.take_slot(due.config_id)
    cache.delete(key)  # expired ...
    second = slots.take_slot(due.config_id)  # ... and taken again

    slots.free_slot(first)  # the first delivery ends late

    assert second and cache.get(key) == second.split(" ")[1]
    assert slots.take_slot(due.config_id) is None


def test_a_cache_that_fails_lets_the_delivery_run(due, broker, monkeypatch):
    args = due()

    def down(*args, **kwargs):
        raise ConnectionError("the cache is down")

    monkeypatch.setattr(cache, "add", down)
    monkeypatch.setattr(cache, "get", down)
    assert tasks.deliver_sink.apply(args=args).state == "SUCCESS"

    assert CALLS == ["hello"] and broker.messages == []


def test_a_delivery_that_cannot_be_put_back_runs_rather_than_being_lost(due, broker):
    args = due()
    broker.error = ConnectionError("the broker is down")
    with processing.delivery_slot(due.config_id), processing.delivery_slot(due.config_id):
        assert tasks.deliver_sink.apply(args=args).state == "SUCCESS"

    assert CALLS == ["hello"]


def test_no_bound_when_the_limit_is_zero(due, broker, settings):
    settings.STASH_SINK_CONCURRENCY = 0
    results = [tasks.deliver_sink.apply(args=due(str(n))) for n in range(3)]

    assert [r.state for r in results] == ["SUCCESS"] * 3 and broker.messages == []
    assert taken(due.config_id) == []
