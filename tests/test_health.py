"""/healthz answers for the database and the broker."""
import pytest

pytestmark = pytest.mark.django_db


def test_healthy_when_database_and_broker_answer(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "broker": "ok"}}


def test_unavailable_when_the_broker_is_down(client, settings):
    # Nothing listens on this port: the broker check must fail fast and say so.
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["broker"].startswith("unreachable")


def test_only_get_is_allowed(client):
    assert client.post("/healthz").status_code == 405

