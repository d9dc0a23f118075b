"""moderation_api in async mode, in process: the item waits, the service's answer at its callback
URL resumes the run at the next hook, the sweeper times out a silent service; every answer code of
``POST /api/callbacks/<token>/``. The worker's part runs here as the task would run it
(``processing.resume``); tests/integration/test_async_worker.py runs it on real workers."""

import functools
import json
import uuid
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from stash import processing
from stash.hooks.outbound import signature
from stash.models import Callback, Content, HookConfig, PipelineRun

from ..support.fake_moderation import async_hook
from .conftest import SERVICE_SECRET

pytestmark = pytest.mark.django_db

SECRET = SERVICE_SECRET


@pytest.fixture
def stash(make_stash, service):
    blocklist = {"hook": "keyword_blocklist", "params": {"words": ["spam"]}, "position": 2, "label": "No spam"}
    return make_stash("vendor", hooks=[async_hook(service, SECRET, params={"timeout": 60}, position=1), blocklist])


@pytest.fixture(autouse=True)
def _commits(django_capture_on_commit_callbacks):
    """What is sent on commit (a resume, a judging message) is sent when a ``committed()`` block
    ends, as on a real commit (the test's own transaction never commits)."""
    global committed
    committed = functools.partial(django_capture_on_commit_callbacks, execute=True)


committed: Any = None


def submit(stash, text, broker):
    item = Content.objects.create(stash=stash, payload={"text": text})
    with committed():
        processing.judge([item.pk])
    item.refresh_from_db()
    return item


def callback_path(service, index=-1):
    url = service.requests[index].data["items"][0]["callback_url"]
    return urlsplit(url).path


def post(path, body, secret=SECRET, sign=True):
    raw = json.dumps(body).encode() if not isinstance(body, bytes) else body
    headers = {"HTTP_X_STASH_SIGNATURE": signature(secret, raw)} if sign else {}
    with committed():
        return APIClient().post(path, raw, content_type="application/json", **headers)


def resume_sent(broker):
    return [m["args"][0] for m in broker.messages if m["name"] == "stash.tasks.resume_run"]


def test_the_hook_sends_callback_urls_and_the_item_waits_holding_no_worker(stash, service, broker):
    item = submit(stash, "hello there", broker)

    assert item.status == "waiting"
    assert (item.lease_token, item.lease_until) == (None, None)
    assert item.reason.startswith("waiting for Vendor")
    [request] = service.requests
    assert request.data["mode"] == "async" and request.signed
    [entry] = request.data["items"]
    assert entry["id"] == str(item.pk) and entry["fields"] == {"text": "hello there"}
    assert entry["callback_url"].startswith("http://testserver/api/callbacks/")
    # Only the token's hash is stored; no run is recorded until the verdict.
    token = entry["callback_url"].rstrip("/").rsplit("/", 1)[1]
    [callback] = Callback.objects.filter(content=item)
    assert token not in callback.token_hash and len(callback.token_hash) == 64
    assert callback.expires_at is not None and callback.position == 0
    assert not PipelineRun.objects.filter(content=item).exists()


@pytest.mark.parametrize(
    ("answer", "text", "status", "reason"),
    [
        ({"outcome": "keep", "reason": ""}, "hello", "accepted", ""),
        ({"outcome": "keep"}, "buy spam", "rejected", None),  # the next hook runs after the wait
        ({"outcome": "drop", "reason": "toxic (0.97)"}, "hello", "rejected", "toxic (0.97)"),
        ({"outcome": "hold", "reason": "not sure"}, "hello", "held", "not sure"),
    ],
)
def test_an_answer_resumes_the_run_at_the_next_hook(stash, service, broker, answer, text, status, reason):
    item = submit(stash, text, broker)

    response = post(callback_path(service), answer)

    assert response.status_code == 202, response.content
    [callback_id] = resume_sent(broker)
    processing.resume(callback_id)
    item.refresh_from_db()
    assert item.status == status
    if reason is not None:
        assert item.reason == reason
    run = PipelineRun.objects.get(content=item)
    assert run.outcome == status and run.config_version == stash.config_version
    assert [entry["outcome"] for entry in run.trail][0] == {"keep": "kept", "drop": "dropped", "hold": "held"}[
        answer["outcome"]
    ]
    vendor = HookConfig.objects.get(stash=stash, hook="moderation_api")
    assert vendor.runs_count == 1
    # A duplicate resume message claims nothing and changes nothing.
    assert processing.resume(callback_id).claimed == 0
    assert PipelineRun.objects.filter(content=item).count() == 1


def test_the_resume_judges_with_the_version_the_run_began_with(stash, service, broker):
    item = submit(stash, "buy spam", broker)
    processing.set_enabled(HookConfig.objects.filter(stash=stash, hook="keyword_blocklist"), False)
    stash.refresh_from_db()

    post(callback_path(service), {"outcome": "keep"})
    processing.resume(resume_sent(broker)[0])

    item.refresh_from_db()
    assert item.status == "rejected"  # by the blocklist of the version it began with
    assert PipelineRun.objects.get(content=item).config_version == stash.config_version - 1


@pytest.mark.parametrize(("on_error", "status"), [("hold", "held"), ("reject", "rejected"), ("skip", "accepted")])
def test_no_answer_in_time_the_sweeper_times_it_out_and_on_error_decides(stash, service, broker, on_error, status):
    HookConfig.objects.filter(stash=stash, hook="moderation_api").update(on_error=on_error)
    processing.forget_cached()
    stash.refresh_from_db()
    item = submit(stash, "hello", broker)
    Callback.objects.filter(content=item).update(expires_at=timezone.now() - timedelta(seconds=1))

    with committed():
        report = processing.sweep()

    assert report.timed_out == 1
    processing.resume(resume_sent(broker)[0])
    item.refresh_from_db()
    assert item.status == status
    entry = PipelineRun.objects.get(content=item).trail[0]
    assert entry["outcome"] == "timeout" and "no answer from the service in time" in entry["message"]
    # The service's answer after the sweeper's: too late.
    assert post(callback_path(service), {"outcome": "keep"}).status_code == 409


def test_a_worker_killed_mid_resume_loses_nothing(stash, service, broker, settings):
    item = submit(stash, "hello", broker)
    post(callback_path(service), {"outcome": "drop", "reason": "toxic"})
    [callback_id] = resume_sent(broker)
    # The resume claims the item, then its worker dies before recording anything.
    callback = processing.callbacks.claim(callback_id, token=uuid.uuid4())
    assert callback is not None
    past = timezone.now() - timedelta(seconds=settings.STASH_LEASE_SECONDS + 1)
    Content.objects.filter(pk=item.pk).update(lease_until=past)
    Callback.objects.filter(pk=callback_id).update(answered_at=past - timedelta(seconds=1))

    with committed():
        report = processing.sweep()

    assert report.resumed == 1 and report.requeued == 0
    assert resume_sent(broker) == [callback_id, callback_id]
    processing.resume(callback_id)
    item.refresh_from_db()
    assert (item.status, item.reason) == ("rejected", "toxic")
    assert len(service.requests) == 1  # the service was not asked again


@pytest.mark.django_db(transaction=True)  # the sweeper's sends go out on a real commit
def test_an_item_whose_hook_config_was_deleted_while_it_waited_is_judged_again(stash, service, broker):
    item = submit(stash, "hello", broker)
    processing.delete_hooks(HookConfig.objects.filter(stash=stash, hook="moderation_api"))
    broker.messages.clear()

    with committed():
        report = processing.sweep()

    assert Content.objects.get(pk=item.pk).status == "pending"
    assert report.requeued == 1
    assert broker.ids == [str(item.pk)]


# --- the endpoint's answers ---------------------------------------------------------------------------


def test_an_unknown_token_is_404(stash, service, broker):
    assert post("/api/callbacks/not-a-token/", {"outcome": "keep"}).status_code == 404


@pytest.mark.parametrize("how", ["unsigned", "forged", "other body"])
def test_an_unsigned_or_forged_answer_is_401_and_changes_nothing(stash, service, broker, how):
    item = submit(stash, "hello", broker)
    path = callback_path(service)
    if how == "unsigned":
        response = post(path, {"outcome": "drop", "reason": "x"}, sign=False)
    elif how == "forged":
        response = post(path, {"outcome": "drop", "reason": "x"}, secret="another-secret-entirely")
    else:  # signed for another body
        raw = json.dumps({"outcome": "keep"}).encode()
        response = APIClient().post(
            path,
            json.dumps({"outcome": "drop", "reason": "x"}),
            content_type="application/json",
            HTTP_X_STASH_SIGNATURE=signature(SECRET, raw),
        )

    assert response.status_code == 401
    assert Callback.objects.get(content=item).answered_at is None
    assert Content.objects.get(pk=item.pk).status == "waiting" and resume_sent(broker) == []


def test_a_second_answer_is_409_and_the_first_counts(stash, service, broker):
    submit(stash, "hello", broker)
    path = callback_path(service)

    assert post(path, {"outcome": "keep"}).status_code == 202
    second = post(path, {"outcome": "drop", "reason": "changed my mind"})

    assert second.status_code == 409 and "Already answered" in second.json()["detail"]
    assert Callback.objects.get().outcome == "keep" and len(resume_sent(broker)) == 1


def test_an_answer_for_an_item_edited_since_is_409(stash, service, broker):
    item = submit(stash, "hello", broker)
    path = callback_path(service)
    processing.edit_payload(item, {"text": "hello again"})
    item.refresh_from_db()
    assert item.revision == 2

    response = post(path, {"outcome": "keep"})

    assert response.status_code == 409 and "new revision" in response.json()["detail"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b"not json", "body"),
        ([1, 2], "body"),
        ({"outcome": "maybe"}, "outcome"),
        ({"reason": "x"}, "outcome"),
        ({"outcome": "drop"}, "reason"),
        ({"outcome": "keep", "reason": 7}, "reason"),
        ({"outcome": "keep", "score": 0.3}, "score"),
    ],
)
def test_a_bad_body_is_400_naming_the_field(stash, service, broker, body, field):
    item = submit(stash, "hello", broker)

    response = post(callback_path(service), body)

    assert response.status_code == 400
    assert field in response.json()
    assert Callback.objects.get(content=item).answered_at is None


def test_an_answer_while_the_run_still_goes_on_resumes_it_once_it_waits(stash, service, broker, monkeypatch):
    """A quick service answers before the worker has recorded the wait: the answer is kept, and
    recording the wait sends the resume."""
    item = Content.objects.create(stash=stash, payload={"text": "hello"})
    original = processing.callbacks.record_waits

    def answer_first(waiting, finished, now):
        # The service's answer arrives here, before the worker's transaction records the wait.
        if waiting:
            processing.callbacks.settle(Callback.objects.get(content=item), "drop", "quick")
        return original(waiting, finished, now)

    monkeypatch.setattr(processing.callbacks, "record_waits", answer_first)
    with committed():
        processing.judge([item.pk])

    item.refresh_from_db()
    assert item.status == "waiting"
    [callback_id] = resume_sent(broker)
    processing.resume(callback_id)
    item.refresh_from_db()
    assert (item.status, item.reason) == ("rejected", "quick")


# --- STASH_PUBLIC_URL -----------------------------------------------------------------------------------


def test_without_a_public_url_the_hook_fails_and_on_error_decides(stash, service, broker, settings):
    settings.STASH_PUBLIC_URL = ""

    item = submit(stash, "hello", broker)

    assert item.status == "rejected"  # on_error inherits the stash's: reject
    assert "STASH_PUBLIC_URL" in item.reason
    assert service.requests == [] and not Callback.objects.exists()


def test_the_system_check_warns_when_an_async_hook_has_no_public_url(stash, settings):
    from django.core.checks import run_checks

    settings.STASH_PUBLIC_URL = ""
    [warning] = [m for m in run_checks(databases=["default"]) if m.id == "stash.W003"]
    assert "STASH_PUBLIC_URL" in warning.msg

    settings.STASH_PUBLIC_URL = "https://stash.example.com"
    assert [m for m in run_checks(databases=["default"]) if m.id.startswith("stash.")] == []
    settings.STASH_PUBLIC_URL = "stash.example.com"
    assert [m.id for m in run_checks(databases=["default"]) if m.id.startswith("stash.E")] == ["stash.E002"]


def test_an_observing_async_hook_records_would_wait_and_the_run_goes_on(stash, service, broker):
    HookConfig.objects.filter(stash=stash, hook="moderation_api").update(mode="observe")
    processing.forget_cached()
    stash.refresh_from_db()

    item = submit(stash, "hello", broker)

    assert item.status == "accepted"
    entry = PipelineRun.objects.get(content=item).trail[0]
    assert (entry["outcome"], entry["would"]) == ("observed", "wait")
    assert len(service.requests) == 1  # it asked, as it would in enforce mode
    assert not Callback.objects.exists()  # no run waits on its answer
    assert post(callback_path(service), {"outcome": "drop", "reason": "late"}).status_code == 404


def test_a_later_async_hook_waits_again_after_the_resume(make_stash, service, broker):
    stash = make_stash(
        "two",
        hooks=[
            async_hook(service, SECRET, label="First", position=1),
            async_hook(service, SECRET, label="Second", position=2),
        ],
    )
    item = submit(stash, "hello", broker)
    assert post(callback_path(service), {"outcome": "keep"}).status_code == 202

    processing.resume(resume_sent(broker)[-1])

    item.refresh_from_db()
    assert item.status == "waiting" and item.reason.startswith("waiting for Second")
    assert len(service.requests) == 2 and callback_path(service, 0) != callback_path(service, 1)
    # The first answer is spent: a second one at its URL is refused.
    assert post(callback_path(service, 0), {"outcome": "drop", "reason": "again"}).status_code == 409
    assert post(callback_path(service, 1), {"outcome": "drop", "reason": "toxic"}).status_code == 202
    processing.resume(resume_sent(broker)[-1])
    item.refresh_from_db()
    assert (item.status, item.reason) == ("rejected", "toxic")
    run = PipelineRun.objects.get(content=item)
    assert [(entry["label"], entry["outcome"]) for entry in run.trail] == [("First", "kept"), ("Second", "dropped")]
    assert sorted(HookConfig.objects.filter(stash=stash).values_list("runs_count", flat=True)) == [1, 1]
