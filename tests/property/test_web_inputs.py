"""Any text and JSON sent through the submit form or the admin's "add content" is stored exactly or
refused with a form error (the page again, nothing saved), never a 500."""

import json

import pytest
from django.test import Client
from hypothesis import example, given, strategies as st

from stash.models import Content

from .conftest import count, rolled_back
from .strategies import as_json, form_texts, json_values, payloads, same_json

pytestmark = pytest.mark.django_db

#: What a person types into a JSON box: JSON (lone surrogates as escapes), or anything at all.
json_texts = st.one_of(json_values.map(as_json), payloads.map(as_json), form_texts)


@pytest.fixture
def browser(superuser):
    client = Client()
    client.force_login(superuser)
    return client


def saved(client, url, data):
    """Post the form: True if it saved an item (a redirect), False if the page came back with errors
    and nothing was saved. Anything else (a 500) fails the test."""
    before = count()
    response = client.post(url, data)
    assert response.status_code in (200, 302), (response.status_code, response.content[:500])
    if response.status_code == 302:
        return True
    form = response.context["adminform"].form if "adminform" in response.context else response.context["form"]
    assert form.errors
    assert count() == before
    return False


@given(text=form_texts, data=json_texts)
@example(text="hi", data='{"x": "\\ud800"}')
@example(text="nul \x00", data="")
@example(text="", data='{"pad": 9223372036854775808, "n": 1e308}')
def test_the_submit_form_stores_exactly_what_it_was_given_or_says_why_not(browser, stashes, text, data):
    with rolled_back():
        if not saved(browser, "/s/audit/submit/", {"text": text, "data": data}):
            return
        item = Content.objects.latest("created_at")
        assert item.payload.get("text", "") == text.strip()
        if data.strip():
            assert same_json(json.loads(data), item.payload["data"])


@given(payload=json_texts, key=form_texts)
@example(payload='{"x": "\\ud800"}', key="")
@example(payload='{"\\udfff": 1}', key="k")
@example(payload='{"score": 10, "pad": 9223372036854775808}', key="")
def test_the_admin_stores_an_added_item_exactly_or_shows_the_error(browser, stashes, payload, key):
    with rolled_back():
        if not saved(
            browser,
            "/admin/stash/content/add/",
            {"stash": stashes["audit"].pk, "payload": payload, "idempotency_key": key},
        ):
            return
        item = Content.objects.get()
        assert same_json(json.loads(payload), item.payload)
        assert (item.source, item.idempotency_key) == ("admin", key.strip())
