"""/api/contents/bulk/: up to 1,000 items in one request and one transaction, judged in batches."""

import pytest

from stash import processing
from stash.models import Content, PipelineRun

from ..support.worker import wait_for

URL = "/api/contents/bulk/"


def payloads(count):
    return [{"text": "spam" if n % 10 == 0 else f"item {n}"} for n in range(count)]


@pytest.mark.django_db
def test_a_thousand_items_are_saved_pending_and_all_judged(api, audit, submitter, settings):
    settings.STASH_BATCH_SIZE = 200
    response = api(submitter).post(URL, {"stash": "audit", "items": payloads(1000)}, format="json")

    assert response.status_code == 201
    body = response.json()
    assert body["count"] == 1000 and len(set(body["ids"])) == 1000
    saved = Content.objects.filter(pk__in=body["ids"])
    assert saved.count() == 1000
    assert set(saved.values_list("status", "revision", "source", "submitted_by")) == {
        ("pending", 1, "api", submitter.pk)
    }
    assert all(content.content_hash and content.lease_until for content in saved)

    for start in range(0, 1000, settings.STASH_BATCH_SIZE):  # as the workers take them, batch by batch
        processing.judge(body["ids"][start : start + settings.STASH_BATCH_SIZE])
    assert Content.objects.filter(status="accepted").count() == 900
    assert Content.objects.filter(status="rejected").count() == 100
    assert PipelineRun.objects.count() == 1000
    assert sorted(Content.objects.accepted().values_list("queue_seq", flat=True)) == list(range(1, 901))


@pytest.mark.django_db
def test_more_than_a_thousand_items_are_refused_whole(api, audit, submitter):
    response = api(submitter).post(URL, {"stash": "audit", "items": payloads(1001)}, format="json")
    assert response.status_code == 400
    assert response.json() == {"items": ["Ensure this field has no more than 1000 elements."]}
    assert not Content.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "items, errors",
    [
        ([], {"items": ["Ensure this field has at least 1 elements."]}),
        (
            [{"text": "ok"}, ["not", "an object"]],
            {"items": {"1": ["The payload must be a JSON object, not an array."]}},
        ),
        (
            [{"text": "ok"}, {"text": "nul \u0000"}],
            {"items": {"1": ["The payload contains a NUL character (\\u0000), which cannot be stored."]}},
        ),
    ],
)
def test_one_bad_item_refuses_the_whole_request(api, audit, submitter, items, errors):
    response = api(submitter).post(URL, {"stash": "audit", "items": items}, format="json")
    assert response.status_code == 400
    assert response.json() == errors
    assert not Content.objects.exists()


@pytest.mark.django_db
def test_one_item_over_the_stash_limit_is_a_413_and_nothing_is_saved(api, make_stash, submitter):
    make_stash("small", max_payload_bytes=30)
    items = [{"text": "ok"}, {"text": "ok"}, {"text": "x" * 40}]
    response = api(submitter).post(URL, {"stash": "small", "items": items}, format="json")
    assert response.status_code == 413
    assert response.json() == {"detail": "Item 2: The payload is 51 bytes; this stash takes at most 30."}
    assert not Content.objects.exists()


@pytest.mark.django_db
def test_bulk_needs_the_add_permission_even_where_anonymous_may_submit(api, make_stash, make_user):
    make_stash("open", allow_anonymous=True)
    body = {"stash": "open", "items": [{"text": "hi"}]}
    assert api().post(URL, body, format="json").status_code == 401
    response = api(make_user("nobody")).post(URL, body, format="json")
    assert response.status_code == 403
    assert response.json() == {"detail": "Bulk submissions need the permission to add content."}
    assert not Content.objects.exists()


@pytest.mark.django_db
def test_an_unknown_stash_is_a_400(api, submitter):
    response = api(submitter).post(URL, {"stash": "nowhere", "items": [{}]}, format="json")
    assert response.status_code == 400
    assert response.json() == {"stash": ["There is no stash slug=nowhere."]}


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_worker_judges_a_bulk_of_a_thousand_sent_in_chunks(api, audit, submitter, worker, settings):
    settings.STASH_BATCH_SIZE = 250
    log_start = len(worker.read_log())
    response = api(submitter).post(URL, {"stash": "audit", "items": payloads(1000)}, format="json")
    assert response.status_code == 201

    wait_for(
        lambda: not Content.objects.filter(status__in=["pending", "processing"]).exists(),
        timeout=120,
        message="1,000 verdicts",
    )
    assert Content.objects.filter(status="accepted").count() == 900
    assert Content.objects.filter(status="rejected").count() == 100
    assert PipelineRun.objects.count() == 1000
    # The worker logs a batch after committing it: wait for the last line too.
    log = wait_for(
        lambda: (text := worker.read_log()[log_start:]).count("batch: 250 ids") >= 4 and text,
        message="the worker's log of four batches",
    )
    assert log.count("batch: 250 ids") == 4  # four messages for the whole request, not 1,000
    assert "batch: 1 ids" not in log
