"""A stash's simulate and replay pages: what the hooks would do, with nothing saved."""

import json

import pytest
from django.urls import reverse

from stash import hooks, processing
from stash.models import Content, HookConfig, PipelineRun

from .test_admin import HOOKS, judge, staff
from .test_previews import PNG, b64

pytestmark = pytest.mark.django_db


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", hooks=HOOKS)


def simulate_url(stash):
    return reverse("admin:stash_stash_simulate", args=[stash.pk])


def replay_url(stash):
    return reverse("admin:stash_stash_replay", args=[stash.pk])


def counters():
    return list(HookConfig.objects.order_by("pk").values_list("runs_count", "kept_count", "dropped_count"))


def test_the_stash_page_links_to_simulate_and_replay(admin_client, audit):
    page = admin_client.get(reverse("admin:stash_stash_change", args=[audit.pk])).content.decode()
    assert f'href="{simulate_url(audit)}"' in page and f'href="{replay_url(audit)}"' in page


def test_simulate_shows_each_hooks_outcome_reason_and_time_and_saves_nothing(admin_client, audit):
    before = counters()
    response = admin_client.post(simulate_url(audit), {"payload": json.dumps({"text": "buy spam <b>now</b>"})})
    page = response.content.decode()
    result = response.context["result"]
    assert result.verdict == "rejected"
    assert [(e.hook, e.outcome) for e in result.trail] == [("require_fields", "kept"), ("keyword_blocklist", "dropped")]
    assert "contains blocked word &#x27;spam&#x27; in text" in page
    assert page.count('<td class="stash-num">') == 2  # a time per hook that ran
    assert "Nothing was saved or counted." in page
    assert "&lt;b&gt;now&lt;/b&gt;" in page and "<b>now</b>" not in page  # the pasted payload, escaped
    assert not Content.objects.exists() and not PipelineRun.objects.exists()
    assert counters() == before


def test_simulate_starts_from_the_latest_payload(admin_client, audit):
    judge(audit, text="the latest one")
    page = admin_client.get(simulate_url(audit)).content.decode()
    assert "the latest one" in page
    assert "3 enabled hooks run, in this order: 1. require_fields · 2. keyword_blocklist · 3. max_size" in page


def test_simulate_shows_a_transformed_payload(admin_client, make_stash, register_temporarily):
    class Shout(hooks.Transform):
        """Uppercase the text."""

        def transform(self, item):
            return {**item.payload, "text": item.payload["text"].upper()}

    register_temporarily("test_shout", Shout)
    stash = make_stash("loud", hooks=[("test_shout", {})])
    page = admin_client.post(simulate_url(stash), {"payload": '{"text": "hi"}'}).content.decode()
    assert "Payload after the transforms" in page and "&quot;HI&quot;" in page


@pytest.mark.parametrize(
    "payload, message",
    [
        ("{oops", "Enter a valid JSON."),
        ("[1, 2]", "The payload must be a JSON object, not list."),
        (json.dumps({"text": "x" * 300}), "this stash takes at most 100"),
    ],
)
def test_simulate_refuses_bad_payloads_on_the_field(admin_client, make_stash, payload, message):
    stash = make_stash("small", hooks=HOOKS, max_payload_bytes=100)
    response = admin_client.post(simulate_url(stash), {"payload": payload})
    assert response.status_code == 200
    assert message in " ".join(response.context["form"].errors["payload"])
    assert response.context["result"] is None


def test_simulate_and_replay_of_unknown_stashes_are_404(admin_client):
    for name in ("admin:stash_stash_simulate", "admin:stash_stash_replay"):
        assert admin_client.get(reverse(name, args=[999])).status_code == 404
        assert admin_client.get(reverse(name, args=["not-a-number"])).status_code == 404


def test_simulate_needs_permission_to_view_the_stash(django_user_model, audit):
    client = staff(django_user_model, "clerk", "view_content")
    assert client.post(simulate_url(audit), {"payload": '{"text": "hi"}'}).status_code == 403
    client = staff(django_user_model, "viewer", "view_stash")
    assert client.post(simulate_url(audit), {"payload": '{"text": "hi"}'}).context["result"].verdict == "accepted"


def test_replay_says_what_the_current_hooks_would_change(admin_client, audit):
    spam, scam, fine, _other = (judge(audit, text=text) for text in ("spam", "a scam", "fine", "ok"))
    HookConfig.objects.filter(hook="keyword_blocklist").update(params={"words": ["scam"]})
    before = counters()
    response = admin_client.post(replay_url(audit), {"last_n": 10})
    page = response.content.decode()
    assert (
        "Of the latest 4 items, the current hooks would newly reject 1, would newly accept 1, "
        "would newly hold 0." in page
    )
    assert "2 unchanged." in page
    changes = {
        change.content.pk: (change.before, change.result.verdict) for change in response.context["report"].changes
    }
    assert changes == {spam.pk: ("rejected", "accepted"), scam.pk: ("accepted", "rejected")}
    assert reverse("admin:stash_content_change", args=[scam.pk]) in page
    assert PipelineRun.objects.count() == 4 and counters() == before
    assert Content.objects.get(pk=spam.pk).status == "rejected"


def test_replay_takes_only_the_last_n_judged_items(audit):
    judge(audit, text="spam")
    newest = judge(audit, text="more spam")
    Content.objects.create(stash=audit, payload={"text": "pending, not judged"})
    HookConfig.objects.filter(hook="keyword_blocklist").update(enabled=False)
    audit.refresh_from_db()
    report = processing.replay(audit, 1)
    assert report.compared == 1
    assert [change.content.pk for change in report.changes] == [newest.pk]


def test_replay_judges_the_payload_as_submitted(make_stash, register_temporarily):
    class Redact(hooks.Transform):
        """Replace the text."""

        def transform(self, item):
            return {**item.payload, "text": "[redacted]"}

    register_temporarily("test_redact", Redact)
    stash = make_stash("redacting", hooks=[("test_redact", {})])
    item = judge(stash, text="spam")
    assert item.payload == {"text": "[redacted]"}
    # A blocklist ahead of the transform sees what was submitted, not what was stored.
    blocklist = HookConfig.objects.create(stash=stash, hook="keyword_blocklist", params={"words": ["spam"]})
    processing.place_hooks(stash, {blocklist.pk: 1})
    stash.refresh_from_db()
    [change] = processing.replay(stash, 5).changes
    assert change.result.reason == "contains blocked word 'spam' in text"


@pytest.mark.parametrize("last_n", ["0", "1001", "many", ""])
def test_replay_refuses_a_bad_count(admin_client, audit, last_n):
    response = admin_client.post(replay_url(audit), {"last_n": last_n})
    assert response.status_code == 200
    assert response.context["form"].errors["last_n"]
    assert response.context["report"] is None


# --- replay: each change explained, and judged again ---------------------------------------------


def test_replay_shows_each_changed_item_with_a_preview_and_old_and_new_verdicts_with_their_hooks(admin_client, audit):
    spam = judge(audit, text="spam " + "and more words " * 10)
    picture = judge(audit, text="a scam picture", filename="cat.png", b64_file=b64(PNG))
    HookConfig.objects.filter(hook="keyword_blocklist").update(params={"words": ["scam"]}, label="No scam")
    response = admin_client.post(replay_url(audit), {"last_n": 10})
    page = response.content.decode()
    rows = {
        change.content.pk: (change.before, change.decided_before, change.result.verdict, change.decided_now)
        for change, _preview in response.context["rows"]
    }
    assert rows == {
        spam.pk: ("rejected", "No scam", "accepted", ""),
        picture.pk: ("accepted", "", "rejected", "No scam"),
    }
    assert "spam and more words and more words" in page and "…" in page  # an excerpt, not the whole text
    assert '<span class="stash-filename">cat.png</span>' in page
    assert f'<img class="stash-thumbnail" src="data:image/png;base64,{b64(PNG)}" alt="cat.png">' in page
    assert (
        '<span class="stash-badge stash-badge-rejected">rejected</span> <span class="quiet">(by No scam)</span>' in page
    )
    assert (
        '→ <span class="stash-badge stash-badge-rejected">rejected</span> <span class="quiet">(by No scam)</span>'
        in page
    )
    assert page.count('<input type="hidden" name="ids"') == 2


def test_judge_these_items_again_sends_the_changed_items_to_the_workers(
    admin_client, audit, make_stash, broker, django_capture_on_commit_callbacks
):
    # Created without signals, so the page's own after-commit batch is the only one.
    spam, fine, other = Content.objects.bulk_create(
        [
            Content(stash=audit, payload={"text": "spam"}, status="rejected"),
            Content(stash=audit, payload={"text": "fine"}, status="accepted"),
            Content(stash=make_stash("other"), payload={"text": "x"}, status="rejected"),
        ]
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            replay_url(audit),
            {"_judge_again": "Judge these items again", "ids": [str(spam.pk), str(other.pk)]},
            follow=True,
        )
    assert response.redirect_chain == [(replay_url(audit), 302)]
    assert [str(m) for m in response.context["messages"]] == [
        "1 item sent to be judged again.",
        "1 item was left alone: it is not an item of this stash.",
    ]
    assert broker.ids == [str(spam.pk)]
    assert Content.objects.get(pk=spam.pk).status == "pending"
    assert [Content.objects.get(pk=item.pk).status for item in (fine, other)] == ["accepted", "rejected"]


def test_judge_again_refuses_what_is_not_a_list_of_ids(admin_client, audit, broker):
    item = judge(audit, text="spam")
    response = admin_client.post(replay_url(audit), {"_judge_again": "1", "ids": [str(item.pk), "nope"]}, follow=True)
    assert [str(m) for m in response.context["messages"]] == [
        "Nothing was sent: the list of items is not one of item ids."
    ]
    assert Content.objects.get(pk=item.pk).status == "rejected"


def test_judge_again_needs_the_permission_to_change_items(django_user_model, audit, broker):
    item = judge(audit, text="spam")
    HookConfig.objects.filter(hook="keyword_blocklist").update(enabled=False)
    viewer = staff(django_user_model, "viewer", "view_stash", "view_content")
    page = viewer.post(replay_url(audit), {"last_n": 10}).content.decode()
    assert "would newly accept 1" in page and "Judge these items again" not in page
    assert viewer.post(replay_url(audit), {"_judge_again": "1", "ids": [str(item.pk)]}).status_code == 403
    assert Content.objects.get(pk=item.pk).status == "rejected"
