"""Saved items reach the workers after commit, in chunks, and a broken broker never breaks a save."""

import itertools
import json
import logging
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection, transaction
from django.db.models.signals import post_save
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from kombu.exceptions import OperationalError

from stash import hooks, processing
from stash.db import publishing
from stash.models import Content, HookConfig
from stash.processing import claiming, judging

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", hooks=[("require_fields", {"fields": ["text"]})])


def submit(stash, **payload):
    return Content.objects.create(stash=stash, payload=payload or {"text": "hi"})


def test_a_save_in_autocommit_is_published_once(audit, broker, settings):
    item = submit(audit)
    assert broker.messages == [
        {
            "name": "stash.tasks.process_contents",
            "args": [[str(item.pk)]],
            "kwargs": {"wake": audit.pk},
            "queue": settings.STASH_QUEUE,
            "retry": True,
            "retry_policy": publishing._RETRY_POLICY,
            "time_limit": settings.STASH_TIME_LIMIT,
        }
    ]


def test_a_save_in_a_transaction_is_published_after_commit(audit, broker):
    with transaction.atomic():
        item = submit(audit)
        assert broker.messages == []
        assert Content.objects.filter(pk=item.pk).exists()
    assert broker.chunks == [[str(item.pk)]]


def test_saves_in_one_transaction_travel_together_in_chunks_of_the_batch_size(audit, broker, settings):
    settings.STASH_BATCH_SIZE = 10
    with transaction.atomic():
        items = [submit(audit, text=f"item {n}") for n in range(25)]
        assert broker.messages == []
    assert [len(chunk) for chunk in broker.chunks] == [10, 10, 5]
    assert broker.ids == [str(item.pk) for item in items]  # each once, in order of saving


def test_an_item_saved_twice_in_a_transaction_is_published_once(audit, broker):
    with transaction.atomic():
        item = submit(audit, text="first")
        item.payload = {"text": "second"}
        item.save()
    assert broker.chunks == [[str(item.pk)]]
    assert Content.objects.get(pk=item.pk).revision == 2


def test_saves_in_a_nested_atomic_block_join_the_outer_batch(audit, broker):
    with transaction.atomic():
        outer = submit(audit, text="outer")
        with transaction.atomic():
            inner = submit(audit, text="inner")
        last = submit(audit, text="last")
    assert broker.chunks == [[str(outer.pk), str(inner.pk), str(last.pk)]]


def test_a_rolled_back_transaction_publishes_nothing_and_leaks_into_no_later_batch(audit, broker):
    class Abort(Exception):
        pass

    with pytest.raises(Abort):
        with transaction.atomic():
            lost = [submit(audit, text=f"lost {n}") for n in range(3)]
            raise Abort
    assert broker.messages == []
    assert not Content.objects.filter(pk__in=[c.pk for c in lost]).exists()

    with transaction.atomic():
        kept = [submit(audit, text=f"kept {n}") for n in range(2)]
    assert broker.chunks == [[str(c.pk) for c in kept]]

    after = submit(audit, text="autocommit")
    assert broker.chunks[-1] == [str(after.pk)]
    assert not {str(c.pk) for c in lost} & set(broker.ids)


def test_a_rolled_back_savepoint_publishes_nothing_that_is_judged(audit, broker):
    with transaction.atomic():
        kept = submit(audit, text="kept")
        try:
            with transaction.atomic():
                lost = submit(audit, text="lost")
                raise ValueError("undo the inner block")
        except ValueError:
            pass
        later = submit(audit, text="later")
    assert not Content.objects.filter(pk=lost.pk).exists()
    # The committed items travel in the transaction's one batch. The rolled-back savepoint's id
    # may ride along (the batch belongs to the outer transaction), but it names nothing to judge.
    assert len(broker.messages) == 1
    assert {str(kept.pk), str(later.pk)} <= set(broker.ids) <= {str(kept.pk), str(later.pk), str(lost.pk)}
    report = processing.judge(broker.ids)
    assert (report.claimed, report.judged) == (2, 2)


def test_a_save_with_an_unchanged_payload_publishes_nothing(audit, broker):
    item = submit(audit, text="hi")
    assert len(broker.messages) == 1
    loaded = Content.objects.get(pk=item.pk)
    loaded.source = Content.Source.ADMIN
    loaded.save()
    loaded.payload = {"text": "hi"}  # equal, not changed
    loaded.save()
    item.save()  # the instance that created it, saved again as it is
    assert len(broker.messages) == 1
    assert Content.objects.get(pk=item.pk).revision == 1

    loaded.payload = {"text": "changed"}
    loaded.save()
    assert broker.chunks == [[str(item.pk)], [str(item.pk)]]


def test_a_raw_save_publishes_nothing(audit, broker, tmp_path):
    now = timezone.now()
    item = Content(stash=audit, payload={"text": "loaded"}, content_hash="0" * 64, created_at=now, updated_at=now)
    item.save_base(raw=True)
    assert Content.objects.filter(pk=item.pk).exists()

    flagged = Content.objects.get(pk=item.pk)
    flagged._enqueue_on_commit = True  # as if save() had judged it new, but the signal says raw
    post_save.send(sender=Content, instance=flagged, created=True, update_fields=None, raw=True, using="default")

    fixture = tmp_path / "contents.json"
    fixture.write_text(
        json.dumps(
            [
                {
                    "model": "stash.content",
                    "pk": "6b1d3f3e-8f0a-4c55-9a43-0f4c1a2b3c4d",
                    "fields": {
                        "stash": audit.pk,
                        "payload": {"text": "from a fixture"},
                        "content_hash": "1" * 64,
                        "status": "accepted",
                        "revision": 4,
                        "created_at": "2024-01-01T00:00:00Z",
                        "updated_at": "2024-01-01T00:00:00Z",
                    },
                }
            ]
        )
    )
    call_command("loaddata", str(fixture), verbosity=0)

    assert broker.messages == []
    loaded = Content.objects.get(pk="6b1d3f3e-8f0a-4c55-9a43-0f4c1a2b3c4d")
    assert (loaded.status, loaded.revision) == ("accepted", 4)  # stored as dumped, not judged again


@pytest.mark.parametrize(
    "error",
    [
        OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused."),
        ConnectionError("broker unreachable"),
    ],
)
def test_a_failing_publish_does_not_break_the_save_and_the_sweeper_sends_it_later(audit, broker, caplog, error):
    broker.error = error
    with caplog.at_level(logging.ERROR, logger="stash.db.publishing"):
        item = submit(audit)

    stored = Content.objects.get(pk=item.pk)
    assert (stored.status, stored.revision) == ("pending", 1)
    assert broker.messages == []
    [record] = [r for r in caplog.records if r.name == "stash.db.publishing"]
    assert record.levelno == logging.ERROR
    assert record.getMessage() == "Could not publish 1 item(s); the sweeper will send them again."
    assert record.exc_info[1] is error

    # The broker is back, the lease has not run out: the sweeper sends the item nowhere itself,
    # but wakes its stash (no message holds the stash's marker), whose message claims it.
    broker.error = None
    report = processing.sweep()
    assert (report.requeued, report.woken, broker.chunks) == (0, 1, [[]])
    assert broker.messages[0]["kwargs"] == {"wake": audit.pk}
    broker.messages.clear()

    # Its lease runs out (no worker ever claimed it): the next sweep sends it again.
    Content.objects.filter(pk=item.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    report = processing.sweep()
    assert (report.requeued, report.failed) == (1, 0)
    assert broker.chunks == [[str(item.pk)]]
    stored = Content.objects.get(pk=item.pk)
    assert stored.status == "pending" and stored.lease_until > timezone.now()


def test_a_failing_chunk_loses_no_other_chunk(audit, broker, settings, caplog, monkeypatch):
    settings.STASH_BATCH_SIZE = 2
    calls = []

    def flaky(name, args=(), **options):
        calls.append(args[0])
        if len(calls) == 2:
            raise OperationalError("connection reset")
        broker.messages.append({"name": name, "args": args, **options})

    monkeypatch.setattr(broker, "send_task", flaky)
    with caplog.at_level(logging.ERROR, logger="stash.db.publishing"):
        with transaction.atomic():
            items = [submit(audit, text=f"item {n}") for n in range(5)]

    assert Content.objects.filter(pk__in=[c.pk for c in items], status="pending").count() == 5
    assert [len(chunk) for chunk in calls] == [2, 2, 1]
    assert broker.ids == [str(items[i].pk) for i in (0, 1, 4)]
    assert [r.getMessage() for r in caplog.records if r.name == "stash.db.publishing"] == [
        "Could not publish 2 item(s); the sweeper will send them again."
    ]


def test_saves_while_their_stash_has_a_message_waiting_publish_nothing_and_that_message_judges_them(
    audit, broker, make_stash
):
    broker.held = True  # no worker has started a message yet
    items = [submit(audit, text=f"item {n}") for n in range(5)]
    other = submit(make_stash("other"), text="other stash")
    assert broker.chunks == [[str(items[0].pk)], [str(other.pk)]]

    first = broker.messages[0]
    report = processing.judge(*first["args"], **first["kwargs"])
    assert (report.claimed, report.judged) == (5, 5)
    assert not Content.objects.filter(pk__in=[c.pk for c in items]).exclude(status="accepted").exists()
    assert Content.objects.get(pk=other.pk).status == "pending"

    # The message has started: the next save of the stash is published again.
    later = submit(audit, text="later")
    assert broker.chunks[-1] == [str(later.pk)]


def test_a_save_that_finds_the_marker_coming_down_as_it_joins_publishes_its_item(audit, broker, monkeypatch):
    broker.held = True
    first = submit(audit, text="first")
    join = publishing.join_waiting_message

    def worker_starts_first(stash):
        # The worker takes the marker down between this save's first look and its note.
        message = broker.messages[0]
        assert processing.judge(*message["args"], **message["kwargs"]).judged == 1
        return join(stash)

    monkeypatch.setattr(publishing, "join_waiting_message", worker_starts_first)
    second = submit(audit, text="second")
    assert broker.chunks == [[str(first.pk)], [str(second.pk)]]  # not left waiting for a message that is gone
    assert processing.judge(*broker.messages[1]["args"], **broker.messages[1]["kwargs"]).judged == 1


def test_a_lone_save_costs_its_worker_no_query_for_other_items(audit, broker):
    broker.held = True
    alone = submit(audit)
    message = broker.messages[0]
    with CaptureQueriesContext(connection) as queries:
        assert processing.judge(*message["args"], **message["kwargs"]).judged == 1
    assert not [q["sql"] for q in queries.captured_queries if "LIMIT" in q["sql"]]  # no look for waiting items
    assert Content.objects.get(pk=alone.pk).status == "accepted"


def test_a_claim_that_fills_its_batch_with_waiting_saves_wakes_the_stash_again(audit, broker, settings):
    settings.STASH_BATCH_SIZE = 3
    broker.held = True
    items = [submit(audit, text=f"item {n}") for n in range(7)]
    assert len(broker.messages) == 1

    first = broker.messages.pop(0)
    judged = processing.judge(*first["args"], **first["kwargs"]).judged
    # Each full batch of the saves that joined it sent a message beside it, for another worker.
    assert [(m["args"], m["kwargs"]) for m in broker.messages] == [([[]], {"wake": audit.pk})] * 2
    while broker.messages:
        message = broker.messages.pop(0)
        judged += processing.judge(*message["args"], **message["kwargs"]).judged
    assert judged == 7
    assert Content.objects.filter(pk__in=[c.pk for c in items], status="accepted").count() == 7


def test_a_failed_publish_leaves_no_marker_behind(audit, broker):
    broker.error = OperationalError("connection refused")
    lost = submit(audit, text="not published")
    broker.error = None
    broker.held = True
    item = submit(audit, text="published")
    assert broker.chunks == [[str(item.pk)]]
    message = broker.messages[0]
    assert processing.judge(*message["args"], **message["kwargs"]).judged == 2  # the first one too
    assert Content.objects.get(pk=lost.pk).status == "accepted"


def test_saves_that_joined_a_message_whose_marker_the_cache_lost_are_claimed_after_the_next_sweep(audit, broker):
    broker.held = True  # the first message waits in the queue; the saves after it join it
    items = [submit(audit, text=f"item {n}") for n in range(3)]
    assert broker.chunks == [[str(items[0].pk)]]
    cache.clear()  # the cache restarted empty: the marker and the note that saves joined are gone
    first = broker.messages.pop(0)
    assert processing.judge(*first["args"], **first["kwargs"]).judged == 1  # its own item only

    report = processing.sweep()  # long before any lease runs out

    assert (report.requeued, report.woken, broker.chunks) == (0, 1, [[]])
    assert processing.sweep().woken == 0  # its message holds the marker: no second one
    woken = broker.messages.pop(0)
    assert processing.judge(*woken["args"], **woken["kwargs"]).judged == 2
    assert Content.objects.filter(pk__in=[c.pk for c in items], status="accepted").count() == 3
    assert processing.sweep().woken == 0  # nothing waits


@pytest.mark.parametrize("failure", ["every call fails", "redis unreachable"])
def test_a_failing_cache_never_holds_a_save_back(audit, broker, monkeypatch, caplog, settings, failure):
    def broken(*args, **kwargs):
        raise ConnectionError("cache unreachable")

    broker.held = True
    if failure == "every call fails":
        monkeypatch.setattr(publishing.cache, "add", broken)
        if hasattr(publishing.cache, "client"):  # django-redis: its Redis client, too
            monkeypatch.setattr(publishing.cache.client, "get_client", broken)
    else:  # nothing listens on port 1
        settings.CACHES = {
            "default": {
                "BACKEND": "django_redis.cache.RedisCache",
                "LOCATION": "redis://127.0.0.1:1/0",
                "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 0.2},
            }
        }
    with caplog.at_level(logging.ERROR, logger="stash.db.publishing"):
        items = [submit(audit, text=f"item {n}") for n in range(2)]
    assert broker.chunks == [[str(item.pk)] for item in items]
    assert "Could not read the waiting-message marker" in caplog.text


def test_saves_made_while_a_message_judges_join_its_next_batch(audit, broker, register_temporarily):
    class SaveAnother(hooks.Filter):
        """Saves a new item of the stash whenever it judges one marked "first", as a busy site would."""

        def filter(self, it):
            if it.payload.get("first"):
                Content.objects.create(stash=audit, payload={"text": "saved meanwhile"})
            return self.keep()

    register_temporarily("save_another", SaveAnother)
    HookConfig.objects.create(stash=audit, hook="save_another")
    audit.refresh_from_db()
    broker.held = True
    submit(audit, text="first", first=True)
    [message] = broker.messages

    report = processing.judge(*message["args"], **message["kwargs"])
    assert (report.claimed, report.judged) == (2, 2)  # the one saved meanwhile, too
    assert len(broker.messages) == 1  # which published nothing: it joined the running message
    assert set(Content.objects.values_list("status", flat=True)) == {"accepted"}


def saving_during_claims(monkeypatch, stash, calls, claims_nothing=False):
    """Make a save of ``stash`` right after the claims numbered ``calls`` (1: a message's first),
    which, ``claims_nothing``, claim nothing (as when another worker took the items first)."""
    claim, made, count = claiming.claim, [], itertools.count(1)

    def claim_then_save(*args, **kwargs):
        number = next(count)
        claimed = [] if claims_nothing and number in calls else claim(*args, **kwargs)
        if number in calls:
            made.append(submit(stash, text=f"saved during claim {len(made) + 1}"))
        return claimed

    monkeypatch.setattr(claiming, "claim", claim_then_save)
    return made


def test_saves_made_while_a_message_claims_its_next_batch_join_it(audit, broker, monkeypatch):
    broker.held = True
    first, joined = submit(audit, text="first"), submit(audit, text="joined")
    [message] = broker.messages
    made = saving_during_claims(monkeypatch, audit, calls={2})  # the claim of the saves that joined

    report = processing.judge(*message["args"], **message["kwargs"])
    assert (report.claimed, report.judged) == (3, 3)
    assert len(made) == 1 and len(broker.messages) == 1  # the marker stayed up: it joined, too
    assert Content.objects.filter(pk__in=[first.pk, joined.pk, made[0].pk], status="accepted").count() == 3
    submit(audit, text="after")
    assert len(broker.messages) == 2  # no save joined the last batch: the marker came down


@pytest.mark.parametrize("claims_nothing", [False, True], ids=["its last claim took some", "it took none"])
def test_a_message_out_of_time_hands_the_saves_still_waiting_to_a_message_of_their_own(
    audit, broker, monkeypatch, claims_nothing
):
    broker.held = True
    first, joined = submit(audit, text="first"), submit(audit, text="joined")
    [message] = broker.messages
    made = saving_during_claims(monkeypatch, audit, calls={2}, claims_nothing=claims_nothing)
    # Half its time has gone by the first batch of saves that joined it.
    ticks = itertools.chain([0.0], itertools.repeat(1e9))
    monkeypatch.setattr(judging, "time", SimpleNamespace(monotonic=lambda: next(ticks)))

    report = processing.judge(*message["args"], **message["kwargs"])
    assert (report.claimed, report.judged) == (1, 1) if claims_nothing else (2, 2)
    [_, handed_over] = broker.messages
    assert (handed_over["args"], handed_over["kwargs"]) == ([[]], {"wake": audit.pk})
    monkeypatch.undo()
    assert processing.judge(*handed_over["args"], **handed_over["kwargs"]).judged == 1 + claims_nothing
    assert Content.objects.filter(pk__in=[first.pk, joined.pk, made[0].pk], status="accepted").count() == 3
