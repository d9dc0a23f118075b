"""Sink deliveries on record: one row per item, revision, sink and event, written when its task is sent."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from stash import processing
from stash.db import publishing
from stash.models import Content, Delivery
from stash.processing import shadow_runs

pytestmark = pytest.mark.django_db

FIELDS = ("require_fields", {"fields": ["text"]})


def mail(n=1):
    return [{"hook": "email", "label": f"Mail {i}", "params": {"to": ["ops@example.com"]}} for i in range(n)]


def submit(stash, count=1, **payload):
    return [Content.objects.create(stash=stash, payload=payload or {"text": f"t{i}"}) for i in range(count)]


def queries_for_a_batch(stash, items=10):
    ids = [content.pk for content in submit(stash, items)]
    processing.forget_cached()
    shadow_runs.forget()
    with CaptureQueriesContext(connection) as ctx:
        report = processing.judge(ids)
    assert report.judged == items
    # Savepoints are the test's transaction's: a worker's batch runs in none.
    return sum(not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT")) for q in ctx.captured_queries)


def test_a_batch_writes_its_deliveries_in_one_statement_however_many_sinks_and_items(make_stash):
    bare = make_stash("bare", hooks=[FIELDS])
    one = make_stash("one", hooks=[FIELDS, *mail(1)])
    five = make_stash("five", hooks=[FIELDS, *mail(5)])

    without = queries_for_a_batch(bare)
    assert queries_for_a_batch(one, items=10) == without + 1
    assert queries_for_a_batch(five, items=10) == without + 1
    assert Delivery.objects.filter(config__stash=five).count() == 50
    row = Delivery.objects.filter(config__stash=five).first()
    assert (row.status, row.attempts, row.event, row.revision, row.last_error) == ("pending", 0, "on_accept", 1, "")


def test_a_delivery_the_broker_refuses_is_recorded_failed(make_stash, broker):
    stash = make_stash("audit", hooks=[FIELDS, *mail(1)])
    [content] = submit(stash)
    report = processing.judge([content.pk])
    broker.error = ConnectionError("broker down")

    processing.send_deliveries(report.deliveries, recorded=True)

    row = Delivery.objects.get(content=content)
    assert (row.status, row.last_error) == ("failed", "its task could not be sent to the broker")


def test_a_reviewers_decision_is_a_delivery_of_its_own(make_stash, broker, django_capture_on_commit_callbacks):
    stash = make_stash(
        "audit", hooks=[("condition", {"expression": "payload.text == 'spam'", "action": "hold"}), *mail(1)]
    )
    [content] = submit(stash, text="spam")
    processing.send_deliveries(processing.judge([content.pk]).deliveries, recorded=True)
    reviewer = User.objects.create_user("rita", is_staff=True, is_superuser=True)

    with django_capture_on_commit_callbacks(execute=True):
        processing.approve(Content.objects.filter(pk=content.pk), reviewer)

    assert list(Delivery.objects.filter(content=content).values_list("event", "status")) == [
        ("on_hold", "pending"),
        ("on_accept", "pending"),
    ]
    sent = [m["args"] for m in broker.messages if m["name"] == publishing.DELIVER_TASK]
    assert [args[2] for args in sent] == ["on_hold", "on_accept"]


def test_a_delivery_sent_again_for_the_same_revision_starts_over(make_stash):
    stash = make_stash("audit", hooks=[FIELDS, *mail(1)])
    [content] = submit(stash)
    [delivery] = processing.judge([content.pk]).deliveries
    Delivery.objects.update(status="failed", attempts=6, last_error="boom")

    processing.send_deliveries([delivery])

    row = Delivery.objects.get()
    assert (row.status, row.attempts, row.last_error) == ("pending", 0, "")


def test_deliveries_are_pruned_with_their_item(make_stash):
    stash = make_stash("audit", hooks=[FIELDS, *mail(1)])
    [content] = submit(stash)
    processing.judge([content.pk])
    Content.objects.filter(pk=content.pk).update(processed_at=timezone.now() - timedelta(days=100))

    report = processing.prune(item_days=30)

    assert report.items == 1
    assert not Delivery.objects.exists()
