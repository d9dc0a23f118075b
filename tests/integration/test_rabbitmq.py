"""stash on RabbitMQ: a real worker on an AMQP broker judges items saved through the ORM and the API.

The broker is ``STASH_TEST_AMQP_URL`` (default ``amqp://guest:guest@127.0.0.1:5672//``); the test
fails, naming it, when RabbitMQ is not reachable there (``.ci/run`` starts it).
"""

import os

import pytest
from django.db import transaction
from kombu import Connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from stash.models import Content, PipelineRun

from ..support.worker import WORKER_TIME_LIMIT, WORKER_TIME_LIMIT_MARGIN, Worker, publishing_to, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

AMQP_URL = os.environ.get("STASH_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//")
FINAL = ["accepted", "rejected", "held", "failed"]


def unreachable(url):
    """Why the broker at ``url`` does not answer, or None."""
    try:
        with Connection(url, connect_timeout=5) as connection:
            connection.ensure_connection(max_retries=1)
    except Exception as exc:
        return str(exc) or type(exc).__name__
    return None


@pytest.fixture(scope="module")
def _rabbitmq_worker(django_db_setup, django_db_blocker, worker_queue, tmp_path_factory):
    problem = unreachable(AMQP_URL)
    if problem:
        pytest.fail(
            f"RabbitMQ is not reachable at {AMQP_URL} ({problem}). Start it (`rabbitmq-server -detached`, "
            f"as .ci/run does) or point STASH_TEST_AMQP_URL at one.",
            pytrace=False,
        )
    worker = Worker(f"{worker_queue}-amqp", tmp_path_factory.mktemp("rabbitmq"), broker_url=AMQP_URL).start()
    yield worker
    worker.stop()
    with Connection(AMQP_URL) as connection:  # the queue outlives its worker on the broker: remove it
        connection.default_channel.queue_delete(worker.queue)


@pytest.fixture
def rabbitmq_worker(_rabbitmq_worker, settings):
    """The worker on RabbitMQ; this process publishes there too, to the worker's queue."""
    settings.CELERY_BROKER_URL = AMQP_URL
    settings.STASH_QUEUE = _rabbitmq_worker.queue
    settings.STASH_TIME_LIMIT, settings.STASH_TIME_LIMIT_MARGIN = WORKER_TIME_LIMIT, WORKER_TIME_LIMIT_MARGIN
    with publishing_to(AMQP_URL):
        yield _rabbitmq_worker


@pytest.fixture
def api(admin_user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=admin_user).key}")
    return client


def test_items_saved_through_the_orm_and_the_api_are_judged(rabbitmq_worker, api, make_stash):
    audit = make_stash(
        "audit", hooks=[("require_fields", {"fields": ["text"]}), ("keyword_blocklist", {"words": ["spam"]})]
    )
    single = [Content.objects.create(stash=audit, payload={"text": text}) for text in ("hello", "buy spam")]
    with transaction.atomic():
        for i in range(100):
            Content.objects.create(stash=audit, payload={"text": "spam" if i % 10 == 0 else f"item {i}"})
    posted = api.post("/api/contents/", {"stash": "audit", "payload": {"title": "no text"}}, format="json")
    assert posted.status_code == 201, posted.json()
    bulk = api.post(
        "/api/contents/bulk/", {"stash": "audit", "items": [{"text": f"bulk {i}"} for i in range(50)]}, format="json"
    )
    assert bulk.status_code == 201, bulk.json()

    wait_for(lambda: Content.objects.filter(status__in=FINAL).count() == 153, timeout=60, message="153 verdicts")

    assert [item.status for item in Content.objects.filter(pk__in=[i.pk for i in single]).order_by("created_at")] == [
        "accepted",
        "rejected",
    ]
    assert api.get(f"/api/contents/{posted.json()['id']}/").json()["reason"] == "missing text"
    assert Content.objects.filter(status="rejected").count() == 1 + 10 + 1
    assert Content.objects.filter(status="accepted").count() == 1 + 90 + 50
    assert PipelineRun.objects.count() == 153  # each judged exactly once
    assert sorted(Content.objects.filter(status="accepted").values_list("queue_seq", flat=True)) == list(range(1, 142))


def test_ready_when_the_worker_on_rabbitmq_answers(rabbitmq_worker, client):
    response = client.get("/readyz")
    assert response.status_code == 200, response.json()
    assert response.json()["checks"] == {"database": "ok", "broker": "ok", "workers": "ok", "lag": "ok"}
