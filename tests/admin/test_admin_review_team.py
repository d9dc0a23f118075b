"""The review page for a team: claims, Release, the queue's order, overdue badges, the four-eyes state,
the admin index's overdue counts, and a query count that does not grow with the queue."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from stash import processing
from stash.models import Content
from tests.support.review import held_since, hold, reviewer, team_stash

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(make_stash, register_temporarily):
    return team_stash(make_stash, register_temporarily)


def client_of(django_user_model, username):
    client = Client()
    client.force_login(reviewer(django_user_model, username))
    return client


@pytest.fixture
def alice(django_user_model):
    return client_of(django_user_model, "alice")


@pytest.fixture
def bob(django_user_model):
    return client_of(django_user_model, "bob")


def url(stash, **params):
    base = reverse("admin:stash_stash_review", args=[stash.pk])
    return base + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")


def test_opening_the_page_claims_the_item_and_the_next_reviewer_gets_another(team, alice, bob):
    first, second = held_since(hold(team), 2), held_since(hold(team), 1)
    page = alice.get(url(team))
    assert page.context["item"] == first
    assert "You are reviewing this item until" in page.content.decode()
    first.refresh_from_db()
    assert first.claimed_by.username == "alice"

    other = bob.get(url(team))
    assert other.context["item"] == second
    rows = {str(row.item.pk): row for row in other.context["queue"]}
    assert rows[str(first.pk)].holder.username == "alice"
    assert "alice until" in other.content.decode()


def test_release_gives_the_item_back_and_skipping_releases_it_too(team, alice, bob):
    first, second = held_since(hold(team), 2), held_since(hold(team), 1)
    alice.get(url(team))
    released = alice.post(url(team), {"item": first.pk, "release": "1"}, follow=True)
    assert released.context["item"] == second  # the next one, now hers
    assert any("Released item" in str(m) for m in released.context["messages"])
    assert bob.get(url(team)).context["item"] == first
    assert bob.get(url(team, after=first.pk)).context["item"] is None  # second is alice's
    first.refresh_from_db()
    assert first.claimed_by is None  # skipping it let it go


def test_overdue_items_are_marked_on_the_page_and_counted_on_the_index(team, alice):
    team.review_hours = 3
    team.save()
    held_since(hold(team), 5)
    held_since(hold(team), 1)
    page = alice.get(url(team)).content.decode()
    assert 'id="review-overdue"' in page and "1 overdue" in page
    index = alice.get(reverse("admin:index")).content.decode()
    assert "2 held items" in index and "1 overdue" in index


def test_the_page_shows_the_four_eyes_state(team, alice, bob):
    team.four_eyes_reasons = ["csam"]
    team.save()
    item = hold(team, "csam")
    page = alice.get(url(team)).content.decode()
    assert "0 of 2 approvals" in page and "needs two different reviewers" in page
    done = alice.post(url(team), {"item": item.pk, "status": "held", "decision": "approve", "note": ""}, follow=True)
    assert any("needs a second approval by another reviewer" in str(m) for m in done.context["messages"])
    again = alice.post(url(team), {"item": item.pk, "status": "held", "decision": "approve", "note": ""}, follow=True)
    assert any("second, different reviewer" in str(m) for m in again.context["messages"])
    Content.objects.filter(pk=item.pk).update(claimed_by=None, claimed_until=None)
    assert "1 of 2 approvals: alice" in bob.get(url(team)).content.decode()
    bob.post(url(team), {"item": item.pk, "status": "held", "decision": "approve", "note": ""})
    item.refresh_from_db()
    assert item.status == "accepted"


def test_the_page_lists_the_queue_by_priority(team, alice):
    team.review_priority = 'reason_code == "urgent" ? 5.0 : 1.0'
    team.save()
    plain = held_since(hold(team), 3)
    urgent = held_since(hold(team, "urgent"), 1)
    page = alice.get(url(team))
    assert page.context["item"] == urgent
    assert [row.item for row in page.context["queue"]] == [urgent, plain]
    assert "highest priority first" in page.content.decode()


def _bulk_held(stash, count):
    now = timezone.now()
    Content.objects.bulk_create(
        [
            Content(
                stash=stash,
                payload={"n": n},
                status="held",
                reason="held for link",
                processed_at=now - timedelta(minutes=n),
                priority=float(n % 7) if n % 3 else None,
            )
            for n in range(count)
        ],
        batch_size=1000,
    )


def _queries(client, stash):
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url(stash)).status_code == 200
    return len(queries)


def test_the_review_page_makes_as_many_queries_with_10000_items_as_with_20(
    make_stash, register_temporarily, alice, django_assert_max_num_queries
):
    small = team_stash(make_stash, register_temporarily, slug="small", review_hours=1)
    big = team_stash(make_stash, register_temporarily, slug="big", review_hours=1)
    _bulk_held(small, 20)
    _bulk_held(big, 10_000)
    _queries(alice, small), _queries(alice, big)  # warm: sessions, content types
    few = _queries(alice, small)
    with django_assert_max_num_queries(few):
        response = alice.get(url(big))
    assert response.context["total"] == 10_000
    assert response.context["item"].claimed_by is not None
    assert len(response.context["queue"]) == 20
    assert processing.overdue_counts()[big.pk] > 9_000


def test_when_others_hold_every_item_the_page_says_so(team, alice, bob):
    hold(team)
    bob.get(url(team))
    page = alice.get(url(team))
    assert page.context["item"] is None
    assert "being reviewed by someone else right now" in page.content.decode()
