"""/readyz with a real worker answering its ping, and on a broker that no worker listens to."""

import socket

import pytest

from stash.models import Content

from ..chaos.processes import RedisServer
from ..support.worker import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_ready_when_a_worker_answers(worker, client, make_stash):
    audit = make_stash("audit", hooks=[("require_fields", {"fields": ["text"]})])
    item = Content.objects.create(stash=audit, payload={"text": "hello"})
    wait_for(lambda: Content.objects.filter(pk=item.pk, status="accepted").exists(), message="the verdict")

    response = client.get("/readyz")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["checks"] == {"database": "ok", "broker": "ok", "workers": "ok", "lag": "ok"}
    # Any worker on the broker may answer first; this one at least is there.
    assert body["worker"].endswith(f"@{socket.gethostname()}")
    assert body["lag"] == {"audit": 0.0}


@pytest.fixture
def idle_broker(tmp_path):
    """A Redis server of its own on a free port: a broker that answers, with no worker on it."""
    server = RedisServer(tmp_path).start()
    yield server
    server.stop()


def test_unavailable_when_no_worker_answers(idle_broker, client, settings, make_stash):
    settings.CELERY_BROKER_URL = idle_broker.url
    settings.STASH_READY_PING_TIMEOUT = 0.5
    make_stash("audit")

    response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "checks": {"database": "ok", "broker": "ok", "workers": "no worker answered within 0.5 s", "lag": "ok"},
        "worker": None,
        "lag": {"audit": 0.0},
    }
    assert client.get("/healthz").status_code == 200  # alive, only not ready
