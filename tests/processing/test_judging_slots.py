"""A slow stash's share of the judging processes: its messages take a slot first, or come back later."""

import time

import pytest

from stash import processing, tasks
from stash.db import publishing
from stash.models import Content
from stash.processing import slowness

from ..support.hook_support import closed_port

pytestmark = pytest.mark.django_db

SLOW_SECONDS = 0.05  # STASH_SLOW_MESSAGE_SECONDS in these tests
SLEEP = 0.1  # what the slow stash's filter sleeps on an item that asks for it


def run(ids, **kwargs):
    """Run one judging message in this process, as a worker would; fail the test if it raised."""
    result = tasks.process_contents.apply(args=[[str(pk) for pk in ids]], kwargs=kwargs)
    assert result.state == "SUCCESS", result.traceback
    return result


def item(stash, sleep=False):
    return Content.objects.create(stash=stash, payload={"text": "hi", "sleep": sleep})


def status(content):
    content.refresh_from_db()
    return content.status


def deferred(broker):
    return [message for message in broker.messages if message.get("countdown")]


@pytest.fixture
def slow(make_stash, settings):
    """A stash seen to be slow: one of its messages took longer than STASH_SLOW_MESSAGE_SECONDS."""
    settings.STASH_SLOW_MESSAGE_SECONDS = SLOW_SECONDS
    settings.STASH_STASH_CONCURRENCY = 1
    stash = make_stash("slow", hooks=[("test_sleep", {"seconds": SLEEP})])
    first = item(stash, sleep=True)
    run([first.pk])
    assert status(first) == "accepted"
    assert stash.pk in processing.slow_stashes()
    return stash


@pytest.fixture
def fast(make_stash):
    return make_stash("fast", hooks=[("require_fields", {"fields": ["text"]})])


def test_a_slow_stashs_second_concurrent_message_is_deferred_and_sent_again_unchanged(slow, broker, settings):
    holding, waiting = item(slow, sleep=True), item(slow)

    with processing.judging_slot([holding.pk], None, seconds=30) as slot:  # a message judging meanwhile
        assert slot is not None and slot.held
        run([waiting.pk], wake=slow.pk)
        assert status(waiting) == "pending"  # nothing claimed: the message went back to the queue

    [again] = deferred(broker)
    assert again["name"] == publishing.PROCESS_TASK
    assert again["args"] == [[str(waiting.pk)]] and again["kwargs"] == {"wake": slow.pk}
    assert again["queue"] == settings.STASH_QUEUE
    assert again["time_limit"] == settings.CELERY_TASK_TIME_LIMIT
    assert publishing.DEFER_SECONDS <= again["countdown"] <= 2 * publishing.DEFER_SECONDS

    run(*again["args"], **again["kwargs"])  # the slot is free again: judged once
    assert status(waiting) == "accepted"
    assert waiting.runs.count() == 1


def test_a_message_gives_its_slot_back_when_it_ends(slow, broker):
    items = [item(slow, sleep=True) for _ in range(3)]

    for content in items:  # one after another: each finds the slot its predecessor gave back
        run([content.pk])

    assert [status(content) for content in items] == ["accepted"] * 3
    assert deferred(broker) == []
    assert slow.pk in processing.slow_stashes()  # still slow: its mark is refreshed


def test_a_message_that_raises_gives_its_slot_back(slow, broker, monkeypatch):
    content = item(slow)

    def fail(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(processing, "judge", fail)
    with pytest.raises(RuntimeError, match="database went away"):
        tasks.process_contents.apply(args=[[str(content.pk)]], throw=True)
    monkeypatch.undo()

    run([content.pk])
    assert status(content) == "accepted"
    assert deferred(broker) == []


def test_a_killed_holders_slot_frees_itself_after_its_time_limit(slow, broker):
    killed = processing.slots.take([item(slow).pk], None, seconds=1)  # never given back
    assert killed is not None and killed.held
    content = item(slow)

    run([content.pk])
    assert status(content) == "pending" and len(deferred(broker)) == 1

    time.sleep(2.1)  # past the holder's time limit (whole seconds, as caches keep them)
    run([content.pk])
    assert status(content) == "accepted"
    assert len(deferred(broker)) == 1


def test_a_fast_stash_is_never_deferred_while_a_slow_one_is_busy(slow, fast, broker):
    batch, woken = [item(fast), item(fast)], item(fast)

    with processing.judging_slot([item(slow).pk], None, seconds=30):
        run([content.pk for content in batch])
        run([woken.pk], wake=fast.pk)

    assert [status(content) for content in (*batch, woken)] == ["accepted"] * 3
    assert deferred(broker) == []
    assert fast.pk not in processing.slow_stashes()


def test_a_recovery_is_never_deferred_and_marks_the_stopped_stash_slow(
    slow, broker, django_capture_on_commit_callbacks
):
    stopped = "0b7f4f3e-8f6e-4f4b-9a57-0c2f6f1e0a11"
    content = item(slow)
    Content.objects.filter(pk=content.pk).update(
        status="processing", attempts=1, lease_token=processing.token_for(stopped)
    )
    slowness.clear()
    assert processing.slow_stashes() == {}

    with processing.judging_slot([item(slow).pk], None, seconds=30), django_capture_on_commit_callbacks(execute=True):
        run([], recover=stopped, hung=False)

    content.refresh_from_db()
    assert content.lease_token != processing.token_for(stopped)  # taken over by the recovery
    assert [message["args"] for message in broker.messages] == [[[str(content.pk)]]]  # sent again, alone
    assert deferred(broker) == []
    assert slow.pk in processing.slow_stashes()


def test_a_stash_judged_fast_again_is_no_longer_marked_slow(slow, broker):
    run([item(slow, sleep=False).pk])

    assert processing.slow_stashes() == {}
    assert slowness.stashes_of([item(slow).pk], None, processing.slow_stashes()) == set()


def test_no_limit_with_a_concurrency_of_zero(slow, broker, settings):
    settings.STASH_STASH_CONCURRENCY = 0
    content = item(slow)

    with processing.judging_slot([item(slow).pk], None, seconds=30):
        run([content.pk])

    assert status(content) == "accepted" and deferred(broker) == []


def test_a_cache_that_fails_lets_every_message_run(slow, broker, settings, caplog):
    content = item(slow)
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{closed_port()}/0",
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 1, "SOCKET_TIMEOUT": 1},
        }
    }

    run([content.pk], wake=slow.pk)

    assert status(content) == "accepted" and deferred(broker) == []
    assert "Could not read which stashes are slow; judging as if none were." in caplog.text


def test_a_cache_that_fails_while_taking_a_slot_lets_the_message_run(slow, broker, monkeypatch, caplog):
    content = item(slow)

    def refuse(*args, **kwargs):
        raise ConnectionError("cache full")

    monkeypatch.setattr(processing.cache_slots.cache, "add", refuse)
    run([content.pk])

    assert status(content) == "accepted" and deferred(broker) == []
    assert "Could not take a judging slot; judging the message now." in caplog.text


def test_a_message_whose_deferral_the_broker_refuses_runs_at_once(slow, broker):
    content = item(slow)
    broker.error = ConnectionError("broker down")

    with processing.judging_slot([item(slow).pk], None, seconds=30):
        run([content.pk])

    assert status(content) == "accepted"
