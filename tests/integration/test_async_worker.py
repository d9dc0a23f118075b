"""moderation_api in async mode on real workers: the worker asks the fake service and the item
waits; the service calls back at the live server; a worker resumes the run to its verdict. No
answer: the sweeper times it out and the hook's on_error decides. Forged and duplicate answers are
refused and change nothing. A worker killed mid-resume loses nothing. Runs on the embedded default
and, with DATABASE_URL and CELERY_BROKER_URL set, on PostgreSQL and Redis."""

import time
import uuid

import pytest
from django.utils import timezone

from stash import processing
from stash.models import Callback, Content, HookConfig, PipelineRun

from ..support.fake_moderation import FakeModeration, async_hook
from ..support.worker import WORKER_LEASE_SECONDS, WORKER_TIME_LIMIT, WORKER_TIME_LIMIT_MARGIN, Worker, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

SECRET = "a-moderation-secret-of-some-length"


class AsyncWorker(Worker):
    """A judging worker whose hooks may reach the fake service on loopback, and whose callback URLs
    point at the test's live server."""

    def __init__(self, queue, log_dir, public_url):
        super().__init__(queue, log_dir)
        self.public_url = public_url

    def env(self):
        return {**super().env(), "STASH_WEBHOOK_ALLOWED_NETWORKS": "127.0.0.1/32", "STASH_PUBLIC_URL": self.public_url}


@pytest.fixture(scope="module")
def _async_worker(django_db_setup, django_db_blocker, live_server, tmp_path_factory):
    worker = AsyncWorker(f"stash-async-{uuid.uuid4().hex[:8]}", tmp_path_factory.mktemp("async"), live_server.url)
    worker.start()
    yield worker
    worker.stop()


@pytest.fixture
def async_worker(_async_worker, settings, live_server):
    """The worker; what this process sends (resumes from the live server's callbacks, the
    sweeper's) goes to its queue."""
    settings.STASH_QUEUE = _async_worker.queue
    settings.STASH_TIME_LIMIT, settings.STASH_TIME_LIMIT_MARGIN = WORKER_TIME_LIMIT, WORKER_TIME_LIMIT_MARGIN
    settings.STASH_LEASE_SECONDS = WORKER_LEASE_SECONDS
    settings.STASH_WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    settings.STASH_PUBLIC_URL = live_server.url
    if _async_worker.process.poll() is not None:  # a test killed it
        _async_worker.restart()
    return _async_worker


@pytest.fixture
def service():
    with FakeModeration(secret=SECRET, mode="async", delay=8.0) as running:
        yield running


def async_stash(make_stash, service, slug="vendor", timeout=30, on_error="hold", sleep=0):
    hooks = [
        async_hook(service, SECRET, params={"timeout": timeout}, on_error=on_error, position=1),
        {"hook": "keyword_blocklist", "params": {"words": ["spam"]}, "label": "No spam", "position": 2},
    ]
    if sleep:
        hooks.append({"hook": "test_sleep", "params": {"seconds": sleep}, "position": 3, "timeout_ms": 6000})
    return make_stash(slug, hooks=hooks)


def status_of(item, wanted, timeout=30):
    wait_for(lambda: Content.objects.get(pk=item.pk).status == wanted, timeout=timeout, message=f"status {wanted}")
    return Content.objects.get(pk=item.pk)


@pytest.mark.parametrize(
    ("text", "status"), [("a kind word", "accepted"), ("you awful person", "rejected"), ("kind spam", "rejected")]
)
def test_the_services_callback_resumes_the_run_to_its_verdict(async_worker, make_stash, service, text, status):
    stash = async_stash(make_stash, service)
    item = Content.objects.create(stash=stash, payload={"text": text})

    item = status_of(item, status)

    [request] = [r for r in service.requests if r.path == "/moderate"]
    assert request.data["mode"] == "async"
    assert request.data["items"][0]["callback_url"].startswith(async_worker.public_url + "/api/callbacks/")
    [answer] = service.wait_for_answers(1)
    assert answer.status == 202
    run = PipelineRun.objects.get(content=item)
    assert [entry["outcome"] for entry in run.trail][0] == ("dropped" if "awful" in text else "kept")
    if "awful" in text:
        assert item.reason == "toxic (0.9)"
    if "spam" in text:
        assert run.trail[1]["outcome"] == "dropped"  # the next hook ran after the wait
    assert HookConfig.objects.get(stash=stash, label="Vendor").runs_count == 1


def test_no_callback_the_sweeper_times_it_out_and_on_error_decides(async_worker, make_stash, service):
    service.mode = "async_silent"
    stash = async_stash(make_stash, service, timeout=1, on_error="hold")
    item = Content.objects.create(stash=stash, payload={"text": "hello"})
    status_of(item, "waiting")

    time.sleep(1.2)
    report = processing.sweep()

    assert report.timed_out == 1
    item = status_of(item, "held")
    entry = PipelineRun.objects.get(content=item).trail[0]
    assert entry["outcome"] == "timeout" and "no answer from the service in time" in entry["message"]


@pytest.mark.parametrize("mode", ["async_unsigned", "async_forged"])
def test_unsigned_and_forged_callbacks_are_refused_and_change_nothing(async_worker, make_stash, service, mode):
    service.mode = mode
    stash = async_stash(make_stash, service)
    item = Content.objects.create(stash=stash, payload={"text": "you awful person"})

    [answer] = service.wait_for_answers(1)

    assert answer.status == 401
    time.sleep(0.5)
    assert Content.objects.get(pk=item.pk).status == "waiting"
    assert Callback.objects.get(content=item).answered_at is None
    assert not PipelineRun.objects.filter(content=item).exists()


def test_a_duplicate_callback_is_refused_and_the_first_counts(async_worker, make_stash, service):
    service.mode = "async_twice"
    stash = async_stash(make_stash, service)
    item = Content.objects.create(stash=stash, payload={"text": "you awful person"})

    first, second = service.wait_for_answers(2)

    assert (first.status, second.status) == (202, 409)
    item = status_of(item, "rejected")
    time.sleep(0.5)
    assert PipelineRun.objects.filter(content=item).count() == 1


def test_a_late_callback_is_refused_after_the_sweeper_decided(async_worker, make_stash, service):
    service.mode, service.delay = "async_late", 2.5
    stash = async_stash(make_stash, service, timeout=1, on_error="skip")
    item = Content.objects.create(stash=stash, payload={"text": "you awful person"})
    status_of(item, "waiting")
    time.sleep(1.2)
    processing.sweep()
    item = status_of(item, "accepted")  # skip: the service's silence lets it through

    [answer] = service.wait_for_answers(1)

    assert answer.status == 409
    assert Content.objects.get(pk=item.pk).status == "accepted"


def test_a_worker_killed_mid_resume_loses_nothing(async_worker, make_stash, service):
    stash = async_stash(make_stash, service, sleep=4)
    item = Content.objects.create(stash=stash, payload={"text": "a kind word", "sleep": True})
    # The service answers keep; the resume goes on into the slow hook after it…
    service.wait_for_answers(1)
    wait_for(
        lambda: (
            Content.objects.filter(pk=item.pk, status="processing", attempts__gte=1).exists()
            and Callback.objects.filter(content=item, answered_at__isnull=False).exists()
        ),
        timeout=20,
        message="the resume",
    )
    async_worker.kill()  # …and its worker dies with it.
    async_worker.restart()

    # The resume's claim lasts as long as its message may run; then the sweeper sends it again.
    lease = Content.objects.get(pk=item.pk).lease_until
    time.sleep(max(0.0, (lease - timezone.now()).total_seconds()) + 0.5)
    report = processing.sweep()

    assert report.resumed == 1 and report.requeued == 0
    item = status_of(item, "accepted", timeout=30)
    assert len([r for r in service.requests if r.path == "/moderate"]) == 1  # the service was not asked again
    [run] = PipelineRun.objects.filter(content=item)
    assert [entry["outcome"] for entry in run.trail] == ["kept", "kept", "kept"]
