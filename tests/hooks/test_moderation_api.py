"""The moderation_api hook against a fake moderation service on a local port: scores, batches,
timeouts, failures, bad params and refused addresses."""

import json
import re
import time
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from stash import processing
from stash.core import pipeline
from stash.core.pipeline import Item, Pipeline, Step
from stash.core.testing import build_hook, run_hook
from stash.hooks.outbound import signature
from stash.hooks.services import ModerationServiceError
from stash.models import Content, HookConfig

from ..support.fake_moderation import FakeModeration
from ..support.hook_support import assert_refused, closed_port

SECRET = "a-moderation-secret-of-some-length"
LOOPBACK = ["127.0.0.1/32"]
EXPECTED = "Enter a value in the expected format: "


@pytest.fixture
def allow_loopback(settings):
    settings.STASH_WEBHOOK_ALLOWED_NETWORKS = LOOPBACK


@pytest.fixture
def service(allow_loopback):
    with FakeModeration(secret=SECRET) as running:
        yield running


def params(service, **more):
    return {"url": service.url, "secret": SECRET, "fields": ["text"], **more}


def run(service, payload, *, on_error=pipeline.ON_ERROR_REJECT, step_timeout=None, **more):
    """One item through a one-step pipeline with the hook, as the workers run it."""
    hook = build_hook("moderation_api", params(service, **more))
    step = Step(hook=hook, name="moderation_api", label="Vendor", on_error=on_error, timeout=step_timeout)
    return Pipeline([step]).run(Item(payload=payload, id="c0ffee"))


# --- scores ------------------------------------------------------------------------------------


def test_an_item_scored_above_the_threshold_is_dropped_with_the_score_in_the_reason(service):
    result = run_hook("moderation_api", params(service), {"text": "you awful person"}, id="c0ffee")

    assert (result.verdict, result.code) == ("rejected", "moderation")
    assert result.reason == "the moderation service scored it 0.9, above 0.5"
    assert result.trail[0].field == "text"


def test_an_item_scored_under_the_threshold_is_kept(service):
    result = run_hook("moderation_api", params(service), {"text": "a kind word"})

    assert result.verdict == "accepted"
    assert result.trail[0].outcome == "kept"


def test_the_threshold_decides_where_dropping_starts(service):
    lenient = run_hook("moderation_api", params(service, threshold=0.95), {"text": "you awful person"})
    strict = run_hook("moderation_api", params(service, threshold=0.05), {"text": "a kind word"})

    assert lenient.verdict == "accepted"
    assert (strict.verdict, strict.reason) == ("rejected", "the moderation service scored it 0.1, above 0.05")


def test_the_score_is_read_at_a_dotted_path_of_each_answer_item(service):
    result = run_hook("moderation_api", params(service, score_path="scores.toxic"), {"text": "idiot"})

    assert (result.verdict, result.code) == ("rejected", "moderation")


def test_only_the_chosen_fields_are_sent_signed_with_the_secret(service):
    payload = {"title": "Hello", "meta": {"body": "fine"}, "email": "a@example.com"}
    run_hook("moderation_api", params(service, fields=["title", "meta.body", "absent"]), payload, id="c0ffee")

    [request] = service.requests
    assert request.data == {"items": [{"id": "c0ffee", "fields": {"title": "Hello", "meta.body": "fine"}}]}
    assert request.signed
    assert request.headers["X-Stash-Signature"] == signature(SECRET, request.body)
    assert request.headers["Content-Type"] == "application/json"


def test_with_several_fields_the_drop_names_none_of_them(service):
    result = run_hook("moderation_api", params(service, fields=["title", "text"]), {"title": "x", "text": "awful"})

    assert (result.verdict, result.trail[0].field) == ("rejected", "")


def test_an_item_with_none_of_the_fields_is_kept_without_asking(service):
    result = run_hook("moderation_api", params(service), {"other": "awful"})

    assert result.verdict == "accepted"
    assert service.requests == []


# --- batches -----------------------------------------------------------------------------------


def test_a_batch_is_judged_in_one_request_one_decision_per_item_in_order(service):
    hook = build_hook("moderation_api", params(service))
    items = [
        Item(payload={"text": "hello"}, id="a"),
        Item(payload={"text": "awful"}, id="b"),
        Item(payload={"nothing": "to send"}, id="c"),
        Item(payload={"text": "idiot"}, id="d"),
    ]

    decisions = hook.filter_many(items)

    assert [d.action for d in decisions] == ["keep", "drop", "keep", "drop"]
    assert {d.code for d in decisions if d.action == "drop"} == {"moderation"}
    [request] = service.requests
    assert [entry["id"] for entry in request.data["items"]] == ["a", "b", "d"]


def test_an_empty_batch_asks_nothing(service):
    assert build_hook("moderation_api", params(service)).filter_many([]) == []
    assert service.requests == []


# --- failures go by on_error ---------------------------------------------------------------------


def test_a_slow_service_is_cut_off_and_on_error_decides(service):
    service.mode = "slow"
    started = time.monotonic()

    held = run(service, {"text": "hello"}, on_error=pipeline.ON_ERROR_HOLD, timeout=0.2)

    assert time.monotonic() - started < 2  # cut at twice the timeout, not at the service's 5 s
    assert held.verdict == "held"
    assert held.trail[0].outcome == "error"
    assert held.reason.startswith(f"Vendor: ModerationServiceError: POST {service.url} failed: TimeoutError")


def test_a_step_timeout_shorter_than_the_hooks_stops_it_first(service):
    service.mode = "slow"
    started = time.monotonic()

    result = run(service, {"text": "hello"}, step_timeout=0.3, timeout=5)

    assert time.monotonic() - started < 2
    assert (result.verdict, result.trail[0].outcome) == ("rejected", "timeout")


def test_a_failing_service_rejects_by_default_and_is_skipped_when_asked(service):
    service.mode = "failing"

    rejected = run(service, {"text": "hello"})
    skipped = run(service, {"text": "hello"}, on_error=pipeline.ON_ERROR_SKIP)

    assert (rejected.verdict, rejected.code) == ("rejected", "hook_error")
    assert rejected.reason == f"Vendor: ModerationServiceError: POST {service.url} answered 500 Internal Server Error"
    assert skipped.verdict == "accepted"
    assert skipped.trail[0].outcome == "error"


def test_a_malformed_answer_is_an_error_that_says_why(service):
    service.mode = "malformed"

    result = run(service, {"text": "hello"})

    assert result.verdict == "rejected"
    assert "answered with something that is not JSON" in result.reason


@pytest.mark.parametrize(
    ("score_path", "message"),
    [
        ("nowhere", "answered item 0 with no number at 'nowhere'"),
        ("label", "answered item 0 with no number at 'label'"),
    ],
)
def test_an_answer_without_a_number_at_the_score_path_is_an_error(service, score_path, message):
    with pytest.raises(ModerationServiceError, match=message):
        build_hook("moderation_api", params(service, score_path=score_path)).filter(Item(payload={"text": "hi"}))


def test_a_wrong_secret_is_refused_by_the_service_and_is_an_error(service):
    hook = build_hook("moderation_api", {**params(service), "secret": "not-the-shared-secret"})

    with pytest.raises(ModerationServiceError, match="answered 401"):
        hook.filter(Item(payload={"text": "hello"}))
    assert service.requests[0].signed is False


def test_a_closed_port_is_an_error_at_once(allow_loopback):
    hook = build_hook(
        "moderation_api", {"url": f"http://127.0.0.1:{closed_port()}/", "secret": SECRET, "fields": ["text"]}
    )

    with pytest.raises(ModerationServiceError, match="ConnectionRefusedError"):
        hook.filter(Item(payload={"text": "hello"}))


def test_an_answer_for_other_items_is_an_error(service):
    hook = build_hook("moderation_api", params(service))
    reordered = json.dumps({"items": [{"id": "b", "score": 0.1}, {"id": "a", "score": 0.1}]}).encode()

    with pytest.raises(ModerationServiceError, match="answered item 0 for 'b', not 'a'"):
        hook.scores(reordered, ["a", "b"])
    with pytest.raises(ModerationServiceError, match='without an "items" list of 2'):
        hook.scores(b'{"items": [{"score": 0.1}]}', ["a", "b"])
    with pytest.raises(ModerationServiceError, match="answered item 0 with no number at 'score'"):
        hook.scores(b'{"items": [{"score": NaN}]}', ["a"])


# --- params ------------------------------------------------------------------------------------


def test_missing_params_are_refused_by_name(allow_loopback):
    assert_refused(
        "moderation_api",
        {"url": "https://mod.example.com/v1"},
        {"secret": "This field is required.", "fields": "This field is required."},  # each on its own field
    )


@pytest.mark.parametrize(
    ("more", "errors"),
    [
        ({"secret": "short"}, {"secret": "Must be at least 16 characters."}),
        ({"fields": []}, {"fields": "Must not be empty."}),
        ({"threshold": "high"}, {"threshold": "Must be a number."}),
        (
            {"timeout": 60},
            {
                "timeout": "at most 15 s in sync mode (in async mode it is the time to call back, up to "
                "STASH_CALLBACK_MAX_SECONDS)"
            },
        ),
        ({"mode": "async", "timeout": 90000}, {"timeout": "Must be at most 86400."}),
        ({"mode": "later"}, {"mode": "Must be one of: sync, async."}),
        (
            {"mode": "async", "timeout": 7200},
            {
                "timeout": "at most 3600 s: the time a service has to call back is bounded by "
                "STASH_CALLBACK_MAX_SECONDS (3600 s)"
            },
        ),
        (
            {"url": "ftp://mod.example.com/"},
            {"url": EXPECTED + "The service's endpoint to POST the items to, http:// or https://."},
        ),
    ],
)
def test_bad_params_are_refused_with_a_reason(allow_loopback, more, errors):
    good = {"url": "https://mod.example.com/v1", "secret": SECRET, "fields": ["text"]}

    assert_refused("moderation_api", {**good, **more}, errors)


def test_a_timeout_whose_cut_off_passes_the_time_limit_is_refused(settings):
    settings.STASH_TIME_LIMIT = 10

    assert_refused(
        "moderation_api",
        {"url": "https://mod.example.com/v1", "secret": SECRET, "fields": ["text"], "timeout": 6},
        {
            "timeout": "at most 5 s: the whole exchange (twice the timeout) must fit in the time limit "
            "of a judging message (STASH_TIME_LIMIT, 10 s)"
        },
    )


# --- refused addresses (SSRF), as the webhook refuses them -------------------------------------------


@pytest.mark.parametrize(
    ("key", "url", "message"),
    [
        ("url", "http://127.0.0.1:8000/", "127.0.0.1 is a loopback address"),
        ("url", "http://10.1.2.3/", "10.1.2.3 is a private address"),
        ("url", "http://169.254.169.254/latest/", "169.254.169.254 is a cloud metadata address"),
        ("feedback_url", "http://[::1]/feedback", "::1 is a loopback address"),
    ],
)
def test_an_internal_address_is_refused_when_the_params_are_saved(settings, key, url, message):
    settings.STASH_WEBHOOK_ALLOWED_NETWORKS = []
    good = {"url": "https://mod.example.com/v1", "secret": SECRET, "fields": ["text"]}

    assert_refused(
        "moderation_api", {**good, key: url}, {key: f"{message}; allow it with STASH_WEBHOOK_ALLOWED_NETWORKS"}
    )


def test_a_name_that_resolves_to_loopback_is_refused_when_asking(settings, service):
    settings.STASH_WEBHOOK_ALLOWED_NETWORKS = []
    hook = build_hook("moderation_api", {**params(service), "url": service.url.replace("127.0.0.1", "localhost")})

    with pytest.raises(ModerationServiceError, match="localhost resolves only to addresses that are refused"):
        hook.filter(Item(payload={"text": "hello"}))
    assert service.requests == []


# --- in a stash, as a worker judges ------------------------------------------------------------


@pytest.mark.django_db
def test_a_stash_with_the_hook_rejects_what_the_service_scores_high_and_accepts_the_rest(service, make_stash):
    stash = make_stash("audit", hooks=[{"hook": "moderation_api", "params": params(service), "on_error": "hold"}])
    rude = Content.objects.create(stash=stash, payload={"text": "you idiot"})
    kind = Content.objects.create(stash=stash, payload={"text": "thank you"})

    processing.judge([rude.pk, kind.pk])

    rude.refresh_from_db()
    kind.refresh_from_db()
    assert (rude.status, rude.reason) == ("rejected", "the moderation service scored it 0.9, above 0.5")
    assert kind.status == "accepted"
    assert len(service.requests) == 1  # the worker sends the batch in one request


@pytest.mark.django_db
def test_a_hook_config_with_a_loopback_url_is_not_saved(settings, make_stash):
    settings.STASH_WEBHOOK_ALLOWED_NETWORKS = []
    stash = make_stash("audit")
    config = HookConfig(
        stash=stash, hook="moderation_api", params={"url": "http://127.0.0.1:9/", "secret": SECRET, "fields": ["text"]}
    )

    with pytest.raises(ValidationError, match=r"127\.0\.0\.1 is a loopback address"):
        config.full_clean()


# --- feedback ----------------------------------------------------------------------------------


def test_feedback_posts_the_verdict_and_the_chosen_fields_signed(service):
    hook = build_hook("moderation_api", params(service, feedback_url=service.feedback_url))

    hook.feedback(Item(payload={"text": "you idiot", "email": "a@example.com"}, id="c0ffee"), "accepted")

    [request] = service.requests
    assert request.path == "/feedback"
    assert request.data == {"id": "c0ffee", "verdict": "accepted", "fields": {"text": "you idiot"}}
    assert request.signed


def test_without_a_feedback_url_feedback_sends_nothing(service):
    build_hook("moderation_api", params(service)).feedback(Item(payload={"text": "hi"}, id="c0ffee"), "rejected")

    assert service.requests == []


def test_feedback_that_fails_raises_so_the_task_can_try_again(allow_loopback):
    url = f"http://127.0.0.1:{closed_port()}/feedback"
    hook = build_hook(
        "moderation_api",
        {"url": "https://mod.example.com/v1", "secret": SECRET, "fields": ["text"], "feedback_url": url},
    )

    with pytest.raises(ModerationServiceError, match=f"POST {url} failed: ConnectionRefusedError"):
        hook.feedback(Item(payload={"text": "hi"}, id="c0ffee"), "rejected")


def test_feedback_to_a_name_that_resolves_to_loopback_is_refused(settings, service):
    settings.STASH_WEBHOOK_ALLOWED_NETWORKS = []
    feedback_url = service.feedback_url.replace("127.0.0.1", "localhost")
    hook = build_hook("moderation_api", params(service, url="https://mod.example.com/v1", feedback_url=feedback_url))

    with pytest.raises(ModerationServiceError, match="localhost resolves only to addresses that are refused"):
        hook.feedback(Item(payload={"text": "hi"}, id="c0ffee"), "rejected")
    assert service.requests == []


def test_the_docs_examples_run(allow_loopback):
    text = (Path(__file__).resolve().parents[2] / "docs" / "hooks.md").read_text()
    sources = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL) if "FakeModeration" in b]

    assert len(sources) == 2  # sync, then async
    for source in sources:
        exec(compile(source, "docs/hooks.md", "exec"), {})  # noqa: S102 - the docs' own example
