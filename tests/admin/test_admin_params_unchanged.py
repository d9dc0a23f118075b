"""Saving a hook's page (or the stash's page) untouched changes nothing: the params form shows the schema's
defaults but does not store them, so no new version is recorded and the stored params stay byte for byte."""

import json
from html import unescape
from html.parser import HTMLParser

import pytest
from django.db import connection
from django.urls import reverse

from stash.models import HookConfig, PipelineVersion, Stash

from .test_admin import change_url
from .test_admin_params import form_config

pytestmark = pytest.mark.django_db

SECRET = "s3cret-s3cret-s3cret-s3cret"


class _Fields(HTMLParser):
    """The fields of a page's main form with the values a browser would post unchanged."""

    def __init__(self):
        super().__init__()
        self.fields, self.textarea, self.select, self.options = [], None, None, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "input" and attrs.get("name") and attrs.get("type") not in ("submit", "button", "file"):
            if attrs.get("type") in ("checkbox", "radio"):
                if "checked" in attrs:
                    self.fields.append((attrs["name"], attrs.get("value", "on")))
            else:
                self.fields.append((attrs["name"], attrs.get("value", "")))
        elif tag == "textarea" and attrs.get("name"):
            self.textarea = [attrs["name"], "", attrs]
        elif tag == "select" and attrs.get("name"):
            self.select, self.options = attrs["name"], []
        elif tag == "option" and self.select is not None:
            self.options.append((attrs.get("value", ""), "selected" in attrs))

    def handle_data(self, data):
        if self.textarea is not None:
            self.textarea[1] += data

    def handle_endtag(self, tag):
        if tag == "textarea" and self.textarea is not None:
            name, text, attrs = self.textarea
            if "data-django-jsonform" in attrs:
                text = json.dumps(as_the_form_fills(json.loads(unescape(attrs["data-django-jsonform"]))))
            self.fields.append((name, text.removeprefix("\n")))
            self.textarea = None
        elif tag == "select" and self.select is not None:
            chosen = [value for value, selected in self.options if selected] or [self.options[0][0]]
            self.fields.append((self.select, chosen[0]))
            self.select = None


def as_the_form_fills(config):
    """What django-jsonform's form posts when nobody touches it: the data it was given, each param it
    lacks filled with the schema's default (or left blank)."""
    data = json.loads(config["data"])
    for key, spec in config["schema"]["keys"].items():
        if key not in data:
            data[key] = spec.get("default", [] if spec["type"] == "array" else None)
    return data


def posted_unchanged(client, url):
    """GET ``url`` and post its form back as a browser would, untouched (pressing Save)."""
    parser = _Fields()
    parser.feed(client.get(url).content.decode())
    data = {}
    for name, value in parser.fields:
        if "__prefix__" not in name:
            data.setdefault(name, value)
    return client.post(url, {**data, "_save": "Save"})


def stored_params():
    """The params as the database holds them, as text."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, params FROM {HookConfig._meta.db_table} ORDER BY id")
        return cursor.fetchall()


@pytest.fixture
def audit(make_stash):
    return make_stash(
        "audit",
        name="Audit",
        hooks=[
            {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam"]}},
            {"hook": "require_fields", "label": "Needs text", "params": {"allow_empty": False, "fields": ["text"]}},
            {"hook": "webhook", "label": "Notify", "params": {"url": "https://example.com/in", "secret": SECRET}},
            {"hook": "normalize_text", "label": "Tidy", "params": {"fields": ["text"]}},
        ],
    )


@pytest.mark.parametrize("label", ["No spam", "Needs text", "Notify", "Tidy"])
def test_an_untouched_save_of_a_hooks_page_records_nothing(admin_client, audit, label):
    config = audit.hooks.get(label=label)
    before, versions = stored_params(), PipelineVersion.objects.count()
    response = posted_unchanged(admin_client, change_url(config))
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert stored_params() == before
    assert PipelineVersion.objects.count() == versions
    assert Stash.objects.get(pk=audit.pk).config_version == audit.config_version


def test_an_untouched_save_of_the_stash_page_records_nothing(admin_client, audit):
    before, versions = stored_params(), PipelineVersion.objects.count()
    response = posted_unchanged(admin_client, change_url(audit))
    assert response.status_code == 302
    assert stored_params() == before
    assert PipelineVersion.objects.count() == versions
    assert Stash.objects.get(pk=audit.pk).config_version == audit.config_version


def test_the_form_shows_the_defaults_and_a_changed_one_is_stored(admin_client, audit):
    webhook = audit.hooks.get(label="Notify")
    config = form_config(admin_client.get(change_url(webhook)).content.decode(), "id_params_form")
    assert config["schema"]["keys"]["timeout"]["default"] == 5  # the form starts with it filled in
    data = {
        "hook": "webhook",
        "label": "Notify",
        "enabled": "on",
        "mode": "enforce",
        "on_error": "inherit",
        "condition": "",
        "timeout_ms": 2000,
        "params": "{}",
        "params_form": json.dumps({"url": "https://example.com/in", "secret": "", "timeout": 7}),
    }
    assert admin_client.post(change_url(webhook), data).status_code == 302
    assert HookConfig.objects.get(pk=webhook.pk).params == {
        "url": "https://example.com/in",
        "timeout": 7,
        "secret": SECRET,
    }
    # Set back to the default, the stored value stays what it says: the config had it.
    data["params_form"] = json.dumps({"url": "https://example.com/in", "secret": "", "timeout": 5})
    assert admin_client.post(change_url(webhook), data).status_code == 302
    assert HookConfig.objects.get(pk=webhook.pk).params["timeout"] == 5


def test_a_new_hook_keeps_out_the_defaults_the_picker_filled_in(admin_client, audit):
    data = {
        "stash": audit.pk,
        "hook": "keyword_blocklist",
        "label": "",
        "enabled": "on",
        "mode": "enforce",
        "on_error": "inherit",
        "condition": "",
        "timeout_ms": 2000,
        "params": json.dumps({"words": ["scam"], "whole_word": False}),
    }
    assert admin_client.post(reverse("admin:stash_hookconfig_add"), data).status_code == 302
    assert audit.hooks.get(label="", hook="keyword_blocklist").params == {"words": ["scam"]}
