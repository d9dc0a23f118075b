"""/api/contents/<id>/appeal/ and /api/appeals/: a submitter appeals, a second reviewer decides, the
submitter reads the outcome on the item."""

from datetime import timedelta

import pytest
from django.utils import timezone

from stash import processing
from stash.models import Appeal, Content, HookConfig
from tests.support.appeals import Recorder, rejected

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewers(make_user):
    return [make_user(name, "stash.view_content", "stash.change_content") for name in ("rita", "rob")]


def appeal_url(item):
    return f"/api/contents/{item.pk}/appeal/"


def decide_url(appeal_id):
    return f"/api/appeals/{appeal_id}/decide/"


def test_an_appeal_decided_by_a_second_reviewer_reaches_the_submitter(api, audit, submitter, reviewers):
    rita, rob = reviewers
    item = rejected(audit, submitter, reviewer=rita)
    assert api(submitter).get(f"/api/contents/{item.pk}/").json()["appeal"] is None

    made = api(submitter).post(appeal_url(item), {"statement": "It is a recipe."}, format="json")

    assert made.status_code == 201
    assert made.json()["status"] == "open" and made.json()["statement"] == "It is a recipe."
    shown = api(submitter).get(f"/api/contents/{item.pk}/").json()["appeal"]
    assert (shown["status"], shown["note"], shown["decided_at"]) == ("open", "", None)

    listed = api(rob).get("/api/appeals/", {"status": "open", "stash": "audit"}).json()["results"]
    assert [(a["id"], a["statement"], a["decision"]["reviewer"], a["may_decide"]) for a in listed] == [
        (made.json()["id"], "It is a recipe.", "rita", True)
    ]
    decided = api(rob).post(decide_url(made.json()["id"]), {"outcome": "reversed", "note": "Fair."}, format="json")

    assert decided.status_code == 200 and decided.json()["status"] == "reversed"
    body = api(submitter).get(f"/api/contents/{item.pk}/").json()
    assert body["status"] == "accepted"
    assert (body["appeal"]["status"], body["appeal"]["note"]) == ("reversed", "Fair.")
    assert body["appeal"]["decided_at"] is not None


def test_the_reviewer_who_decided_cannot_decide_the_appeal(api, audit, submitter, reviewers):
    rita, _rob = reviewers
    item = rejected(audit, submitter, reviewer=rita)
    appeal_id = api(submitter).post(appeal_url(item), {"statement": "Wrong."}, format="json").json()["id"]

    assert api(rita).get("/api/appeals/").json()["results"][0]["may_decide"] is False
    response = api(rita).post(decide_url(appeal_id), {"outcome": "reversed"}, format="json")

    assert response.status_code == 403
    assert response.json()["detail"] == "You made the decision appealed: another reviewer must decide the appeal."
    assert Appeal.objects.get().status == "open"


def test_a_late_appeal_is_a_400_with_the_deadline(api, audit, submitter):
    decided = timezone.now() - timedelta(days=15)
    item = rejected(audit, submitter, decided_at=decided)

    response = api(submitter).post(appeal_url(item), {"statement": "Wrong."}, format="json")

    assert response.status_code == 400
    deadline = decided + timedelta(days=14)
    assert response.json()["non_field_errors"] == [f"The time to appeal ended on {deadline:%Y-%m-%d %H:%M} UTC."]
    assert response.json()["deadline"].startswith(f"{deadline:%Y-%m-%dT%H:%M}")


def test_a_second_appeal_is_a_409(api, audit, submitter):
    item = rejected(audit, submitter)
    assert api(submitter).post(appeal_url(item), {"statement": "Wrong."}, format="json").status_code == 201

    response = api(submitter).post(appeal_url(item), {"statement": "Wrong again."}, format="json")

    assert response.status_code == 409
    assert "appealed already" in response.json()["detail"]


def test_bad_statements_are_400s_naming_the_field(api, audit, submitter):
    item = rejected(audit, submitter)
    assert api(submitter).post(appeal_url(item), {}, format="json").json() == {"statement": ["This field is required."]}
    assert api(submitter).post(appeal_url(item), {"statement": ""}, format="json").json() == {
        "statement": ["Say why you think the decision is wrong."]
    }
    too_long = api(submitter).post(appeal_url(item), {"statement": "x" * 5001}, format="json")
    assert too_long.status_code == 400 and "5000" in too_long.json()["statement"][0]
    accepted = Content.objects.create(stash=audit, payload={"text": "fine"}, submitted_by=submitter)
    processing.judge([accepted.pk])
    refused = api(submitter).post(appeal_url(accepted), {"statement": "Why?"}, format="json")
    assert refused.status_code == 400
    assert refused.json() == {"non_field_errors": ["Only a rejected item can be appealed; this one is accepted."]}


def test_only_the_submitter_may_appeal(api, audit, submitter, make_user, reviewers):
    item = rejected(audit, submitter)
    other = make_user("olga", "stash.add_content")

    assert api().post(appeal_url(item), {"statement": "x"}, format="json").status_code == 401
    assert api(other).post(appeal_url(item), {"statement": "x"}, format="json").status_code == 404
    staff = api(reviewers[0]).post(appeal_url(item), {"statement": "x"}, format="json")
    assert staff.status_code == 403
    assert staff.json()["detail"] == "Only the person who submitted this item can appeal its decision."
    assert not Appeal.objects.exists()


def test_an_anonymous_submitter_appeals_from_the_browser_that_submitted(api, make_stash):
    stash = make_stash("open", hooks=[("keyword_blocklist", {"words": ["spam"]})], allow_anonymous=True)
    browser = api()
    browser.post("/s/open/submit/", {"text": "spam and eggs"})
    item = Content.objects.get()
    processing.judge([item.pk])

    assert api().post(appeal_url(item), {"statement": "Eggs!"}, format="json").status_code == 401
    response = browser.post(appeal_url(item), {"statement": "Eggs!"}, format="json")

    assert response.status_code == 201
    assert Appeal.objects.get().submitted_by is None
    assert stash.appeal_days == 14


def test_a_reversal_counts_against_the_hook_and_sinks_get_on_reversed_only(
    api, make_stash, submitter, reviewers, register_temporarily, django_capture_on_commit_callbacks
):
    register_temporarily("test_recorder", Recorder)
    stash = make_stash("audit", hooks=[("keyword_blocklist", {"words": ["spam"]}), ("test_recorder", {})])
    item = rejected(stash, submitter)
    appeal_id = api(submitter).post(appeal_url(item), {"statement": "Wrong."}, format="json").json()["id"]
    Recorder.events = []

    with django_capture_on_commit_callbacks(execute=True):
        response = api(reviewers[0]).post(decide_url(appeal_id), {"outcome": "reversed"}, format="json")

    assert response.status_code == 200
    assert HookConfig.objects.get(hook="keyword_blocklist").overturned_count == 1
    assert Recorder.events == [("on_reversed", str(item.pk))]
    again = api(reviewers[1]).post(decide_url(appeal_id), {"outcome": "upheld"}, format="json")
    assert again.status_code == 409 and again.json()["detail"] == "This appeal was reversed already."


def test_deciding_needs_the_permission_and_a_known_outcome(api, audit, submitter, make_user, reviewers):
    appeal = processing.appeal(rejected(audit, submitter), "Wrong.", submitter)
    viewer = make_user("vera", "stash.view_content")

    assert api(submitter).get("/api/appeals/").status_code == 403
    looked = api(viewer).post(decide_url(appeal.pk), {"outcome": "upheld"}, format="json")
    assert looked.status_code == 403
    assert looked.json()["detail"] == "Deciding appeals needs the permission to change content."
    bad = api(reviewers[0]).post(decide_url(appeal.pk), {"outcome": "maybe"}, format="json")
    assert bad.status_code == 400 and "outcome" in bad.json()
    assert api(reviewers[0]).post(decide_url(999999), {"outcome": "upheld"}, format="json").status_code == 404
    assert api(reviewers[0]).get("/api/appeals/", {"status": "nope"}).status_code == 400


def test_the_schema_documents_the_appeal_calls(api, viewer):
    paths = api(viewer).get("/api/schema/", {"format": "json"}).json()["paths"]
    assert set(paths["/api/contents/{id}/appeal/"]["post"]["responses"]) >= {"201", "400", "403", "409"}
    assert "403" in paths["/api/appeals/{id}/decide/"]["post"]["responses"]
    assert "/api/appeals/" in paths
