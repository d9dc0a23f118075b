"""The simulate page, through the test client: verbose runs, an existing item, and a draft of the hooks."""

import json

import pytest
from django.urls import reverse

from stash import hooks
from stash.models import Content, HookConfig, PipelineRun, Stash

from .test_admin import HOOKS, change_url, judge, rows_of, staff, stash_post
from .test_admin_views import simulate_url

pytestmark = pytest.mark.django_db


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", hooks=HOOKS)


@pytest.fixture
def shout(register_temporarily):
    class Shout(hooks.Transform):
        """Uppercase the text."""

        def transform(self, item):
            return {**item.payload, "text": item.payload["text"].upper()}

    register_temporarily("test_shout", Shout)


def snapshot():
    """Everything a simulation must leave alone: items, runs, hooks (with counters) and stashes."""
    return (
        list(Content.objects.order_by("pk").values_list("pk", "status", "payload", "revision")),
        PipelineRun.objects.count(),
        list(
            HookConfig.objects.order_by("pk").values_list(
                "pk", "hook", "params", "enabled", "position", "mode", "label", "runs_count", "dropped_count"
            )
        ),
        list(Stash.objects.order_by("pk").values_list("pk", "name", "on_error", "config_version")),
    )


def outcomes(response):
    return [(entry.hook, entry.outcome, entry.stopped, entry.after_stop) for entry in response.context["result"].trail]


# --- verbose ------------------------------------------------------------------------------------


def test_the_verbose_box_is_ticked_by_default(admin_client, audit):
    form = admin_client.get(simulate_url(audit)).context["form"]
    assert 'type="checkbox" name="verbose"' in str(form["verbose"]) and " checked" in str(form["verbose"])


def test_verbose_runs_every_hook_marks_the_decider_and_shows_each_transformed_payload(admin_client, make_stash, shout):
    stash = make_stash(
        "loud", hooks=[("keyword_blocklist", {"words": ["spam"]}), ("test_shout", {}), ("max_size", {"max_bytes": 10})]
    )
    before = snapshot()
    response = admin_client.post(simulate_url(stash), {"payload": '{"text": "spam it"}', "verbose": "on"})
    page = response.content.decode()
    assert outcomes(response) == [
        ("keyword_blocklist", "dropped", True, False),
        ("test_shout", "transformed", False, True),
        ("max_size", "dropped", False, True),
    ]
    assert response.context["result"].verdict == "rejected"
    assert page.count(">decided the run<") == 1 and page.count(">ran only because of verbose mode<") == 2
    assert "The payload after this hook:" in page and "&quot;SPAM IT&quot;" in page
    assert "Verbose: every enabled hook ran." in page
    assert snapshot() == before


def test_without_verbose_the_run_stops_at_the_first_drop(admin_client, audit):
    response = admin_client.post(simulate_url(audit), {"payload": '{"text": "spam"}'})
    assert outcomes(response) == [
        ("require_fields", "kept", False, False),
        ("keyword_blocklist", "dropped", True, False),
    ]
    assert "ran only because of verbose mode" not in response.content.decode()


# --- an existing item ---------------------------------------------------------------------------


def test_simulate_runs_on_the_payload_an_existing_item_was_submitted_with(admin_client, audit):
    item = judge(audit, text="hello")
    # As a transform would leave it: the submitted payload kept aside, the stored one rewritten.
    Content.objects.filter(pk=item.pk).update(original_payload={"text": "now spam"}, payload={"text": "now ****"})
    before = snapshot()
    response = admin_client.post(
        simulate_url(audit), {"payload": '{"text": "ignored"}', "content_id": str(item.pk), "verbose": "on"}
    )
    assert response.context["result"].verdict == "rejected"
    assert response.context["result"].reason == "contains blocked word 'spam' in text"
    page = response.content.decode()
    assert reverse("admin:stash_content_change", args=[item.pk]) in page
    assert snapshot() == before


def test_simulate_refuses_an_item_of_another_stash_and_an_unknown_one(admin_client, audit, make_stash):
    other = judge(make_stash("other"), text="elsewhere")
    for content_id, message in [
        (str(other.pk), f"Item {other.pk} belongs to the stash other, not to audit."),
        ("00000000-0000-4000-8000-000000000000", "There is no item 00000000-0000-4000-8000-000000000000."),
        ("not-an-id", "Enter a valid UUID."),
    ]:
        response = admin_client.post(simulate_url(audit), {"payload": "", "content_id": content_id})
        assert response.status_code == 200
        assert response.context["form"].errors["content_id"] == [message]
        assert response.context["result"] is None


def test_simulate_refuses_an_item_the_user_may_not_read(django_user_model, audit):
    item = judge(audit, text="someone else's")
    client = staff(django_user_model, "viewer", "view_stash")
    response = client.post(simulate_url(audit), {"payload": "", "content_id": str(item.pk)})
    assert response.context["form"].errors["content_id"] == [f"There is no item {item.pk}."]


def test_simulate_needs_a_payload_or_an_item(admin_client, audit):
    response = admin_client.post(simulate_url(audit), {"payload": "", "content_id": ""})
    assert response.context["form"].errors["payload"] == ["Give a payload, or the id of an item of this stash."]


# --- a draft of the hooks -----------------------------------------------------------------------


def draft_post(stash, rows, **fields):
    """The stash page as its "Simulate with these hooks (unsaved)" button posts it."""
    return {**stash_post(stash, rows), "_draft": "Simulate with these hooks (unsaved)", **fields}


def test_the_stash_page_has_the_draft_button_for_those_who_may_change_hooks(admin_client, django_user_model, audit):
    page = admin_client.get(change_url(audit)).content.decode()
    assert (
        f'name="_draft" value="Simulate with these hooks (unsaved)"\n           formaction="{simulate_url(audit)}"'
        in page
    )
    viewer = staff(django_user_model, "viewer", "view_stash", "change_stash", "view_hookconfig")
    assert 'name="_draft"' not in viewer.get(change_url(audit)).content.decode()


def test_a_draft_with_a_bad_param_shows_the_error_and_saves_nothing(admin_client, audit):
    rows = rows_of(audit)
    rows[1]["params"] = {"words": "spam"}  # not a list
    rows.append({"hook": "max_size", "label": "Tiny", "params": {"max_bytes": 0}, "position": ""})
    before = snapshot()
    response = admin_client.post(simulate_url(audit), draft_post(audit, rows))
    assert response.status_code == 200
    draft = response.context["draft"]
    assert not draft.valid and response.context["result"] is None
    assert any(
        error.startswith("Hook 2 (keyword_blocklist): params: ") and "words: Must be a list." in error
        for error in draft.errors
    ), draft.errors
    assert any(error.startswith("Hook 4 (Tiny): params: ") for error in draft.errors), draft.errors
    page = response.content.decode()
    assert "A save would refuse these hooks, so nothing was run." in page
    assert snapshot() == before


def test_a_bad_stash_field_in_the_draft_is_shown_too(admin_client, audit):
    response = admin_client.post(simulate_url(audit), draft_post(audit, rows_of(audit), name=""))
    assert response.context["draft"].errors == ["Name: This field is required."]
    assert response.context["result"] is None


def test_a_draft_runs_the_hooks_as_edited_dragged_added_and_deleted_and_saves_nothing(admin_client, audit):
    judge(audit, text="the latest item")
    rows = rows_of(audit)
    rows[0]["DELETE"] = True  # require_fields goes
    rows[1]["params"] = {"words": ["latest"]}  # the blocklist now blocks "latest"
    rows[1]["position"], rows[2]["position"] = 3, 1  # max_size dragged to the top
    rows[2]["mode"] = "observe"
    rows.append({"hook": "require_fields", "label": "Needs a title", "params": {"fields": ["title"]}, "position": ""})
    before = snapshot()
    response = admin_client.post(simulate_url(audit), draft_post(audit, rows))
    assert response.status_code == 200
    draft = response.context["draft"]
    assert draft.valid, draft.errors
    # Straight from the stash page: the latest item's payload, verbose.
    assert [(e.title, e.position, e.outcome, e.stopped, e.after_stop) for e in response.context["result"].trail] == [
        ("max_size", 1, "kept", False, False),
        ("keyword_blocklist", 2, "dropped", True, False),
        ("Needs a title", 3, "dropped", False, True),
    ]
    page = response.content.decode()
    assert "Draft hooks (not saved)" in page
    assert (
        "3 enabled hooks run, in this order: 1. max_size (observing) · 2. keyword_blocklist · 3. Needs a title" in page
    )
    # The draft rides along with the next simulation, with the payload typed on this page.
    assert '<input type="hidden" name="hooks-1-params" value="{&quot;words&quot;: [&quot;latest&quot;]}">' in page
    again = admin_client.post(
        simulate_url(audit), {**draft_post(audit, rows), "payload": '{"text": "fine", "title": "t"}', "verbose": "on"}
    )
    assert again.context["result"].verdict == "accepted"
    assert [e.title for e in again.context["result"].trail] == ["max_size", "keyword_blocklist", "Needs a title"]
    assert snapshot() == before


def test_a_draft_uses_the_stash_policy_as_edited(admin_client, make_stash, register_temporarily):
    class Boom(hooks.Filter):
        """Always fails."""

        def filter(self, item):
            raise RuntimeError("boom")

    register_temporarily("test_boom", Boom)
    stash = make_stash("fragile", hooks=[("test_boom", {})], on_error="reject")
    rows = rows_of(stash)
    response = admin_client.post(simulate_url(stash), draft_post(stash, rows, on_error="hold"))
    assert response.context["result"].verdict == "held"
    assert Stash.objects.get(pk=stash.pk).on_error == "reject"


def test_a_draft_needs_the_permission_to_change_the_hooks(django_user_model, audit):
    viewer = staff(django_user_model, "viewer", "view_stash", "change_stash", "view_hookconfig")
    assert viewer.post(simulate_url(audit), draft_post(audit, rows_of(audit))).status_code == 403
    # Without a draft, simulating only needs to see the stash.
    response = viewer.post(simulate_url(audit), {"payload": json.dumps({"text": "hi"})})
    assert response.context["result"].verdict == "accepted"


def test_a_draft_runs_in_the_order_its_save_then_gives(admin_client, audit):
    rows = rows_of(audit)
    rows[0]["position"], rows[1]["position"], rows[2]["position"] = 2, 3, 1
    rows[1]["DELETE"] = True
    rows.append({"hook": "keyword_blocklist", "label": "No scam", "params": {"words": ["scam"]}, "position": ""})
    payload = json.dumps({"text": "a scam"})
    drafted = admin_client.post(simulate_url(audit), draft_post(audit, rows, payload=payload)).context["result"]
    assert admin_client.post(change_url(audit), stash_post(audit, rows)).status_code == 302
    saved = admin_client.post(simulate_url(audit), {"payload": payload}).context["result"]
    assert (
        [(e.title, e.position, e.outcome) for e in drafted.trail]
        == [(e.title, e.position, e.outcome) for e in saved.trail]
        == [("max_size", 1, "kept"), ("require_fields", 2, "kept"), ("No scam", 3, "dropped")]
    )


def test_the_hooks_line_says_when_only_sinks_or_no_hooks_run(admin_client, make_stash):
    notify = {"url": "https://example.com/hooks/stash", "secret": "s3cret-s3cret-s3cret-s3cret"}
    told = make_stash("told", hooks=[{"hook": "webhook", "label": "Notify", "params": notify}])
    page = admin_client.get(simulate_url(told)).content.decode()
    assert "No enabled hook judges the items; on the verdict: Notify</p>" in page
    bare = make_stash("bare", hooks=[{"hook": "max_size", "params": {"max_bytes": 10}, "enabled": False}])
    assert "No hook is enabled.</p>" in admin_client.get(simulate_url(bare)).content.decode()
