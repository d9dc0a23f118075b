"""The golden examples' guard in the admin: a hook's page save and the hooks list hold no lock that
saves need while the examples run, and only examples a change breaks refuse it (a user who may only
add examples cannot veto every change with a wrong or a slow one)."""

import json
import threading
import time

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from stash import processing
from stash.models import Example, HookConfig

from .test_admin import act, change_url, staff

pytestmark = pytest.mark.django_db

HOOKS = [
    {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
    {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam"]}},
    {"hook": "test_sleep", "label": "Slow", "params": {"seconds": 2.5}, "timeout_ms": 0},
]


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", name="Audit", hooks=HOOKS)


def page_post(config, params):
    """A hook's page as the browser posts it, with its params as raw JSON."""
    return {
        "hook": config.hook,
        "label": config.label,
        "enabled": "on",
        "mode": "enforce",
        "on_error": "inherit",
        "condition": "",
        "timeout_ms": config.timeout_ms,
        "params": json.dumps(params),
        "params_raw": "on",
    }


def said(response):
    return [str(message) for message in response.context["messages"]]


def test_a_user_who_may_only_add_examples_cannot_veto_every_change(django_user_model, admin_client, audit, settings):
    settings.STASH_EXAMPLES_TIMEOUT = 1
    adder = staff(django_user_model, "adam", "add_example")
    examples = [
        ("a spam", {"text": "buy spam"}, "rejected"),
        ("b wrong", {"text": "hi"}, "rejected"),
        *[(f"c slow {n}", {"text": "z", "sleep": True}, "accepted") for n in (1, 2, 3)],
    ]
    for name, payload, verdict in examples:
        added = adder.post(
            reverse("admin:stash_example_add"),
            {
                "stash": audit.pk,
                "name": name,
                "payload": json.dumps(payload),
                "verdict": verdict,
                "reason_code": "",
                "hook": "",
            },
        )
        assert added.status_code == 302, name
    assert audit.examples.count() == 5

    # A hook's page: an edit that breaks none of them is saved, with a warning naming the others.
    spam = audit.hooks.get(label="No spam")
    response = admin_client.post(change_url(spam), page_post(spam, {"words": ["spam", "eggs"]}), follow=True)
    assert audit.hooks.get(label="No spam").params == {"words": ["spam", "eggs"]}
    warning = next(message for message in said(response) if message.startswith("Saved."))
    assert warning.startswith("Saved. 4 golden examples do not pass, which this change did not break: ")
    assert "Example “b wrong”: expected rejected, got accepted (already failing before this change)" in warning
    assert "Example “c slow 1”: not run in time" in warning

    # The list: a tick that breaks none of them goes through; one that breaks "a spam" is refused, naming it alone.
    response = act(admin_client, "disable", audit.hooks.filter(label="Needs text"))
    assert "1 hook disabled." in said(response)
    response = act(admin_client, "disable", [spam])
    errors = [str(message) for message in response.context["messages"] if message.level_tag == "error"]
    assert errors == [
        (
            "Nothing was changed. It breaks golden examples of audit, which refuses such changes. | "
            "Example “a spam”: expected rejected, got accepted"
        )
    ]
    assert HookConfig.objects.get(pk=spam.pk).enabled

    # A hook's page: the same refusal is the form's error, and nothing is saved.
    response = admin_client.post(change_url(spam), {**page_post(spam, {"words": ["spam", "eggs"]}), "enabled": ""})
    assert response.status_code == 200
    errors = list(response.context["adminform"].form.non_field_errors())
    assert errors[1:] == ["Example “a spam”: expected rejected, got accepted"]
    assert HookConfig.objects.get(pk=spam.pk).enabled


# --- no lock held while they run -------------------------------------------------------------------


def saves_while(busy, stash):
    """Save items to ``stash`` until ``busy`` ends; each save's seconds."""
    took = []
    while busy.is_alive():
        started = time.monotonic()
        processing.submit(stash, {"text": "a save"})
        took.append(time.monotonic() - started)
        time.sleep(0.05)
    return took


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("where", ["page", "list"])
def test_saves_to_the_stash_do_not_wait_for_a_hook_changes_examples(django_user_model, audit, broker, where):
    Example.objects.create(stash=audit, name="slow", payload={"text": "zzz", "sleep": True}, verdict="accepted")
    admin = django_user_model.objects.create_superuser("root", "root@example.com", "pw")
    spam = audit.hooks.get(label="No spam")
    answers = []

    def change():
        client = Client()
        client.force_login(admin)
        try:
            if where == "page":
                answers.append(client.post(change_url(spam), page_post(spam, {"words": ["spam", "eggs"]})))
            else:
                answers.append(act(client, "disable", [audit.hooks.get(label="Needs text")]))
        finally:
            connection.close()

    busy = threading.Thread(target=change)
    started = time.monotonic()
    busy.start()
    time.sleep(0.4)  # under way: its examples are running
    took = saves_while(busy, audit)
    busy.join()
    assert answers[0].status_code in (200, 302)
    assert len(took) >= 10 and max(took) < 1.5, f"a save waited {max(took):.1f} s"
    assert time.monotonic() - started >= 4.5  # the examples ran: 2.5 s on the live version, 2.5 s on the new
    changed = (
        audit.hooks.get(label="No spam").params == {"words": ["spam", "eggs"]}
        if where == "page"
        else (not audit.hooks.get(label="Needs text").enabled)
    )
    assert changed
