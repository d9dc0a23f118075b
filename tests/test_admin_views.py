"""A stash's simulate and replay pages: what the hooks would do, with nothing saved."""
import json

import pytest
from django.urls import reverse

from stash import hooks, processing
from stash.models import Content, HookConfig, PipelineRun

from .test_admin import HOOKS, judge, staff

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


@pytest.mark.parametrize("payload, message", [
    ("{oops", "Enter a valid JSON."),
    ("[1, 2]", "The payload must be a JSON object, not list."),
    (json.dumps({"text": "x" * 300}), "this stash takes at most 100"),
])
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
    assert "Of the latest 4 items, the current hooks would newly reject 1, would newly accept 1, " \
           "would newly hold 0." in page
    assert "2 unchanged." in page
    changes = {change.content.pk: (change.before, change.result.verdict)
               for change in response.context["report"].changes}
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
