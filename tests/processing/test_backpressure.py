"""Back-pressure: a stash with ``max_waiting`` refuses new items while that many wait to be judged,
through every way in, with nothing saved; the count is cheap to read on every save."""

import contextlib

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from stash import processing
from stash.core.exceptions import StashFull
from stash.models import Content, backpressure

from ..support.hook_support import closed_port
from ..support.metrics_support import scrape

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _counts_start_afresh():
    cache.clear()
    yield
    with contextlib.suppress(Exception):  # a test may have broken the cache on purpose
        cache.clear()


@pytest.fixture
def narrow(make_stash):
    """An open stash that takes three waiting items at most, with two waiting already."""
    stash = make_stash("narrow", hooks=[("require_fields", {"fields": ["text"]})], allow_anonymous=True, max_waiting=3)
    for n in range(2):
        Content.objects.create(stash=stash, payload={"text": f"waiting {n}"})
    return stash


def test_the_orm_path_raises_a_clear_exception_once_the_stash_is_full(narrow):
    Content.objects.create(stash=narrow, payload={"text": "third"})

    with pytest.raises(StashFull, match=r"The stash narrow has 3 items waiting to be judged \(max_waiting\)") as info:
        Content.objects.create(stash=narrow, payload={"text": "fourth"})
    assert info.value.retry_after == backpressure.RETRY_AFTER_SECONDS
    assert Content.objects.filter(stash=narrow).count() == 3


def test_judged_items_make_room_again(narrow):
    Content.objects.create(stash=narrow, payload={"text": "third"})
    with pytest.raises(StashFull):
        processing.submit(narrow, {"text": "fourth"})

    processing.judge(list(Content.objects.filter(stash=narrow).values_list("pk", flat=True)))
    cache.clear()  # as the count's second runs out

    content, created = processing.submit(narrow, {"text": "fourth"})
    assert created and content.status == "pending"


def test_a_stash_without_max_waiting_takes_any_number(make_stash):
    stash = make_stash("wide")
    for n in range(5):
        Content.objects.create(stash=stash, payload={"text": str(n)})
    with CaptureQueriesContext(connection) as queries:
        processing.submit(stash, {"text": "one more"})
    assert len(queries) == 1  # the insert: no count


def test_saves_within_a_second_count_once_and_never_count_the_whole_stash(narrow):
    narrow.max_waiting = 50
    narrow.save()
    cache.clear()
    with CaptureQueriesContext(connection) as queries:
        for n in range(5):
            processing.submit(narrow, {"text": f"more {n}"})
    counts = [query["sql"] for query in queries if "COUNT(" in query["sql"].upper()]
    assert len(counts) == 1
    assert "LIMIT 51" in counts[0]  # at most max_waiting + 1 index entries


def test_items_taken_between_counts_are_added_to_the_cached_count(narrow):
    narrow.max_waiting = 5
    narrow.save()
    for n in range(3):
        processing.submit(narrow, {"text": f"more {n}"})
    assert backpressure.waiting(narrow) == 5  # 2 counted, 3 taken since
    with pytest.raises(StashFull):
        processing.submit(narrow, {"text": "one too many"})


def test_the_api_answers_429_with_retry_after_and_saves_nothing(narrow):
    api = APIClient()
    assert (
        api.post("/api/contents/", {"stash": "narrow", "payload": {"text": "third"}}, format="json").status_code == 201
    )

    response = api.post("/api/contents/", {"stash": "narrow", "payload": {"text": "fourth"}}, format="json")
    assert response.status_code == 429
    assert response["Retry-After"] == str(backpressure.RETRY_AFTER_SECONDS)
    assert "3 items waiting to be judged (max_waiting)" in response.json()["detail"]
    assert Content.objects.filter(stash=narrow).count() == 3


def test_a_bulk_call_is_refused_whole_when_it_would_pass_max_waiting(narrow, django_user_model):
    api = APIClient()
    api.force_authenticate(django_user_model.objects.create_superuser("root", password="pass-word-123"))
    url = "/api/contents/bulk/"

    response = api.post(url, {"stash": "narrow", "items": [{"text": "a"}, {"text": "b"}]}, format="json")
    assert response.status_code == 429
    assert response["Retry-After"] == str(backpressure.RETRY_AFTER_SECONDS)
    assert Content.objects.filter(stash=narrow).count() == 2  # not one of the two

    assert api.post(url, {"stash": "narrow", "items": [{"text": "a"}]}, format="json").status_code == 201


def test_the_form_answers_429_with_retry_after_and_keeps_what_was_typed(narrow):
    client = Client()
    assert client.post("/s/narrow/submit/", {"text": "third"}).status_code == 302

    refused = client.post("/s/narrow/submit/", {"text": "fourth, typed with care"})
    assert refused.status_code == 429
    assert refused["Retry-After"] == str(backpressure.RETRY_AFTER_SECONDS)
    page = refused.content.decode()
    assert "3 items waiting to be judged" in page
    assert "fourth, typed with care" in page
    assert Content.objects.filter(stash=narrow).count() == 3


def test_the_admin_add_form_says_the_stash_is_full(narrow, admin_client):
    Content.objects.create(stash=narrow, payload={"text": "third"})

    response = admin_client.post(
        "/admin/stash/content/add/", {"stash": narrow.pk, "payload": '{"text": "fourth"}', "idempotency_key": ""}
    )
    assert response.status_code == 200
    assert "3 items waiting to be judged" in response.content.decode()
    assert Content.objects.filter(stash=narrow).count() == 3


def test_refusals_are_counted_in_metrics(narrow, admin_client, make_stash):
    make_stash("other")
    Content.objects.create(stash=narrow, payload={"text": "third"})
    for _ in range(2):
        with pytest.raises(StashFull):
            processing.submit(narrow, {"text": "refused"})

    page = scrape(admin_client)
    assert page.value("stash_submissions_refused_total", stash="narrow", reason="max_waiting") == 2
    assert page.value("stash_submissions_refused_total", stash="other", reason="max_waiting") == 0


def test_max_waiting_travels_in_the_pipeline_document_and_below_one_is_refused(narrow):
    document = processing.export_document(narrow)
    assert document["stash"]["max_waiting"] == 3

    document["stash"]["max_waiting"] = None
    processing.import_document("narrow", document)
    narrow.refresh_from_db()
    assert narrow.max_waiting is None

    document["stash"]["max_waiting"] = 0
    with pytest.raises(processing.InvalidDocument, match=r"stash\.max_waiting"):
        processing.import_document("narrow", document)
    document["stash"]["max_waiting"] = "ten"
    with pytest.raises(processing.InvalidDocument, match="must be an integer"):
        processing.import_document("narrow", document)


def test_a_cache_that_fails_still_holds_max_waiting(narrow, settings, caplog):
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{closed_port()}/0",
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 1, "SOCKET_TIMEOUT": 1},
        }
    }
    processing.submit(narrow, {"text": "third"})
    with pytest.raises(StashFull):
        processing.submit(narrow, {"text": "fourth"})
    assert Content.objects.filter(stash=narrow).count() == 3
    assert "Could not read the waiting count of stash" in caplog.text


def test_saves_of_a_stash_with_max_waiting_still_reach_the_workers(
    make_stash, broker, django_capture_on_commit_callbacks
):
    stash = make_stash("counted", max_waiting=10)
    with django_capture_on_commit_callbacks(execute=True):
        Content.objects.create(stash=stash, payload={"text": "first"})
    # A message to claim it: the stash's count is never taken for its waiting-message marker.
    assert [message["kwargs"].get("wake") for message in broker.messages] == [stash.pk]
    assert backpressure.waiting(stash) == 1
