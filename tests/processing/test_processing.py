"""The processing path in-process: claims, verdict writes, query counts, sweeping, simulating, time limits."""

import time
import uuid
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from stash import hooks, processing
from stash.models import Content, HookConfig, PipelineRun
from stash.processing import claiming, shadow_runs

pytestmark = pytest.mark.django_db


def submit(stash, **payload):
    return Content.objects.create(stash=stash, payload=payload)


@pytest.fixture
def audit(make_stash):
    return make_stash(
        "audit", hooks=[("require_fields", {"fields": ["time"]}), ("keyword_blocklist", {"words": ["spam"]})]
    )


@pytest.fixture(params=["returning", "orm"])
def claim_path(request, monkeypatch):
    """Both ways of claiming: ``UPDATE ... RETURNING``, and the ORM's update then read (databases
    without it)."""
    if request.param == "orm":
        monkeypatch.setattr(claiming, "can_return_from_update", lambda: False)
    return request.param


def test_process_judges_pending_items_and_writes_runs_and_counters(audit, claim_path):
    ok, spam = submit(audit, time="1", text="hi"), submit(audit, time="1", text="spam!")
    report = processing.judge([ok.pk, spam.pk])
    assert (report.claimed, report.judged, report.verdicts) == (2, 2, {"accepted": 1, "rejected": 1})
    ok.refresh_from_db(), spam.refresh_from_db()
    assert (ok.status, ok.processed_revision, ok.lease_token, ok.attempts) == ("accepted", 1, None, 1)
    assert spam.status == "rejected" and spam.reason == "contains blocked word 'spam' in text"
    require, blocklist = audit.hooks.in_order()
    assert (require.runs_count, require.kept_count, require.dropped_count) == (2, 2, 0)
    assert (blocklist.runs_count, blocklist.kept_count, blocklist.dropped_count) == (2, 1, 1)
    assert PipelineRun.objects.count() == 2


def test_a_second_delivery_of_the_same_ids_is_a_no_op(audit, claim_path):
    item = submit(audit, time="1")
    processing.judge([item.pk])
    again = processing.judge([item.pk, item.pk])
    assert (again.claimed, again.judged) == (0, 0)
    assert PipelineRun.objects.count() == 1
    assert HookConfig.objects.get(hook="require_fields").runs_count == 1


def test_a_verdict_for_a_revision_edited_during_the_run_is_dropped(audit, register_temporarily):
    item = submit(audit, time="1", text="original")

    class EditWhileRunning(hooks.Filter):
        """Edits the item in the middle of its run, as a person in the admin might."""

        def filter(self, it):
            fresh = Content.objects.get(pk=it.id)
            fresh.payload = {"time": "2", "text": "edited"}
            fresh.save()
            return self.keep()

    register_temporarily("edit_while_running", EditWhileRunning)
    HookConfig.objects.create(stash=audit, hook="edit_while_running")
    audit.refresh_from_db()

    report = processing.judge([item.pk])
    assert (report.judged, report.stale) == (0, 1)
    item.refresh_from_db()
    assert (item.status, item.revision, item.processed_revision) == ("pending", 2, None)
    assert not item.runs.exists()


def test_transforms_store_the_changed_payload_and_keep_the_original(make_stash, register_temporarily):
    class Upper(hooks.Transform):
        """Uppercase the text."""

        def transform(self, item):
            item.payload["text"] = item.payload["text"].upper()
            return item.payload

    register_temporarily("upper", Upper)
    stash = make_stash("t", hooks=[("upper", {}), ("keyword_blocklist", {"words": ["SPAM"]})])
    item = submit(stash, text="hello")
    processing.judge([item.pk])
    item.refresh_from_db()
    assert item.payload == {"text": "HELLO"}
    assert item.original_payload == {"text": "hello"}
    assert [s["outcome"] for s in item.runs.get().trail] == ["transformed", "kept"]


def _queries_for_a_batch(stash, items=10):
    ids = [submit(stash, time="1", text=f"t{i}").pk for i in range(items)]
    processing.forget_cached()  # a cold cache: the hooks are loaded inside the batch
    shadow_runs.forget()  # and which shadows run (read once a second at most) is read too
    with CaptureQueriesContext(connection) as ctx:
        report = processing.judge(ids)
    assert report.judged == items
    return len(ctx.captured_queries)


def test_a_batch_takes_the_same_number_of_queries_with_1_and_with_20_hooks(make_stash):
    one = make_stash("one", hooks=[("require_fields", {"fields": ["time"]})])
    twenty = make_stash("twenty", hooks=[("require_fields", {"fields": ["time"]})] * 20)
    assert twenty.hooks.count() == 20
    assert _queries_for_a_batch(one) == _queries_for_a_batch(twenty)
    assert HookConfig.objects.filter(stash=twenty, runs_count=10).count() == 20


def test_the_pipeline_is_loaded_once_per_config_version(audit):
    processing.judge([submit(audit, time="1").pk])
    with CaptureQueriesContext(connection) as warm:
        processing.judge([submit(audit, time="1").pk])
    assert not any("stash_hookconfig" in q["sql"] and q["sql"].startswith("SELECT") for q in warm.captured_queries)

    HookConfig.objects.filter(hook="keyword_blocklist").update(params={"words": ["hello"]})
    item = submit(audit, time="1", text="hello")
    processing.judge([item.pk])
    item.refresh_from_db()
    assert item.status == "rejected"  # the new params are in force without a restart


def test_a_run_records_the_stash_as_it_was_when_its_item_was_claimed(audit, claim_path):
    first = submit(audit, time="1")
    processing.judge([first.pk])
    audit.on_error = "accept"
    audit.save()  # a new config version: workers read the stash again
    later = submit(audit, time="1")
    processing.judge([later.pk])
    assert first.runs.get().config_version < later.runs.get().config_version == audit.config_version


def test_sweep_sends_expired_items_again_and_fails_those_out_of_attempts(
    audit, settings, monkeypatch, django_capture_on_commit_callbacks
):
    messages = []
    monkeypatch.setattr(processing.publishing, "send", lambda ids, stash=None, queue="": messages.append(ids))
    now = timezone.now()
    past, future = now - timedelta(seconds=1), now + timedelta(seconds=60)
    # Created without signals, so the sweep's own after-commit batch is the only one.
    lost, crashed, exhausted, fresh = Content.objects.bulk_create(
        [
            Content(stash=audit, payload={"time": "1"}, lease_until=past),
            Content(stash=audit, payload={"time": "1"}, status="processing", attempts=1, lease_until=past),
            Content(
                stash=audit,
                payload={"time": "1"},
                status="processing",
                attempts=settings.STASH_MAX_ATTEMPTS,
                lease_until=past,
                reason="interrupted in hook Poison",
            ),
            Content(stash=audit, payload={"time": "1"}, lease_until=future),
        ]
    )

    with django_capture_on_commit_callbacks(execute=True):
        report = processing.sweep()

    assert (report.requeued, report.failed) == (2, 1)
    # The lost item was never claimed; the crashed one may have killed its worker: alone.
    assert len(messages) == 2 and {tuple(m) for m in messages} == {(crashed.pk,), (lost.pk,)}
    sent = [pk for message in messages for pk in message]
    exhausted.refresh_from_db()
    assert exhausted.status == "failed"
    assert (
        exhausted.reason == "gave up after 3 attempts: the worker stopped while judging it (interrupted in hook Poison)"
    )
    crashed.refresh_from_db()
    assert crashed.status == "pending" and crashed.lease_until > timezone.now()
    fresh.refresh_from_db()
    assert fresh.status == "pending"
    # The sent items are judged now; the next sweep finds nothing to do.
    processing.judge(sent)
    assert processing.sweep().requeued == 0


def test_reprocess_judges_again_with_the_current_hooks(audit):
    item = submit(audit, time="1", text="hello")
    processing.judge([item.pk])
    HookConfig.objects.filter(hook="keyword_blocklist").update(params={"words": ["hello"]})
    assert processing.reprocess(Content.objects.filter(pk=item.pk)) == 1
    processing.judge([item.pk])
    item.refresh_from_db()
    assert item.status == "rejected"
    assert item.runs.count() == 2


def test_simulate_saves_nothing_and_refuses_bad_payloads(audit):
    result = processing.simulate(audit, {"text": "spam"})
    assert result.verdict == "rejected" and result.reason == "missing time"
    assert not Content.objects.exists() and not PipelineRun.objects.exists()
    assert HookConfig.objects.filter(runs_count__gt=0).count() == 0
    with pytest.raises(ValidationError, match="must be a JSON object"):
        processing.simulate(audit, ["not", "an", "object"])
    audit.max_payload_bytes = 10
    with pytest.raises(ValidationError, match="this stash takes at most 10"):
        processing.simulate(audit, {"text": "far too long for ten bytes"})


def test_a_missing_hook_is_handled_by_its_policy_not_a_crash(audit):
    HookConfig.objects.filter(hook="require_fields").update(hook="gone_away", on_error="hold")
    item = submit(audit, time="1")
    processing.judge([item.pk])
    item.refresh_from_db()
    assert item.status == "held"
    assert "'gone_away' cannot run" in item.reason


def test_items_accepted_in_one_batch_join_the_queue_in_submission_order(audit, claim_path):
    items = [submit(audit, time=str(i)) for i in range(5)]
    processing.judge([item.pk for item in reversed(items)])
    seqs = [Content.objects.get(pk=item.pk).queue_seq for item in items]
    assert seqs == sorted(seqs) == list(range(1, 6))


def test_of_several_retried_items_one_is_judged_and_the_others_go_back_one_per_message(
    audit, monkeypatch, django_capture_on_commit_callbacks
):
    messages = []
    monkeypatch.setattr(
        processing.publishing, "_publish", lambda ids, queue="", time_limit=None: messages.append((ids, time_limit))
    )
    items = [submit(audit, time="1", n=i) for i in range(3)]
    Content.objects.filter(pk__in=[i.pk for i in items]).update(attempts=1)  # each claimed once before

    with django_capture_on_commit_callbacks(execute=True):
        report = processing.judge([i.pk for i in items])

    assert (report.claimed, report.judged, report.released) == (3, 1, 2)
    statuses = {c.pk: (c.status, c.attempts) for c in Content.objects.all()}
    assert statuses[items[0].pk] == ("accepted", 2)
    assert statuses[items[1].pk] == statuses[items[2].pk] == ("pending", 1)
    # Each with the time its hooks may take (two of 2,000 ms) and the margin (5 s).
    assert messages == [([str(items[1].pk)], 9.0), ([str(items[2].pk)], 9.0)]


def test_a_message_also_claims_other_waiting_items_of_its_stash_up_to_the_batch_size(
    audit, make_stash, settings, claim_path
):
    settings.STASH_BATCH_SIZE = 3
    other_stash = make_stash("other", hooks=[("require_fields", {"fields": ["time"]})])
    items = [submit(audit, time="1", n=i) for i in range(5)]
    elsewhere = submit(other_stash, time="1")

    report = processing.judge([items[0].pk])

    assert (report.claimed, report.judged) == (3, 3)
    assert Content.objects.filter(stash=audit, status="accepted").count() == 3
    assert Content.objects.get(pk=items[0].pk).status == "accepted"  # its own item first
    assert Content.objects.get(pk=elsewhere.pk).status == "pending"  # never another stash's
    # The messages of the items judged already claim the ones still waiting.
    assert processing.judge([items[1].pk]).judged == 2
    assert not Content.objects.filter(stash=audit, status="pending").exists()
    assert processing.judge([items[2].pk]).claimed == 0
    assert PipelineRun.objects.filter(content__stash=audit).count() == 5


def test_items_tried_before_are_claimed_only_by_their_own_message(audit):
    retried = submit(audit, time="1", n="retried")
    Content.objects.filter(pk=retried.pk).update(attempts=1)  # a worker died on it once
    fresh = submit(audit, time="1", n="fresh")

    assert processing.judge([fresh.pk]).claimed == 1
    retried.refresh_from_db()
    assert (retried.status, retried.attempts) == ("pending", 1)
    assert processing.judge([retried.pk]).judged == 1


# --- time limits and stopped messages -------------------------------------------------------------


@pytest.fixture
def published(monkeypatch):
    """Messages published: ``(ids, time limit)``; None for the default limit."""
    messages = []
    monkeypatch.setattr(
        processing.publishing,
        "_publish",
        lambda ids, queue="", wake=None, time_limit=None: messages.append((sorted(ids), time_limit)),
    )
    return messages


def test_a_batch_judges_only_what_fits_in_its_time_limit_and_sends_the_rest_back(audit, published, monkeypatch):
    # The audit hooks may take 2 s each; with the 5 s margin an item needs 9 s of the message.
    items = [submit(audit, time="1", n=i) for i in range(3)]
    batches = []
    monkeypatch.setattr(processing.publishing, "send_on_commit", lambda ids, **options: ids and batches.append(ids))
    clock = processing.Clock(limit=10, started=time.monotonic() - 2)  # 8 s left: room for the first only

    report = processing.judge([i.pk for i in items], clock=clock)

    assert (report.claimed, report.judged, report.released) == (3, 1, 2)
    statuses = [Content.objects.get(pk=i.pk) for i in items]
    assert [(c.status, c.attempts) for c in statuses] == [("accepted", 1), ("pending", 0), ("pending", 0)]
    assert batches == [[i.pk for i in items[1:]]]  # together, unjudged, with the default limit
    assert published == []


def test_an_item_whose_hooks_need_more_than_a_message_has_is_sent_alone_with_the_limit_it_needs(
    audit, published, django_capture_on_commit_callbacks
):
    item = submit(audit, time="1")

    with django_capture_on_commit_callbacks(execute=True):
        report = processing.judge([item.pk], clock=processing.Clock(limit=8))

    assert (report.judged, report.released) == (0, 1)
    item.refresh_from_db()
    assert (item.status, item.attempts) == ("pending", 0)
    assert published == [([str(item.pk)], 9.0)]


def test_a_claim_lasts_as_long_as_its_message_may_run(audit, register_temporarily):
    seen = []

    class LeaseWatcher(hooks.Filter):
        """Notes the lease of the item it judges."""

        def filter(self, it):
            seen.append(Content.objects.get(pk=it.id).lease_until)
            return self.keep()

    register_temporarily("lease_watcher", LeaseWatcher)
    HookConfig.objects.create(stash=audit, hook="lease_watcher", params={})
    processing.judge([submit(audit, time="1").pk], clock=processing.Clock(limit=600))

    assert seen[0] > timezone.now() + timedelta(seconds=590)  # not STASH_LEASE_SECONDS (60)


def stopped_claim(item, token, attempts, note_hook=None):
    """``item`` as a message stopped at its time limit left it: claimed, maybe noting a hook."""
    Content.objects.filter(pk=item.pk).update(
        status="processing",
        lease_token=token,
        attempts=attempts,
        lease_until=timezone.now() + timedelta(seconds=30),
        reason=f"interrupted in hook {note_hook.hook}" if note_hook else "",
        decided_by=note_hook,
    )


def test_a_stopped_item_whose_hook_hung_is_judged_once_with_that_hook_timed_out(audit, published):
    blocklist = audit.hooks.get(hook="keyword_blocklist")
    item, other = submit(audit, time="1", text="hi"), submit(audit, time="1")
    token = uuid.uuid4()
    stopped_claim(item, token, attempts=2, note_hook=blocklist)
    stopped_claim(other, uuid.uuid4(), attempts=1)  # another message's claim: not touched

    report = processing.recover(token, hung=True)

    item.refresh_from_db()
    assert (report.claimed, report.judged, item.status, item.attempts) == (1, 1, "rejected", 3)
    assert item.reason == (
        "keyword_blocklist: still running past its timeout of 2000 ms, where it could not "
        "be interrupted: stopped with its worker process"
    )
    assert item.decided_by == blocklist
    assert [(s["hook"], s["outcome"]) for s in item.runs.get().trail] == [
        ("require_fields", "kept"),
        ("keyword_blocklist", "timeout"),
    ]
    blocklist.refresh_from_db()
    assert (blocklist.runs_count, blocklist.errors_count) == (1, 1)
    assert Content.objects.get(pk=other.pk).status == "processing"
    assert published == []


def test_stopped_batch_items_and_crashed_ones_go_back_alone_and_those_out_of_attempts_fail(
    audit, published, django_capture_on_commit_callbacks
):
    blocklist = audit.hooks.get(hook="keyword_blocklist")
    batch, crashed, spent = submit(audit, time="1"), submit(audit, time="2"), submit(audit, time="3")
    token = uuid.uuid4()
    stopped_claim(batch, token, attempts=1)
    stopped_claim(crashed, token, attempts=2, note_hook=blocklist)
    stopped_claim(spent, token, attempts=3, note_hook=blocklist)

    with django_capture_on_commit_callbacks(execute=True):
        report = processing.recover(token, hung=False)  # the process had died before its time ran out

    assert (report.claimed, report.judged, report.released) == (3, 0, 2)
    statuses = {c.pk: (c.status, c.attempts) for c in Content.objects.all()}
    assert statuses[batch.pk] == ("pending", 1) and statuses[crashed.pk] == ("pending", 2)
    assert sorted(published) == sorted([([str(batch.pk)], 9.0), ([str(crashed.pk)], 9.0)])
    spent.refresh_from_db()
    assert spent.status == "failed"
    assert spent.reason == (
        "gave up after 3 attempts: the worker stopped while judging it (interrupted in hook keyword_blocklist)"
    )
