"""API fixtures: the stash "audit", users holding given permissions, clients that send their token."""

import contextlib
import functools

import pytest
import redis.connection
from django.contrib.auth.models import Permission
from django.core.cache import cache, caches
from django_redis.cache import RedisCache
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient


@pytest.fixture(autouse=True)
def _fresh_throttles():
    """Throttle counts live in the cache: every test starts with none."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def audit(make_stash):
    return make_stash(
        "audit", hooks=[("require_fields", {"fields": ["text"]}), ("keyword_blocklist", {"words": ["spam"]})]
    )


@pytest.fixture
def make_user(django_user_model):
    """A user with the given permissions, as "app_label.codename" strings."""

    def make(username, *perms, **fields):
        user = django_user_model.objects.create_user(username, password="pass-word-123", **fields)
        for perm in perms:
            app_label, codename = perm.split(".")
            user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
        return user

    return make


@pytest.fixture
def api():
    """``api(user)``: a client authenticated by the user's token; ``api()``: anonymous."""

    def client(user=None):
        client = APIClient()
        if user is not None:
            client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
        return client

    return client


@pytest.fixture
def submitter(make_user):
    return make_user("sam", "stash.add_content")


@pytest.fixture
def viewer(make_user):
    return make_user("vera", "stash.view_content")


class RoundTrips:
    """What ``cache_round_trips`` counted: ``count``, and whether the cache is Redis (``redis``)."""

    def __init__(self, redis_cache):
        self.count = 0
        self.redis = redis_cache


@pytest.fixture
def cache_round_trips(monkeypatch):
    """``with cache_round_trips() as trips: ...``, then ``trips.count``: the requests made of the cache
    meanwhile. On Redis, each command or pipeline sent to the server (a round trip: a pipeline sends
    its commands at once); on the file cache, each call of the cache's API (its own inner calls,
    ``add`` reading the file before writing it, are not counted again)."""

    @contextlib.contextmanager
    def counting():
        backend = caches["default"]
        trips = RoundTrips(isinstance(backend, RedisCache))
        with monkeypatch.context() as patched:
            if trips.redis:
                send = redis.connection.AbstractConnection.send_packed_command

                def counted_send(connection, *args, **kwargs):
                    trips.count += 1
                    return send(connection, *args, **kwargs)

                patched.setattr(redis.connection.AbstractConnection, "send_packed_command", counted_send)
            else:
                depth = [0]

                def counted(method):
                    @functools.wraps(method)
                    def call(*args, **kwargs):
                        trips.count += depth[0] == 0
                        depth[0] += 1
                        try:
                            return method(*args, **kwargs)
                        finally:
                            depth[0] -= 1

                    return call

                for name in (
                    "add",
                    "get",
                    "set",
                    "touch",
                    "delete",
                    "has_key",
                    "get_many",
                    "set_many",
                    "delete_many",
                    "incr",
                    "decr",
                    "clear",
                ):
                    patched.setattr(type(backend), name, counted(getattr(type(backend), name)))
            yield trips

    return counting
