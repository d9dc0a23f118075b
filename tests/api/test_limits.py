"""How big a stash may grow, through the API: hooks per stash, golden examples, the bytes of a
pipeline document, a hook's timeout; each refused with a 4xx naming the limit, nothing changed."""

import json

import pytest

from stash.models import Content, Example

pytestmark = pytest.mark.django_db

THREE = [
    ("require_fields", {"fields": ["text"]}),
    ("keyword_blocklist", {"words": ["spam"]}),
    ("max_size", {"max_bytes": 1000}),
]
TOO_MANY_HOOKS = "A stash has at most 3 hooks (STASH_MAX_HOOKS); this would make 4."
TOO_MANY_EXAMPLES = "A stash has at most 2 golden examples (STASH_MAX_EXAMPLES); this would make 3."
TIMEOUT_REFUSAL = "At most 30,000 ms: the hard time limit of a judging message (STASH_TIME_LIMIT, 30 s)."


@pytest.fixture
def full(make_stash, settings):
    """A stash with all the hooks it may have (3) and room for one more example (of 2)."""
    settings.STASH_MAX_HOOKS, settings.STASH_MAX_EXAMPLES, settings.STASH_TIME_LIMIT = 3, 2, 30
    stash = make_stash("full", hooks=THREE)
    Example.objects.create(stash=stash, name="one", payload={"text": "one"}, verdict="accepted")
    return stash


@pytest.fixture
def client(api, admin_user):
    return api(admin_user)


def document(hooks=4, **fields):
    return {
        "format": "stash.pipeline",
        "format_version": 1,
        "hooks": [
            {"hook": "max_size", "label": f"Size {n}", "params": {"max_bytes": 100 + n}, **fields} for n in range(hooks)
        ],
    }


def test_a_hook_past_the_limit_is_a_400(client, full):
    response = client.post("/api/stashes/full/hooks/", {"hook": "max_size", "params": {"max_bytes": 5}}, format="json")

    assert response.status_code == 400
    assert response.json() == {"non_field_errors": [TOO_MANY_HOOKS]}
    assert full.hooks.count() == 3


def test_a_document_past_the_limit_is_a_400_naming_its_hooks(client, full):
    response = client.put("/api/stashes/full/pipeline/", document(hooks=4), format="json")

    assert response.status_code == 400
    assert response.json()["hooks"] == [TOO_MANY_HOOKS]
    assert full.hooks.count() == 3
    examples = [{"name": f"e{n}", "payload": {"text": "hi"}, "verdict": "accepted"} for n in range(3)]
    response = client.put("/api/stashes/full/pipeline/", {**document(hooks=1), "examples": examples}, format="json")
    assert response.status_code == 400
    assert response.json()["examples"] == [TOO_MANY_EXAMPLES]
    assert list(full.examples.values_list("name", flat=True)) == ["one"]


def test_a_document_past_the_byte_limit_is_a_413_before_it_is_parsed(client, full, settings):
    settings.STASH_MAX_DOCUMENT_BYTES = 1000
    body = json.dumps(document(hooks=3)) + " " * 1000

    # Not JSON at all past the limit: its length alone refuses it.
    for text in (body, "{" * 2000):
        response = client.generic("PUT", "/api/stashes/full/pipeline/", text, content_type="application/json")
        assert response.status_code == 413
        assert response.json() == {
            "detail": "A pipeline document has at most 1,000 bytes (STASH_MAX_DOCUMENT_BYTES); "
            f"this one has {len(text):,}."
        }
    assert full.hooks.count() == 3


def test_an_example_past_the_limit_is_a_400_made_or_taken_from_an_item(client, full):
    assert (
        client.post(
            "/api/stashes/full/examples/",
            {"name": "two", "payload": {"text": "2"}, "verdict": "accepted"},
            format="json",
        ).status_code
        == 201
    )

    response = client.post(
        "/api/stashes/full/examples/", {"name": "three", "payload": {"text": "3"}, "verdict": "accepted"}, format="json"
    )
    assert response.status_code == 400
    assert response.json() == {"non_field_errors": [TOO_MANY_EXAMPLES]}
    item = Content.objects.create(stash=full, payload={"text": "hi"})
    Content.objects.filter(pk=item.pk).update(status="accepted")
    response = client.post(f"/api/contents/{item.pk}/example/")
    assert response.status_code == 400
    assert response.json() == {"non_field_errors": [TOO_MANY_EXAMPLES]}
    assert sorted(full.examples.values_list("name", flat=True)) == ["one", "two"]


def test_a_timeout_past_the_time_limit_is_a_400_on_every_write(client, full):
    config = full.hooks.first()

    response = client.patch(f"/api/stashes/full/hooks/{config.pk}/", {"timeout_ms": 2_147_483_647}, format="json")
    assert (response.status_code, response.json()) == (400, {"timeout_ms": [TIMEOUT_REFUSAL]})
    response = client.put("/api/stashes/full/pipeline/", document(hooks=1, timeout_ms=30_001), format="json")
    assert response.status_code == 400
    assert response.json()["hooks"] == {"0": {"timeout_ms": [f"Size 0 (max_size): {TIMEOUT_REFUSAL}"]}}
    config.delete()
    response = client.post(
        "/api/stashes/full/hooks/",
        {"hook": "max_size", "params": {"max_bytes": 5}, "timeout_ms": 30_001},
        format="json",
    )
    assert (response.status_code, response.json()) == (400, {"timeout_ms": [TIMEOUT_REFUSAL]})
    assert list(full.hooks.values_list("timeout_ms", flat=True)) == [2000, 2000]
    response = client.patch(f"/api/stashes/full/hooks/{full.hooks.first().pk}/", {"timeout_ms": 30_000}, format="json")
    assert (response.status_code, response.json()["timeout_ms"]) == (200, 30_000)
