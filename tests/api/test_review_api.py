"""The review actions in the API: deciding, claiming, releasing and reading a stash's review queue, with the
admin's rules (one case driven through both)."""

import pytest
from django.test import Client
from django.urls import reverse

from stash import processing
from stash.models import Content
from tests.support.review import held_since, hold, reviewer, team_stash

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(make_stash, register_temporarily):
    return team_stash(make_stash, register_temporarily)


@pytest.fixture
def alice(django_user_model):
    return reviewer(django_user_model, "alice")


@pytest.fixture
def bob(django_user_model):
    return reviewer(django_user_model, "bob")


def review(api, user, item, decision, note=""):
    return api(user).post(f"/api/contents/{item.pk}/review/", {"decision": decision, "note": note}, format="json")


def test_a_reviewer_approves_rejects_and_overturns_through_the_api(api, team, alice):
    first, second = hold(team), hold(team)
    response = review(api, alice, first, "approve", "fine")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["decision"], body["first_approval"], body["content"]["status"]) == ("approve", False, "accepted")
    assert review(api, alice, second, "reject").json()["content"]["status"] == "rejected"
    overturned = review(api, alice, second, "overturn")
    assert overturned.status_code == 200 and overturned.json()["content"]["status"] == "accepted"
    first.refresh_from_db()
    assert (first.reviewed_by, first.review_note) == (alice, "fine")


def test_an_unknown_decision_or_one_that_does_not_apply_is_a_400_naming_the_status(api, team, alice):
    item = hold(team)
    unknown = review(api, alice, item, "maybe")
    assert unknown.status_code == 400 and "decision" in unknown.json()
    review(api, alice, item, "approve")
    again = review(api, alice, item, "reject")
    assert again.status_code == 400
    assert again.json()["decision"] == ["reject does not apply to this item: it is accepted. Nothing was changed."]


def test_reviewing_needs_the_permission_to_change_items(api, team, make_user):
    item = hold(team)
    looker = make_user("looker", "stash.view_content")
    assert review(api, looker, item, "approve").status_code == 403
    assert api(looker).post(f"/api/contents/{item.pk}/claim/").status_code == 403
    assert review(api, None, item, "approve").status_code == 401
    item.refresh_from_db()
    assert item.status == "held"


def test_a_claim_held_by_another_is_a_409_in_the_api_and_refused_in_the_admin(api, team, alice, bob):
    item = hold(team)
    claimed = api(alice).post(f"/api/contents/{item.pk}/claim/")
    assert claimed.status_code == 200 and claimed.json()["claimed_by"] == "alice"

    conflict = review(api, bob, item, "reject")
    assert conflict.status_code == 409
    assert "being reviewed by alice until" in conflict.json()["detail"]
    assert api(bob).post(f"/api/contents/{item.pk}/claim/").status_code == 409

    admin = Client()
    admin.force_login(bob)
    url = reverse("admin:stash_stash_review", args=[team.pk])
    page = admin.post(url, {"item": item.pk, "status": "held", "decision": "reject", "note": ""}, follow=True)
    assert any("being reviewed by alice until" in str(m) for m in page.context["messages"])
    item.refresh_from_db()
    assert item.status == "held"

    assert api(bob).post(f"/api/contents/{item.pk}/release/").json() == {"released": False}
    assert api(alice).post(f"/api/contents/{item.pk}/release/").json() == {"released": True}
    assert review(api, bob, item, "reject").status_code == 200


def test_claiming_an_item_that_is_not_held_is_a_400(api, team, alice):
    item = hold(team)
    review(api, alice, item, "approve")
    response = api(alice).post(f"/api/contents/{item.pk}/claim/")
    assert response.status_code == 400
    assert response.json()["non_field_errors"] == ["Only held items are claimed: this one is accepted."]


def test_four_eyes_through_the_api(api, team, alice, bob):
    team.four_eyes_reasons = ["csam"]
    team.save()
    item = hold(team, "csam")
    first = review(api, alice, item, "approve")
    assert first.status_code == 200
    assert (first.json()["first_approval"], first.json()["content"]["status"]) == (True, "held")
    twice = review(api, alice, item, "approve")
    assert twice.status_code == 409 and "second, different reviewer" in twice.json()["detail"]
    queue = api(bob).get("/api/review/", {"stash": "team"}).json()
    assert queue["results"][0]["approvals"] == ["alice"]
    second = review(api, bob, item, "approve")
    assert (second.json()["first_approval"], second.json()["content"]["status"]) == (False, "accepted")


def test_the_review_queue_lists_held_items_in_order_with_claims_and_deadlines(api, team, alice, bob):
    team.review_hours = 4
    team.review_priority = 'reason_code == "urgent" ? 1.0 : 0.0'
    team.save()
    old = held_since(hold(team), 10)
    urgent = held_since(hold(team, "urgent"), 1)
    new = held_since(hold(team), 2)
    processing.claim(new.pk, alice)
    response = api(bob).get("/api/review/", {"stash": "team", "limit": 2})
    assert response.status_code == 200
    body = response.json()
    assert (body["count"], body["overdue"]) == (3, 1)
    rows = body["results"]
    assert [row["id"] for row in rows] == [str(urgent.pk), str(old.pk)]
    assert (rows[0]["priority"], rows[0]["overdue"], rows[1]["overdue"]) == (1.0, False, True)
    assert rows[1]["claimed_by"] is None
    rest = api(bob).get("/api/review/", {"stash": "team", "after": body["next_after"]}).json()
    assert [row["id"] for row in rest["results"]] == [str(new.pk)]
    assert (rest["results"][0]["claimed_by"], rest["next_after"]) == ("alice", None)


def test_the_review_queue_refuses_bad_parameters(api, team, alice):
    assert api(alice).get("/api/review/").status_code == 400
    assert "stash" in api(alice).get("/api/review/", {"stash": "nope"}).json()
    bad_after = api(alice).get("/api/review/", {"stash": "team", "after": "00000000-0000-0000-0000-000000000000"})
    assert bad_after.status_code == 400 and "after" in bad_after.json()


def test_the_review_calls_are_in_the_schema(api):
    paths = api().get("/api/schema/", {"format": "json"}).json()["paths"]
    for path in ("/api/contents/{id}/review/", "/api/contents/{id}/claim/", "/api/contents/{id}/release/"):
        assert "post" in paths[path], path
    assert "get" in paths["/api/review/"]
    assert Content.objects.count() == 0
