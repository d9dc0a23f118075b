"""The admin's appeals page: the decision and the submitter's words side by side, Uphold / Reverse for
a reviewer other than the one who decided, and the index's count of appeals waiting."""

import pytest
from django.contrib.auth.models import Permission
from django.utils.html import escape

from stash import processing
from stash.models import Appeal, Content
from tests.support.appeals import rejected

from .test_admin import staff

pytestmark = pytest.mark.django_db

URL = "/admin/stash/content/appeals/"


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", hooks=[{"hook": "keyword_blocklist", "params": {"words": ["spam"]}, "label": "No spam"}])


@pytest.fixture
def rita(django_user_model):
    return staff(django_user_model, "rita", "view_content", "change_content")


@pytest.fixture
def rob(django_user_model):
    return staff(django_user_model, "rob", "view_content", "change_content")


def appealed(audit, django_user_model, reviewer=None):
    sam = django_user_model.objects.create_user(f"sam{Content.objects.count()}")
    item = rejected(audit, sam, reviewer=reviewer)
    return processing.appeal(item, "It is a recipe, not spam.", sam)


def test_the_page_shows_the_decision_the_statement_and_the_submitters_words(audit, django_user_model, rob):
    appeal = appealed(audit, django_user_model)

    html = rob.get(URL).content.decode()

    assert "Rejected by the hook No spam." in html
    assert "contains blocked word" in html
    assert escape(appeal.statement.text) in html
    assert "It is a recipe, not spam." in html
    assert 'value="upheld"' in html and 'value="reversed"' in html


def test_the_original_reviewer_gets_no_buttons_and_a_line_saying_why(audit, django_user_model, rita, rob):
    reviewer = django_user_model.objects.get(username="rita")
    appealed(audit, django_user_model, reviewer=reviewer)

    html = rita.get(URL).content.decode()

    assert "You made the decision appealed: another reviewer must decide the appeal." in html
    assert 'value="reversed"' not in html
    assert 'value="reversed"' in rob.get(URL).content.decode()


def test_a_reviewer_reverses_an_appeal_from_the_page(audit, django_user_model, rob):
    appeal = appealed(audit, django_user_model)

    response = rob.post(URL, {"appeal": appeal.pk, "outcome": "reversed", "note": "Fair."}, follow=True)

    assert response.status_code == 200
    html = response.content.decode()
    assert "it is accepted now" in html and "No appeal awaits a decision." in html
    appeal.refresh_from_db()
    assert (appeal.status, appeal.note, appeal.content.status) == ("reversed", "Fair.", "accepted")


def test_the_original_reviewer_posting_anyway_is_refused(audit, django_user_model, rita):
    appeal = appealed(audit, django_user_model, reviewer=django_user_model.objects.get(username="rita"))

    assert rita.post(URL, {"appeal": appeal.pk, "outcome": "reversed"}).status_code == 403
    assert Appeal.objects.get().status == "open"


def test_bad_input_and_a_decided_appeal_change_nothing(audit, django_user_model, rob):
    appeal = appealed(audit, django_user_model)
    assert rob.post(URL, {"appeal": appeal.pk, "outcome": "maybe"}).status_code == 400
    rob.post(URL, {"appeal": appeal.pk, "outcome": "upheld"})

    again = rob.post(URL, {"appeal": appeal.pk, "outcome": "reversed"}, follow=True)

    assert "This appeal was upheld already. Nothing was changed." in again.content.decode()
    assert Appeal.objects.get().status == "upheld"


def test_a_looker_without_the_change_permission_sees_no_buttons(audit, django_user_model):
    client = staff(django_user_model, "vera", "view_content")
    appealed(audit, django_user_model)
    html = client.get(URL).content.decode()
    assert "Deciding appeals needs the permission to change content." in html
    assert 'value="reversed"' not in html
    assert staff(django_user_model, "nobody").get(URL).status_code == 403


def test_the_admin_index_links_the_appeals_waiting(audit, django_user_model, rob):
    appealed(audit, django_user_model)
    appealed(audit, django_user_model)
    html = rob.get("/admin/").content.decode()
    assert f'<a href="{URL}">2 appeals waiting</a>' in html
    assert Permission.objects.exists()


def test_appeals_join_the_stashs_review_queue_marked_as_such(audit, django_user_model, rob):
    appeal = appealed(audit, django_user_model)

    html = rob.get(f"/admin/stash/stash/{audit.pk}/review/").content.decode()

    assert 'id="review-appeals"' in html and f'data-appeal="{appeal.pk}"' in html
    assert "It is a recipe, not spam." in html
    assert f"{URL}?stash={audit.pk}" in html
    processing.decide_appeal(appeal.pk, "upheld", "", django_user_model.objects.get(username="rob"))
    assert 'id="review-appeals"' not in rob.get(f"/admin/stash/stash/{audit.pk}/review/").content.decode()
