"""Any JSON sent to the API's write paths is stored exactly (read back equal) or refused with a 4xx."""

import pytest
from hypothesis import example, given, strategies as st

from stash.models import Content, HookConfig

from .conftest import count, rolled_back
from .strategies import as_json, json_values, payloads, same_json, slugs, texts

pytestmark = pytest.mark.django_db

JSON = "application/json"


def send(client, method, url, body):
    """Send ``body`` as JSON text (so lone surrogates travel as escapes); a 5xx fails the test."""
    response = getattr(client, method)(url, as_json(body), content_type=JSON)
    assert response.status_code < 500, response.content
    return response


def refused(response):
    assert 400 <= response.status_code < 500, (response.status_code, response.content)
    return response.json()


@given(slug=slugs, payload=payloads)
@example(slug="audit", payload={"text": "\ud800"})
@example(slug="\x00", payload={})
@example(slug="audit", payload={"score": 10, "pad": 9223372036854775808})
def test_a_submitted_payload_is_stored_exactly_or_refused(api, stashes, slug, payload):
    with rolled_back():
        before = count()
        response = send(api, "post", "/api/contents/", {"stash": slug, "payload": payload})
        if response.status_code != 201:
            refused(response)
            assert count() == before
            return
        stored = Content.objects.get(pk=response.json()["id"])
        assert same_json(payload, stored.payload)
        assert same_json(payload, api.get(f"/api/contents/{stored.pk}/").json()["payload"])


@given(payload=payloads)
@example(payload={"text": "\ud800"})
@example(payload={"\udfff": 1})
def test_a_changed_payload_is_stored_exactly_or_refused(api, stashes, payload):
    with rolled_back():
        item = Content.objects.create(stash=stashes["audit"], payload={"text": "first"})
        response = send(api, "patch", f"/api/contents/{item.pk}/", {"payload": payload})
        item.refresh_from_db()
        if response.status_code == 200:
            assert same_json(payload, item.payload)
        else:
            refused(response)
            assert (item.payload, item.revision) == ({"text": "first"}, 1)


@given(slug=slugs, items=st.lists(payloads, max_size=4))
@example(slug="audit", items=[{"text": "ok"}, {"text": "\ud800"}])
def test_bulk_payloads_are_all_stored_exactly_or_all_refused(api, stashes, slug, items):
    with rolled_back():
        before = count()
        response = send(api, "post", "/api/contents/bulk/", {"stash": slug, "items": items})
        if response.status_code == 201:
            stored = {str(item.pk): item.payload for item in Content.objects.filter(pk__in=response.json()["ids"])}
            assert all(same_json(sent, stored[pk]) for sent, pk in zip(items, response.json()["ids"], strict=True))
        else:
            refused(response)
            assert count() == before


@given(payload=payloads)
@example(payload={"text": "\ud800"})
@example(payload={"text": "hello", "score": 10, "pad": 9223372036854775808})
def test_a_simulated_payload_is_judged_or_refused_and_nothing_is_saved(api, stashes, payload):
    with rolled_back():
        response = send(api, "post", "/api/stashes/audit/simulate/", {"payload": payload})
        if response.status_code == 200:
            assert response.json()["verdict"] in {"accepted", "rejected", "held"}
        else:
            refused(response)
        assert count() == 0


@given(
    values=json_values,
    condition=st.one_of(texts, texts.map(lambda text: f"payload.text == {as_json(text)}")),
    method=st.sampled_from(["post", "put", "patch"]),
)
@example(values={"a": "\ud800"}, condition="", method="post")
@example(values={"a": 1}, condition="payload.text == '\x00'", method="patch")
def test_hook_params_and_conditions_are_stored_exactly_or_refused(api, stashes, values, condition, method):
    body = {"hook": "set_fields", "params": {"values": values}, "condition": condition}
    with rolled_back():
        existing = HookConfig.objects.create(stash=stashes["open"], hook="set_fields", params={"values": {"a": 1}})
        url = "/api/stashes/open/hooks/" + ("" if method == "post" else f"{existing.pk}/")
        response = send(api, method, url, body)
        if response.status_code in (200, 201):
            config = HookConfig.objects.get(pk=response.json()["id"])
            assert same_json(body["params"], config.params)
            assert config.condition == condition.strip() or config.condition == condition
        else:
            refused(response)
            assert list(HookConfig.objects.filter(stash=stashes["open"]).values_list("params", flat=True)) == [
                {"values": {"a": 1}}
            ]
