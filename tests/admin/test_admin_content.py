"""The items admin: escaped payloads, the latest trail, filters, search and the review actions."""

import pytest
from django.urls import reverse

from stash import hooks, processing
from stash.models import Content, HookConfig, PipelineRun

from .test_admin import change_url, judge, staff

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:stash_content_changelist"


class HoldLinks(hooks.Filter):
    """Hold content with a link for a person to look at."""

    def filter(self, item):
        return self.hold("has a link", "link") if "http" in item.payload.get("text", "") else self.keep()


@pytest.fixture
def audit(make_stash, register_temporarily):
    register_temporarily("test_hold_links", HoldLinks)
    return make_stash(
        "audit",
        hooks=[
            {"hook": "keyword_blocklist", "params": {"words": ["spam"]}, "label": "No spam"},
            ("test_hold_links", {}),
        ],
    )


def act(client, action, items, note=""):
    return client.post(
        reverse(CHANGELIST), {"action": action, "_selected_action": [i.pk for i in items], "note": note}, follow=True
    ).content.decode()


def listed(client, **params):
    response = client.get(reverse(CHANGELIST), params)
    assert response.status_code == 200
    return {item.pk for item in response.context["cl"].result_list}


def test_a_payload_with_markup_is_shown_escaped(admin_client, audit, django_user_model):
    item = judge(audit, text="<script>alert('x')</script>")
    page = admin_client.get(change_url(item)).content.decode()
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    viewer = staff(django_user_model, "viewer", "view_content")
    page = viewer.get(change_url(item)).content.decode()
    assert '<pre class="stash-json">{\n  &quot;text&quot;: &quot;&lt;script&gt;alert' in page
    assert "<script>alert" not in page


def test_the_item_page_shows_the_trail_of_its_latest_run(admin_client, audit):
    item = judge(audit, text="some spam")
    HookConfig.objects.filter(hook="keyword_blocklist").update(enabled=False)
    processing.reprocess(Content.objects.filter(pk=item.pk))
    processing.judge([item.pk])
    assert PipelineRun.objects.filter(content=item).count() == 2
    page = admin_client.get(change_url(item)).content.decode()
    trail = page[page.index('class="stash-trail"') : page.index("</table>", page.index('class="stash-trail"'))]
    assert "No spam" not in trail  # the first run's trail is not the one shown
    assert "test_hold_links" in trail and "kept" in trail
    assert "accepted at revision 1, pipeline version" in page


def test_filters_by_stash_status_and_deciding_hook(admin_client, audit, make_stash):
    spam, ok, held = judge(audit, text="spam"), judge(audit, text="fine"), judge(audit, text="see http://x")
    other = judge(make_stash("other"), text="spam")
    blocklist = audit.hooks.get(hook="keyword_blocklist")
    assert listed(admin_client, stash__id__exact=audit.pk) == {spam.pk, ok.pk, held.pk}
    assert listed(admin_client, status__exact="held") == {held.pk}
    assert listed(admin_client, decided_by__id__exact=blocklist.pk) == {spam.pk}
    assert listed(admin_client, decided_by__isnull="True") == {ok.pk, other.pk}
    page = admin_client.get(reverse(CHANGELIST)).content.decode()
    assert "audit: No spam" in page  # the hook filter names the stash
    assert admin_client.get(reverse(CHANGELIST), {"decided_by__id__exact": "x"}).status_code == 302


def test_search_finds_payload_text_reasons_and_ids(admin_client, audit):
    spam, ok = judge(audit, text="spam here"), judge(audit, text="a unicorn")
    assert listed(admin_client, q="unicorn") == {ok.pk}
    assert listed(admin_client, q="blocked word") == {spam.pk}
    assert listed(admin_client, q=str(spam.pk)) == {spam.pk}
    assert listed(admin_client, q="no-such-thing") == set()


def test_reprocess_sends_items_to_be_judged_again(admin_client, audit):
    item = judge(audit, text="spam")
    HookConfig.objects.filter(hook="keyword_blocklist").update(enabled=False)
    assert "1 item sent to be judged again." in act(admin_client, "reprocess", [item])
    item.refresh_from_db()
    assert item.status == "pending"
    processing.judge([item.pk])
    item.refresh_from_db()
    assert item.status == "accepted"


def test_approving_and_rejecting_held_items(
    admin_client, admin_user, audit, django_capture_on_commit_callbacks, monkeypatch
):
    first, second, ok = judge(audit, text="http://a"), judge(audit, text="http://b"), judge(audit, text="fine")
    sent = []
    monkeypatch.setattr(processing.publishing, "send", lambda ids, stash=None, queue="": sent.extend(ids))
    with django_capture_on_commit_callbacks(execute=True):
        page = act(admin_client, "approve", [first, ok], note="a known site")
    assert "1 held item approved." in page
    assert "1 selected item was left alone: its status does not allow it." in page
    assert sent == []  # nothing is sent to be judged again
    first.refresh_from_db()
    assert (first.status, first.reason, first.reviewed_by, first.review_note) == (
        "accepted",
        "accepted in review",
        admin_user,
        "a known site",
    )
    assert first.queue_seq == ok.queue_seq + 1  # in the stash's queue, after what was there
    assert processing.queue_page(audit) == [ok, first]
    assert "1 held item rejected." in act(admin_client, "reject", [second])
    second.refresh_from_db()
    assert (second.status, second.reviewed_by, second.revision) == ("rejected", admin_user, 1)


def test_overturning_counts_against_the_hook_that_decided(admin_client, audit):
    spam, ok = judge(audit, text="spam"), judge(audit, text="fine")
    runs = PipelineRun.objects.count()
    page = act(admin_client, "overturn", [spam, ok], note="false alarm")
    assert "2 verdicts overturned." in page
    spam.refresh_from_db(), ok.refresh_from_db()
    assert (spam.status, spam.overturned, spam.review_note) == ("accepted", True, "false alarm")
    assert spam.reason == "overturned in review (was rejected: contains blocked word 'spam' in text)"
    assert (ok.status, ok.overturned, ok.queue_seq) == ("rejected", True, None)  # out of the queue
    blocklist = audit.hooks.get(hook="keyword_blocklist")
    assert blocklist.overturned_count == 1
    assert PipelineRun.objects.count() == runs and spam.revision == 1  # not judged again
    changelist = admin_client.get(reverse("admin:stash_hookconfig_changelist")).content.decode().replace("\xa0", " ")
    assert "0 errors · 1 overturned" in changelist
    # An overturn is not undone by overturning again.
    assert "0 verdicts overturned." in act(admin_client, "overturn", [spam])
    blocklist.refresh_from_db()
    assert blocklist.overturned_count == 1


def test_review_actions_need_the_change_permission(django_user_model, audit):
    held = judge(audit, text="http://a")
    viewer = staff(django_user_model, "viewer", "view_content")
    act(viewer, "approve", [held])
    held.refresh_from_db()
    assert held.status == "held"


def test_adding_an_item_in_the_admin(admin_client, admin_user, audit):
    add = reverse("admin:stash_content_add")
    for payload, message in [
        ("[1]", "must be a JSON object"),
        ('{"a": "\\u0000"}', "NUL character"),
        ("{oops", "Enter a valid JSON."),
    ]:
        response = admin_client.post(add, {"stash": audit.pk, "payload": payload})
        assert response.status_code == 200
        assert message in " ".join(response.context["adminform"].form.errors["payload"])
    assert not Content.objects.exists()
    assert admin_client.post(add, {"stash": audit.pk, "payload": '{"text": "hi"}'}).status_code == 302
    item = Content.objects.get()
    assert (item.source, item.submitted_by, item.status) == ("admin", admin_user, "pending")


def test_editing_the_payload_makes_a_new_revision(admin_client, audit):
    item = judge(audit, text="spam")
    response = admin_client.post(change_url(item), {"stash": audit.pk, "payload": '{"text": "clean"}'})
    assert response.status_code == 302
    item.refresh_from_db()
    assert (item.revision, item.status, item.payload) == (2, "pending", {"text": "clean"})
