"""``POST /api/contents/<id>/reprocess/`` leaves a person's decision alone (409) unless
``include_reviewed=true``; then the decision is kept in the item's history and no longer named."""

import pytest

from stash import processing
from stash.models import Content, Review

pytestmark = pytest.mark.django_db


@pytest.fixture
def rejected(audit, make_user, broker):
    """An item the hooks accepted and the reviewer alice overturned (rejected), with a note. Made
    without signals: what the test sends to the workers is all the broker sees."""
    [item] = Content.objects.bulk_create([Content(stash=audit, payload={"text": "fine"}, status="accepted")])
    assert processing.overturn(Content.objects.filter(pk=item.pk), make_user("alice"), "off topic") == 1
    return item


@pytest.fixture
def editor(make_user):
    return make_user("ed", "stash.view_content", "stash.change_content")


def url(item, query=""):
    return f"/api/contents/{item.pk}/reprocess/{query}"


def test_reprocess_refuses_an_item_a_person_decided_and_changes_nothing(
    api, editor, rejected, broker, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = api(editor).post(url(rejected))
    assert response.status_code == 409
    assert response.json() == {
        "detail": "Not judged again: this item's status was decided in review (by alice). "
        "Send ?include_reviewed=true to replace that decision (the item's history "
        "keeps it); nothing was changed."
    }
    item = Content.objects.get(pk=rejected.pk)
    assert (item.status, item.reviewed_by.username, item.review_note, item.overturned) == (
        "rejected",
        "alice",
        "off topic",
        True,
    )
    assert broker.ids == []
    assert api(editor).get(f"/api/contents/{rejected.pk}/").json()["reviewed_by"] == "alice"


def test_reprocess_with_include_reviewed_replaces_the_decision_and_keeps_it_in_the_history(
    api, editor, rejected, django_capture_on_commit_callbacks, broker
):
    with django_capture_on_commit_callbacks(execute=True):
        response = api(editor).post(url(rejected, "?include_reviewed=true"))
    assert response.status_code == 202
    assert (response.json()["status"], response.json()["reviewed_by"]) == ("pending", None)
    assert broker.ids == [str(rejected.pk)]
    processing.judge([rejected.pk])
    item = Content.objects.get(pk=rejected.pk)
    assert (item.status, item.reviewed_by, item.review_note, item.overturned) == ("accepted", None, "", False)
    [review] = Review.objects.filter(content=item)
    assert (review.decision, review.status, review.reviewer.username, review.note) == (
        "overturn",
        "rejected",
        "alice",
        "off topic",
    )
    assert review.replaced_at is not None


def test_reprocess_refuses_a_bad_include_reviewed(api, editor, rejected):
    response = api(editor).post(url(rejected, "?include_reviewed=perhaps"))
    assert response.status_code == 400
    assert response.json() == {"include_reviewed": ["Must be a valid boolean."]}
    assert Content.objects.get(pk=rejected.pk).status == "rejected"
