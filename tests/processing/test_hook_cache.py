"""A costly hook's outcome, reused for the same input (``HookConfig.cache_seconds``).

Judged by the worker's path (``processing.judge``) on the shared cache of the settings: the same
payload with the same params and pipeline version calls the hook once; anything else calls it.
"""

import re
from pathlib import Path

import pytest
from django.test import Client, override_settings

from stash import hooks, processing
from stash.core import registry
from stash.models import Content, HookConfig

from ..support.hook_support import closed_port

pytestmark = pytest.mark.django_db


class Costly(hooks.Filter):
    """Holds text with "?" in it, and counts its calls (a slow model, say)."""

    calls: list[str] = []

    def filter(self, item):
        Costly.calls.append(item.payload.get("text", ""))
        if "?" in item.payload.get("text", ""):
            return self.hold("asks a question", code="question", field="text")
        return self.keep()


class Flaky(hooks.Filter):
    """Fails on its first call, keeps after: a failure is never reused."""

    calls: list[str] = []

    def filter(self, item):
        Flaky.calls.append(item.payload["text"])
        if len(Flaky.calls) == 1:
            raise ConnectionError("the model server is down")
        return self.keep()


class Tagger(hooks.Transform):
    """Writes the length of ``text`` to ``length``; reads ``text`` only."""

    calls: list[str] = []

    @classmethod
    def cache_fields(cls, params):
        return ["text"]

    def transform(self, item):
        Tagger.calls.append(item.payload["text"])
        return {**item.payload, "length": len(item.payload["text"])}


@pytest.fixture(autouse=True)
def _registered(register_temporarily):
    for cls in (Costly, Flaky, Tagger):
        cls.calls = []
    register_temporarily("test_costly", Costly)
    register_temporarily("test_flaky", Flaky)
    register_temporarily("test_tagger", Tagger)


@pytest.fixture
def costly(make_stash):
    return make_stash("costly", hooks=[{"hook": "test_costly", "cache_seconds": 600}])


def submit(stash, payload, user=None):
    """One save, judged in its own batch (as saves far apart are)."""
    item = Content.objects.create(stash=stash, payload=payload, submitted_by=user)
    processing.judge([item.pk])
    item.refresh_from_db()
    return item


def trail(item):
    return item.runs.first().trail


def test_the_same_payload_and_params_call_the_hook_once(costly):
    first = submit(costly, {"text": "why?"})
    second = submit(costly, {"text": "why?"})

    assert Costly.calls == ["why?"]
    assert (first.status, first.reason) == (second.status, second.reason) == ("held", "asks a question")
    assert first.decided_by_id == second.decided_by_id == costly.hooks.get().pk
    assert "cached" not in trail(first)[0]
    assert trail(second)[0]["cached"] is True
    assert trail(second)[0]["outcome"] == "held" and trail(second)[0]["code"] == "question"


def test_another_payload_calls_the_hook(costly):
    submit(costly, {"text": "why?"})
    other = submit(costly, {"text": "why not?"})

    assert Costly.calls == ["why?", "why not?"]
    assert "cached" not in trail(other)[0]


def test_a_params_change_calls_the_hook_again(costly):
    submit(costly, {"text": "hello"})
    config = costly.hooks.get()
    config.label = "Questions"
    config.save()
    costly.refresh_from_db()

    again = submit(costly, {"text": "hello"})

    assert Costly.calls == ["hello", "hello"]
    assert "cached" not in trail(again)[0]


def test_without_cache_seconds_the_hook_runs_every_time(make_stash):
    stash = make_stash("plain", hooks=[("test_costly", {})])
    submit(stash, {"text": "hello"})
    submit(stash, {"text": "hello"})

    assert Costly.calls == ["hello", "hello"]


def test_an_observing_hook_reuses_its_outcome_and_still_only_observes(make_stash):
    stash = make_stash("watch", hooks=[{"hook": "test_costly", "cache_seconds": 600, "mode": "observe"}])
    submit(stash, {"text": "why?"})
    second = submit(stash, {"text": "why?"})

    assert Costly.calls == ["why?"]
    assert second.status == "accepted"
    assert trail(second)[0]["outcome"] == "observed" and trail(second)[0]["cached"] is True


def test_a_failure_is_not_reused(make_stash):
    stash = make_stash("flaky", hooks=[{"hook": "test_flaky", "cache_seconds": 600, "on_error": "skip"}])
    failed = submit(stash, {"text": "hello"})
    kept = submit(stash, {"text": "hello"})
    reused = submit(stash, {"text": "hello"})

    assert Flaky.calls == ["hello", "hello"]
    assert trail(failed)[0]["outcome"] == "error"
    assert trail(kept)[0]["outcome"] == "kept" and "cached" not in trail(kept)[0]
    assert trail(reused)[0]["outcome"] == "kept" and trail(reused)[0]["cached"] is True


def test_a_transform_keyed_on_the_fields_it_reads_keeps_the_rest_of_each_payload(make_stash):
    stash = make_stash("tags", hooks=[{"hook": "test_tagger", "cache_seconds": 600}])
    first = submit(stash, {"text": "hello", "author": "ann"})
    second = submit(stash, {"text": "hello", "author": "bob", "length": 99})

    assert Tagger.calls == ["hello"]
    assert first.payload == {"text": "hello", "author": "ann", "length": 5}
    assert second.payload == {"text": "hello", "author": "bob", "length": 5}
    assert trail(second)[0]["cached"] is True and trail(second)[0]["message"] == "changed length"


def test_a_cache_that_is_down_still_judges(costly):
    down = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{closed_port()}/0",
        }
    }
    with override_settings(CACHES=down):
        first = submit(costly, {"text": "why?"})
        second = submit(costly, {"text": "why?"})

    assert Costly.calls == ["why?", "why?"]
    assert first.status == second.status == "held"
    assert "cached" not in trail(second)[0]


def test_the_trail_says_cached_on_the_item_page_and_in_the_admin(costly, django_user_model, admin_client):
    sam = django_user_model.objects.create_user("sam", password="pw")
    submit(costly, {"text": "hello"}, user=sam)
    second = submit(costly, {"text": "hello"}, user=sam)
    client = Client()
    client.force_login(sam)

    page = client.get(f"/c/{second.pk}/").content.decode()
    admin = admin_client.get(f"/admin/stash/content/{second.pk}/change/").content.decode()

    assert "kept it (cached)." in page
    assert "(cached)" in admin


def test_cache_seconds_goes_with_the_pipeline_document(costly, make_stash):
    document = processing.export_document(costly)
    assert document["hooks"][0]["cache_seconds"] == 600

    processing.import_document("copy", document)

    assert HookConfig.objects.get(stash__slug="copy").cache_seconds == 600
    document["hooks"][0]["cache_seconds"] = "forever"
    with pytest.raises(processing.InvalidDocument, match=r"hooks\[0\]\.cache_seconds"):
        processing.import_document("copy", document)


def test_a_document_from_before_cache_seconds_imports_with_it_off(costly):
    document = processing.export_document(costly)
    del document["hooks"][0]["cache_seconds"]

    processing.import_document("older", document)

    assert HookConfig.objects.get(stash__slug="older").cache_seconds == 0


def test_the_admin_form_edits_cache_seconds(costly, admin_client):
    config = costly.hooks.get()

    page = admin_client.get(f"/admin/stash/hookconfig/{config.pk}/change/").content.decode()

    assert 'name="cache_seconds"' in page and "Reuse the hook" in page


def test_the_docs_caching_example_calls_its_hook_once_per_text(make_stash, monkeypatch):
    root = Path(__file__).resolve().parents[2]
    blocks = re.findall(r"```python\n(.*?)```", (root / "docs" / "hooks.md").read_text(), flags=re.DOTALL)
    [source] = [block for block in blocks if '"slow_topic"' in block]
    try:
        exec(compile(source, "docs/hooks.md", "exec"), {})  # noqa: S102 - the docs' own example
        cls = registry.get("slow_topic")
        calls = []
        original = cls.filter
        monkeypatch.setattr(cls, "filter", lambda self, item: calls.append(1) or original(self, item))
        stash = make_stash("topics", hooks=[{"hook": "slow_topic", "cache_seconds": 60}])

        first = submit(stash, {"text": "Win the lottery", "author": "ann"})
        second = submit(stash, {"text": "Win the lottery", "author": "bob"})
        other = submit(stash, {"text": "Nice weather", "author": "bob"})

        assert (first.status, second.status, other.status) == ("held", "held", "accepted")
        assert len(calls) == 2 and trail(second)[0]["cached"] is True
    finally:
        if registry.is_registered("slow_topic"):
            registry.unregister("slow_topic")
