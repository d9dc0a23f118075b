"""Idempotency-Key on POST /api/contents/: a retry returns the first item; another body is a 409."""

import threading

import pytest
from django.db import connection

from stash import processing
from stash.models import Content

from ..support.worker import wait_for

pytestmark = pytest.mark.django_db

URL = "/api/contents/"


def post(client, body, key):
    return client.post(URL, body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_a_retry_with_the_same_key_and_body_returns_the_first_item(api, audit, submitter):
    client = api(submitter)
    first = post(client, {"stash": "audit", "payload": {"text": "hi"}}, "order-1")
    again = post(client, {"stash": "audit", "payload": {"text": "hi"}}, "order-1")

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert again["Location"] == first["Location"]
    assert Content.objects.count() == 1


def test_the_same_key_with_another_body_is_a_409_and_saves_nothing(api, audit, submitter):
    client = api(submitter)
    first = post(client, {"stash": "audit", "payload": {"text": "hi"}}, "order-1").json()
    response = post(client, {"stash": "audit", "payload": {"text": "bye"}}, "order-1")

    assert response.status_code == 409
    assert response.json() == {
        "detail": f"This idempotency key was already used for another stash or payload (item {first['id']})."
    }
    assert list(Content.objects.values_list("payload", flat=True)) == [{"text": "hi"}]


def test_the_same_key_for_another_stash_is_a_409(api, audit, make_stash, submitter):
    make_stash("notes")
    client = api(submitter)
    post(client, {"stash": "audit", "payload": {"text": "hi"}}, "k")
    assert post(client, {"stash": "notes", "payload": {"text": "hi"}}, "k").status_code == 409
    assert Content.objects.count() == 1


def test_keys_belong_to_their_user(api, audit, submitter, make_user):
    other = make_user("olga", "stash.add_content")
    mine = post(api(submitter), {"stash": "audit", "payload": {"text": "hi"}}, "k").json()
    theirs = post(api(other), {"stash": "audit", "payload": {"text": "hi"}}, "k")
    assert theirs.status_code == 201
    assert theirs.json()["id"] != mine["id"]


def test_a_key_needs_an_authenticated_submitter(api, make_stash):
    make_stash("open", allow_anonymous=True)
    response = post(api(), {"stash": "open", "payload": {"text": "hi"}}, "k")
    assert response.status_code == 400
    assert response.json() == {"idempotency_key": ["An idempotency key needs an authenticated submitter."]}
    assert not Content.objects.exists()


def test_a_key_longer_than_200_characters_is_a_400(api, audit, submitter):
    response = post(api(submitter), {"stash": "audit", "payload": {"text": "hi"}}, "k" * 201)
    assert response.status_code == 400
    assert response.json() == {"idempotency_key": ["At most 200 characters."]}
    assert not Content.objects.exists()


def test_a_key_with_a_nul_character_is_a_400(api, audit, submitter):
    response = post(api(submitter), {"stash": "audit", "payload": {"text": "hi"}}, "k\x00")
    assert response.status_code == 400
    assert response.json() == {"idempotency_key": ["An idempotency key cannot contain a NUL character."]}
    assert not Content.objects.exists()


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_requests_racing_with_one_key_make_one_item(audit, submitter, worker):
    """Each finds no item, all insert: the unique constraint lets one through, the others answer it."""
    barrier = threading.Barrier(6)
    results = []

    def submit():
        try:
            barrier.wait()
            results.append(processing.submit(audit, {"text": "hi"}, submitter, idempotency_key="k"))
        finally:
            connection.close()

    threads = [threading.Thread(target=submit) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(results) == 6
    assert len({content.pk for content, _created in results}) == 1
    assert sorted(created for _content, created in results) == [False] * 5 + [True]
    assert Content.objects.count() == 1
    # Let the worker finish with it before the test's tables are emptied.
    wait_for(lambda: Content.objects.filter(status="accepted").exists(), message="the item judged")
