"""Live saves ahead of bulk work: what a bulk batch claims first, what a live batch never takes."""

import pytest
from django.db import transaction

from stash import hooks, processing
from stash.db import publishing
from stash.models import Content, HookConfig

pytestmark = pytest.mark.django_db(transaction=True)

HOOKS = [("keyword_blocklist", {"words": ["spam"]})]


def statuses(items):
    return {item.pk: item.status for item in Content.objects.filter(pk__in=[item.pk for item in items])}


@pytest.fixture
def small_batches(settings):
    settings.STASH_BATCH_SIZE = 10


def test_a_bulk_batch_judges_the_live_saves_waiting_in_its_queue_first(broker, make_stash, small_batches):
    importer, comments = make_stash("import", hooks=HOOKS), make_stash("comments", hooks=HOOKS)
    bulk = processing.submit_many(importer, [{"text": f"row {i}"} for i in range(50)])
    first_bulk_message = broker.chunks[0]
    live = [processing.submit(comments, {"text": f"comment {i}"})[0] for i in range(3)]
    live.append(processing.submit(importer, {"text": "a live save to the importing stash"})[0])

    report = processing.judge(first_bulk_message)

    assert set(statuses(live).values()) == {"accepted"}
    judged = statuses(bulk)
    assert [judged[item.pk] for item in bulk[:10]] == ["accepted"] * 10
    assert set(judged[item.pk] for item in bulk[10:]) == {"pending"}  # the rest wait for their own messages
    assert report.claimed == 14
    # The live saves were judged first: in the importing stash's queue, the live save comes before the rows.
    queue = list(
        Content.objects.filter(stash=importer, status="accepted")
        .order_by("queue_seq")
        .values_list("payload__text", flat=True)
    )
    assert queue[0] == "a live save to the importing stash"
    assert queue[1:] == [f"row {i}" for i in range(10)]


def test_a_live_save_never_joins_or_claims_bulk_work(broker, make_stash, small_batches):
    stash = make_stash("audit", hooks=HOOKS)
    broker.held = True  # messages wait in the queue: the first live save's message holds the marker
    first = processing.submit(stash, {"text": "first live save"})[0]
    bulk = processing.submit_many(stash, [{"text": f"row {i}"} for i in range(25)])
    joined = processing.submit(stash, {"text": "joins the first one's message"})[0]
    published = [message["kwargs"] for message in broker.messages]
    # The bulk items went out in messages of their own, none waking the stash; the second live save published nothing.
    assert published == [{"wake": stash.pk}, {}, {}, {}]
    assert Content.objects.filter(bulk=True).count() == 25 and not Content.objects.get(pk=joined.pk).bulk

    processing.judge([first.pk], wake=stash.pk)

    assert statuses([first, joined]) == {first.pk: "accepted", joined.pk: "accepted"}
    assert set(statuses(bulk).values()) == {"pending"}


def test_a_bulk_batch_leaves_the_live_saves_of_other_queues_alone(broker, make_stash, small_batches):
    importer = make_stash("import", hooks=HOOKS)
    elsewhere = make_stash("elsewhere", hooks=HOOKS, queue="heavy")
    same_queue_by_name = make_stash("named", hooks=HOOKS, queue="stash")  # STASH_QUEUE by name, not by blank
    bulk = processing.submit_many(importer, [{"text": f"row {i}"} for i in range(10)])
    away = processing.submit(elsewhere, {"text": "judged by the heavy queue's workers"})[0]
    near = processing.submit(same_queue_by_name, {"text": "same queue"})[0]

    processing.judge([item.pk for item in bulk])

    assert statuses([away, near]) == {away.pk: "pending", near.pk: "accepted"}


def test_every_item_of_a_backlog_with_live_saves_is_judged_once(broker, make_stash, small_batches):
    importer, comments = make_stash("import", hooks=HOOKS), make_stash("comments", hooks=HOOKS)
    bulk = processing.submit_many(importer, [{"text": f"row {i}" if i % 7 else "spam"} for i in range(40)])
    live = [processing.submit(comments, {"text": f"comment {i}"})[0] for i in range(15)]
    for message in list(broker.messages):
        processing.judge(message["args"][0], **message["kwargs"])

    items = Content.objects.filter(pk__in=[item.pk for item in bulk + live])
    assert items.filter(status="pending").count() == 0
    assert set(items.values_list("attempts", flat=True)) == {1}
    assert [item.payload["text"] for item in Content.objects.filter(stash=comments).order_by("queue_seq")] == [
        f"comment {i}" for i in range(15)
    ]
    assert list(
        Content.objects.filter(stash=importer, status="accepted")
        .order_by("queue_seq")
        .values_list("payload__text", flat=True)
    ) == [f"row {i}" for i in range(40) if i % 7]


def test_a_large_rejudge_is_bulk_work_and_a_small_one_or_an_edit_is_live(broker, make_stash, small_batches):
    stash = make_stash("audit", hooks=HOOKS)
    with transaction.atomic():
        items = [Content.objects.create(stash=stash, payload={"text": f"item {i}"}) for i in range(11)]
    for message in list(broker.messages):
        processing.judge(message["args"][0], **message["kwargs"])

    processing.reprocess(Content.objects.filter(pk__in=[item.pk for item in items]))
    assert Content.objects.filter(bulk=True).count() == 11
    processing.reprocess(Content.objects.filter(pk=items[0].pk))
    assert Content.objects.filter(bulk=True).count() == 10

    edited = Content.objects.get(pk=items[1].pk)
    edited.payload = {"text": "edited"}
    edited.save()
    assert not Content.objects.get(pk=items[1].pk).bulk


def test_the_sweeper_wakes_no_stash_for_bulk_work(broker, make_stash):
    stash = make_stash("audit", hooks=HOOKS)
    broker.held = True
    processing.submit_many(stash, [{"text": "row"}])
    publishing.take_marker_down(stash.pk)
    broker.messages.clear()

    assert processing.sweep().woken == 0
    assert broker.messages == []


def test_a_live_save_made_while_bulk_work_is_judged_goes_ahead_of_the_rest_of_the_batch(
    broker, make_stash, register_temporarily
):
    comments = make_stash("comments", hooks=HOOKS)
    made = []

    class SaveAComment(hooks.Filter):
        """While the bulk batch's first slice is judged, someone posts a comment."""

        def filter(self, item):
            if item.payload["n"] == 10:
                made.append(processing.submit(comments, {"text": "posted meanwhile"})[0])
            return self.keep()

    register_temporarily("save_a_comment", SaveAComment)
    importer = make_stash("import")
    HookConfig.objects.create(stash=importer, hook="save_a_comment")
    bulk = processing.submit_many(importer, [{"n": n} for n in range(processing.BULK_SLICE * 2)])

    processing.judge([item.pk for item in bulk])

    comment = Content.objects.get(pk=made[0].pk)
    assert comment.status == "accepted"
    # Judged and recorded before the batch's second slice (on SQLite each slice's verdicts are
    # recorded as it ends, elsewhere the batch's together, after the last).
    second_slice = Content.objects.filter(stash=importer, payload__n__gte=processing.BULK_SLICE)
    assert comment.processed_at < min(second_slice.values_list("processed_at", flat=True))
    assert set(Content.objects.filter(stash=importer).values_list("status", flat=True)) == {"accepted"}


def test_items_saved_in_the_same_instant_join_the_queue_in_the_order_they_were_submitted(broker, make_stash):
    importer = make_stash("import", hooks=HOOKS)
    bulk = processing.submit_many(importer, [{"text": f"row {i}"} for i in range(40)])
    # A fast bulk insert writes many rows within one microsecond.
    Content.objects.filter(pk__in=[item.pk for item in bulk]).update(created_at=bulk[0].created_at)

    for message in list(broker.messages):
        processing.judge(message["args"][0], **message["kwargs"])

    queue = Content.objects.filter(stash=importer).order_by("queue_seq").values_list("payload__text", flat=True)
    assert list(queue) == [f"row {i}" for i in range(40)]
