"""/healthz answers for the database and the broker; /readyz also for the workers and the queue lag.

Whether a worker answers /readyz is in tests/integration/test_readiness.py (a real worker, and a
broker with none).
"""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from stash.models import Content

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _short_ping(settings):
    # Whether a worker answers is not what these tests judge: do not wait long for one.
    settings.STASH_READY_PING_TIMEOUT = 0.2


def test_healthy_when_database_and_broker_answer(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "broker": "ok"}}


@pytest.mark.parametrize("url", ["/healthz", "/readyz"])
def test_unavailable_naming_the_broker_when_it_is_down(client, settings, url):
    # Nothing listens on this port: the broker check must fail fast and say so.
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    response = client.get(url)
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["broker"] == "unreachable: OperationalError"
    if url == "/readyz":
        assert body["checks"]["workers"] == "not checked: the broker is unreachable"
        assert body["worker"] is None


@pytest.mark.parametrize("url", ["/healthz", "/readyz"])
def test_only_get_is_allowed(client, url):
    assert client.post(url).status_code == 405


def waiting_since(stash, seconds, status=Content.Status.PENDING):
    item = Content.objects.create(stash=stash, payload={"text": "hi"})
    Content.objects.filter(pk=item.pk).update(status=status, updated_at=timezone.now() - timedelta(seconds=seconds))
    return item


def test_readiness_reports_the_age_of_each_stashs_oldest_waiting_item(client, make_stash):
    audit, busy = make_stash("audit"), make_stash("busy")
    make_stash("quiet")  # nothing waiting
    waiting_since(audit, 30)
    waiting_since(audit, 90, status=Content.Status.PROCESSING)
    waiting_since(busy, 400, status=Content.Status.ACCEPTED)  # judged: not waiting
    waiting_since(busy, 5)

    lag = client.get("/readyz").json()["lag"]

    assert list(lag) == ["audit", "busy", "quiet"]
    assert 90 <= lag["audit"] < 120
    assert 5 <= lag["busy"] < 35
    assert lag["quiet"] == 0


def test_readiness_judges_the_lag_only_when_a_maximum_is_set(client, make_stash, settings):
    waiting_since(make_stash("audit"), 120)
    waiting_since(make_stash("busy"), 5)
    make_stash("quiet")

    assert client.get("/readyz").json()["checks"]["lag"] == "ok"  # reported, not judged

    settings.STASH_READY_MAX_LAG = 60
    response = client.get("/readyz")
    assert response.status_code == 503
    assert re.fullmatch(r"over 60 s: audit \(1[2-9]\d s\)", response.json()["checks"]["lag"])  # busy is not

    settings.STASH_READY_MAX_LAG = 600
    assert client.get("/readyz").json()["checks"]["lag"] == "ok"


OUTSIDE = "203.0.113.7"  # not in STASH_METRICS_ALLOWED_NETWORKS (loopback by default)


def test_readiness_tells_an_anonymous_caller_outside_only_ok_or_not(client, make_stash):
    make_stash("internal-audit")

    response = client.get("/readyz", REMOTE_ADDR=OUTSIDE)

    body = response.json()
    assert body == {"status": "ok" if response.status_code == 200 else "unavailable"}
    assert b"internal-audit" not in response.content


def test_readiness_details_go_to_staff_and_to_metrics_scrapers(client, make_stash, django_user_model, settings):
    make_stash("internal-audit")
    settings.STASH_METRICS_TOKEN = "s3cret-metrics-token"

    scraper = client.get("/readyz", REMOTE_ADDR=OUTSIDE, HTTP_AUTHORIZATION="Bearer s3cret-metrics-token")
    inside = client.get("/readyz")  # the test client's address is loopback: an allowed network
    client.force_login(django_user_model.objects.create_user("ops", password="x", is_staff=True))
    staff = client.get("/readyz", REMOTE_ADDR=OUTSIDE)

    for response in (scraper, inside, staff):
        body = response.json()
        assert set(body) == {"status", "checks", "worker", "lag"}
        assert list(body["lag"]) == ["internal-audit"]


def test_readiness_details_are_not_for_a_signed_in_user_who_is_not_staff(client, make_stash, django_user_model):
    make_stash("internal-audit")
    client.force_login(django_user_model.objects.create_user("someone", password="x"))

    response = client.get("/readyz", REMOTE_ADDR=OUTSIDE)

    assert set(response.json()) == {"status"}
