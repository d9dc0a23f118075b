"""The review queue of every stash at once, the admin index's panel (how long the oldest held item has
waited, the link to that queue), and the words beside the decision buttons."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from stash import processing
from stash.models import Content

from .test_admin import staff
from .test_admin_review import HoldLinks, held, messages_of, review_url, shown, status

pytestmark = pytest.mark.django_db

ALL = reverse("admin:stash_content_review_all")


@pytest.fixture
def audit(make_stash, register_temporarily):
    register_temporarily("test_hold_links", HoldLinks)
    return make_stash("audit", name="Audit", hooks=[{"hook": "test_hold_links", "label": "Links"}])


@pytest.fixture
def zoo(make_stash, audit):
    return make_stash("zoo", name="Zoo", hooks=[{"hook": "test_hold_links", "label": "Links"}])


def held_since(item, hours):
    """Say ``item`` was held ``hours`` ago (and submitted then)."""
    when = timezone.now() - timedelta(hours=hours)
    Content.objects.filter(pk=item.pk).update(created_at=when, processed_at=when)


def panel_of(client):
    page = client.get(reverse("admin:index")).content.decode()
    start = page.index('id="awaiting-review"')
    return page[start : page.index("</table>", start)]


def test_the_panel_says_how_long_the_oldest_held_item_of_each_stash_has_waited(admin_client, audit, zoo):
    old, _new = held(audit, "http://a", "http://b")
    (other,) = held(zoo, "http://z")
    held_since(old, 3)
    held_since(other, 0.5)
    panel = panel_of(admin_client)
    audit_row = panel[panel.index(">Audit<") : panel.index("</tr>", panel.index(">Audit<"))]
    zoo_row = panel[panel.index(">Zoo<") : panel.index("</tr>", panel.index(">Zoo<"))]
    assert "2 held items" in audit_row and "oldest: 3 h" in audit_row
    assert "1 held item" in zoo_row and "oldest: 30 min" in zoo_row
    assert f'<a href="{ALL}" id="review-all">Review every stash in one queue</a>' in panel

    processing.approve(Content.objects.filter(pk=old.pk), None)
    assert "oldest: 3 h" not in panel_of(admin_client)


def test_the_queue_of_every_stash_shows_their_held_items_in_one_order_and_claims_each(
    admin_client, admin_user, audit, zoo
):
    first, third = held(audit, "http://a", "http://c")
    (second,) = held(zoo, "http://b")
    judge_accepted = Content.objects.create(stash=zoo, payload={"text": "fine"})
    processing.judge([judge_accepted.pk])
    for hours, item in ((3, first), (2, second), (1, third)):
        held_since(item, hours)

    response = admin_client.get(ALL)
    assert shown(response) == first
    assert [row.item for row in response.context["queue"]] == [first, second, third]
    assert judge_accepted.pk not in {row.item.pk for row in response.context["queue"]}
    page = response.content.decode()
    assert "Item 1 of 3 awaiting review in all the stashes you may review" in page
    assert '<th scope="col">Stash</th>' in page and ">Zoo</a>" in page
    first.refresh_from_db()
    assert first.claimed_by == admin_user  # the same claim as a stash's own page

    # A decision there moves on to the next item, whichever stash it is in.
    response = admin_client.post(ALL, {"item": first.pk, "status": "held", "decision": "approve"}, follow=True)
    assert messages_of(response) == [f"Approved item {str(first.pk)[:8]}."]
    assert shown(response) == second and status(first) == "accepted"
    assert "in Zoo" in response.content.decode()


def test_the_queue_of_every_stash_skips_items_another_reviewer_holds(admin_client, audit, zoo, django_user_model):
    (first,) = held(audit, "http://a")
    (second,) = held(zoo, "http://b")
    held_since(first, 2)
    held_since(second, 1)
    other = django_user_model.objects.create_user("other", is_staff=True)
    assert processing.claim(first.pk, other).taken
    assert shown(admin_client.get(ALL)) == second
    refused = admin_client.post(ALL, {"item": first.pk, "status": "held", "decision": "reject"}, follow=True)
    assert f"Item {str(first.pk)[:8]} is being reviewed by other" in messages_of(refused)[0]
    assert status(first) == "held"


def test_the_queue_of_every_stash_is_only_for_those_who_may_review(audit, zoo, django_user_model):
    (item,) = held(audit, "http://a")
    hooks_only = staff(django_user_model, "hooks", "view_hookconfig")
    assert hooks_only.get(ALL).status_code == 403
    assert hooks_only.post(ALL, {"item": item.pk, "status": "held", "decision": "approve"}).status_code == 403
    assert status(item) == "held"
    assert processing.reviewable_stashes(django_user_model.objects.get(username="hooks")).count() == 0

    # Someone who may only look sees the items of every stash, claims none and has no buttons.
    looker = staff(django_user_model, "looker", "view_content")
    response = looker.get(ALL)
    assert shown(response) == item and response.context["buttons"] == []
    assert "deciding needs the permission to change items" in response.content.decode()
    item.refresh_from_db()
    assert item.claimed_by is None
    assert looker.post(ALL, {"item": item.pk, "status": "held", "decision": "approve"}).status_code == 403
    assert status(item) == "held"


def test_bad_input_to_the_queue_of_every_stash_changes_nothing(admin_client, audit):
    (item,) = held(audit, "http://a")
    response = admin_client.get(ALL + "?after=nope")
    assert response.status_code == 400 and "after: Not an item id." in response.content.decode()
    response = admin_client.post(ALL, {"item": item.pk, "status": "held", "decision": "maybe"})
    assert response.status_code == 400 and "decision:" in response.content.decode()
    assert status(item) == "held"


def test_the_buttons_say_in_words_what_approve_and_overturn_do(admin_client, admin_user, audit):
    (item,) = held(audit, "http://a")
    page = admin_client.get(review_url(audit)).content.decode()
    meanings = page[page.index('id="decide-meanings"') : page.index("</dl>", page.index('id="decide-meanings"'))]
    assert "<dt>Approve</dt>" in meanings and "the hook was right to ask a person" in meanings
    assert "<dt>Overturn</dt>" in meanings
    assert "Accepts the item, and counts it against the hook that held it" in meanings
    assert 'aria-describedby="decide-means-overturn"' in page
    assert "Precision of Links over 30 days: no decision by people yet." in page

    processing.overturn(Content.objects.filter(pk=item.pk), admin_user)
    held(audit, "http://b", "http://c")
    page = admin_client.get(review_url(audit)).content.decode()
    assert "Precision of Links over 30 days: 0% of 1 decision by people confirmed its verdict." in page
    assert "Approving or overturning lowers it (its hold not confirmed); rejecting raises it." in page


def test_the_queue_of_every_stash_says_when_nothing_awaits_review(admin_client, audit, zoo):
    page = admin_client.get(ALL).content.decode()
    assert "Nothing awaiting review." in page
    assert f'<a href="{reverse("admin:stash_content_changelist")}?status__exact=held">All items</a>' in page
    assert "Review every stash in one queue" not in panel_of(admin_client)
