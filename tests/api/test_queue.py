"""/api/stashes/<slug>/queue/: accepted items in acceptance order; a cursor that never skips or repeats."""

import threading
import time

import pytest
from django.db import connection, transaction

from stash import processing
from stash.models import Content

URL = "/api/stashes/audit/queue/"


@pytest.fixture
def consumer(make_user):
    return make_user("carl", "stash.view_content")


def accept(stash, *texts):
    """Submit and judge each text in turn (a batch numbers its items in no promised order)."""
    contents = [processing.submit(stash, {"text": text})[0] for text in texts]
    for content in contents:
        processing.judge([content.pk])
    return contents


def read_all(client, after=0, limit=100):
    """Follow the feed from ``after`` to its current end: (items, last number read)."""
    items = []
    while True:
        page = client.get(URL, {"after": after, "limit": limit})
        assert page.status_code == 200, page.content
        body = page.json()
        items += body["results"]
        if not body["results"]:
            return items, body["next_after"]
        after = body["next_after"]


@pytest.mark.django_db
def test_the_queue_holds_accepted_items_in_acceptance_order(api, audit, consumer):
    first, spam, second = accept(audit, "first", "spam", "second")
    body = api(consumer).get(URL).json()

    assert [(item["seq"], item["id"], item["payload"]) for item in body["results"]] == [
        (1, str(first.pk), {"text": "first"}),
        (2, str(second.pk), {"text": "second"}),
    ]
    assert body["next_after"] == 2
    assert body["next"] == "http://testserver/api/stashes/audit/queue/?after=2&limit=100"
    assert api(consumer).get(body["next"]).json() == {
        "results": [],
        "next_after": 2,
        "next": "http://testserver/api/stashes/audit/queue/?after=2&limit=100",
    }


@pytest.mark.django_db
def test_paging_while_items_are_accepted_misses_and_repeats_nothing(api, audit, consumer):
    client = api(consumer)
    seen, after = [], 0
    for round_ in range(6):
        accept(audit, *[f"r{round_} n{n}" for n in range(round_ + 1)], "spam")  # accepted between pages
        pending = processing.submit(audit, {"text": f"r{round_} later"})[0]  # accepted only next round
        page = client.get(URL, {"after": after, "limit": 2}).json()
        seen += page["results"]
        after = page["next_after"]
        processing.judge([pending.pk])
    rest, _after = read_all(client, after, limit=2)
    seen += rest

    accepted = list(Content.objects.accepted().order_by("queue_seq").values_list("pk", "queue_seq"))
    assert len(accepted) == sum(range(1, 7)) + 6
    assert [(item["id"], item["seq"]) for item in seen] == [(str(pk), seq) for pk, seq in accepted]


@pytest.mark.django_db
def test_an_edited_item_leaves_the_queue_and_comes_back_after_its_new_acceptance(api, audit, consumer):
    first, second = accept(audit, "first", "second")
    processing.edit_payload(first, {"text": "first, edited"})
    assert [item["id"] for item in api(consumer).get(URL).json()["results"]] == [str(second.pk)]
    processing.judge([first.pk])
    body = api(consumer).get(URL, {"after": 2}).json()
    assert [(item["seq"], item["id"], item["revision"]) for item in body["results"]] == [(3, str(first.pk), 2)]


@pytest.mark.django_db
def test_the_queue_is_per_stash(api, audit, make_stash, consumer):
    notes = make_stash("notes")
    accept(notes, "a note")
    accept(audit, "audited")
    assert [item["payload"] for item in api(consumer).get(URL).json()["results"]] == [{"text": "audited"}]


@pytest.mark.django_db
def test_reading_the_queue_needs_the_view_permission(api, audit, submitter):
    accept(audit, "secret")
    assert api().get(URL).status_code == 401
    response = api(submitter).get(URL)
    assert response.status_code == 403
    assert response.json() == {"detail": "Reading the queue needs the permission to view content."}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "params, field",
    [
        ({"after": -1}, "after"),
        ({"after": "x"}, "after"),
        ({"limit": 0}, "limit"),
        ({"limit": 1001}, "limit"),
        ({"after": ""}, "after"),
        ({"limit": ""}, "limit"),
    ],
)
def test_bad_paging_parameters_are_a_400(api, audit, consumer, params, field):
    response = api(consumer).get(URL, params)
    assert response.status_code == 400
    assert list(response.json()) == [field]


@pytest.mark.django_db
def test_an_unknown_stash_has_no_queue(api, consumer):
    response = api(consumer).get("/api/stashes/nowhere/queue/")
    assert response.status_code == 404
    assert response.json() == {"detail": "No Stash matches the given query."}


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_consumer_reading_while_a_worker_accepts_sees_every_item_once_in_order(api, audit, consumer, worker):
    total, per_transaction = 48, 3  # few messages: the embedded broker delivers about one a second
    done = threading.Event()

    def produce():
        try:
            for start in range(0, total, per_transaction):
                with transaction.atomic():
                    for n in range(start, start + per_transaction):
                        processing.submit(audit, {"text": f"item {n}"})
                time.sleep(0.05)
        finally:
            connection.close()
            done.set()

    producer = threading.Thread(target=produce)
    producer.start()
    client, seen, after, pages = api(consumer), [], 0, 0
    deadline = time.monotonic() + 120
    while not (done.is_set() and Content.objects.accepted().count() == total):
        assert time.monotonic() < deadline, "the worker did not accept every item within 120 s"
        page = client.get(URL, {"after": after, "limit": 5}).json()
        seen += page["results"]
        after, pages = page["next_after"], pages + 1
        time.sleep(0.02)
    producer.join()
    rest, _after = read_all(client, after, limit=5)
    seen += rest

    assert pages > total // 5  # the consumer read while items were being accepted
    assert [item["seq"] for item in seen] == list(range(1, total + 1))
    assert len({item["id"] for item in seen}) == total
