"""The review queue: a stash's held items one at a time, the decision buttons (there and on an item's
page), the admin index's "Awaiting review" panel and who is shown as the decider."""

import base64
from datetime import timedelta

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse
from django.utils import timezone

from stash import hooks, processing
from stash.models import Content

from .test_admin import change_url, judge, staff

pytestmark = pytest.mark.django_db

PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
    b"\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82"
)


class HoldLinks(hooks.Filter):
    """Hold content with a link for a person to look at."""

    def filter(self, item):
        return self.hold("has a link", "link") if "http" in str(item.payload) else self.keep()


@pytest.fixture
def audit(make_stash, register_temporarily):
    register_temporarily("test_hold_links", HoldLinks)
    return make_stash(
        "audit",
        name="Audit",
        hooks=[
            {"hook": "keyword_blocklist", "params": {"words": ["spam"]}, "label": "No spam"},
            {"hook": "test_hold_links", "label": "Links"},
        ],
    )


def held(stash, *texts):
    """Held items of ``stash``, one per text, the first the oldest (created a minute apart)."""
    items = [judge(stash, text=text) for text in texts]
    start = timezone.now() - timedelta(hours=1)
    # Created in the reverse order of their ids' insertion, so the order shown is by age alone.
    for minutes, item in enumerate(items):
        Content.objects.filter(pk=item.pk).update(created_at=start + timedelta(minutes=minutes))
    assert {item.status for item in items} == {"held"}
    return items


def review_url(stash, **params):
    url = reverse("admin:stash_stash_review", args=[stash.pk])
    return url + ("?" + "&".join(f"{key}={value}" for key, value in params.items()) if params else "")


def shown(response):
    """The item the review page shows, or None."""
    assert response.status_code == 200
    return response.context["item"]


def decide(client, stash, item, decision, note="", status="held"):
    return client.post(
        review_url(stash), {"item": item.pk, "status": status, "decision": decision, "note": note}, follow=True
    )


def messages_of(response):
    return [str(message) for message in response.context["messages"]]


def status(item):
    item.refresh_from_db()
    return item.status


# --- the review page ----------------------------------------------------------------------------


def test_the_review_page_shows_held_items_oldest_first_and_skips_to_the_next(admin_client, audit):
    first, second, third = held(audit, "http://a", "http://b", "http://c")
    judge(audit, text="fine"), judge(audit, text="spam")  # not held: never shown
    Content.objects.filter(pk=third.pk).update(created_at=timezone.now() - timedelta(days=1))  # now the oldest

    response = admin_client.get(review_url(audit))
    assert shown(response) == third
    page = response.content.decode()
    assert "Item 1 of 3 awaiting review in Audit, oldest first." in page
    assert "http://c" in page and "has a link" in page
    skip = review_url(audit, after=third.pk)
    assert f'href="{skip}"' in page.replace("&amp;", "&")
    assert shown(admin_client.get(skip)) == first
    assert "Item 2 of 3" in admin_client.get(skip).content.decode()
    assert shown(admin_client.get(review_url(audit, after=first.pk))) == second
    end = admin_client.get(review_url(audit, after=second.pk))
    assert shown(end) is None
    assert "No held item after the one you skipped. 3 items still await review:" in end.content.decode()


def test_the_item_is_shown_with_the_hold_reason_the_hook_and_the_trail_of_its_latest_run(admin_client, audit):
    (item,) = held(audit, "see http://x")
    page = admin_client.get(review_url(audit)).content.decode()
    assert "Held:</strong> has a link" in page
    assert f'href="{change_url(audit.hooks.get(label="Links"))}">Links</a>' in page
    trail = page[page.index('class="stash-trail"') : page.index("</table>", page.index('class="stash-trail"'))]
    assert "No spam" in trail and "kept" in trail and "held" in trail
    assert "held at revision 1, hooks version" in page


def test_texts_are_shown_as_escaped_text_images_inline_and_other_data_as_json(admin_client, audit):
    png = base64.b64encode(PNG).decode()
    pdf = base64.b64encode(b"%PDF-1.7 not an image").decode()
    for payload in (
        {"text": "<b>http://x</b>\nline two", "filename": "cat.png", "b64_file": png, "data": {"score": 0.5}},
        {"text": "http://pdf", "filename": "fake.png", "b64_file": pdf},
        {"text": "http://svg", "b64_file": base64.b64encode(b"<svg onload=alert(1)></svg>").decode()},
        {"text": "http://bad", "b64_file": "not base64!"},
    ):
        item = Content.objects.create(stash=audit, payload=payload)
        processing.judge([item.pk])
    items = list(processing.held_items(audit))

    page = admin_client.get(review_url(audit)).content.decode()
    assert "&lt;b&gt;http://x&lt;/b&gt;<br>line two" in page  # text, escaped, lines kept
    assert "cat.png" in page
    assert f'<img class="stash-image" src="data:image/png;base64,{png}"' in page
    assert "png, 70\xa0bytes (typed by its bytes)" in page
    assert '<pre class="stash-json">{\n  &quot;data&quot;: {\n    &quot;score&quot;: 0.5' in page
    assert png not in page.replace(f'src="data:image/png;base64,{png}"', "")  # never as text

    page = admin_client.get(review_url(audit, after=items[0].pk)).content.decode()
    assert "stash-image" not in page and "fake.png" in page
    assert "pdf, 21\xa0bytes" in page and "Not an image: not shown." in page
    page = admin_client.get(review_url(audit, after=items[1].pk)).content.decode()
    assert "stash-image" not in page and "text, 27\xa0bytes" in page and "onload" not in page
    page = admin_client.get(review_url(audit, after=items[2].pk)).content.decode()
    assert "stash-image" not in page and "not valid base64" in page


def test_approving_shows_the_next_item_and_says_what_was_done(admin_client, admin_user, audit):
    first, second = held(audit, "http://a", "http://b")
    response = decide(admin_client, audit, first, "approve", note="  a known site ")
    assert response.redirect_chain == [(review_url(audit, after=first.pk), 302)]
    assert shown(response) == second
    assert messages_of(response) == [f"Approved item {str(first.pk)[:8]}."]
    first.refresh_from_db()
    assert (first.status, first.reason, first.reviewed_by, first.review_note) == (
        "accepted",
        "accepted in review",
        admin_user,
        "a known site",
    )
    assert processing.queue_page(audit) == [first]
    entry = LogEntry.objects.get(object_id=str(first.pk))
    assert (entry.user, entry.get_change_message()) == (admin_user, f"Approved item {str(first.pk)[:8]}. a known site")


def test_rejecting_then_the_last_decision_leaves_nothing_awaiting_review(admin_client, admin_user, audit):
    first, second = held(audit, "http://a", "http://b")
    response = decide(admin_client, audit, first, "reject")
    assert messages_of(response) == [f"Rejected item {str(first.pk)[:8]}."]
    assert (status(first), first.reason, first.reviewed_by) == ("rejected", "rejected in review", admin_user)
    assert shown(response) == second
    response = decide(admin_client, audit, second, "approve")
    assert shown(response) is None
    assert "Nothing awaiting review." in response.content.decode()


def test_overturning_a_hold_accepts_the_item_and_counts_against_the_hook(admin_client, audit):
    (item,) = held(audit, "http://a")
    response = decide(admin_client, audit, item, "overturn", note="links are fine here")
    assert messages_of(response) == [f"Overturned the verdict on item {str(item.pk)[:8]}: it is accepted now."]
    item.refresh_from_db()
    assert (item.status, item.overturned, item.review_note) == ("accepted", True, "links are fine here")
    assert item.reason == "overturned in review (was held: has a link)"
    links = audit.hooks.get(label="Links")
    assert (links.overturned_count, item.decided_by) == (1, links)  # still recorded against the hook
    assert audit.hooks.get(label="No spam").overturned_count == 0


@pytest.mark.django_db(transaction=True)
def test_judging_again_sends_the_item_to_the_hooks_and_shows_the_next(admin_client, audit, broker):
    first, second = held(audit, "http://a", "http://b")
    audit.hooks.filter(label="Links").update(enabled=False)
    broker.messages.clear()
    response = decide(admin_client, audit, first, "judge", note="the link rule is off now")
    assert messages_of(response) == [f"Sent item {str(first.pk)[:8]} to be judged again."]
    assert shown(response) == second
    assert status(first) == "pending" and broker.ids == [str(first.pk)]
    assert "the link rule is off now" in LogEntry.objects.get(object_id=str(first.pk)).get_change_message()
    processing.judge([first.pk])
    assert status(first) == "accepted" and first.reviewed_by is None


def test_a_decision_on_an_item_someone_else_decided_says_so_and_changes_nothing(admin_client, audit, django_user_model):
    first, second = held(audit, "http://a", "http://b")
    bob = django_user_model.objects.create_user("bob")
    processing.approve(Content.objects.filter(pk=first.pk), bob, "mine")
    for decision in ("reject", "overturn", "judge", "approve"):
        response = decide(admin_client, audit, first, decision, note="late")
        assert messages_of(response) == [
            (
                f"Item {str(first.pk)[:8]} is no longer held for review: bob has decided "
                "it meanwhile (it is accepted). Nothing was changed."
            )
        ]
        assert shown(response) == second
    first.refresh_from_db()
    assert (first.status, first.reviewed_by, first.review_note, first.overturned) == ("accepted", bob, "mine", False)
    assert audit.hooks.get(label="Links").overturned_count == 0
    assert not LogEntry.objects.exists()


@pytest.mark.parametrize(
    "change, error",
    [
        ({"decision": "delete"}, "decision: Select a valid choice. delete is not one of the available choices."),
        ({"decision": ""}, "decision: This field is required."),
        ({"item": "not-an-id"}, "item: Enter a valid UUID."),
        ({"status": "maybe"}, "status: Select a valid choice. maybe is not one of the available choices."),
        ({"note": "x" * 1001}, "note: Ensure this value has at most 1000 characters (it has 1001)."),
    ],
)
def test_bad_input_is_refused_with_the_field_and_reason_and_changes_nothing(admin_client, audit, change, error):
    (item,) = held(audit, "http://a")
    data = {"item": item.pk, "status": "held", "decision": "approve", "note": "", **change}
    response = admin_client.post(review_url(audit), data)
    assert response.status_code == 400
    assert error in response.content.decode().replace("&#x27;", "'")
    assert "Nothing was changed" in response.content.decode()
    assert status(item) == "held" and not LogEntry.objects.exists()


def test_an_item_of_another_stash_or_an_unknown_one_is_refused(admin_client, audit, make_stash):
    (mine,) = held(audit, "http://a")
    other = make_stash("other")
    response = decide(admin_client, other, mine, "approve")
    assert response.status_code == 400 and "item: No such item in Other." in response.content.decode()
    assert status(mine) == "held"
    assert admin_client.get(review_url(audit, after="nope")).status_code == 400
    assert "after: Not an item id." in admin_client.get(review_url(audit, after="nope")).content.decode()
    gone = admin_client.get(review_url(audit, after="00000000-0000-0000-0000-000000000000"))
    assert shown(gone) == mine
    assert messages_of(gone) == [
        ("No item 00000000-0000-0000-0000-000000000000 in this stash: here is the oldest held item.")
    ]
    assert admin_client.get(reverse("admin:stash_stash_review", args=[9999])).status_code == 404


def test_looking_needs_view_permission_on_items_and_deciding_change_permission(django_user_model, audit):
    (item,) = held(audit, "http://a")
    nobody = staff(django_user_model, "nobody", "view_stash")
    assert nobody.get(review_url(audit)).status_code == 403
    assert decide(nobody, audit, item, "approve").status_code == 403

    viewer = staff(django_user_model, "viewer", "view_content")
    response = viewer.get(review_url(audit))
    assert shown(response) == item
    page = response.content.decode()
    assert 'name="decision"' not in page and "deciding needs the permission to change items" in page
    assert decide(viewer, audit, item, "approve").status_code == 403
    assert viewer.post(review_url(audit), {"decision": "nonsense"}).status_code == 403
    assert status(item) == "held"

    changer = staff(django_user_model, "changer", "change_content")
    assert 'value="approve"' in changer.get(review_url(audit)).content.decode()
    assert shown(decide(changer, audit, item, "reject")) is None
    assert status(item) == "rejected"


def test_the_buttons_are_real_buttons_of_a_csrf_form_with_documented_keys(admin_client, audit):
    held(audit, "http://a")
    page = admin_client.get(review_url(audit)).content.decode()
    start = page.index('<form method="post" action="' + review_url(audit))
    form = page[start : page.index("</form>", start)]
    assert 'name="csrfmiddlewaretoken"' in form
    for decision, key in [("approve", "a"), ("reject", "r"), ("overturn", "o"), ("judge", "j")]:
        assert (
            f'<button type="submit" name="decision" value="{decision}"' in form
            and f'data-shortcut="{key}" aria-keyshortcuts="{key}"' in form
        )
    assert form.index("<textarea") < form.index("<button")  # the note comes first in the focus order
    assert 'data-shortcut="n"' in form and "stash/review.js" in page


# --- an item's page -----------------------------------------------------------------------------


def buttons(client, item):
    response = client.get(change_url(item))
    assert response.status_code == 200
    return [button.decision for button in response.context.get("buttons", [])]


def test_an_items_page_offers_the_decisions_that_apply_to_its_status(admin_client, audit, django_user_model):
    (hold,) = held(audit, "http://a")
    spam, fine = judge(audit, text="spam"), judge(audit, text="fine")
    assert buttons(admin_client, hold) == ["approve", "reject", "overturn", "judge"]
    assert buttons(admin_client, spam) == ["overturn", "judge"]
    assert buttons(admin_client, fine) == ["overturn", "judge"]
    processing.overturn(Content.objects.filter(pk=spam.pk), None)
    assert buttons(admin_client, spam) == ["judge"]
    processing.reprocess(Content.objects.filter(pk=fine.pk))
    assert buttons(admin_client, fine) == []  # being judged
    page = admin_client.get(change_url(hold)).content.decode()
    assert f'action="{reverse("admin:stash_content_decide", args=[hold.pk])}"' in page
    assert "data-shortcut" not in page  # single keys only on the review page, where nothing else is typed
    viewer = staff(django_user_model, "viewer", "view_content")
    assert buttons(viewer, hold) == []


def test_deciding_on_an_items_page_goes_back_to_it(admin_client, admin_user, audit, django_user_model):
    spam = judge(audit, text="spam")
    url = reverse("admin:stash_content_decide", args=[spam.pk])
    response = admin_client.post(url, {"item": spam.pk, "status": "rejected", "decision": "overturn"}, follow=True)
    assert response.redirect_chain == [(change_url(spam), 302)]
    assert messages_of(response) == [f"Overturned the verdict on item {str(spam.pk)[:8]}: it is accepted now."]
    assert (status(spam), spam.reviewed_by) == ("accepted", admin_user)
    # The page was shown while it was rejected: now accepted, the same decision changes nothing.
    response = admin_client.post(url, {"item": spam.pk, "status": "rejected", "decision": "overturn"}, follow=True)
    assert messages_of(response) == [
        (
            f"Item {str(spam.pk)[:8]} is no longer rejected: admin has decided it "
            "meanwhile (it is accepted). Nothing was changed."
        )
    ]
    # A decision that does not apply to the status the item has.
    response = admin_client.post(url, {"item": spam.pk, "status": "accepted", "decision": "approve"}, follow=True)
    assert messages_of(response) == [
        (f"Item {str(spam.pk)[:8]} is accepted: Approve does not apply to it. Nothing was changed.")
    ]
    assert status(spam) == "accepted"
    fine = judge(audit, text="fine")
    response = admin_client.post(url, {"item": fine.pk, "status": "accepted", "decision": "overturn"})
    assert response.status_code == 400 and "item: This is not the item of this page." in response.content.decode()
    assert status(fine) == "accepted"
    assert admin_client.get(url).status_code == 405
    viewer = staff(django_user_model, "viewer", "view_content")
    assert viewer.post(url, {"item": spam.pk, "status": "accepted", "decision": "overturn"}).status_code == 403
    assert status(spam) == "accepted"


# --- the index panel and the links to the queue --------------------------------------------------


def test_the_admin_index_counts_held_items_per_stash_in_one_query(
    admin_client, audit, make_stash, django_assert_num_queries, django_user_model
):
    held(audit, "http://a", "http://b")
    judge(audit, text="fine")
    other = make_stash("zoo", name="Zoo", hooks=[{"hook": "test_hold_links"}])
    held(other, "http://z")
    make_stash("quiet", name="Quiet")
    with django_assert_num_queries(1):
        counts = processing.held_counts()
    assert [(stash.slug, n) for stash, n in counts] == [("audit", 2), ("zoo", 1)]
    page = admin_client.get(reverse("admin:index")).content.decode()
    panel = page[page.index('id="awaiting-review"') : page.index("</table>", page.index('id="awaiting-review"'))]
    assert f'<a href="{review_url(audit)}">Audit</a>' in panel and "2 held items" in panel
    assert f'<a href="{review_url(other)}">Zoo</a>' in panel and "1 held item<" in panel
    assert "Quiet" not in panel
    assert page.index('id="awaiting-review"') < page.index('class="app-stash')  # above the apps

    processing.approve(Content.objects.filter(status="held"), None)
    assert "Nothing awaiting review." in admin_client.get(reverse("admin:index")).content.decode()
    hooks_only = staff(django_user_model, "hooks", "view_hookconfig")
    assert "Awaiting review" not in hooks_only.get(reverse("admin:index")).content.decode()


def test_the_stashes_list_and_a_stash_page_link_to_its_review_queue(admin_client, audit):
    held(audit, "http://a", "http://b")
    changelist = admin_client.get(reverse("admin:stash_stash_changelist")).content.decode()
    assert f'<a href="{review_url(audit)}" title="Review the held items, oldest first">2</a>' in changelist
    page = admin_client.get(change_url(audit)).content.decode()
    assert f'<a href="{review_url(audit)}">Review (2 held)</a>' in page


def test_every_page_that_counts_held_items_gives_the_same_count(admin_client, admin_user, audit, make_stash):
    first, _second, _third = held(audit, "http://a", "http://b", "http://c")
    judge(audit, text="fine")
    other = make_stash("zoo", name="Zoo", hooks=[{"hook": "test_hold_links"}])
    held(other, "http://z")

    def counts(stash):
        changelist = admin_client.get(reverse("admin:stash_stash_changelist"))
        listed = {row.pk: row.held_count for row in changelist.context["cl"].result_list}[stash.pk]
        panel = dict(processing.held_counts()).get(stash, 0)
        index = admin_client.get(reverse("admin:index")).context["stashes"]
        on_index = {shown.pk: n for shown, n, _overdue, _url, _waited in index}.get(stash.pk, 0)
        page = admin_client.get(change_url(stash)).context["original"].held_count
        review = admin_client.get(review_url(stash)).context["total"]
        return listed, panel, on_index, page, review

    assert counts(audit) == (3, 3, 3, 3, 3)
    assert counts(other) == (1, 1, 1, 1, 1)
    processing.approve(Content.objects.filter(pk=first.pk), admin_user)
    assert counts(audit) == (2, 2, 2, 2, 2)
    processing.approve(Content.objects.filter(stash=other), admin_user)
    assert counts(other) == (0, 0, 0, 0, 0)


# --- the reviewer as the decider -----------------------------------------------------------------


def test_the_reviewer_is_shown_as_the_decider_until_the_hooks_judge_again(admin_client, admin_user, audit):
    hold, spam = held(audit, "http://a")[0], judge(audit, text="spam")
    decide(admin_client, audit, hold, "approve")
    processing.overturn(Content.objects.filter(pk=spam.pk), admin_user)
    changelist = admin_client.get(reverse("admin:stash_content_changelist")).content.decode()
    by_links = 'admin <span class="quiet">(in review; hook: Links)</span>'
    assert by_links in changelist and 'admin <span class="quiet">(in review; hook: No spam)</span>' in changelist
    assert by_links in admin_client.get(change_url(hold)).content.decode()
    body = admin_client.get(f"/api/contents/{hold.pk}/").json()
    assert (body["reviewed_by"], body["decided_by"]["label"]) == ("admin", "Links")  # the hook stays the hook
    assert admin_client.get("/api/contents/", {"stash": "audit"}).json()["results"][0]["reviewed_by"] == "admin"

    processing.reprocess(Content.objects.filter(pk=hold.pk), include_reviewed=True)  # else a person's decision stays
    processing.judge([hold.pk])
    assert admin_client.get(f"/api/contents/{hold.pk}/").json()["reviewed_by"] is None
    assert "(in review; hook: Links)" not in admin_client.get(change_url(hold)).content.decode()
    assert admin_client.get(f"/api/contents/{judge(audit, text='new').pk}/").json()["reviewed_by"] is None
