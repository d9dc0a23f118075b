"""A cache that fails (a real Redis stopped, hung, or full under noeviction): anonymous submissions and
token logins go on, uncounted by the throttles, with a warning; login lockouts, kept in the
database, still hold."""

import functools
import logging
import os
import signal
import threading

import pytest
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from stash.models import Content

from ..chaos.processes import RedisServer

# transaction=True: requests are made from a thread of their own (to stop waiting on one that hangs).
pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

PASSWORD = "pass-word-123"


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture(params=["down", "hung", "full"])
def failing_cache(request, redis_server, settings):
    """The site's cache (as settings make it for CACHE_URL) on our own Redis: stopped, hung
    (SIGSTOP: connections are accepted, nothing answers) or full, for the length of one test."""
    if redis_server.process.poll() is not None:
        redis_server.start()
    redis_server.client().flushall()
    settings.CACHES = redis_server.as_cache(settings)
    if request.param == "down":
        redis_server.stop()
        yield request.param
    elif request.param == "hung":
        os.kill(redis_server.process.pid, signal.SIGSTOP)
        try:
            yield request.param
        finally:
            os.kill(redis_server.process.pid, signal.SIGCONT)
    else:
        with redis_server.full():
            yield request.param


@pytest.fixture
def open_stash(make_stash, settings):
    settings.STASH_THROTTLE_RATES = {
        **settings.STASH_THROTTLE_RATES,
        "anon_submit": "2/minute",
        "auth_token": "2/minute",
    }
    return make_stash("open", allow_anonymous=True)


def answered_within(seconds, call):
    """``call()``'s result, or a failure if it has not answered after ``seconds``."""
    result = []

    def run():
        try:
            result.append(call())
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert result, f"no answer after {seconds} s"
    return result[0]


def test_anonymous_api_submits_and_form_posts_are_saved_with_a_warning(failing_cache, open_stash, caplog):
    api = APIClient()

    def submit(text):
        return api.post("/api/contents/", {"stash": "open", "payload": {"text": text}}, format="json")

    for n in range(3):  # past the rate: nothing counts while the cache fails
        response = answered_within(5, functools.partial(submit, f"api {n}"))
        assert response.status_code == 201, response.content
        form = answered_within(5, functools.partial(Client().post, "/s/open/submit/", {"text": f"form {n}"}))
        assert form.status_code == 302
    assert Content.objects.filter(stash=open_stash).count() == 6
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and r.name == "stash.ops.access"]
    assert warnings and all(
        "The anon_submit limit let a request from 127.0.0.1 through uncounted: the cache failed" in message
        for message in warnings
    )


def test_token_logins_go_on_and_lockouts_still_hold(failing_cache, open_stash, django_user_model, settings):
    django_user_model.objects.create_user("sam", password=PASSWORD)
    settings.AXES_FAILURE_LIMIT = 3
    client = APIClient()
    assert client.post("/api/auth/token/", {"username": "sam", "password": PASSWORD}, format="json").status_code == 200
    statuses = [
        client.post("/api/auth/token/", {"username": "sam", "password": f"guess {n}"}, format="json").status_code
        for n in range(3)
    ]
    assert statuses[:2] == [400, 400]
    locked = client.post("/api/auth/token/", {"username": "sam", "password": PASSWORD}, format="json")
    assert locked.status_code == 429
    assert locked.json()["detail"].startswith("Too many failed logins from this address")
    # The site's login page, too, refuses that address and lets another in.
    assert Client().post("/accounts/login/", {"username": "sam", "password": PASSWORD}).status_code == 429
    assert (
        Client(REMOTE_ADDR="198.51.100.8")
        .post("/accounts/login/", {"username": "sam", "password": PASSWORD})
        .status_code
        == 302
    )
