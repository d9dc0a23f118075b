"""A real worker judges saved items: verdicts, revisions, config changes, bulk saves, crashes."""

import time

import pytest
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from stash import processing
from stash.models import Content, HookConfig, PipelineRun

from ..support.worker import WORKER_LEASE_SECONDS, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

DONE = {Content.Status.ACCEPTED, Content.Status.REJECTED, Content.Status.HELD, Content.Status.FAILED}


def judged(content, revision=None, timeout=30):
    """Wait until the worker has recorded a verdict for ``content`` (at ``revision``); return it fresh."""

    def check():
        content.refresh_from_db()
        at_revision = revision is None or content.processed_revision == revision
        return content.status in DONE and at_revision and content

    return wait_for(check, timeout=timeout, message=f"a verdict on {content.pk}")


@pytest.fixture
def audit(make_stash):
    return make_stash(
        "audit", hooks=[("require_fields", {"fields": ["time"]}), ("keyword_blocklist", {"words": ["spam"]})]
    )


def submit(stash, **payload):
    return Content.objects.create(stash=stash, payload=payload)


def test_verdicts_name_the_field_and_the_word(worker, audit):
    no_time = submit(audit, text="hello")
    spam = submit(audit, time="12:00", text="buy SPAM now")
    clean = submit(audit, time="12:00", text="hello")

    assert judged(no_time).status == "rejected"
    assert "time" in no_time.reason
    assert no_time.decided_by.hook == "require_fields"
    assert judged(spam).status == "rejected"
    assert "spam" in spam.reason
    assert spam.decided_by.hook == "keyword_blocklist"
    assert judged(clean).status == "accepted"
    assert clean.reason == ""
    assert clean.queue_seq == 1
    run = clean.runs.get()
    assert [(step["hook"], step["outcome"]) for step in run.trail] == [
        ("require_fields", "kept"),
        ("keyword_blocklist", "kept"),
    ]


def test_editing_the_payload_judges_the_new_revision_and_an_unchanged_save_does_not(worker, audit):
    item = judged(submit(audit, time="12:00", text="hello"))
    assert item.status == "accepted"

    item.payload = {"time": "12:00", "text": "now with spam"}
    item.save()
    assert item.revision == 2
    item = judged(item, revision=2)
    assert item.status == "rejected"
    assert list(item.runs.values_list("revision", flat=True)) == [2, 1]

    item.save()  # nothing changed
    item.refresh_from_db()
    assert (item.revision, item.status) == (2, "rejected")
    submit(audit, time="1", text="a later item, to know the worker has moved on")
    wait_for(lambda: Content.objects.filter(status="accepted").exists(), message="the later item")
    assert item.runs.count() == 2


def test_disabling_and_reordering_hooks_change_the_next_verdicts(worker, audit):
    require, blocklist = audit.hooks.in_order()
    assert judged(submit(audit, text="spam")).reason == "missing time"

    HookConfig.objects.reorder(audit, [blocklist.pk, require.pk])
    assert "spam" in judged(submit(audit, text="spam")).reason

    blocklist.enabled = False
    blocklist.save()
    assert judged(submit(audit, time="1", text="spam")).status == "accepted"


def test_a_bulk_save_in_one_transaction_is_judged_in_batches(worker, audit, settings):
    settings.STASH_BATCH_SIZE = 100
    log_start = len(worker.read_log())
    with transaction.atomic():
        items = [submit(audit, time=str(i), text="spam" if i % 10 == 0 else "ok") for i in range(300)]
    wait_for(
        lambda: not Content.objects.filter(status__in=["pending", "processing"]).exists(),
        timeout=60,
        message="300 verdicts",
    )
    assert Content.objects.filter(status="accepted").count() == 270
    assert Content.objects.filter(status="rejected").count() == 30
    assert PipelineRun.objects.count() == 300  # each judged exactly once
    seqs = sorted(Content.objects.filter(status="accepted").values_list("queue_seq", flat=True))
    assert seqs == list(range(1, 271))
    assert len(items) == 300
    # Three messages, not 300; the first claims more than its own ids, so the last may find
    # nothing left to judge, after every verdict is in.
    wait_for(lambda: worker.read_log()[log_start:].count("batch: 100 ids") == 3, message="three messages")
    assert "batch: 1 ids" not in worker.read_log()[log_start:]


def test_single_saves_in_a_burst_are_each_judged_once(worker, audit):
    # Saves that come while a message of the stash waits publish nothing; claims of up to a batch
    # (200) take them, and a claim that fills its batch wakes the stash again.
    items = [submit(audit, time=str(i), text="spam" if i % 10 == 0 else "ok") for i in range(600)]
    wait_for(
        lambda: not Content.objects.filter(status__in=["pending", "processing"]).exists(),
        timeout=90,
        message="600 verdicts",
    )
    assert Content.objects.filter(status="accepted").count() == 540
    assert PipelineRun.objects.count() == 600 == len(items)  # each judged exactly once
    seqs = sorted(Content.objects.filter(status="accepted").values_list("queue_seq", flat=True))
    assert seqs == list(range(1, 541))


def test_a_hanging_hook_is_stopped_and_its_policy_decides(worker, make_stash):
    stash = make_stash(
        "slow", hooks=[{"hook": "test_sleep", "params": {"seconds": 30}, "timeout_ms": 300, "on_error": "hold"}]
    )
    item = judged(submit(stash, sleep=True), timeout=20)
    assert item.status == "held"
    assert "timed out after 300 ms" in item.reason
    assert judged(submit(stash, sleep=False)).status == "accepted"


def test_a_raising_hook_is_recorded_and_other_items_go_on(worker, make_stash):
    stash = make_stash("raising", hooks=[{"hook": "test_raise", "params": {}, "on_error": "reject"}])
    bad = submit(stash, **{"raise": True})
    good = submit(stash, text="fine")
    assert judged(bad).status == "rejected"
    assert "RuntimeError: boom" in bad.reason
    assert judged(good).status == "accepted"
    config = stash.hooks.get()
    assert (config.runs_count, config.errors_count, config.kept_count) == (2, 1, 1)


def test_a_poison_item_fails_with_the_hook_named_and_its_batch_neighbours_are_judged(worker, make_stash, settings):
    settings.STASH_LEASE_SECONDS = 1
    stash = make_stash("poison", hooks=[{"hook": "test_crash", "params": {}, "label": "Crasher"}])
    with transaction.atomic():
        poison = submit(stash, crash=True)
        neighbours = [submit(stash, n=i) for i in range(5)]
    # Each pass: the claims' leases run out (a claim lasts as long as its message may run), the
    # sweeper sends the items again, the poison kills a child.
    for _ in range(settings.STASH_MAX_ATTEMPTS + 2):
        wait_for(lambda: not Content.objects.filter(status="pending").exists(), timeout=20, message="claims")
        poison.refresh_from_db()
        if poison.status == "failed":
            break
        leases = Content.objects.filter(status="processing").aggregate(last=Max("lease_until"))["last"]
        time.sleep(max(WORKER_LEASE_SECONDS, (leases - timezone.now()).total_seconds() if leases else 0) + 0.2)
        processing.sweep()
    poison.refresh_from_db()
    assert poison.status == "failed"
    assert "gave up after 3 attempts" in poison.reason
    assert "Crasher" in poison.reason
    for item in neighbours:
        assert judged(item).status == "accepted"
        assert item.runs.count() == 1
