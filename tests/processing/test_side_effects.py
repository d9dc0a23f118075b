"""Runs that only look (simulate, replay, golden examples) leave counters, caches and sinks alone.

Each face is driven as a person drives it (the admin's pages, the API, the commands), then a
real submission shows that the real ``rate_limit`` count did not move.
"""

import io
import json

import pytest
from django.contrib.auth.models import Permission
from django.core.cache import cache
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from stash import hooks, processing
from stash.core import pipeline
from stash.core.testing import build_hook
from stash.hooks.state import Scratch
from stash.models import Content, Example

from ..admin.test_admin_examples import examples_url
from ..admin.test_admin_views import replay_url, simulate_url

pytestmark = pytest.mark.django_db

WINDOW = 7 * 24 * 3600  # long: a test never straddles two windows
LIMIT = 2
TIMES = 5


class CountingSink(hooks.EventSink):
    """Count each verdict in the cache (seen from every process, the forked ones included)."""

    def handle(self, event, item, result):
        cache.add("test:sink-calls", 0)
        cache.incr("test:sink-calls")


class AsyncSink(CountingSink):
    """The same, delivered by its own task."""

    deliver_async = True


@pytest.fixture
def limited(make_stash, register_temporarily):
    register_temporarily("test_counting_sink", CountingSink)
    register_temporarily("test_async_sink", AsyncSink)
    return make_stash(
        "limited",
        hooks=[
            ("rate_limit", {"max_items": LIMIT, "window_seconds": WINDOW}),
            ("test_counting_sink", {}),
            ("test_async_sink", {}),
        ],
    )


@pytest.fixture
def sam(django_user_model):
    return django_user_model.objects.create_user("sam", password="pw")


def submit(stash, user=None, text="hello"):
    """A real submission, judged by the worker's path."""
    item = Content.objects.create(stash=stash, payload={"text": text}, submitted_by=user)
    processing.judge([item.pk])
    item.refresh_from_db()
    return item


def real_count(item):
    """The real rate_limit count of the item's submitter, in the window of the item."""
    who = item.submitted_by_id or "anonymous"
    return cache.get(f"stash:rate_limit:{item.stash.slug}:{WINDOW}:{who}:{int(item.created_at.timestamp() // WINDOW)}")


def sink_calls():
    return cache.get("test:sink-calls") or 0


def test_simulating_another_users_item_in_the_admin_counts_nothing(admin_client, limited, sam, broker):
    first = submit(limited, sam)
    calls, messages = sink_calls(), len(broker.messages)

    for _ in range(TIMES):
        response = admin_client.post(simulate_url(limited), {"payload": "", "content_id": str(first.pk)})
        # What rate_limit would do with this item judged now: count it once more (2 of 2).
        assert response.context["result"].verdict == "accepted", response.context["result"]

    assert (real_count(first), sink_calls(), len(broker.messages)) == (1, calls, messages)
    second = submit(limited, sam)
    assert (second.status, real_count(first)) == ("accepted", 2)
    # At the limit, a simulation shows the drop the hook would make, and still counts nothing.
    result = admin_client.post(simulate_url(limited), {"payload": "", "content_id": str(first.pk)}).context["result"]
    assert (result.verdict, result.reason) == (
        "rejected",
        f"submitter {sam.pk} sent 3 items within {WINDOW} s; the limit is {LIMIT}",
    )
    assert (real_count(first), sink_calls(), len(broker.messages)) == (2, calls + 1, messages)


def test_replaying_in_the_admin_counts_nothing(admin_client, limited, sam, broker):
    first = submit(limited, sam)
    calls, messages = sink_calls(), len(broker.messages)

    for _ in range(TIMES):
        response = admin_client.post(replay_url(limited), {"last_n": 10})
        assert response.context["report"].compared == 1 and not response.context["report"].changes

    assert (real_count(first), sink_calls(), len(broker.messages)) == (1, calls, messages)
    assert submit(limited, sam).status == "accepted"
    assert real_count(first) == 2


def test_simulating_an_item_through_the_api_counts_nothing(limited, sam, django_user_model, broker):
    first = submit(limited, sam)
    reader = django_user_model.objects.create_user("rita", password="pw")
    reader.user_permissions.set(
        Permission.objects.filter(content_type__app_label="stash", codename__in=["view_hookconfig", "view_content"])
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=reader).key}")
    calls, messages = sink_calls(), len(broker.messages)

    for _ in range(TIMES):
        response = client.post("/api/stashes/limited/simulate/", {"content_id": str(first.pk)}, format="json")
        assert (response.status_code, response.json()["verdict"]) == (200, "accepted"), response.content

    assert (real_count(first), sink_calls(), len(broker.messages)) == (1, calls, messages)
    assert submit(limited, sam).status == "accepted"


def test_stash_simulate_counts_nothing(limited, tmp_path, broker):
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps({"text": "hello"}))
    first = submit(limited)  # anonymous submitters share one allowance
    calls, messages = sink_calls(), len(broker.messages)

    for _ in range(TIMES):
        out = io.StringIO()
        call_command("stash_simulate", "limited", str(payload), stdout=out)
        assert "verdict: accepted" in out.getvalue()

    assert (real_count(first), sink_calls(), len(broker.messages)) == (1, calls, messages)
    assert submit(limited).status == "accepted"


def test_running_golden_examples_counts_nothing(admin_client, limited, broker):
    Example.objects.create(stash=limited, name="hello", payload={"text": "hello"}, verdict="accepted")
    Example.objects.create(stash=limited, name="again", payload={"text": "again"}, verdict="accepted")
    first = submit(limited)
    calls, messages = sink_calls(), len(broker.messages)

    for _ in range(TIMES):
        response = admin_client.post(examples_url(limited), {"_run": "Run examples"})
        # Each example is judged as if alone: 2 of 2 for both.
        assert [result.passed for _example, result in response.context["results"]] == [True, True]
        call_command("stash_test", "limited", stdout=io.StringIO())

    assert (real_count(first), sink_calls(), len(broker.messages)) == (1, calls, messages)
    assert submit(limited).status == "accepted"


# --- the runner and the declaration --------------------------------------------------------------


def test_a_looking_pipeline_has_no_sinks_and_scratch_copies_of_hooks_with_side_effects():
    limit = build_hook("rate_limit", {"max_items": 1, "window_seconds": WINDOW})
    words = build_hook("keyword_blocklist", {"words": ["spam"]})
    steps = [pipeline.Step(hook=hook, name=hook.name) for hook in (limit, words, build_hook("log"))]

    looking = pipeline.Pipeline(steps).looking()

    assert [step.name for step in looking.steps] == ["rate_limit", "keyword_blocklist"]
    assert looking.steps[0].hook is not limit and isinstance(looking.steps[0].hook.state, Scratch)
    assert looking.steps[1].hook is words
    assert limit.state is cache  # the hook itself still counts for real


def test_a_scratch_reads_through_and_keeps_its_writes():
    cache.set("test:count", 5)
    scratch = Scratch(cache)

    assert scratch.add("test:count", 0) is False and scratch.incr("test:count") == 6
    assert scratch.add("test:new", 0) is True and scratch.incr("test:new", 2) == 2
    assert scratch.delete("test:count") is True and scratch.get("test:count", "gone") == "gone"
    with pytest.raises(ValueError, match="not found"):
        scratch.incr("test:count")
    assert (cache.get("test:count"), cache.get("test:new")) == (5, None)


def test_a_hook_that_declares_side_effects_must_name_its_store():
    with pytest.raises(TypeError, match=r"declares side_effects: define open_state\(\)"):

        class Careless(hooks.Filter):
            """Writes somewhere."""

            side_effects = True

    class Careful(hooks.Filter):
        """Counts in a dict."""

        side_effects = True
        store = {}

        def open_state(self):
            return Scratch(self.store)  # any object with the cache's methods

    assert isinstance(Careful().scratch().state, Scratch)
