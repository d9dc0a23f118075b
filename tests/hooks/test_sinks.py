"""The log, email and redis_stream sinks, delivered as a worker delivers them (Redis is the real one)."""

import json
import logging
import uuid

import pytest
import redis
from django.core import mail

from stash import processing, tasks
from stash.core.testing import send_event
from stash.models import Content

from ..support.hook_support import assert_refused, closed_port

REDIS_URL = "redis://127.0.0.1:6379/11"
EXPECTED = "Enter a value in the expected format: "
STREAM_FORMAT = EXPECTED + "The stream's key, e.g. stash:audit:accepted."


def judged(stash, payload, user=None):
    """Submit ``payload`` to ``stash``, judge it, and return the item and the sink deliveries due."""
    content = Content.objects.create(stash=stash, payload=payload, submitted_by=user)
    report = processing.judge([content.pk])
    content.refresh_from_db()
    return content, report.deliveries


def deliver_all(deliveries):
    return [tasks.deliver_sink.apply(args=delivery.args) for delivery in deliveries]


# --- log --------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_log_writes_a_line_per_verdict_in_process(make_stash, caplog):
    stash = make_stash("audit", hooks=[("require_fields", {"fields": ["text"]}), ("log", {"level": "warning"})])

    with caplog.at_level(logging.INFO, logger="stash.hooks.sinks"):
        kept, kept_deliveries = judged(stash, {"text": "hi"})
        dropped, dropped_deliveries = judged(stash, {"title": "none"})

    assert kept_deliveries == dropped_deliveries == []  # in process: no task
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", f"audit: item {kept.pk} r1 accepted"),
        ("WARNING", f"audit: item {dropped.pk} r1 rejected: missing text"),
    ]


def test_log_events_narrow_what_is_written(caplog):
    with caplog.at_level(logging.DEBUG, logger="stash.hooks.sinks"):
        assert send_event("log", {"events": ["hold"]}, "on_accept", {}) is False
        assert (
            send_event("log", {"events": ["hold"]}, "on_hold", {}, verdict="held", reason="look", id="x", stash="s")
            is True
        )

    assert caplog.messages == ["s: item x r1 held: look"]


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({"level": "critical"}, {"level": "Must be one of: debug, info, warning, error."}),
        ({"logger": "root"}, {"params": "Not a param of this hook: logger."}),
    ],
)
def test_log_refuses_bad_params(params, errors):
    assert_refused("log", params, errors)


# --- email ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_email_is_sent_from_its_own_task_with_verdict_reason_and_trail(make_stash):
    stash = make_stash(
        "audit",
        hooks=[
            {"hook": "require_fields", "params": {"fields": ["text"]}, "label": "Needs text"},
            {"hook": "email", "params": {"to": ["mod@example.com"], "events": ["reject"]}},
        ],
    )

    kept, kept_deliveries = judged(stash, {"text": "hi"})
    dropped, deliveries = judged(stash, {"title": "é"})

    assert kept_deliveries == []  # accepts are not asked for
    assert mail.outbox == []  # nothing is sent inside the judging run
    [result] = deliver_all(deliveries)
    assert result.state == "SUCCESS"
    [message] = mail.outbox
    assert message.to == ["mod@example.com"]
    assert message.subject == f"[stash] audit: item {dropped.pk} rejected"
    assert f"audit: item {dropped.pk} r1 rejected: missing text" in message.body
    assert "Needs text               dropped      missing text" in message.body
    assert '"title": "é"' in message.body


@pytest.mark.django_db
def test_email_failure_is_retried_by_the_task(make_stash, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", closed_port()
    stash = make_stash("audit", hooks=[("email", {"to": ["mod@example.com"]})])
    _content, deliveries = judged(stash, {"text": "hi"})

    [result] = deliver_all(deliveries)

    assert result.state == "FAILURE"
    assert str(result.result).startswith("ConnectionRefusedError")


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({}, {"to": "This field is required."}),
        ({"to": []}, {"to": "Must not be empty."}),
        ({"to": ["not an address"]}, {"to.0": EXPECTED + "An email address, e.g. ann@example.com."}),
        ({"to": ["a@example.com"], "events": ["maybe"]}, {"events.0": "Must be one of: accept, reject, hold, error."}),
    ],
)
def test_email_refuses_bad_params(params, errors):
    assert_refused("email", params, errors)


# --- redis_stream -----------------------------------------------------------------------------


@pytest.fixture
def stream(settings):
    """A stream key of its own on the real Redis (database 11), deleted afterwards."""
    settings.STASH_REDIS_URL = REDIS_URL
    key = f"stash-test:{uuid.uuid4().hex}"
    server = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    yield key, server
    server.delete(key)


@pytest.mark.django_db
def test_redis_stream_adds_accepted_items_for_outside_consumers(make_stash, stream, django_user_model):
    key, server = stream
    user = django_user_model.objects.create_user("ann")
    stash = make_stash(
        "audit",
        hooks=[("require_fields", {"fields": ["text"]}), ("normalize_text", {}), ("redis_stream", {"stream": key})],
    )

    accepted, deliveries = judged(stash, {"text": "  Hello   world "}, user)
    rejected, rejected_deliveries = judged(stash, {"title": "no text"})

    assert rejected_deliveries == []  # only accepts, by default
    assert server.exists(key) == 0  # nothing is written inside the judging run
    assert [r.state for r in deliver_all(deliveries)] == ["SUCCESS"]
    [(entry_id, fields)] = server.xrange(key)
    assert fields == {
        "event": "accept",
        "verdict": "accepted",
        "reason": "",
        "id": str(accepted.pk),
        "stash": "audit",
        "revision": "1",
        "source": "code",
        "submitted_by": str(user.pk),
        "payload": json.dumps({"text": "Hello world"}),
    }


def test_redis_stream_other_events_and_trimming(stream):
    key, server = stream
    params = {"stream": key, "events": ["reject", "hold"], "maxlen": 1}

    assert send_event("redis_stream", params, "on_accept", {"n": 0}) is False
    for n in range(1, 4):
        assert send_event("redis_stream", params, "on_reject", {"n": n}, verdict="rejected", reason="r", id=str(n))

    entries = server.xrange(key)
    assert 1 <= len(entries) <= 3  # trimmed approximately, as Redis does
    assert entries[-1][1]["payload"] == '{"n": 3}'
    assert entries[-1][1]["reason"] == "r"


@pytest.mark.django_db
def test_redis_stream_unreachable_is_retried_and_then_fails(make_stash, settings):
    settings.STASH_REDIS_URL = f"redis://127.0.0.1:{closed_port()}/11"
    stash = make_stash("audit", hooks=[("redis_stream", {"stream": "never-written"})])
    _content, deliveries = judged(stash, {"text": "hi"})

    [result] = deliver_all(deliveries)

    assert result.state == "FAILURE"
    assert str(result.result).startswith("ConnectionError: Error 111 connecting to 127.0.0.1")


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({}, {"stream": "This field is required."}),
        ({"stream": ""}, {"stream": STREAM_FORMAT}),
        ({"stream": "has space"}, {"stream": STREAM_FORMAT}),
        ({"stream": "s", "maxlen": 0}, {"maxlen": "Must be at least 1."}),
        ({"stream": "s", "url": "redis://elsewhere/0"}, {"params": "Not a param of this hook: url."}),
    ],
)
def test_redis_stream_refuses_bad_params(params, errors):
    assert_refused("redis_stream", params, errors)
