"""Secret params (a webhook's ``secret``) are written, never shown back: not to view-only staff, not
to editors, not by the API or the simulate pages; editing a config without retyping one keeps it."""

import json

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from stash.models import HookConfig

from .test_admin import change_url, rows_of, staff, stash_post

pytestmark = pytest.mark.django_db

SECRET = "s3cret-s3cret-s3cret-s3cret"
URL = "https://example.com/in"


@pytest.fixture
def audit(make_stash):
    return make_stash(
        "audit",
        hooks=[
            ("require_fields", {"fields": ["text"]}),
            ("webhook", {"url": URL, "secret": SECRET, "events": ["accept"]}),
        ],
    )


@pytest.fixture
def webhook(audit):
    return audit.hooks.get(hook="webhook")


def form_post(config, params, **fields):
    """The hook config page as the browser posts it."""
    return {
        "hook": config.hook,
        "label": config.label,
        "params": json.dumps(params),
        "enabled": "on",
        "mode": "enforce",
        "on_error": "inherit",
        "condition": "",
        "timeout_ms": 2000,
        **fields,
    }


@pytest.mark.parametrize(
    "codenames",
    [
        ("view_stash", "view_hookconfig"),  # view-only: params shown read-only
        ("view_stash", "change_stash", "view_hookconfig", "change_hookconfig"),  # editors: params in an editor
    ],
)
def test_no_admin_page_shows_a_secret(django_user_model, audit, webhook, codenames):
    client = staff(django_user_model, "someone", *codenames)
    for url in (
        change_url(webhook),
        change_url(audit),
        reverse("admin:stash_hookconfig_changelist"),
        reverse("admin:stash_stash_simulate", args=[audit.pk]),
    ):
        page = client.get(url)
        assert page.status_code == 200, url
        assert SECRET not in page.content.decode(), url
    # The rest of the params are there to read.
    assert "https://example.com/in" in client.get(change_url(webhook)).content.decode()
    simulated = client.post(reverse("admin:stash_stash_simulate", args=[audit.pk]), {"payload": '{"text": "hi"}'})
    assert simulated.status_code == 200 and SECRET not in simulated.content.decode()


def test_the_api_shows_no_secret_to_viewers_nor_in_a_simulation(django_user_model, audit, webhook):
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user("vera", password="pw")
    user.user_permissions.set(Permission.objects.filter(codename__in=["view_hookconfig"]))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    listing = client.get("/api/stashes/audit/hooks/")
    assert listing.status_code == 200
    assert [hook["params"] for hook in listing.json() if hook["hook"] == "webhook"] == [
        {"url": URL, "events": ["accept"]}
    ]
    simulated = client.post("/api/stashes/audit/simulate/", {"payload": {"text": "hi"}}, format="json")
    assert simulated.status_code == 200
    assert SECRET not in simulated.content.decode()


def test_editing_a_config_without_retyping_its_secret_keeps_it(admin_client, webhook):
    response = admin_client.post(
        change_url(webhook), form_post(webhook, {"url": "https://example.com/other", "events": ["reject"]})
    )
    assert response.status_code == 302
    webhook.refresh_from_db()
    assert webhook.params == {"url": "https://example.com/other", "secret": SECRET, "events": ["reject"]}


def test_a_secret_typed_anew_replaces_the_stored_one(admin_client, webhook):
    new = "another-secret-of-some-length"
    response = admin_client.post(change_url(webhook), form_post(webhook, {"url": URL, "secret": new}))
    assert response.status_code == 302
    webhook.refresh_from_db()
    assert webhook.params == {"url": URL, "secret": new}


def test_editing_the_stash_page_without_the_secret_keeps_it(admin_client, audit, webhook):
    rows = rows_of(audit)
    for row in rows:
        row["params"] = {key: value for key, value in row["params"].items() if key != "secret"}
    rows[1]["label"] = "Notify"
    assert admin_client.post(change_url(audit), stash_post(audit, rows)).status_code == 302
    webhook.refresh_from_db()
    assert (webhook.label, webhook.params) == ("Notify", {"url": URL, "secret": SECRET, "events": ["accept"]})


def test_a_config_switched_to_another_hook_keeps_no_old_secret(admin_client, webhook):
    response = admin_client.post(change_url(webhook), form_post(webhook, {"fields": ["text"]}, hook="require_fields"))
    assert response.status_code == 302
    assert HookConfig.objects.get(pk=webhook.pk).params == {"fields": ["text"]}


def test_a_new_secret_that_breaks_the_schema_is_an_error_on_params(admin_client, webhook):
    response = admin_client.post(change_url(webhook), form_post(webhook, {"url": URL, "secret": "short"}))
    assert response.status_code == 200
    assert "secret: Must be at least 16 characters." in response.content.decode()
    webhook.refresh_from_db()
    assert webhook.params["secret"] == SECRET


def test_the_hook_picker_says_which_params_are_secret(admin_client, audit):
    page = admin_client.get(reverse("admin:stash_hookconfig_add")).content.decode()
    assert "secret (string, required, secret: never shown once saved; leave it out to keep it)" in page
