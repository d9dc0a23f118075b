"""The params editor of the hooks admin through the test client: the form made from a hook's schema, raw JSON,
errors on the right field, secrets kept, and the captions and lists around it."""

import json
from html import unescape

import pytest
from django.urls import reverse

from stash import hooks
from stash.admin.params import form_schema
from stash.core import registry
from stash.models import HookConfig

from .test_admin import change_url, rows_of, stash_post

pytestmark = pytest.mark.django_db

SECRET = "s3cret-s3cret-s3cret-s3cret"
URL = "https://example.com/in"


@pytest.fixture
def audit(make_stash):
    return make_stash(
        "audit",
        name="Audit",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "max_size", "label": "Small", "params": {"max_bytes": 1000}},
            {"hook": "webhook", "label": "Notify", "params": {"url": URL, "secret": SECRET, "events": ["accept"]}},
        ],
    )


def config(hook):
    return HookConfig.objects.get(hook=hook)


def page_post(config, params=None, form=None, raw=False, **fields):
    """A hook config's page as the browser posts it: the raw JSON (a text as typed, or a value), the form's JSON,
    the raw JSON switch."""
    raw_json = params if isinstance(params, str) else json.dumps(params if params is not None else {})
    data = {
        "hook": config.hook,
        "label": config.label,
        "enabled": "on",
        "mode": "enforce",
        "on_error": "inherit",
        "condition": "",
        "timeout_ms": 2000,
        "params": raw_json,
        **fields,
    }
    if form is not None:
        data["params_form"] = json.dumps(form)
    if raw:
        data["params_raw"] = "on"
    return data


def params_errors(response):
    return response.context["adminform"].form.errors.get("params")


def test_the_form_saves_what_was_filled_in_and_leaves_out_what_was_not(admin_client, audit):
    blocklist = HookConfig.objects.create(stash=audit, hook="keyword_blocklist", params={"words": ["spam"]})
    # As the form's script posts it: every input, the empty ones blank; the raw JSON is stale.
    posted = {"words": ["spam", "", "scam"], "whole_word": True, "fields": [""]}
    response = admin_client.post(change_url(blocklist), page_post(blocklist, {"words": ["stale"]}, form=posted))
    assert response.status_code == 302
    blocklist.refresh_from_db()
    assert blocklist.params == {"words": ["spam", "scam"], "whole_word": True}


def test_with_the_raw_json_switch_on_the_raw_json_is_saved(admin_client, audit):
    size = config("max_size")
    response = admin_client.post(change_url(size), page_post(size, {"max_bytes": 5}, form={"max_bytes": 7}, raw=True))
    assert response.status_code == 302
    assert config("max_size").params == {"max_bytes": 5}


@pytest.mark.parametrize("via", ["hook config page", "stash page"])
def test_json_that_does_not_parse_says_just_that(admin_client, audit, via):
    size = config("max_size")
    if via == "hook config page":
        response = admin_client.post(change_url(size), page_post(size, "{not json", raw=True, hook="require_fields"))
        errors = params_errors(response)
    else:
        rows = rows_of(audit)
        rows[1].update(params="{not json", hook="require_fields")
        response = admin_client.post(change_url(audit), stash_post(audit, rows))
        errors = response.context["inline_admin_formsets"][0].formset.forms[1].errors["params"]
    assert response.status_code == 200
    assert errors == ["Enter a valid JSON."]  # not also "'fields' is a required property"
    assert config("max_size").params == {"max_bytes": 1000}


def test_a_new_hook_with_broken_json_gets_one_error(admin_client, audit):
    response = admin_client.post(
        reverse("admin:stash_hookconfig_add"), {**page_post(config("max_size"), "{oops"), "stash": audit.pk}
    )
    assert params_errors(response) == ["Enter a valid JSON."]
    assert audit.hooks.count() == 3


def test_a_param_that_breaks_the_schema_is_named_on_the_field_and_beside_its_input(admin_client, audit):
    size = config("max_size")
    response = admin_client.post(change_url(size), page_post(size, form={"max_bytes": 0}))
    assert response.status_code == 200
    assert params_errors(response) == ["Invalid params for hook 'max_size': max_bytes: 0 is less than the minimum of 1"]
    # The form comes back with what was typed and the error at the param's input.
    widget_config = form_config(response.content.decode(), "id_params_form")
    assert json.loads(widget_config["data"]) == {"max_bytes": 0}
    assert widget_config["errorMap"] == {"max_bytes": ["0 is less than the minimum of 1"]}
    assert config("max_size").params == {"max_bytes": 1000}


def form_config(page, textarea_id):
    """The config django-jsonform's script starts the form of ``textarea_id`` with."""
    start = page.index(f'id="{textarea_id}"')
    attribute = 'data-django-jsonform="'
    begin = page.index(attribute, start) + len(attribute)
    return json.loads(unescape(page[begin : page.index('"', begin)]))


def test_a_secret_left_empty_in_the_form_is_kept_and_never_shown(admin_client, audit):
    webhook = config("webhook")
    page = admin_client.get(change_url(webhook)).content.decode()
    assert SECRET not in page
    shown = form_config(page, "id_params_form")
    assert json.loads(shown["data"]) == {"url": URL, "events": ["accept"]}
    assert shown["schema"]["keys"]["secret"]["format"] == "password"
    posted = {"url": "https://example.com/other", "secret": "", "timeout": 5, "events": ["reject"]}
    assert admin_client.post(change_url(webhook), page_post(webhook, form=posted)).status_code == 302
    # The timeout at its default, as the form fills it in, is not stored: the config did not have it.
    assert config("webhook").params == {"url": "https://example.com/other", "secret": SECRET, "events": ["reject"]}
    assert SECRET not in admin_client.get(change_url(webhook)).content.decode()


def test_a_secret_typed_in_the_form_replaces_the_saved_one_and_a_short_one_is_refused(admin_client, audit):
    webhook = config("webhook")
    response = admin_client.post(change_url(webhook), page_post(webhook, form={"url": URL, "secret": "short"}))
    assert params_errors(response) == ["Invalid params for hook 'webhook': secret: must be at least 16 characters long"]
    assert config("webhook").params["secret"] == SECRET
    new = "another-secret-of-some-length"
    response = admin_client.post(change_url(webhook), page_post(webhook, form={"url": URL, "secret": new}))
    assert response.status_code == 302
    assert config("webhook").params == {"url": URL, "secret": new}


def test_the_stash_page_gives_each_saved_hook_its_form_and_a_new_row_raw_json(admin_client, audit):
    page = admin_client.get(change_url(audit)).content.decode()
    for index, hook in enumerate(["require_fields", "max_size", "webhook"]):
        keys = form_config(page, f"id_hooks-{index}-params_form")["schema"]["keys"]
        assert set(keys) == set(registry.get(hook).params_schema["properties"])
    assert 'id="id_hooks-__prefix__-params_form"' not in page  # a new row: no hook yet, raw JSON
    assert 'id="id_hooks-__prefix__-params"' in page
    assert '<span class="stash-hook-number">1.</span>\n  <span class="stash-hook-title">Needs text</span>' in page
    assert '<summary title="max_bytes: 1000">max_bytes: 1000</summary>' in page  # folded to one line


def test_the_stash_page_saves_params_from_its_forms(admin_client, audit):
    rows = rows_of(audit)
    data = stash_post(audit, rows)
    data["hooks-1-params_form"] = json.dumps({"max_bytes": 0})
    response = admin_client.post(change_url(audit), data)
    assert response.status_code == 200
    assert response.context["inline_admin_formsets"][0].formset.forms[1].errors["params"] == [
        "Invalid params for hook 'max_size': max_bytes: 0 is less than the minimum of 1"
    ]
    data["hooks-1-params_form"] = json.dumps({"max_bytes": 2000})
    data["hooks-2-params_form"] = json.dumps({"url": URL, "secret": "", "events": ["accept", "hold"]})
    assert admin_client.post(change_url(audit), data).status_code == 302
    assert config("max_size").params == {"max_bytes": 2000}
    assert config("webhook").params == {"url": URL, "secret": SECRET, "events": ["accept", "hold"]}


def test_hooks_a_form_cannot_show_are_edited_as_raw_json(admin_client, audit, register_temporarily):
    schema = HookConfig.objects.create(stash=audit, hook="json_schema", params={"schema": {"type": "object"}})
    page = admin_client.get(change_url(schema)).content.decode()
    assert "params_form" not in page and "edit as raw JSON" not in page
    assert '<textarea name="params" cols="60" rows="6" class="stash-json"' in page

    class Loose(hooks.Filter):
        """Keeps everything."""

        params_schema = {"type": "object", "properties": {"level": {"type": "integer"}}}

        def filter(self, item):
            return self.keep()

    register_temporarily("test_loose", Loose)
    loose = HookConfig.objects.create(stash=audit, hook="test_loose", params={"level": 1, "extra": "kept"})
    page = admin_client.get(change_url(loose)).content.decode()
    # The form has no input for "extra": the params open as raw JSON, so saving cannot drop it.
    assert 'name="params_raw" checked' in page
    assert (
        admin_client.post(
            change_url(loose), page_post(loose, {"level": 2, "extra": "kept"}, form={"level": 2}, raw=True)
        ).status_code
        == 302
    )
    assert config("test_loose").params == {"level": 2, "extra": "kept"}


def test_every_built_in_hook_gets_a_form_or_raw_json():
    forms = {cls.name: form_schema(cls.params_schema) for cls in registry.all()}
    assert forms["json_schema"] is None and forms["set_fields"] is None  # a param that is a JSON object
    rendered = {name: schema for name, schema in forms.items() if schema is not None}
    assert {"require_fields", "keyword_blocklist", "max_size", "webhook", "file_type"} <= set(rendered)
    for schema in rendered.values():
        assert all(
            field["type"] in ("string", "number", "integer", "boolean", "array") for field in schema["keys"].values()
        )
    allowed = rendered["file_type"]["keys"]["allowed"]
    assert allowed["items"]["type"] == "string" and allowed["items"]["widget"] == "multiselect"
    assert rendered["regex"]["keys"]["mode"]["type"] == "string"  # an enum of strings
    assert rendered["webhook"]["required"] == ["url", "secret"]


def test_the_hooks_list_of_the_only_stash_can_be_dragged(admin_client, audit, make_stash):
    listing = admin_client.get(reverse("admin:stash_hookconfig_changelist")).content.decode()
    assert listing.count('class="drag handle"') == 3
    assert "Drag the handles to change the order Audit runs its hooks in" in listing
    make_stash("other")
    listing = admin_client.get(reverse("admin:stash_hookconfig_changelist")).content.decode()
    assert 'class="drag handle"' not in listing
