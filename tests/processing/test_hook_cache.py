"""A costly hook's outcome, reused for the same input (``HookConfig.cache_seconds``).

Judged by the worker's path (``processing.judge``) on the shared cache of the settings: the same
payload with the same params and pipeline version calls the hook once; anything else calls it.
"""

import pytest
from django.test import Client, override_settings

from stash import hooks, processing
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


def test_cache_seconds_goes_with_the_pipeline_document(costly):
    document = processing.export_document(costly)

    assert document["hooks"][0]["cache_seconds"] == 600
    assert HookConfig._meta.get_field("cache_seconds").default == 0
