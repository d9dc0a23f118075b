"""A secret param typed into a save that is refused is not shown back: not on the hook's page, the stash
page or the add page (error, params summary, form, raw JSON), not in the API's 400, not in a refused
pipeline import (the admin's upload, the API, the command); the error still names the field."""

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from stash import processing
from stash.models import HookConfig

from .test_admin import change_url, rows_of, stash_post
from .test_admin_params import page_post

pytestmark = pytest.mark.django_db

STORED = "s3cret-s3cret-s3cret-s3cret"
SHORT = "typed-Xq7z"  # too short: a webhook's secret has at least 16 characters
LONG = "typed-Xq7z-long-enough-secret"  # fine, but sent beside a bad URL
URL = "https://example.com/in"
BAD_URL = "ftp://example.com/in"


@pytest.fixture
def audit(make_stash):
    return make_stash(
        "audit",
        name="Audit",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "webhook", "label": "Notify", "params": {"url": URL, "secret": STORED, "events": ["accept"]}},
        ],
    )


@pytest.fixture
def webhook(audit):
    return audit.hooks.get(hook="webhook")


def assert_not_shown(text, *secrets):
    for secret in secrets:
        assert secret not in text
        assert secret not in json.dumps(text)  # nor escaped, as in a JSON attribute


REFUSED = [  # (params, the error's field, what the error says)
    ({"url": URL, "secret": SHORT}, "secret", "secret: Must be at least 16 characters."),
    ({"url": BAD_URL, "secret": LONG}, "url", "url: "),
]


@pytest.mark.parametrize("params, field, error", REFUSED)
@pytest.mark.parametrize("how", ["form", "raw JSON"])
def test_the_hooks_page_does_not_show_a_refused_secret(admin_client, webhook, params, field, error, how):
    data = page_post(webhook, params, form=params) if how == "form" else page_post(webhook, params, raw=True)
    response = admin_client.post(change_url(webhook), data)
    assert response.status_code == 200
    form = response.context["adminform"].form
    assert error in form.errors["params"][0]
    assert_not_shown(response.content.decode(), SHORT, LONG, STORED)
    assert HookConfig.objects.get(pk=webhook.pk).params["secret"] == STORED


def test_the_error_beside_the_secrets_input_names_the_rule_not_the_value(admin_client, webhook):
    response = admin_client.post(change_url(webhook), page_post(webhook, form={"url": URL, "secret": SHORT}))
    widget = response.context["adminform"].form.fields["params"].widget
    assert widget.errors == {"secret": ["Must be at least 16 characters."]}


@pytest.mark.parametrize("params, field, error", REFUSED)
def test_the_stash_page_does_not_show_a_refused_secret(admin_client, audit, params, field, error):
    rows = rows_of(audit)
    rows[1]["params"] = {**params, "events": ["accept"]}
    data = stash_post(audit, rows)
    data["hooks-1-params_form"] = json.dumps(rows[1]["params"])
    response = admin_client.post(change_url(audit), data)
    assert response.status_code == 200
    errors = response.context["inline_admin_formsets"][0].formset.forms[1].errors["params"]
    assert error in errors[0]
    page = response.content.decode()
    assert_not_shown(page, SHORT, LONG, STORED)
    assert "url: &quot;" in page  # the folded row's summary still shows the other params


def test_a_new_hook_refused_does_not_show_its_secret(admin_client, audit):
    data = {
        "stash": audit.pk,
        "hook": "webhook",
        "label": "",
        "enabled": "on",
        "mode": "enforce",
        "on_error": "inherit",
        "condition": "",
        "timeout_ms": 2000,
        "params": json.dumps({"url": BAD_URL, "secret": LONG}),
    }
    response = admin_client.post(reverse("admin:stash_hookconfig_add"), data)
    assert response.status_code == 200 and "url: " in response.context["adminform"].form.errors["params"][0]
    assert_not_shown(response.content.decode(), LONG)
    assert audit.hooks.count() == 2


def test_json_that_does_not_parse_is_not_shown_back_for_a_hook_with_secrets(admin_client, webhook):
    typed = '{"url": "%s", "secret": "%s",' % (URL, LONG)
    response = admin_client.post(change_url(webhook), page_post(webhook, typed, raw=True))
    assert response.context["adminform"].form.errors["params"] == ["Enter a valid JSON."]
    page = response.content.decode()
    assert_not_shown(page, LONG)
    assert "could not be read and may hold a secret" in page


def api_client(admin_user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=admin_user)[0].key}")
    return client


@pytest.mark.parametrize("params, field, error", REFUSED)
def test_the_api_does_not_echo_a_refused_secret(admin_user, audit, webhook, params, field, error):
    client = api_client(admin_user)
    created = client.post("/api/stashes/audit/hooks/", {"hook": "webhook", "params": params}, format="json")
    changed = client.patch(f"/api/stashes/audit/hooks/{webhook.pk}/", {"params": params}, format="json")
    for response in (created, changed):
        assert response.status_code == 400
        assert error in response.json()["params"][0]
        assert_not_shown(response.content.decode(), SHORT, LONG, STORED)
    assert HookConfig.objects.get(pk=webhook.pk).params["secret"] == STORED


def refused_document(audit, params):
    document = processing.export_document(audit)
    document["hooks"][1]["params"] = params
    return document


@pytest.mark.parametrize("params, field, error", REFUSED)
def test_a_refused_pipeline_import_does_not_quote_a_secret(
    admin_client, admin_user, audit, tmp_path, params, field, error
):
    document = refused_document(audit, params)
    response = api_client(admin_user).put("/api/stashes/audit/pipeline/", document, format="json")
    assert response.status_code == 400
    assert error in json.dumps(response.json())
    assert_not_shown(response.content.decode(), SHORT, LONG, STORED)

    upload = SimpleUploadedFile("pipeline.json", json.dumps(document).encode())
    page = admin_client.post(reverse("admin:stash_stash_upload", args=[audit.pk]), {"file": upload})
    assert page.status_code == 200 and page.context["plan"] is None
    assert error in page.content.decode()
    assert_not_shown(page.content.decode(), SHORT, LONG, STORED)

    path = tmp_path / "pipeline.json"
    path.write_text(json.dumps(document))
    with pytest.raises(CommandError) as refused:
        call_command("stash_pipeline", "import", str(path), stdout=io.StringIO(), stderr=io.StringIO())
    assert f"hooks[1].params: Notify (webhook): Invalid params for hook 'webhook': {error}" in str(refused.value)
    assert_not_shown(str(refused.value), SHORT, LONG)
    assert audit.hooks.get(hook="webhook").params["secret"] == STORED
