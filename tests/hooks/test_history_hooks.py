"""Filters that look at what came before: duplicate (the stash's items) and rate_limit (the shared cache)."""

import os
import subprocess
import sys
import uuid
from datetime import datetime, timedelta, timezone as dt_timezone
from pathlib import Path

import pytest
import redis
from django.core.cache import cache
from django.utils import timezone

from stash import processing
from stash.core.pipeline import Item
from stash.core.testing import build_hook
from stash.models import Content

from ..support.hook_support import assert_refused

ROOT = Path(__file__).resolve().parents[2]


def verdict(decision):
    return (decision.action, decision.reason, decision.code)


# --- duplicate --------------------------------------------------------------------------------


@pytest.fixture
def audit(make_stash):
    return make_stash("audit")


def submit(stash, payload, ago=None, status=None):
    content = Content.objects.create(stash=stash, payload=payload)
    changes = {}
    if ago is not None:
        changes["created_at"] = timezone.now() - ago
    if status is not None:
        changes["status"] = status
    if changes:
        Content.objects.filter(pk=content.pk).update(**changes)
        content.refresh_from_db()
    return content


def judge(hook, content):
    return hook.filter(processing.item_for(content))


@pytest.mark.django_db
def test_duplicate_keeps_the_first_and_drops_a_later_copy_naming_the_first(audit):
    hook = build_hook("duplicate", {})
    first = submit(audit, {"text": "hello"}, ago=timedelta(minutes=5))
    second = submit(audit, {"text": "hello"})

    assert judge(hook, first).action == "keep"
    assert verdict(judge(hook, second)) == (
        "drop",
        f"same content as item {first.pk}, submitted within 86400 s before",
        "duplicate",
    )


@pytest.mark.django_db
def test_duplicate_compares_whole_payloads_in_canonical_form(audit):
    hook = build_hook("duplicate", {})
    submit(audit, {"a": 1, "b": [1, 2]}, ago=timedelta(seconds=5))

    assert judge(hook, submit(audit, {"b": [1, 2], "a": 1})).action == "drop"  # key order does not matter
    assert judge(hook, submit(audit, {"a": 1, "b": [2, 1]})).action == "keep"  # list order does
    assert judge(hook, submit(audit, {"a": 1})).action == "keep"


@pytest.mark.django_db
def test_duplicate_is_per_stash(audit, make_stash):
    hook = build_hook("duplicate", {})
    submit(make_stash("other"), {"text": "hello"}, ago=timedelta(seconds=5))

    assert judge(hook, submit(audit, {"text": "hello"})).action == "keep"


@pytest.mark.django_db
def test_duplicate_window(audit):
    submit(audit, {"text": "hello"}, ago=timedelta(seconds=120))
    later = submit(audit, {"text": "hello"})

    assert judge(build_hook("duplicate", {"window_seconds": 60}), later).action == "keep"
    assert judge(build_hook("duplicate", {"window_seconds": 180}), later).action == "drop"


@pytest.mark.django_db
@pytest.mark.parametrize("status", [Content.Status.REJECTED, Content.Status.FAILED])
def test_duplicate_of_a_rejected_item_counts_only_when_asked(audit, status):
    submit(audit, {"text": "hello"}, ago=timedelta(seconds=5), status=status)
    again = submit(audit, {"text": "hello"})

    assert judge(build_hook("duplicate", {}), again).action == "keep"
    assert judge(build_hook("duplicate", {"count_rejected": True}), again).action == "drop"


@pytest.mark.django_db
def test_two_copies_judged_together_keep_exactly_one_even_at_the_same_instant(audit):
    a, b = submit(audit, {"text": "twin"}), submit(audit, {"text": "twin"})
    Content.objects.filter(pk__in=[a.pk, b.pk]).update(created_at=timezone.now())
    a.refresh_from_db()
    b.refresh_from_db()
    hook = build_hook("duplicate", {})

    actions = sorted([judge(hook, a).action, judge(hook, b).action])

    assert actions == ["drop", "keep"]


@pytest.mark.django_db
def test_judging_the_first_again_does_not_make_it_a_duplicate_of_a_later_copy(audit):
    first = submit(audit, {"text": "hello"}, ago=timedelta(seconds=5))
    submit(audit, {"text": "hello"})

    assert judge(build_hook("duplicate", {}), first).action == "keep"


@pytest.mark.django_db
def test_duplicate_uses_the_hash_of_what_was_submitted_even_after_a_transform(audit):
    submit(audit, {"text": "  Hello  "}, ago=timedelta(seconds=5))
    later = submit(audit, {"text": "  Hello  "})
    item = processing.item_for(later)
    transformed = Item(**{**item.__dict__, "payload": {"text": "Hello"}})

    assert build_hook("duplicate", {}).filter(transformed).action == "drop"


@pytest.mark.django_db
def test_a_simulation_counts_every_stored_item_as_earlier(audit):
    stored = submit(audit, {"text": "hello"})

    decision = build_hook("duplicate", {}).filter(Item(payload={"text": "hello"}, stash="audit"))

    assert verdict(decision) == (
        "drop",
        f"same content as item {stored.pk}, submitted within 86400 s before",
        "duplicate",
    )


@pytest.mark.django_db
def test_duplicate_in_a_processed_batch(make_stash):
    stash = make_stash("inbox", hooks=[("duplicate", {"window_seconds": 3600})])
    first = submit(stash, {"text": "same"}, ago=timedelta(seconds=1))
    copy = submit(stash, {"text": "same"})
    other = submit(stash, {"text": "different"})

    processing.judge([first.pk, copy.pk, other.pk])

    statuses = dict(Content.objects.values_list("pk", "status"))
    assert (statuses[first.pk], statuses[copy.pk], statuses[other.pk]) == ("accepted", "rejected", "accepted")
    copy.refresh_from_db()
    assert copy.reason == f"same content as item {first.pk}, submitted within 3600 s before"


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({"window_seconds": 0}, {"window_seconds": "Must be at least 1."}),
        ({"window_seconds": "60"}, {"window_seconds": "Must be a whole number."}),
        ({"window_seconds": 10**9}, {"window_seconds": "Must be at most 31622400."}),
        ({"count_rejected": "no"}, {"count_rejected": "Must be true or false."}),
        ({"scope": "all"}, {"params": "Not a param of this hook: scope."}),
    ],
)
def test_duplicate_refuses_bad_params(params, errors):
    assert_refused("duplicate", params, errors)


# --- rate_limit -------------------------------------------------------------------------------


@pytest.fixture
def stash_slug():
    """A stash name of its own: counts live in a cache that outlives one test run."""
    return f"rl-{uuid.uuid4().hex[:10]}"


def sent(slug, submitted_by="7", at=None, item_id=None):
    return Item(
        payload={"text": "hi"},
        id=item_id or str(uuid.uuid4()),
        stash=slug,
        submitted_by=submitted_by,
        created_at=at or timezone.now(),
    )


def window_start(seconds):
    """A second into the current window: later items of a test stay in the same window."""
    now = timezone.now().timestamp()
    return datetime.fromtimestamp(now - now % seconds + 1, tz=dt_timezone.utc)


def test_rate_limit_keeps_up_to_max_items_per_window_then_drops(stash_slug):
    hook = build_hook("rate_limit", {"max_items": 3, "window_seconds": 60})
    at = window_start(60)

    actions = [hook.filter(sent(stash_slug, at=at)).action for _ in range(3)]
    fourth = hook.filter(sent(stash_slug, at=at))

    assert actions == ["keep", "keep", "keep"]
    assert verdict(fourth) == ("drop", "submitter 7 sent 4 items within 60 s; the limit is 3", "rate_limited")


def test_rate_limit_counts_each_submitter_and_stash_apart(stash_slug):
    hook = build_hook("rate_limit", {"max_items": 1, "window_seconds": 60})
    at = window_start(60)

    assert hook.filter(sent(stash_slug, "7", at)).action == "keep"
    assert hook.filter(sent(stash_slug, "8", at)).action == "keep"
    assert hook.filter(sent(stash_slug + "-b", "7", at)).action == "keep"
    assert hook.filter(sent(stash_slug, "7", at)).action == "drop"


def test_rate_limit_starts_again_in_the_next_window(stash_slug):
    hook = build_hook("rate_limit", {"max_items": 1, "window_seconds": 60})
    at = window_start(60)

    assert hook.filter(sent(stash_slug, at=at)).action == "keep"
    assert hook.filter(sent(stash_slug, at=at + timedelta(seconds=30))).action == "drop"
    assert hook.filter(sent(stash_slug, at=at + timedelta(seconds=60))).action == "keep"


def test_rate_limit_anonymous_submitters_share_one_allowance_or_are_exempt(stash_slug):
    at = window_start(60)
    shared = build_hook("rate_limit", {"max_items": 2, "window_seconds": 60})
    exempt = build_hook("rate_limit", {"max_items": 2, "window_seconds": 60, "anonymous": "exempt"})

    assert [shared.filter(sent(stash_slug, None, at)).action for _ in range(3)] == ["keep", "keep", "drop"]
    assert shared.filter(sent(stash_slug, None, at)).reason == (
        "anonymous submitters sent 4 items within 60 s; the limit is 2"
    )
    assert [exempt.filter(sent(stash_slug, None, at)).action for _ in range(5)] == ["keep"] * 5


def test_rate_limit_in_a_run_that_only_looks_reads_the_count_without_adding_to_it(stash_slug):
    hook = build_hook("rate_limit", {"max_items": 1, "window_seconds": 60})
    at = window_start(60)
    simulated = Item(payload={}, stash=stash_slug, submitted_by="7", created_at=at)

    assert [hook.scratch().filter(simulated).action for _ in range(3)] == ["keep", "keep", "keep"]
    assert hook.filter(sent(stash_slug, at=at)).action == "keep"
    assert hook.scratch().filter(simulated).action == "drop"
    assert hook.filter(sent(stash_slug, at=at)).reason == "submitter 7 sent 2 items within 60 s; the limit is 1"


def test_rate_limit_counts_are_shared_with_other_processes(stash_slug):
    hook = build_hook("rate_limit", {"max_items": 2, "window_seconds": 3600})
    at = window_start(3600)
    assert [hook.filter(sent(stash_slug, at=at)).action for _ in range(2)] == ["keep", "keep"]
    code = (
        "import django, uuid; django.setup()\n"
        "from datetime import datetime\n"
        "from stash.core.pipeline import Item\n"
        "from stash.core.testing import build_hook\n"
        "hook = build_hook('rate_limit', {'max_items': 2, 'window_seconds': 3600})\n"
        f"item = Item(payload={{}}, id=str(uuid.uuid4()), stash={stash_slug!r}, submitted_by='7',\n"
        f"            created_at=datetime.fromisoformat({at.isoformat()!r}))\n"
        "print(hook.filter(item).reason)\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "PYTHONPATH": str(ROOT)}

    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60)

    assert out.stdout.strip() == "submitter 7 sent 3 items within 3600 s; the limit is 2", out.stderr


def test_rate_limit_on_redis_when_the_cache_is_redis(settings, stash_slug):
    prefix = f"stash-test-{uuid.uuid4().hex[:8]}"
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:6379/11",
            "KEY_PREFIX": prefix,
        }
    }
    server = redis.Redis.from_url("redis://127.0.0.1:6379/11")
    try:
        hook = build_hook("rate_limit", {"max_items": 2, "window_seconds": 600})
        at = window_start(600)

        actions = [hook.filter(sent(stash_slug, at=at)).action for _ in range(3)]

        assert actions == ["keep", "keep", "drop"]
        [key] = server.keys(f"{prefix}:*")
        assert key.decode().endswith(f"stash:rate_limit:{stash_slug}:600:7:{int(at.timestamp() // 600)}")
        assert int(server.get(key)) == 3
        assert 600 < server.ttl(key) <= 1200
    finally:
        for key in server.scan_iter(f"{prefix}:*"):
            server.delete(key)
        cache.close()


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({"window_seconds": 60}, {"max_items": "This field is required."}),
        ({"max_items": 0, "window_seconds": 60}, {"max_items": "Must be at least 1."}),
        ({"max_items": 1, "window_seconds": 0}, {"window_seconds": "Must be at least 1."}),
        ({"max_items": 1.5, "window_seconds": 60}, {"max_items": "Must be a whole number."}),
        (
            {"max_items": 1, "window_seconds": 60, "anonymous": "blocked"},
            {"anonymous": "Must be one of: shared, exempt."},
        ),
        ({"max_items": 1, "window_seconds": 60, "key": "ip"}, {"params": "Not a param of this hook: key."}),
    ],
)
def test_rate_limit_refuses_bad_params(params, errors):
    assert_refused("rate_limit", params, errors)
