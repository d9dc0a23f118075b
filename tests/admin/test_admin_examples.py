"""Golden examples in the admin: their editor, "Run examples", "Make an example" from an item, and the
guard they put on the stash page's and a hook's page's saves, and on the hooks list's toggles, actions,
deletes and drags (refuse, or save with a warning)."""

import json

import pytest
from django.urls import reverse

from stash.models import Content, Example, HookConfig, PipelineVersion
from stash.processing import examples as examples_module

from .test_admin import act, change_url, judge, rows_of, staff, stash_post
from .test_admin_simulate import draft_post, snapshot
from .test_admin_views import replay_url, simulate_url

pytestmark = pytest.mark.django_db

HOOKS = [
    {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
    {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam"]}},
]


@pytest.fixture
def audit(make_stash):
    stash = make_stash("audit", name="Audit", hooks=HOOKS)
    Example.objects.create(stash=stash, name="plain text", payload={"text": "hello"}, verdict="accepted")
    Example.objects.create(
        stash=stash,
        name="spam",
        payload={"text": "buy spam"},
        verdict="rejected",
        reason_code="blocked_word",
        hook="No spam",
    )
    return stash


def examples_url(stash):
    return reverse("admin:stash_stash_examples", args=[stash.pk])


def make_example_url(item):
    return reverse("admin:stash_content_make_example", args=[item.pk])


def said(response):
    return [str(message) for message in response.context["messages"]]


def hooks_as_saved(stash):
    return list(stash.hooks.in_order().values_list("label", "params", "enabled", "position"))


def blocking(rows, word="hello"):
    """The stash page's rows with No spam blocking ``word`` too: "plain text" would be rejected."""
    for row in rows:
        if row["label"] == "No spam":
            row["params"] = {"words": ["spam", word]}
    return rows


def top_errors(response):
    """The errors listed at the top of the stash page."""
    page = response.content.decode()
    start = page.index('<p class="errornote">')
    return page[start : page.index("</ul>", start)]


# --- the examples admin --------------------------------------------------------------------------


def test_the_examples_list_shows_each_stashs_examples_and_filters_by_stash(admin_client, audit, make_stash):
    Example.objects.create(stash=make_stash("other"), name="elsewhere", payload={"text": "x"}, verdict="held")
    page = admin_client.get(reverse("admin:stash_example_changelist")).content.decode()
    assert "plain text" in page and "elsewhere" in page and "blocked_word" in page
    only = admin_client.get(reverse("admin:stash_example_changelist") + f"?stash__id__exact={audit.pk}")
    assert [example.name for example in only.context["cl"].result_list] == ["plain text", "spam"]


def test_an_example_is_edited_with_its_payload_as_json_and_checked(admin_client, audit):
    example = audit.examples.get(name="plain text")
    page = admin_client.get(change_url(example)).content.decode()
    assert "{\n  &quot;text&quot;: &quot;hello&quot;\n}" in page
    fields = {"stash": audit.pk, "name": "plain text", "verdict": "held", "reason_code": "", "hook": ""}
    response = admin_client.post(change_url(example), {**fields, "payload": "{oops"})
    assert response.status_code == 200 and "Enter a valid JSON." in response.content.decode()
    response = admin_client.post(change_url(example), {**fields, "payload": "[1]"})
    assert "The payload must be a JSON object, not list." in response.content.decode()
    assert admin_client.post(change_url(example), {**fields, "payload": '{"text": "hi"}'}).status_code == 302
    example.refresh_from_db()
    assert (example.payload, example.verdict) == ({"text": "hi"}, "held")


def test_adding_an_example_records_who_made_it(admin_client, audit):
    response = admin_client.post(
        reverse("admin:stash_example_add"),
        {
            "stash": audit.pk,
            "name": "eggs",
            "payload": '{"text": "eggs"}',
            "verdict": "accepted",
            "reason_code": "",
            "hook": "",
        },
    )
    assert response.status_code == 302
    assert audit.examples.get(name="eggs").created_by.username == "admin"


# --- run examples --------------------------------------------------------------------------------


def test_run_examples_shows_each_result_pass_or_fail_with_its_problems(admin_client, audit):
    page = admin_client.get(examples_url(audit)).content.decode()
    assert "plain text" in page and 'name="_run"' in page and 'id="examples-run"' not in page
    HookConfig.objects.filter(label="No spam").update(params={"words": ["spam", "hello"]})
    response = admin_client.post(examples_url(audit), {"_run": "Run examples"})
    results = {result.name: result for _example, result in response.context["results"]}
    assert results["spam"].passed and not results["plain text"].passed
    page = response.content.decode()
    assert "1 of 2 examples failed" in page
    assert "<li>expected accepted, got rejected</li>" in page
    assert "contains blocked word &#x27;hello&#x27; in text" in page
    assert page.count("stash-example-failed") == 1 and page.count("stash-example-passed") == 1


def test_the_examples_page_needs_the_view_permission_on_examples(django_user_model, audit):
    assert staff(django_user_model, "viewer", "view_stash").get(examples_url(audit)).status_code == 403
    client = staff(django_user_model, "reader", "view_stash", "view_example")
    assert client.post(examples_url(audit), {"_run": "Run"}).context["failed"] == 0


# --- make an example -----------------------------------------------------------------------------


def test_make_an_example_from_an_items_page(admin_client, audit):
    item = judge(audit, text="free spam")
    page = admin_client.get(change_url(item)).content.decode()
    assert f'action="{make_example_url(item)}"' in page
    response = admin_client.post(make_example_url(item), follow=True)
    example = Example.objects.get(content=item)
    assert response.redirect_chain[-1][0] == change_url(example)
    assert (example.payload, example.verdict, example.reason_code, example.hook) == (
        {"text": "free spam"},
        "rejected",
        "blocked_word",
        "No spam",
    )
    assert said(response) == [
        (f"Example “item {str(item.pk)[:8]}” made: audit must give this payload the verdict rejected. Edit it below.")
    ]
    assert example.created_by.username == "admin"


def test_an_item_without_a_verdict_makes_no_example(admin_client, audit):
    item = Content.objects.create(stash=audit, payload={"text": "waits"})
    assert f'action="{make_example_url(item)}"' not in admin_client.get(change_url(item)).content.decode()
    response = admin_client.post(make_example_url(item), follow=True)
    assert said(response) == [f"No example was made: Item {item.pk} has no verdict yet (it is pending)."]
    assert not Example.objects.filter(content=item).exists()


def test_making_an_example_is_a_post_and_needs_the_add_permission(django_user_model, admin_client, audit):
    item = judge(audit, text="hello")
    assert admin_client.get(make_example_url(item)).status_code == 405
    client = staff(django_user_model, "reader", "view_content", "view_stash")
    assert client.post(make_example_url(item)).status_code == 403
    assert "stash-make-example" not in client.get(change_url(item)).content.decode()
    assert not Example.objects.filter(content=item).exists()


def test_each_changed_item_of_a_replay_has_a_make_an_example_button(admin_client, audit):
    item = judge(audit, text="hello there")
    HookConfig.objects.filter(label="No spam").update(params={"words": ["hello"]})
    page = admin_client.post(replay_url(audit), {"last_n": 10}).content.decode()
    assert f'action="{make_example_url(item)}"' in page
    admin_client.post(make_example_url(item))
    assert Example.objects.get(content=item).verdict == "accepted"  # the verdict it has, which the change would flip


# --- the guard on saves --------------------------------------------------------------------------


def test_a_stash_that_blocks_refuses_a_hooks_edit_that_breaks_an_example(admin_client, audit):
    before, version = hooks_as_saved(audit), audit.config_version
    response = admin_client.post(change_url(audit), stash_post(audit, blocking(rows_of(audit)), name="Renamed"))
    assert response.status_code == 200
    top = top_errors(response)
    assert "Not saved: this change breaks golden examples of audit, which refuses such changes." in top
    assert (
        "Example “plain text”: expected accepted, got rejected (reason: contains blocked word &#x27;hello&#x27; "
        "in text)"
    ) in top
    assert top.count("Example “") == 1  # only the broken one
    assert "These hooks break golden examples: see the list at the top of the page." in response.content.decode()
    audit.refresh_from_db()
    assert hooks_as_saved(audit) == before and audit.config_version == version and audit.name == "Audit"


def test_a_stash_that_warns_saves_the_edit_and_lists_the_broken_examples(admin_client, audit):
    audit.examples_policy = "warn"
    audit.save()
    response = admin_client.post(change_url(audit), stash_post(audit, blocking(rows_of(audit))), follow=True)
    assert response.redirect_chain
    assert audit.hooks.get(label="No spam").params == {"words": ["spam", "hello"]}
    assert [message for message in said(response) if message.startswith("Saved, but")] == [
        (
            "Saved, but this change breaks a golden example: Example “plain text”: expected accepted, got rejected "
            "(reason: contains blocked word 'hello' in text)"
        )
    ]


def test_switching_the_policy_to_warn_lets_the_same_edit_through(admin_client, audit):
    refused = admin_client.post(change_url(audit), stash_post(audit, blocking(rows_of(audit))))
    assert refused.status_code == 200
    saved = admin_client.post(
        change_url(audit), stash_post(audit, blocking(rows_of(audit)), examples_policy="warn"), follow=True
    )
    assert any("Example “plain text”" in message for message in said(saved))
    audit.refresh_from_db()
    assert audit.examples_policy == "warn" and audit.hooks.get(label="No spam").params == {"words": ["spam", "hello"]}


def test_a_save_that_leaves_the_hooks_alone_runs_no_examples(admin_client, audit, monkeypatch):
    HookConfig.objects.filter(label="No spam").update(params={"words": ["spam", "hello"]})  # broken already
    runs = []
    real = examples_module.gather_with_deadline
    monkeypatch.setattr(examples_module, "gather_with_deadline", lambda *args: runs.append(args) or real(*args))
    response = admin_client.post(change_url(audit), stash_post(audit, rows_of(audit), description="new words"))
    assert response.status_code == 302 and runs == []
    audit.refresh_from_db()
    assert audit.description == "new words"
    # Changing a hook runs them: once, in one child process.
    response = admin_client.post(change_url(audit), stash_post(audit, blocking(rows_of(audit), "eggs")))
    assert response.status_code == 302 and len(runs) == 1


def test_a_stash_without_examples_starts_no_process_for_a_save(admin_client, make_stash, monkeypatch):
    stash = make_stash("plain", hooks=HOOKS)
    runs = []
    monkeypatch.setattr(examples_module, "gather_with_deadline", lambda *args: runs.append(args))
    response = admin_client.post(change_url(stash), stash_post(stash, blocking(rows_of(stash))), follow=True)
    assert response.redirect_chain and runs == []
    assert not [message for message in said(response) if "example" in message]
    assert stash.hooks.get(label="No spam").params == {"words": ["spam", "hello"]}


def test_a_changed_default_policy_is_checked_too(admin_client, make_stash, register_temporarily):
    from stash import hooks

    class Boom(hooks.Filter):
        """Always fails."""

        def filter(self, item):
            raise RuntimeError("boom")

    register_temporarily("test_boom", Boom)
    stash = make_stash("fragile", hooks=[{"hook": "test_boom", "label": "Boom"}], on_error="skip")
    Example.objects.create(stash=stash, name="gets in", payload={"text": "x"}, verdict="accepted")
    response = admin_client.post(change_url(stash), stash_post(stash, rows_of(stash), on_error="reject"))
    assert response.status_code == 200 and "Example “gets in”: expected accepted, got rejected" in top_errors(response)
    stash.refresh_from_db()
    assert stash.on_error == "skip"


def test_a_hooks_own_page_refuses_an_edit_that_breaks_an_example(admin_client, audit):
    config = audit.hooks.get(label="No spam")
    post = {
        "hook": config.hook,
        "label": config.label,
        "enabled": "on",
        "params": json.dumps({"words": ["hello"]}),
        "mode": "enforce",
        "on_error": "inherit",
        "condition": "",
        "timeout_ms": 2000,
    }
    response = admin_client.post(change_url(config), post)
    assert response.status_code == 200
    errors = " ".join(response.context["adminform"].form.non_field_errors())
    assert "Example “plain text”: expected accepted, got rejected" in errors
    assert "Example “spam”: expected rejected, got accepted; expected reason code" in errors
    assert audit.hooks.get(label="No spam").params == {"words": ["spam"]}

    audit.examples_policy = "warn"
    audit.save()
    response = admin_client.post(change_url(config), post, follow=True)
    assert audit.hooks.get(label="No spam").params == {"words": ["hello"]}
    assert any(
        message.startswith("Saved, but this change breaks 2 golden examples: Example “plain text”")
        for message in said(response)
    )


def test_adding_a_hook_that_breaks_an_example_on_its_own_page_is_refused(admin_client, audit):
    response = admin_client.post(
        reverse("admin:stash_hookconfig_add"),
        {
            "stash": audit.pk,
            "hook": "keyword_blocklist",
            "label": "No hello",
            "enabled": "on",
            "params": json.dumps({"words": ["hello"]}),
            "mode": "enforce",
            "on_error": "inherit",
            "condition": "",
            "timeout_ms": 2000,
        },
    )
    assert response.status_code == 200
    assert "Example “plain text”" in " ".join(response.context["adminform"].form.non_field_errors())
    assert audit.hooks.count() == 2


def test_a_draft_that_breaks_an_example_is_still_simulated(admin_client, audit):
    before = snapshot()
    response = admin_client.post(simulate_url(audit), draft_post(audit, blocking(rows_of(audit))))
    assert response.context["draft"].valid and response.context["result"] is not None
    assert snapshot() == before


# --- the guard on the hooks list: toggles, actions, deletes, drags --------------------------------


def kept_nothing(stash, before, version):
    """Nothing of a refused change was kept: the same hooks, version and versions as ``before``."""
    stash.refresh_from_db()
    return (
        hooks_as_saved(stash) == before
        and stash.config_version == version
        and PipelineVersion.objects.filter(stash=stash).count() == version
    )


def hooks_list(stash):
    return reverse("admin:stash_hookconfig_changelist") + f"?stash__id__exact={stash.pk}"


def list_toggle(stash, **enabled):
    """The hooks list's editable column as the browser posts it, with ``enabled`` by label."""
    configs = list(stash.hooks.in_order())
    data = {
        "form-TOTAL_FORMS": len(configs),
        "form-INITIAL_FORMS": len(configs),
        "form-MIN_NUM_FORMS": 0,
        "form-MAX_NUM_FORMS": 1000,
        "_save": "Save",
    }
    for index, config in enumerate(configs):
        data[f"form-{index}-id"] = config.pk
        if enabled.get(config.label, config.enabled):
            data[f"form-{index}-enabled"] = "on"
    return data


SPAM_BROKEN = "Example “spam”: expected rejected, got accepted"


def test_disabling_a_hook_from_the_list_that_breaks_an_example_is_refused(admin_client, audit):
    before, version = hooks_as_saved(audit), audit.config_version
    response = act(admin_client, "disable", audit.hooks.filter(label="No spam"))
    errors = [str(message) for message in response.context["messages"] if message.level_tag == "error"]
    assert len(errors) == 1
    assert errors[0].startswith("Nothing was changed. It breaks golden examples of audit, which refuses such changes.")
    assert SPAM_BROKEN in errors[0]
    assert "1 hook disabled." not in response.content.decode()  # the refused change's own message is gone
    assert kept_nothing(audit, before, version)


def test_a_stash_that_warns_lets_the_list_disable_the_hook_and_says_what_broke(admin_client, audit):
    audit.examples_policy = "warn"
    audit.save()
    response = act(admin_client, "disable", audit.hooks.filter(label="No spam"))
    assert "1 hook disabled." in said(response)
    assert [message for message in said(response) if message.startswith("Saved, but")] == [
        (
            f"Saved, but this change breaks a golden example: {SPAM_BROKEN}; expected reason code 'blocked_word', "
            "got none; expected 'No spam' to decide, but no hook decided"
        )
    ]
    assert not audit.hooks.get(label="No spam").enabled


def test_unticking_enabled_in_the_list_is_refused_when_it_breaks_an_example(admin_client, audit):
    before, version = hooks_as_saved(audit), audit.config_version
    response = admin_client.post(hooks_list(audit), list_toggle(audit, **{"No spam": False}), follow=True)
    assert any(SPAM_BROKEN in message for message in said(response))
    assert not any("was changed successfully" in message for message in said(response))
    assert kept_nothing(audit, before, version)
    # Unticking a hook no example needs goes through, checked all the same.
    response = admin_client.post(hooks_list(audit), list_toggle(audit, **{"Needs text": False}), follow=True)
    assert "1 hook config was changed successfully." in said(response)
    assert not audit.hooks.get(label="Needs text").enabled


def test_deleting_a_hook_that_an_example_needs_is_refused_from_its_page_and_from_the_list(admin_client, audit):
    before, version = hooks_as_saved(audit), audit.config_version
    spam = audit.hooks.get(label="No spam")
    delete = reverse("admin:stash_hookconfig_delete", args=[spam.pk])
    response = admin_client.post(delete, {"post": "yes"}, follow=True)
    assert any(message.startswith("Nothing was changed.") and SPAM_BROKEN in message for message in said(response))
    assert kept_nothing(audit, before, version)
    response = act(admin_client, "delete_selected", [spam], post="yes")
    assert any(message.startswith("Nothing was changed.") and SPAM_BROKEN in message for message in said(response))
    assert kept_nothing(audit, before, version)


def test_a_drag_that_changes_which_hook_decides_an_example_is_refused_with_409(admin_client, make_stash):
    stash = make_stash(
        "sized",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "max_size", "label": "At most 10 B", "params": {"max_bytes": 10}},
        ],
    )
    Example.objects.create(
        stash=stash, name="no text", payload={"note": "a long note, and no text"}, verdict="rejected", hook="Needs text"
    )
    before, version = hooks_as_saved(stash), stash.config_version
    needs, size = stash.hooks.in_order()
    update = reverse("admin:stash_hookconfig_sortable_update")
    response = admin_client.post(
        update, json.dumps({"updatedItems": [[size.pk, 1], [needs.pk, 2]]}), content_type="application/json"
    )
    assert response.status_code == 409
    assert "Example “no text”: expected 'Needs text' to decide, got 'At most 10 B'" in response.content.decode()
    assert kept_nothing(stash, before, version)
    # The list, loaded again (as the page does after a refused drag), says why.
    page = admin_client.get(hooks_list(stash))
    assert any("Example “no text”" in message for message in said(page))


def test_list_changes_in_a_stash_without_examples_start_no_process(admin_client, make_stash, monkeypatch):
    stash = make_stash("plain", hooks=HOOKS)
    runs = []
    monkeypatch.setattr(examples_module, "gather_with_deadline", lambda *args: runs.append(args))
    response = act(admin_client, "disable", stash.hooks.all())
    assert "2 hooks disabled." in said(response) and runs == []
